package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reelhq/reel/internal/testfixtures"
	"github.com/reelhq/reel/internal/transcripttest"
	"github.com/reelhq/reel/transcript"
)

// sampleStorage writes two runs of the sample workflow into a storage
// directory: the reference run (older) and a variant (latest).
func sampleStorage(t *testing.T) (storage string) {
	storage = t.TempDir()
	dir := transcript.Dir(storage)
	root := transcripttest.WriteSample(t, dir, transcripttest.Variant{})
	old := time.Now().Add(-time.Hour)
	for _, id := range []string{transcripttest.RootID, transcripttest.ChildID} {
		os.Chtimes(filepath.Join(dir, id+".jsonl"), old, old)
	}
	_ = root
	transcripttest.WriteSample(t, dir, transcripttest.Variant{ID: transcripttest.OtherID, ChildID: "44444444-4444-4444-8444-444444444444", LintFails: true})
	return storage
}

func TestReadCommands(t *testing.T) {
	storage := sampleStorage(t)
	ctx := context.Background()
	file := filepath.Join(transcript.Dir(storage), transcripttest.RootID+".jsonl")
	cases := []struct {
		args []string
		want []string
	}{
		{[]string{"tree", "1111", "--storage", storage}, []string{"review-flow  run 11111111", "└── fixer  run 22222222", "attempt 2"}},
		{[]string{"tree", file}, []string{"iteration 1", "2 tools (1 dangling)"}},
		{[]string{"tree", "--latest", "--storage", storage}, []string{"run 33333333", "lint  command  failure"}},
		{[]string{"replay", "11111111-1111-4111-8111-111111111111", "--storage", storage, "--format", "markdown", "--step", "analyze"}, []string{"## analyze (agent)", "<details><summary>Thinking</summary>"}},
		{[]string{"replay", file, "--thinking"}, []string{"thinking › I should use Read."}},
		{[]string{"tools", file}, []string{"DANGLING no result: step timed out", "6 tool calls, 1 dangling"}},
		{[]string{"events", file, "--type", "tool.result", "--field", "payload.name"}, []string{"Read\nBash\nRead\nRead\nBash\n"}},
		{[]string{"events", "1111", "3333", "--storage", storage, "--type", "run.completed", "--field", "payload.result.status", "--json"}, []string{"\"success\"\n\"failure\"\n"}},
		{[]string{"stats", "--storage", storage}, []string{"runs 4", "input 5620"}},
		{[]string{"stats", "1111", "--storage", storage}, []string{"runs 2", "input 2810", "fixer (child of 11111111)"}},
		{[]string{"diff", "1111", "3333", "--storage", storage}, []string{"~  build_all.lint", "success → failure"}},
		{[]string{"tail", file, "-n", "2"}, []string{"fix (call_workflow)", "run.completed"}},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args[:2], " "), func(t *testing.T) {
			out, stderr, err := runReel(t, ctx, c.args...)
			if c.args[0] == "diff" {
				// the runs differ: exit status 1, as diff(1)
				if code, _ := exitStatus(err); code != 1 {
					t.Fatalf("reel %v: exit %d (%v), want 1 for differing runs\n%s", c.args, code, err, stderr)
				}
			} else if err != nil {
				t.Fatalf("reel %v: %v\n%s", c.args, err, stderr)
			}
			for _, w := range c.want {
				if !strings.Contains(out, w) {
					t.Errorf("reel %v output lacks %q:\n%s", c.args, w, out)
				}
			}
		})
	}
	t.Setenv("REEL_STORAGE", storage)
	for _, cmd := range []string{"tree", "replay", "tools", "stats", "tail"} {
		out, _, err := runReel(t, ctx, cmd, "--latest", "--json")
		if cmd == "replay" {
			// replay has no JSON form: --json is refused by cobra.
			if err == nil {
				t.Errorf("replay --json accepted")
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s --json: %v", cmd, err)
		}
		dec := json.NewDecoder(strings.NewReader(out))
		for dec.More() {
			var v any
			if err := dec.Decode(&v); err != nil {
				t.Fatalf("%s --json: not JSON: %v\n%s", cmd, err, out)
			}
		}
	}
	out, _, err := runReel(t, ctx, "diff", "1111", "3333", "--json")
	var d struct{ Steps []struct{ Changed []string } }
	if code, _ := exitStatus(err); code != 1 || json.Unmarshal([]byte(out), &d) != nil || len(d.Steps) != 21 {
		t.Errorf("diff --json: %v, %d steps", err, len(d.Steps))
	}
	// a run compared with itself matches: exit status 0
	if _, stderr, err := runReel(t, ctx, "diff", "1111", "1111"); err != nil {
		t.Errorf("diff of a run with itself: %v\n%s", err, stderr)
	}
}

func TestReadCommandErrors(t *testing.T) {
	storage := sampleStorage(t)
	ctx := context.Background()
	for _, args := range [][]string{
		{"tree", "--storage", storage},                                        // no run named
		{"tree", "9999", "--storage", storage},                                // no such prefix
		{"tree", "", "--storage", storage},                                    // empty
		{"tree", "../../etc/passwd.jsonl"},                                    // missing file
		{"tree", "abc!", "--storage", storage},                                // not an id
		{"diff", "1111", "--storage", storage},                                // one run
		{"events", "1111", "--type", "tool.calls", "--storage", storage},      // unknown type
		{"events", "1111", "--since", "yesterday", "--storage", storage},      // bad time
		{"replay", "1111", "--format", "pdf", "--storage", storage},           // bad format
		{"replay", "1111", "--speed", "2", "--instant", "--storage", storage}, // exclusive
		{"stats", "--storage", filepath.Join(storage, "nowhere")},             // no storage
	} {
		_, _, err := runReel(t, ctx, args...)
		if err == nil {
			t.Errorf("reel %q: no error", args)
		}
	}
	// Two runs share the prefix "": an ambiguous prefix names the candidates.
	dir := transcript.Dir(storage)
	second := transcripttest.NewRun(t, dir, "11111111-2222-4222-8222-222222222222", "", transcripttest.Epoch)
	second.Event(transcript.ExchangeEvent{Type: transcript.RunStarted, Payload: &transcript.StepPayload{Name: "w", Kind: transcript.KindWorkflow}})
	second.Close()
	_, _, err := runReel(t, ctx, "tree", "1111", "--storage", storage)
	if err == nil || !strings.Contains(err.Error(), "ambiguous") {
		t.Errorf("ambiguous prefix: %v", err)
	}
}

// Damaged transcripts: what can be read is printed, the problems go to
// stderr, and the exit status is 1.
func TestReadCommandsDamaged(t *testing.T) {
	storage := sampleStorage(t)
	p := filepath.Join(transcript.Dir(storage), transcripttest.RootID+".jsonl")
	data, _ := os.ReadFile(p)
	lines := strings.SplitAfter(string(data), "\n")
	damaged := strings.Join(lines[:20], "") + "\x00\xff{{{\n" + strings.Join(lines[20:40], "") + lines[40][:25]
	os.WriteFile(p, []byte(damaged), 0o600)
	for _, cmd := range []string{"tree", "replay", "tools", "events", "stats", "diff", "tail"} {
		args := []string{cmd, p}
		if cmd == "diff" {
			args = append(args, p)
		}
		out, stderr, err := runReel(t, context.Background(), args...)
		var ee *exitError
		if !errors.As(err, &ee) || ee.code != 1 {
			t.Errorf("%s: err %v, want exit status 1", cmd, err)
		}
		if !strings.Contains(stderr, "line 21") || !strings.Contains(stderr, "torn") {
			t.Errorf("%s: stderr does not name the damage:\n%s", cmd, stderr)
		}
		if len(out) == 0 {
			t.Errorf("%s: nothing printed", cmd)
		}
	}
}

// tail -f follows a run a Recorder is still writing, from several
// goroutines at once, and sees every event, ending at run.completed.
func TestTailFollow(t *testing.T) {
	storage := t.TempDir()
	dir := transcript.Dir(storage)
	id := transcript.NewRunID()
	rec, err := transcript.Create(dir, id, transcript.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rec.Record(transcript.ExchangeEvent{Type: transcript.RunStarted, Payload: &transcript.StepPayload{Name: "live", Kind: "workflow"}}); err != nil {
		t.Fatal(err)
	}
	const writers, each = 4, 300
	done := make(chan error, 1)
	go func() {
		time.Sleep(50 * time.Millisecond) // let tail start before most events exist
		var wg sync.WaitGroup
		for w := 0; w < writers; w++ {
			wg.Add(1)
			go func(w int) {
				defer wg.Done()
				for i := 0; i < each; i++ {
					p := fmt.Sprintf("branch%d", w)
					rec.Record(transcript.ExchangeEvent{Type: transcript.ToolCall, Path: p, Payload: &transcript.ToolPayload{Name: "Bash", CallID: fmt.Sprint(i), Fidelity: transcript.FidelityRouter}})
					if i%50 == 0 {
						time.Sleep(time.Millisecond)
					}
				}
			}(w)
		}
		wg.Wait()
		_, err := rec.Record(transcript.ExchangeEvent{Type: transcript.RunCompleted, Payload: &transcript.StepPayload{Name: "live", Kind: "workflow"}})
		rec.Close()
		done <- err
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, stderr, err := runReel(t, ctx, "tail", id[:8], "-f", "-n", "0", "--json", "--poll", "5ms", "--storage", storage)
	if err != nil {
		t.Fatalf("tail -f: %v\n%s", err, stderr)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != writers*each+2 {
		t.Fatalf("tail -f printed %d events, want %d", len(lines), writers*each+2)
	}
	for i, l := range lines {
		ev, err := transcript.DecodeEvent([]byte(l))
		if err != nil || ev.Seq != uint64(i+1) {
			t.Fatalf("line %d: seq %d err %v", i, ev.Seq, err)
		}
	}
	if !strings.Contains(lines[len(lines)-1], `"run.completed"`) {
		t.Errorf("last line %s", lines[len(lines)-1])
	}
}

// The reading commands on transcripts made by `reel import` from recorded
// provider output.
func TestReadImported(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct{ format, file string }{
		{"claude-stream-json", "claude_stream_json_session.jsonl"},
		{"codex-exec-json", "codex_exec_json_all_formats.jsonl"},
	} {
		t.Run(c.format, func(t *testing.T) {
			storage := t.TempDir()
			src := filepath.Join(testfixtures.Dir(t, c.format), c.file)
			if _, stderr, err := runReel(t, ctx, "import", "--from", c.format, src, "--storage", storage); err != nil {
				t.Fatalf("import: %v\n%s", err, stderr)
			}
			checks := map[string][]string{
				"tree":   {"agent  agent"},
				"replay": {"▶ agent (agent)", "tool call"},
				"tools":  {"tool calls"},
				"stats":  {"runs 1", "agent)"},
				"tail":   {"run.completed"},
			}
			for cmd, wants := range checks {
				out, stderr, err := runReel(t, ctx, cmd, "--latest", "--storage", storage)
				if err != nil {
					t.Fatalf("%s: %v\n%s", cmd, err, stderr)
				}
				for _, w := range wants {
					if !strings.Contains(out, w) {
						t.Errorf("%s lacks %q:\n%s", cmd, w, out)
					}
				}
			}
			calls, _, err := runReel(t, ctx, "events", "--latest", "--storage", storage, "--type", "tool.call", "--field", "payload.name")
			results, _, err2 := runReel(t, ctx, "events", "--latest", "--storage", storage, "--type", "tool.result", "--field", "payload.name")
			if err != nil || err2 != nil || calls == "" || calls != results {
				t.Errorf("tool calls %q and results %q do not pair (%v %v)", calls, results, err, err2)
			}
		})
	}
}
