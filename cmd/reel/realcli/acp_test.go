package realcli

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/reelhq/reel/internal/acptest"
	"github.com/reelhq/reel/internal/modeltest"
)

// The real Claude Code in a conversation step, driven from an editor's
// agent panel: the SDK's client side speaks to `reel acp-serve` over
// stdio, the CLI talks to the scripted model server. The first prompt's
// reply (a file written by the CLI's own Write tool, then text) is
// streamed as a tool call and the agent's message, the turn ends parked,
// the second prompt resumes the CLI's session, and "exit" ends the run,
// recorded and verified.
func TestRealCLIACP(t *testing.T) {
	t.Parallel()
	s := modeltest.New(t)
	cli := s.CLI(t, "claude")
	write := cli.WriteFile("hello.txt", "hello from the panel\n")
	s.Add(
		modeltest.Reply{ToolCalls: []modeltest.ToolCall{write}},
		modeltest.Text("Wrote hello.txt for you."),
		modeltest.Text("FOLLOW-UP-ANSWER: it holds a greeting."),
	)

	dir := t.TempDir()
	opts := map[string]any{"command": cli.Path, "model": cli.Model}
	for k, v := range cli.Options {
		opts[k] = v
	}
	optsJSON, _ := json.Marshal(opts)
	writeFile(t, filepath.Join(dir, ".reel", "workflows", "chat.yaml"), "name: chat\ndescription: Talks with Claude Code\nstates:\n  initial: chat\n"+
		"  chat:\n    type: agent\n    provider: claude\n    mode: conversation\n    prompt: \"Write hello.txt.\"\n    options: "+string(optsJSON)+"\n", 0o644)

	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.Command(reelBinary(t), "acp-serve")
	cmd.Dir = dir
	cmd.Env = append(cli.Env, "REEL_STORAGE=", "XDG_DATA_HOME="+os.Getenv("XDG_DATA_HOME"))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		in.Close()
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("acp-serve: %v", err)
			}
		case <-time.After(time.Minute):
			cmd.Process.Kill()
			<-done
			t.Error("acp-serve did not end with its input")
		}
		if t.Failed() {
			t.Logf("acp-serve stderr:\n%s\nrequests: %s", stderr.String(), describeRequests(s))
		}
	})
	ed := acptest.NewEditor()
	conn := sdk.NewClientSideConnection(ed, in, out)
	if _, err := conn.Initialize(ctx, sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber}); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	sess, err := conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: dir, McpServers: []sdk.McpServer{}})
	if err != nil {
		t.Fatalf("session/new: %v", err)
	}
	id := sess.SessionId
	prompt := func(text string) (sdk.PromptResponse, []sdk.SessionUpdate) {
		t.Helper()
		m := ed.Mark(id)
		resp, err := conn.Prompt(ctx, sdk.PromptRequest{SessionId: id, Prompt: []sdk.ContentBlock{sdk.TextBlock(text)}})
		if err != nil {
			t.Fatalf("prompt %q: %v", text, err)
		}
		return resp, ed.Since(id, m)
	}
	text := func(us []sdk.SessionUpdate) string {
		var b strings.Builder
		for _, u := range us {
			if u.AgentMessageChunk != nil && u.AgentMessageChunk.Content.Text != nil {
				b.WriteString(u.AgentMessageChunk.Content.Text.Text)
			}
		}
		return b.String()
	}

	resp, us := prompt("/chat")
	msg := text(us)
	if resp.StopReason != sdk.StopReasonEndTurn || !strings.Contains(msg, "Wrote hello.txt for you.") || !strings.Contains(msg, "Reply to go on") {
		t.Fatalf("first turn %+v:\n%s", resp, msg)
	}
	// The CLI's Write call is a card of its own, an edit, completed.
	var wrote bool
	for _, u := range us {
		if tc := u.ToolCall; tc != nil && tc.Kind == sdk.ToolKindEdit && strings.Contains(tc.Title, "hello.txt") {
			wrote = true
		}
	}
	if !wrote {
		t.Errorf("no edit card for the CLI's Write call")
	}
	if b, err := os.ReadFile(filepath.Join(dir, "hello.txt")); err != nil || string(b) != "hello from the panel\n" {
		t.Errorf("hello.txt: %q, %v", b, err)
	}

	if resp, us = prompt("FOLLOW-UP-9: what is in it?"); resp.StopReason != sdk.StopReasonEndTurn || !strings.Contains(text(us), "FOLLOW-UP-ANSWER") {
		t.Fatalf("second turn %+v:\n%s", resp, text(us))
	}
	resp, us = prompt("exit")
	msg = text(us)
	if resp.StopReason != sdk.StopReasonEndTurn || !strings.Contains(msg, "✔ **chat** succeeded") || resp.Usage == nil || resp.Usage.TotalTokens == 0 {
		t.Fatalf("last turn %+v:\n%s", resp, msg)
	}
	s.CheckDone(t)

	// The second prompt resumed the CLI's session: it sent the first turn
	// again, then the new message.
	turns := s.Turns()
	if len(turns) != 3 {
		t.Fatalf("%d conversation requests, want 3", len(turns))
	}
	last := turns[2]
	if !strings.Contains(last.LastUserText(), "FOLLOW-UP-9") || !strings.Contains(strings.Join(last.UserTexts(), "\n"), "Write hello.txt.") {
		t.Errorf("follow-up request: user texts %q", last.UserTexts())
	}
	i := strings.LastIndex(msg, "transcript `")
	if i < 0 {
		t.Fatalf("no transcript in %q", msg)
	}
	path := strings.TrimSuffix(msg[i+len("transcript `"):], "`")
	reelVerify(t, cmd.Env, path)
}
