package acpserve

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"sync"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/reelhq/reel/internal/golden"
	"github.com/reelhq/reel/transcript"
)

// editor is the client side of an in-memory connection: it keeps the
// session updates it is sent.
type editor struct {
	mu      sync.Mutex
	updates []sdk.SessionNotification
}

func (e *editor) SessionUpdate(_ context.Context, n sdk.SessionNotification) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.updates = append(e.updates, n)
	return nil
}

func (e *editor) RequestPermission(context.Context, sdk.RequestPermissionRequest) (sdk.RequestPermissionResponse, error) {
	return sdk.RequestPermissionResponse{Outcome: sdk.NewRequestPermissionOutcomeCancelled()}, nil
}

func (e *editor) ReadTextFile(context.Context, sdk.ReadTextFileRequest) (sdk.ReadTextFileResponse, error) {
	return sdk.ReadTextFileResponse{}, errors.New("no")
}

func (e *editor) WriteTextFile(context.Context, sdk.WriteTextFileRequest) (sdk.WriteTextFileResponse, error) {
	return sdk.WriteTextFileResponse{}, errors.New("no")
}

func (e *editor) CreateTerminal(context.Context, sdk.CreateTerminalRequest) (sdk.CreateTerminalResponse, error) {
	return sdk.CreateTerminalResponse{}, errors.New("no")
}

func (e *editor) KillTerminal(context.Context, sdk.KillTerminalRequest) (sdk.KillTerminalResponse, error) {
	return sdk.KillTerminalResponse{}, errors.New("no")
}

func (e *editor) TerminalOutput(context.Context, sdk.TerminalOutputRequest) (sdk.TerminalOutputResponse, error) {
	return sdk.TerminalOutputResponse{}, errors.New("no")
}

func (e *editor) ReleaseTerminal(context.Context, sdk.ReleaseTerminalRequest) (sdk.ReleaseTerminalResponse, error) {
	return sdk.ReleaseTerminalResponse{}, errors.New("no")
}

func (e *editor) WaitForTerminalExit(context.Context, sdk.WaitForTerminalExitRequest) (sdk.WaitForTerminalExitResponse, error) {
	return sdk.WaitForTerminalExitResponse{}, errors.New("no")
}

// connected returns a stream to an editor over an in-memory connection,
// the SDK on both sides.
func connected(t testing.TB) (*stream, *editor) {
	t.Helper()
	toEditor, fromAgent := io.Pipe()
	toAgent, fromEditor := io.Pipe()
	ag := sdk.NewAgentSideConnection(&server{}, fromAgent, toAgent)
	ed := &editor{}
	sdk.NewClientSideConnection(ed, fromEditor, toEditor)
	t.Cleanup(func() { fromAgent.Close(); fromEditor.Close() })
	return &stream{conn: ag, session: "sess_test"}, ed
}

// all sends a last message and returns every update the editor got
// before it: notifications arrive in order.
func (e *editor) all(t testing.TB, out *stream) []sdk.SessionNotification {
	t.Helper()
	if err := out.send(context.Background(), sdk.UpdateAgentMessageText("END")); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		e.mu.Lock()
		us := e.updates
		e.mu.Unlock()
		if n := len(us); n > 0 && us[n-1].Update.AgentMessageChunk != nil && us[n-1].Update.AgentMessageChunk.Content.Text.Text == "END" {
			return us[:n-1]
		}
		if time.Now().After(deadline) {
			t.Fatalf("the editor got %d updates, and not the last", len(us))
		}
		time.Sleep(5 * time.Millisecond)
	}
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
	for _, n := range ed.all(t, out) {
		if n.SessionId != "sess_test" {
			t.Errorf("session %q", n.SessionId)
		}
		line, err := json.Marshal(n.Update)
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
