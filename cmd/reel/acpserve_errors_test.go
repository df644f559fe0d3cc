package main

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"
)

// rpcError is err as the JSON-RPC error the server answered.
func rpcError(t *testing.T, err error) *sdk.RequestError {
	t.Helper()
	var re *sdk.RequestError
	if !errors.As(err, &re) {
		t.Fatalf("want a JSON-RPC error, got %v", err)
	}
	return re
}

// What an editor does wrong, or stops doing, gets a clear answer and loses
// no run (and what the engine warns of is said): requests for sessions that do not exist, a session in a
// directory that is not one, a second prompt while one is answered, a
// permission request dismissed, and the editor going away mid-run.
func TestACPServeErrors(t *testing.T) {
	a := acpProject(t, "a")
	store := filepath.Join(a, ".reel", "storage")
	fake, err := filepath.Abs("testdata/acp/fake-claude")
	if err != nil {
		t.Fatal(err)
	}
	// A call that passes an input its sub-workflow does not declare.
	writeFile(t, filepath.Join(a, ".reel", "workflows", "caller.yaml"), `name: caller
states:
  initial: call
  call:
    type: call_workflow
    workflow: callee
    inputs: {word: hi, colour: red}
    on_success: done
  done: {type: terminal, status: success}
`, 0o644)
	writeFile(t, filepath.Join(a, ".reel", "workflows", "callee.yaml"), `name: callee
inputs: [{name: word}]
states:
  initial: say
  say: {type: step, command: "echo {{.inputs.word}}", on_success: end}
  end: {type: terminal, status: success}
`, 0o644)
	ed := startACP(t, t.TempDir(), "REEL_CLAUDE_BIN="+fake)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	t.Run("unknown session", func(t *testing.T) {
		_, err := ed.conn.Prompt(ctx, sdk.PromptRequest{SessionId: "sess_nope", Prompt: []sdk.ContentBlock{sdk.TextBlock("/greet name=x")}})
		if re := rpcError(t, err); re.Code != -32602 || !strings.Contains(re.Error(), `unknown session \"sess_nope\"`) {
			t.Errorf("prompt: %v", re)
		}
		_, err = ed.conn.CloseSession(ctx, sdk.CloseSessionRequest{SessionId: "sess_nope"})
		if re := rpcError(t, err); re.Code != -32602 {
			t.Errorf("session/close: %v", re)
		}
		// What reel does not offer is said so, not faked.
		_, err = ed.conn.SetSessionMode(ctx, sdk.SetSessionModeRequest{SessionId: "sess_nope", ModeId: "x"})
		if re := rpcError(t, err); re.Code != -32601 {
			t.Errorf("session/set_mode: %v", re)
		}
	})

	t.Run("bad working directory", func(t *testing.T) {
		for cwd, want := range map[string]string{
			"relative/dir":              "is not an absolute path",
			filepath.Join(a, "missing"): "is not a directory",
			filepath.Join(a, ".reel", "workflows", "greet.yaml"): "is not a directory",
		} {
			_, err := ed.conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: cwd, McpServers: []sdk.McpServer{}})
			if re := rpcError(t, err); re.Code != -32602 || !strings.Contains(re.Error(), want) {
				t.Errorf("session/new in %q: %v", cwd, re)
			}
		}
		if ents, _ := os.ReadDir(filepath.Join(store, "acp", "sessions")); len(ents) != 0 {
			t.Errorf("refused sessions left %d state directories", len(ents))
		}
	})

	sid, _ := ed.newSession(t, a)

	t.Run("the engine's warnings", func(t *testing.T) {
		m := ed.Mark(sid)
		if r := ed.prompt(t, sid, "/caller"); r.StopReason != sdk.StopReasonEndTurn {
			t.Fatalf("stop reason %q", r.StopReason)
		}
		msg := message(ed.Since(sid, m))
		if !strings.Contains(msg, "⚠ call: workflow callee declares no input colour: ignored") || !strings.Contains(msg, "✔ **caller** succeeded") {
			t.Errorf("message %q", msg)
		}
	})

	t.Run("one prompt at a time", func(t *testing.T) {
		m := ed.Mark(sid)
		answered := ed.promptAsync(ctx, t, sid, "/slow")
		ed.waitFor(t, sid, "the sleeping step", func(u sdk.SessionUpdate) bool {
			return u.ToolCall != nil && strings.HasPrefix(u.ToolCall.Title, "wait: sleep 60")
		})
		_, err := ed.conn.Prompt(ctx, sdk.PromptRequest{SessionId: sid, Prompt: []sdk.ContentBlock{sdk.TextBlock("/greet name=x")}})
		if re := rpcError(t, err); re.Code != -32600 || !strings.Contains(re.Error(), "already being answered") {
			t.Errorf("second prompt: %v", re)
		}
		if err := ed.conn.Cancel(ctx, sdk.CancelNotification{SessionId: sid}); err != nil {
			t.Fatal(err)
		}
		if resp := <-answered; resp.StopReason != sdk.StopReasonCancelled {
			t.Errorf("the first prompt answered %+v", resp)
		}
		if msg := message(ed.Since(sid, m)); strings.Contains(msg, "greet") {
			t.Errorf("the refused prompt ran: %q", msg)
		}
	})

	t.Run("cancel in the order sent", func(t *testing.T) {
		// A cancel sent right after a prompt cancels it, whether its run
		// had started or not; a prompt sent right after a cancel is a new
		// command, not the cancelled conversation's next message.
		for i := range 3 {
			sent := ed.stdin.prompts.Load()
			answered := ed.promptAsync(ctx, t, sid, "/slow")
			for ed.stdin.prompts.Load() == sent {
				time.Sleep(time.Millisecond)
			}
			time.Sleep(time.Duration(i) * 5 * time.Millisecond)
			if err := ed.conn.Cancel(ctx, sdk.CancelNotification{SessionId: sid}); err != nil {
				t.Fatal(err)
			}
			select {
			case resp := <-answered:
				if resp.StopReason != sdk.StopReasonCancelled {
					t.Errorf("prompt %d answered %+v", i, resp)
				}
			case <-time.After(time.Minute):
				t.Fatalf("prompt %d, cancelled at once, was not answered", i)
			}
		}
		m := ed.Mark(sid)
		if r := ed.prompt(t, sid, "/chat topic=order"); r.StopReason != sdk.StopReasonEndTurn {
			t.Fatalf("stop reason %q", r.StopReason)
		}
		if err := ed.conn.Cancel(ctx, sdk.CancelNotification{SessionId: sid}); err != nil {
			t.Fatal(err)
		}
		if r := ed.prompt(t, sid, "/greet name=next"); r.StopReason != sdk.StopReasonEndTurn {
			t.Errorf("stop reason %q", r.StopReason)
		}
		msg := message(ed.Since(sid, m))
		if !strings.Contains(msg, "■ **chat** was cancelled") || !strings.Contains(msg, "✔ **greet** succeeded") || strings.Contains(msg, "you said: /greet") {
			t.Errorf("message %q", msg)
		}
	})

	t.Run("permission dismissed", func(t *testing.T) {
		// The editor's default answer is the protocol's "cancelled"
		// outcome: the user closed the question.
		ed.Answer(func(sdk.RequestPermissionRequest) sdk.RequestPermissionOutcome {
			return sdk.NewRequestPermissionOutcomeCancelled()
		})
		os.Remove(filepath.Join(a, "shipped"))
		m := ed.Mark(sid)
		resp := ed.prompt(t, sid, "/gate --breakpoint ship")
		if n := len(ed.Permissions()); n != 1 {
			t.Errorf("%d permission requests", n)
		}
		us := ed.Since(sid, m)
		if c := findCard(cards(us), "Run ship"); c == nil || c.status != sdk.ToolCallStatusFailed || !strings.Contains(strings.ToLower(jsonText(c.output)), "aborted") {
			t.Errorf("gate card %+v", c)
		}
		if _, err := os.Stat(filepath.Join(a, "shipped")); !os.IsNotExist(err) {
			t.Errorf("the dismissed step ran: %v", err)
		}
		// An abort is the user's cancel, as on a terminal.
		msg := message(us)
		if !strings.Contains(msg, "■ **gate** was cancelled") || !strings.Contains(msg, "aborted before ship") || resp.StopReason != sdk.StopReasonCancelled {
			t.Errorf("answer %+v, message %q", resp, msg)
		}
		evs := readTranscript(t, filepath.Join(store, "transcripts", runIDOf(t, msg)+".jsonl"))
		if s := acpRunStatus(t, evs); s != "cancelled" {
			t.Errorf("an aborted run ended %q", s)
		}
	})

	t.Run("the editor goes mid-run", func(t *testing.T) {
		m := ed.Mark(sid)
		go ed.conn.Prompt(context.Background(), sdk.PromptRequest{SessionId: sid, Prompt: []sdk.ContentBlock{sdk.TextBlock("/slow")}})
		if _, err := ed.WaitFor(ctx, sid, m, func(u sdk.SessionUpdate) bool {
			return u.ToolCall != nil && strings.HasPrefix(u.ToolCall.Title, "wait: sleep 60")
		}); err != nil {
			t.Fatalf("no sleeping step: %v", err)
		}
		start := time.Now()
		ed.hangUp(t)
		if d := time.Since(start); d > 30*time.Second {
			t.Errorf("acp-serve took %s to end", d)
		}
		b, err := os.ReadFile(filepath.Join(store, "acp", "sessions", string(sid), "session.json"))
		if err != nil {
			t.Fatal(err)
		}
		var rec struct {
			Closed bool `json:"closed"`
			Runs   []struct {
				RunID    string `json:"run_id"`
				Workflow string `json:"workflow"`
				Status   string `json:"status"`
			} `json:"runs"`
		}
		if err := json.Unmarshal(b, &rec); err != nil || !rec.Closed || len(rec.Runs) < 5 {
			t.Fatalf("session record (%v):\n%s", err, b)
		}
		for _, r := range rec.Runs {
			if r.Status == "running" || r.Status == "" {
				t.Errorf("a run left %q in the record:\n%s", r.Status, b)
			}
		}
		last := rec.Runs[len(rec.Runs)-1]
		if last.Workflow != "slow" || last.Status != "cancelled" {
			t.Errorf("the run going when the editor went: %+v", last)
		}
		if s := acpRunStatus(t, readTranscript(t, filepath.Join(store, "transcripts", last.RunID+".jsonl"))); s != "cancelled" {
			t.Errorf("its transcript ends %q", s)
		}
		verifyStorage(t, store)
	})
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
