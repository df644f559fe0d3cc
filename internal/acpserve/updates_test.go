package acpserve

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/reelhq/reel/internal/acptest"
	"github.com/reelhq/reel/internal/engine"
	"github.com/reelhq/reel/internal/golden"
	"github.com/reelhq/reel/transcript"
)

// connected returns a stream to an editor over an in-memory connection,
// the SDK on both sides.
func connected(t testing.TB) (*stream, *acptest.Editor) {
	t.Helper()
	toEditor, fromAgent := io.Pipe()
	toAgent, fromEditor := io.Pipe()
	ag := sdk.NewAgentSideConnection(&server{}, fromAgent, toAgent)
	ed := acptest.NewEditor()
	sdk.NewClientSideConnection(ed, fromEditor, toEditor)
	t.Cleanup(func() { fromAgent.Close(); fromEditor.Close() })
	return &stream{conn: ag, session: "sess_test"}, ed
}

// all sends a last message and returns every update the editor got
// before it: notifications arrive in order.
func all(t testing.TB, out *stream, ed *acptest.Editor) []sdk.SessionUpdate {
	t.Helper()
	if err := out.send(context.Background(), sdk.UpdateAgentMessageText("END")); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	us, err := ed.WaitFor(ctx, out.session, 0, func(u sdk.SessionUpdate) bool {
		return u.AgentMessageChunk != nil && u.AgentMessageChunk.Content.Text != nil && u.AgentMessageChunk.Content.Text.Text == "END"
	})
	if err != nil {
		t.Fatal(err)
	}
	return us[:len(us)-1]
}

// The wire shape of a run as the editor receives it, from a recorded
// transcript: each step a tool call with its command and output, the loop's
// iterations numbered, the agent's prompt on its card, its thinking a
// thought, its tool call a card of its own, its reply the agent's message,
// the failing step failed with its error, no card for the terminal state.
func TestProjectGolden(t *testing.T) {
	evs, err := transcript.ReadFile("testdata/showcase.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	out, ed := connected(t)
	p := newProjector(out)
	ctx := context.Background()
	for i := range evs {
		if err := p.project(ctx, &evs[i]); err != nil {
			t.Fatal(err)
		}
	}
	var b bytes.Buffer
	for _, u := range all(t, out, ed) {
		line, err := json.Marshal(u)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	golden.Check(t, "testdata/showcase.updates.golden.jsonl", b.Bytes())
	if len(p.open) != 0 || len(p.tools) != 0 {
		t.Errorf("cards left open: %v %v", p.open, p.tools)
	}
}

func TestToolKindAndTitle(t *testing.T) {
	kinds := map[string]sdk.ToolKind{
		"Read": sdk.ToolKindRead, "read_file": sdk.ToolKindRead, "Edit": sdk.ToolKindEdit, "MultiEdit": sdk.ToolKindEdit,
		"apply_patch": sdk.ToolKindEdit, "Write": sdk.ToolKindEdit, "Bash": sdk.ToolKindExecute, "run_shell_command": sdk.ToolKindExecute,
		"exec_command": sdk.ToolKindExecute, "Grep": sdk.ToolKindSearch, "Glob": sdk.ToolKindSearch, "LS": sdk.ToolKindSearch,
		"WebFetch": sdk.ToolKindFetch, "TodoWrite": sdk.ToolKindThink, "Task": sdk.ToolKindThink, "mcp__github__search_issues": sdk.ToolKindSearch,
		"delete_file": sdk.ToolKindDelete, "frobnicate": sdk.ToolKindOther,
	}
	for name, want := range kinds {
		if got := toolKind(name); got != want {
			t.Errorf("toolKind(%q) = %q, want %q", name, got, want)
		}
	}
	titles := map[string]struct {
		name  string
		input any
	}{
		"Read main.go":           {"Read", map[string]any{"file_path": "main.go"}},
		"Bash go test ./... …":   {"Bash", json.RawMessage(`{"command":"go test ./...\necho done","description":"x"}`)},
		"shell ls -la":           {"shell", map[string]any{"command": []any{"ls", "-la"}}},
		"Grep TODO":              {"Grep", map[string]any{"pattern": "TODO"}},
		"tool":                   {"", nil},
		"Custom":                 {"Custom", map[string]any{"n": 1}},
		"WebFetch https://x.org": {"WebFetch", map[string]any{"url": "https://x.org"}},
	}
	for want, c := range titles {
		if got := toolTitle(c.name, c.input); got != want {
			t.Errorf("toolTitle(%q, %v) = %q, want %q", c.name, c.input, got, want)
		}
	}
}

func TestTextHelpers(t *testing.T) {
	if got := fence("a ``` b"); got != "````\na ``` b\n````" {
		t.Errorf("fence %q", got)
	}
	if got := clip("héllo", 2); got != "h\n… (5 more bytes in the transcript)" {
		t.Errorf("clip %q", got)
	}
	if got := firstLine("  one\ntwo", 80); got != "one …" {
		t.Errorf("firstLine %q", got)
	}
	if got := firstLine("ééééé", 3); got != "ééé…" {
		t.Errorf("firstLine %q", got)
	}
	if got := quote("a\nb"); got != "> a\n> b" {
		t.Errorf("quote %q", got)
	}
}

func TestSummary(t *testing.T) {
	cost := 0.0123
	rep := &engine.Report{RunID: "r1", Status: "success", Duration: 1500 * time.Millisecond, CostUSD: &cost,
		Outputs: map[string]any{"b": "two\nlines\n", "a": map[string]any{"n": 1}, "c": nil}}
	rep.Usage.TotalTokens = 42
	want := "✔ **wf** succeeded in 1.5s · 42 tokens · $0.0123\n\ndone\n\n**a**: {\"n\":1}\n\n**b**:\n```\ntwo\nlines\n```\n\n**c**: _(empty)_\n\nrun `r1`"
	if got := summary("wf", rep, "done"); got != want {
		t.Errorf("summary\n%q\nwant\n%q", got, want)
	}
	rep = &engine.Report{RunID: "r2", Status: "failure", Error: "step x: exit 3", TranscriptPath: "/s/r2.jsonl"}
	want = "✖ **wf** failed in 0s\n\nstep x: exit 3\n\nrun `r2` · transcript `/s/r2.jsonl`"
	if got := summary("wf", rep, ""); got != want {
		t.Errorf("summary\n%q\nwant\n%q", got, want)
	}
}
