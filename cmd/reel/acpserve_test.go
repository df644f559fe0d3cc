package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/reelhq/reel/internal/acptest"
	"github.com/reelhq/reel/internal/proctest"
	"github.com/reelhq/reel/transcript"
)

// acpEditor is an editor connected to a real `reel acp-serve` process,
// on the SDK's client side.
type acpEditor struct {
	*acptest.Editor
	conn   *sdk.ClientSideConnection
	cmd    *exec.Cmd
	stdin  *lockedPipe
	stdout *bytes.Buffer // every byte the server wrote on stdout
	stderr *proctest.Buffer

	outMu sync.Mutex
	done  chan struct{}
}

type lockedPipe struct {
	mu sync.Mutex
	w  io.WriteCloser
	// prompts counts the session/prompt frames written.
	prompts atomic.Int64
}

func (l *lockedPipe) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if bytes.Contains(p, []byte(`"session/prompt"`)) {
		defer l.prompts.Add(1)
	}
	return l.w.Write(p)
}

// startACP starts reel acp-serve in dir with env added to the
// environment, and initializes the connection.
func startACP(t *testing.T, dir string, env ...string) *acpEditor {
	t.Helper()
	cmd := exec.Command(reelBinary(t), "acp-serve", "--log-level", "debug")
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "REEL_STORAGE="), env...)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	ed := &acpEditor{Editor: acptest.NewEditor(), cmd: cmd, stdin: &lockedPipe{w: in}, stdout: &bytes.Buffer{}, stderr: &proctest.Buffer{},
		done: make(chan struct{})}
	cmd.Stderr = ed.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pr, pw := io.Pipe()
	go func() {
		// Keep a copy of the raw stream for the stdout checks.
		buf := make([]byte, 32<<10)
		for {
			n, err := out.Read(buf)
			if n > 0 {
				ed.outMu.Lock()
				ed.stdout.Write(buf[:n])
				ed.outMu.Unlock()
				pw.Write(buf[:n])
			}
			if err != nil {
				pw.Close()
				close(ed.done)
				return
			}
		}
	}()
	t.Cleanup(func() {
		in.Close()
		select {
		case <-ed.done:
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
		}
		cmd.Wait()
		if t.Failed() {
			t.Logf("acp-serve stderr:\n%s", ed.stderr.String())
		}
	})
	ed.conn = sdk.NewClientSideConnection(ed.Editor, ed.stdin, pr)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	resp, err := ed.conn.Initialize(ctx, sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber,
		ClientInfo: &sdk.Implementation{Name: "reel-test-editor", Version: "1"}})
	if err != nil {
		t.Fatalf("initialize: %v", err)
	}
	if resp.ProtocolVersion != sdk.ProtocolVersionNumber || resp.AgentInfo == nil || resp.AgentInfo.Name != "reel" ||
		resp.AgentCapabilities.SessionCapabilities.Close == nil || resp.AuthMethods == nil {
		t.Fatalf("initialize answered %+v", resp)
	}
	return ed
}

// newSession opens a session in cwd and waits for its slash commands.
func (ed *acpEditor) newSession(t *testing.T, cwd string) (sdk.SessionId, []sdk.AvailableCommand) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	resp, err := ed.conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: cwd, McpServers: []sdk.McpServer{}})
	if err != nil {
		t.Fatalf("session/new: %v", err)
	}
	var cmds []sdk.AvailableCommand
	ed.waitFor(t, resp.SessionId, "available commands", func(u sdk.SessionUpdate) bool {
		if u.AvailableCommandsUpdate != nil {
			cmds = u.AvailableCommandsUpdate.AvailableCommands
			return true
		}
		return false
	})
	return resp.SessionId, cmds
}

// prompt sends text as a prompt of session id and returns the answer.
func (ed *acpEditor) prompt(t *testing.T, id sdk.SessionId, text string) sdk.PromptResponse {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	resp, err := ed.conn.Prompt(ctx, sdk.PromptRequest{SessionId: id, Prompt: []sdk.ContentBlock{sdk.TextBlock(text)}})
	if err != nil {
		t.Errorf("prompt %q: %v", text, err)
	}
	return resp
}

// promptAsync sends text as a prompt of session id without waiting: the
// answer comes on the channel returned.
func (ed *acpEditor) promptAsync(ctx context.Context, t *testing.T, id sdk.SessionId, text string) <-chan sdk.PromptResponse {
	answered := make(chan sdk.PromptResponse, 1)
	go func() {
		resp, err := ed.conn.Prompt(ctx, sdk.PromptRequest{SessionId: id, Prompt: []sdk.ContentBlock{sdk.TextBlock(text)}})
		if err != nil {
			t.Errorf("prompt: %v", err)
		}
		answered <- resp
	}()
	return answered
}

// waitFor waits until an update of session id satisfies ok.
func (ed *acpEditor) waitFor(t *testing.T, id sdk.SessionId, what string, ok func(sdk.SessionUpdate) bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := ed.WaitFor(ctx, id, 0, ok); err != nil {
		t.Fatalf("no %s for session %s; updates: %s", what, id, updatesText(ed.Since(id, 0)))
	}
}

// hangUp closes the server's input, as an editor that goes away, and
// waits for it to exit cleanly.
func (ed *acpEditor) hangUp(t *testing.T) {
	t.Helper()
	ed.stdin.w.Close()
	select {
	case <-ed.done:
	case <-time.After(time.Minute):
		t.Fatal("acp-serve did not end with its input")
	}
	if err := ed.cmd.Wait(); err != nil {
		t.Errorf("acp-serve: %v", err)
	}
}

// message is the agent's message text among updates.
func message(us []sdk.SessionUpdate) string {
	var b strings.Builder
	for _, u := range us {
		if u.AgentMessageChunk != nil && u.AgentMessageChunk.Content.Text != nil {
			b.WriteString(u.AgentMessageChunk.Content.Text.Text)
		}
	}
	return b.String()
}

func updatesText(us []sdk.SessionUpdate) string {
	var lines []string
	for _, u := range us {
		b, _ := json.Marshal(u)
		lines = append(lines, string(b))
	}
	return strings.Join(lines, "\n")
}

// toolCall finds the card whose title starts with prefix, and the updates
// of it: its last status, its content text and its raw input.
type card struct {
	id      sdk.ToolCallId
	title   string
	kind    sdk.ToolKind
	status  sdk.ToolCallStatus
	content string
	input   any
	output  any
}

func cards(us []sdk.SessionUpdate) []*card {
	var out []*card
	byID := map[sdk.ToolCallId]*card{}
	text := func(cs []sdk.ToolCallContent) string {
		var parts []string
		for _, c := range cs {
			if c.Content != nil && c.Content.Content.Text != nil {
				parts = append(parts, c.Content.Content.Text.Text)
			}
		}
		return strings.Join(parts, "\n")
	}
	for _, u := range us {
		if tc := u.ToolCall; tc != nil {
			c := &card{id: tc.ToolCallId, title: tc.Title, kind: tc.Kind, status: tc.Status, content: text(tc.Content), input: tc.RawInput}
			byID[c.id] = c
			out = append(out, c)
		}
		if tu := u.ToolCallUpdate; tu != nil {
			c := byID[tu.ToolCallId]
			if c == nil {
				continue
			}
			if tu.Status != nil {
				c.status = *tu.Status
			}
			if tu.Content != nil {
				c.content = text(tu.Content)
			}
			if tu.RawInput != nil {
				c.input = tu.RawInput
			}
			if tu.RawOutput != nil {
				c.output = tu.RawOutput
			}
		}
	}
	return out
}

func findCard(cs []*card, prefix string) *card {
	for _, c := range cs {
		if strings.HasPrefix(c.title, prefix) {
			return c
		}
	}
	return nil
}

// acpProject copies testdata/acp/NAME into a new directory.
func acpProject(t *testing.T, name string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	copyTree(t, filepath.Join("testdata", "acp", name), dir)
	return dir
}

// runIDOf is the run id the closing line of a run names.
func runIDOf(t *testing.T, text string) string {
	t.Helper()
	i := strings.LastIndex(text, "run `")
	if i < 0 || len(text) < i+5+36 {
		t.Fatalf("no run id in %q", text)
	}
	return text[i+5 : i+5+36]
}

func readTranscript(t *testing.T, path string) []transcript.ExchangeEvent {
	t.Helper()
	evs, err := transcript.ReadFile(path)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return evs
}

// userTexts are the text blocks of every message.user of a transcript.
func userTexts(evs []transcript.ExchangeEvent) []string {
	var out []string
	for _, e := range evs {
		if e.Type == transcript.MessageUser {
			for _, b := range e.Message().Blocks {
				out = append(out, b.Text)
			}
		}
	}
	return out
}

func acpRunStatus(t *testing.T, evs []transcript.ExchangeEvent) string {
	t.Helper()
	last := evs[len(evs)-1]
	var r transcript.RunResult
	if last.Type != transcript.RunCompleted || transcript.DecodeResult(last.Step().Result, &r) != nil {
		t.Fatalf("the transcript does not end with run.completed: %+v", last)
	}
	return r.Status
}

// TestACPServe drives the real `reel acp-serve` with the ACP SDK's client
// side over stdio: initialize, session/new with the workflows as slash
// commands, a command with inputs, a conversation step answered by later
// prompts, an approval gate as a permission request, cancel (running and
// parked), two sessions in two projects at once that share nothing, a
// frame that is not JSON, and stdout holding protocol frames alone.
func TestACPServe(t *testing.T) {
	fake, err := filepath.Abs("testdata/acp/fake-claude")
	if err != nil {
		t.Fatal(err)
	}
	a, b := acpProject(t, "a"), acpProject(t, "b")
	storeA, storeB := filepath.Join(a, ".reel", "storage"), filepath.Join(b, ".reel", "storage")
	ed := startACP(t, t.TempDir(), "REEL_CLAUDE_BIN="+fake)

	// A frame that is not JSON is answered with a parse error; the
	// connection goes on.
	if _, err := ed.stdin.Write([]byte("this is not json\n")); err != nil {
		t.Fatal(err)
	}

	sa, cmds := ed.newSession(t, a)
	var names []string
	for _, c := range cmds {
		names = append(names, c.Name)
	}
	slices.Sort(names)
	if !slices.Equal(names, []string{"chat", "gate", "greet", "slow", "stray"}) {
		t.Fatalf("commands %q", names)
	}
	greet := cmds[slices.IndexFunc(cmds, func(c sdk.AvailableCommand) bool { return c.Name == "greet" })]
	if greet.Description != "Greets someone" || greet.Input == nil || greet.Input.Unstructured == nil ||
		greet.Input.Unstructured.Hint != "name=<string> [greeting=hello]" {
		t.Errorf("greet command %+v", greet)
	}

	t.Run("command with inputs", func(t *testing.T) {
		m := ed.Mark(sa)
		resp := ed.prompt(t, sa, `/greet name="Ada Lovelace" --input=greeting=hi stray-word colour=red`)
		if resp.StopReason != sdk.StopReasonEndTurn {
			t.Fatalf("stop reason %q", resp.StopReason)
		}
		us := ed.Since(sa, m)
		c := findCard(cards(us), "greet: echo")
		if c == nil || c.status != sdk.ToolCallStatusCompleted || c.kind != sdk.ToolKindExecute ||
			!strings.Contains(c.content, "hi Ada Lovelace from a") {
			t.Fatalf("greet card %+v in\n%s", c, updatesText(us))
		}
		msg := message(us)
		if !strings.Contains(msg, "Ignored `stray-word`") || !strings.Contains(msg, "Ignored `colour`: /greet declares no such input") ||
			!strings.Contains(msg, "✔ **greet** succeeded") || !strings.Contains(msg, "greeted Ada Lovelace") ||
			!strings.Contains(msg, "**line**: hi Ada Lovelace from a") {
			t.Errorf("message %q", msg)
		}
		id := runIDOf(t, msg)
		evs := readTranscript(t, filepath.Join(storeA, "transcripts", id+".jsonl"))
		if acpRunStatus(t, evs) != "success" {
			t.Errorf("status %s", acpRunStatus(t, evs))
		}
		var in transcript.RunInput
		b, _ := json.Marshal(evs[0].Step().Input)
		json.Unmarshal(b, &in)
		if in.Inputs["name"] != "Ada Lovelace" || in.Inputs["greeting"] != "hi" || in.Inputs["colour"] != nil {
			t.Errorf("recorded inputs %v", in.Inputs)
		}
	})

	t.Run("unknown command and plain text", func(t *testing.T) {
		m := ed.Mark(sa)
		if r := ed.prompt(t, sa, "/nope x=1"); r.StopReason != sdk.StopReasonEndTurn {
			t.Errorf("stop reason %q", r.StopReason)
		}
		if r := ed.prompt(t, sa, "hello there"); r.StopReason != sdk.StopReasonEndTurn {
			t.Errorf("stop reason %q", r.StopReason)
		}
		if r := ed.prompt(t, sa, "/greet"); r.StopReason != sdk.StopReasonEndTurn {
			t.Errorf("stop reason %q", r.StopReason)
		}
		msg := message(ed.Since(sa, m))
		for _, want := range []string{"Unknown workflow /nope", "/chat, /gate, /greet, /slow, /stray", "slash command", "Cannot start /greet", "name"} {
			if !strings.Contains(msg, want) {
				t.Errorf("message lacks %q:\n%s", want, msg)
			}
		}
	})

	t.Run("conversation", func(t *testing.T) {
		m := ed.Mark(sa)
		if r := ed.prompt(t, sa, "/chat topic=naming"); r.StopReason != sdk.StopReasonEndTurn {
			t.Fatalf("stop reason %q", r.StopReason)
		}
		us := ed.Since(sa, m)
		msg := message(us)
		if !strings.Contains(msg, "you said: Let us talk about naming") || !strings.Contains(msg, "Reply to go on") || strings.Contains(msg, "succeeded") {
			t.Fatalf("first turn:\n%s", updatesText(us))
		}
		cs := cards(us)
		if c := findCard(cs, "chat"); c == nil || c.status != sdk.ToolCallStatusInProgress || c.kind != sdk.ToolKindThink ||
			!strings.Contains(c.content, "Let us talk about naming") {
			t.Errorf("step card %+v", c)
		}
		if c := findCard(cs, "Read README.md"); c == nil || c.status != sdk.ToolCallStatusCompleted || c.kind != sdk.ToolKindRead || !strings.Contains(c.content, "# readme") {
			t.Errorf("tool card %+v", c)
		}
		thought := false
		for _, u := range us {
			if u.AgentThoughtChunk != nil && u.AgentThoughtChunk.Content.Text != nil && u.AgentThoughtChunk.Content.Text.Text == "Let me read the README first." {
				thought = true
			}
		}
		if !thought {
			t.Errorf("no thought in\n%s", updatesText(us))
		}

		m = ed.Mark(sa)
		if r := ed.prompt(t, sa, "what about tests"); r.StopReason != sdk.StopReasonEndTurn {
			t.Fatalf("stop reason %q", r.StopReason)
		}
		if msg := message(ed.Since(sa, m)); !strings.Contains(msg, "you said: what about tests") || strings.Contains(msg, "succeeded") {
			t.Fatalf("second turn %q", msg)
		}
		m = ed.Mark(sa)
		if r := ed.prompt(t, sa, "exit"); r.StopReason != sdk.StopReasonEndTurn || r.Usage == nil || r.Usage.TotalTokens == 0 {
			t.Fatalf("answer %+v", r)
		}
		us = ed.Since(sa, m)
		msg = message(us)
		if !strings.Contains(msg, "✔ **chat** succeeded") || !strings.Contains(msg, "tokens") {
			t.Fatalf("last turn:\n%s", updatesText(us))
		}
		if c := findCard(cards(ed.Since(sa, 0)), "chat"); c == nil || c.status != sdk.ToolCallStatusCompleted {
			t.Errorf("step card %+v", c)
		}
		evs := readTranscript(t, filepath.Join(storeA, "transcripts", runIDOf(t, msg)+".jsonl"))
		if got := userTexts(evs); !slices.Equal(got, []string{"Let us talk about naming", "what about tests"}) {
			t.Errorf("the agent was sent %q", got)
		}
	})

	t.Run("approval gate", func(t *testing.T) {
		ed.Permissions()
		ed.Answer(func(r sdk.RequestPermissionRequest) sdk.RequestPermissionOutcome {
			return sdk.NewRequestPermissionOutcomeSelected("skip")
		})
		m := ed.Mark(sa)
		if r := ed.prompt(t, sa, "/gate --breakpoint ship"); r.StopReason != sdk.StopReasonEndTurn {
			t.Fatalf("stop reason %q", r.StopReason)
		}
		perms := ed.Permissions()
		if len(perms) != 1 || perms[0].SessionId != sa || perms[0].ToolCall.Title == nil || *perms[0].ToolCall.Title != "Run ship (step)?" ||
			len(perms[0].Options) != 4 || !strings.Contains(fmt.Sprint(perms[0].ToolCall.RawInput), "touch shipped") {
			t.Fatalf("permission requests %+v", perms)
		}
		us := ed.Since(sa, m)
		cs := cards(us)
		// The step before the gate was shown before the question.
		if c := findCard(cs, "prepare"); c == nil || c.status != sdk.ToolCallStatusCompleted {
			t.Errorf("prepare card %+v", c)
		}
		if c := findCard(cs, "Run ship"); c == nil || c.status != sdk.ToolCallStatusCompleted || !strings.Contains(fmt.Sprint(c.output), "skipped") {
			t.Errorf("gate card %+v", c)
		}
		if _, err := os.Stat(filepath.Join(a, "shipped")); !os.IsNotExist(err) {
			t.Errorf("the skipped step ran: %v", err)
		}
		if msg := message(us); !strings.Contains(msg, "✔ **gate** succeeded") {
			t.Errorf("message %q", msg)
		}

		// --interactive asks before every step; "run it and every later
		// step" is asked once.
		ed.Answer(func(r sdk.RequestPermissionRequest) sdk.RequestPermissionOutcome {
			return sdk.NewRequestPermissionOutcomeSelected("run_all")
		})
		if r := ed.prompt(t, sa, "/gate --interactive"); r.StopReason != sdk.StopReasonEndTurn {
			t.Fatalf("stop reason %q", r.StopReason)
		}
		if n := len(ed.Permissions()); n != 1 {
			t.Errorf("%d permission requests, want 1", n)
		}
		if _, err := os.Stat(filepath.Join(a, "shipped")); err != nil {
			t.Errorf("the approved step did not run: %v", err)
		}
	})

	t.Run("cancel", func(t *testing.T) {
		m := ed.Mark(sa)
		answered := ed.promptAsync(context.Background(), t, sa, "/slow")
		ed.waitFor(t, sa, "the sleeping step", func(u sdk.SessionUpdate) bool {
			return u.ToolCall != nil && strings.HasPrefix(u.ToolCall.Title, "wait: sleep 60")
		})
		start := time.Now()
		if err := ed.conn.Cancel(context.Background(), sdk.CancelNotification{SessionId: sa}); err != nil {
			t.Fatal(err)
		}
		var resp sdk.PromptResponse
		select {
		case resp = <-answered:
		case <-time.After(time.Minute):
			t.Fatal("the cancelled prompt was not answered")
		}
		if resp.StopReason != sdk.StopReasonCancelled || time.Since(start) > 30*time.Second {
			t.Fatalf("answer %+v after %s", resp, time.Since(start))
		}
		msg := message(ed.Since(sa, m))
		if !strings.Contains(msg, "■ **slow** was cancelled") {
			t.Errorf("message %q", msg)
		}
		evs := readTranscript(t, filepath.Join(storeA, "transcripts", runIDOf(t, msg)+".jsonl"))
		if s := acpRunStatus(t, evs); s != "cancelled" {
			t.Errorf("status %s", s)
		}
		if c := findCard(cards(ed.Since(sa, m)), "wait: sleep 60"); c == nil || c.status != sdk.ToolCallStatusFailed {
			t.Errorf("step card %+v", c)
		}

		// A conversation parked for the next prompt is cancelled too; the
		// session goes on.
		m = ed.Mark(sa)
		if r := ed.prompt(t, sa, "/chat"); r.StopReason != sdk.StopReasonEndTurn {
			t.Fatalf("stop reason %q:\n%s", r.StopReason, updatesText(ed.Since(sa, m)))
		}
		if err := ed.conn.Cancel(context.Background(), sdk.CancelNotification{SessionId: sa}); err != nil {
			t.Fatal(err)
		}
		m = ed.Mark(sa)
		if r := ed.prompt(t, sa, "/greet name=again"); r.StopReason != sdk.StopReasonEndTurn {
			t.Fatalf("stop reason %q", r.StopReason)
		}
		msg = message(ed.Since(sa, m))
		if !strings.Contains(msg, "■ **chat** was cancelled") || !strings.Contains(msg, "✔ **greet** succeeded") {
			t.Errorf("message %q", msg)
		}
	})

	t.Run("two sessions at once", func(t *testing.T) {
		s1, _ := ed.newSession(t, a)
		s2, cmds2 := ed.newSession(t, b)
		var names []string
		for _, c := range cmds2 {
			names = append(names, c.Name)
		}
		slices.Sort(names)
		if !slices.Equal(names, []string{"chat", "where"}) {
			t.Errorf("project b's commands %q", names)
		}
		both := func(p1, p2 string) (sdk.PromptResponse, sdk.PromptResponse) {
			var r1, r2 sdk.PromptResponse
			var wg sync.WaitGroup
			wg.Go(func() { r1 = ed.prompt(t, s1, p1) })
			wg.Go(func() { r2 = ed.prompt(t, s2, p2) })
			wg.Wait()
			return r1, r2
		}
		// Both conversations are parked at once; each answer reaches its
		// own run.
		both("/chat topic=alpha", "/chat topic=beta")
		both("alpha two", "beta two")
		r1, r2 := both("exit", "exit")
		if r1.StopReason != sdk.StopReasonEndTurn || r2.StopReason != sdk.StopReasonEndTurn {
			t.Fatalf("answers %+v %+v", r1, r2)
		}
		m1, m2 := message(ed.Since(s1, 0)), message(ed.Since(s2, 0))
		if !strings.Contains(m1, "you said: alpha two") || strings.Contains(m1, "beta") {
			t.Errorf("session 1 saw:\n%s", m1)
		}
		if !strings.Contains(m2, "you said: beta two") || strings.Contains(m2, "alpha") {
			t.Errorf("session 2 saw:\n%s", m2)
		}
		e1 := readTranscript(t, filepath.Join(storeA, "transcripts", runIDOf(t, m1)+".jsonl"))
		e2 := readTranscript(t, filepath.Join(storeB, "transcripts", runIDOf(t, m2)+".jsonl"))
		if got := userTexts(e1); !slices.Equal(got, []string{"Let us talk about alpha", "alpha two"}) {
			t.Errorf("session 1's agent was sent %q", got)
		}
		if got := userTexts(e2); !slices.Equal(got, []string{"Let us talk about beta", "beta two"}) {
			t.Errorf("session 2's agent was sent %q", got)
		}
		// Each session runs in its own directory and keeps its own record.
		if r := ed.prompt(t, s2, "/where"); r.StopReason != sdk.StopReasonEndTurn {
			t.Fatalf("stop reason %q", r.StopReason)
		}
		if c := findCard(cards(ed.Since(s2, 0)), "where"); c == nil || !strings.Contains(c.content, "\nb\n") {
			t.Errorf("where card %+v", c)
		}
		for _, s := range []struct {
			id      sdk.SessionId
			storage string
			runs    int
		}{{s1, storeA, 1}, {s2, storeB, 2}, {sa, storeA, 7}} {
			b, err := os.ReadFile(filepath.Join(s.storage, "acp", "sessions", string(s.id), "session.json"))
			if err != nil {
				t.Fatal(err)
			}
			var rec struct {
				SessionID string `json:"session_id"`
				Runs      []struct {
					RunID  string `json:"run_id"`
					Status string `json:"status"`
				} `json:"runs"`
			}
			if err := json.Unmarshal(b, &rec); err != nil || rec.SessionID != string(s.id) || len(rec.Runs) != s.runs {
				t.Errorf("%s's record (%v):\n%s", s.id, err, b)
			}
		}
		if _, err := os.Stat(filepath.Join(storeB, "acp", "sessions", string(s1))); !os.IsNotExist(err) {
			t.Errorf("session 1's state is in project b's storage: %v", err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if _, err := ed.conn.CloseSession(ctx, sdk.CloseSessionRequest{SessionId: s2}); err != nil {
			t.Errorf("session/close: %v", err)
		}
		if _, err := ed.conn.Prompt(ctx, sdk.PromptRequest{SessionId: s2, Prompt: []sdk.ContentBlock{sdk.TextBlock("/where")}}); err == nil {
			t.Errorf("a closed session answered")
		}
	})

	t.Run("stdout holds protocol frames alone", func(t *testing.T) {
		if r := ed.prompt(t, sa, "/stray"); r.StopReason != sdk.StopReasonEndTurn {
			t.Fatalf("stop reason %q", r.StopReason)
		}
		ed.hangUp(t)
		ed.outMu.Lock()
		raw := ed.stdout.Bytes()
		ed.outMu.Unlock()
		sc := bufio.NewScanner(bytes.NewReader(raw))
		sc.Buffer(nil, 16<<20)
		frames, parseErrors := 0, 0
		for sc.Scan() {
			var f struct {
				JSONRPC string          `json:"jsonrpc"`
				ID      json.RawMessage `json:"id"`
				Error   *struct {
					Code int `json:"code"`
				} `json:"error"`
			}
			if err := json.Unmarshal(sc.Bytes(), &f); err != nil || f.JSONRPC != "2.0" {
				t.Fatalf("not a protocol frame on stdout: %q", sc.Text())
			}
			if f.Error != nil && f.Error.Code == -32700 && string(f.ID) == "null" {
				parseErrors++
			}
			frames++
		}
		if frames < 50 || parseErrors != 1 || !bytes.HasSuffix(raw, []byte("\n")) {
			t.Errorf("%d frames, %d parse errors", frames, parseErrors)
		}
		if _, err := os.Stat("/proc/self/fd/1"); err == nil && !strings.Contains(ed.stderr.String(), "stray-bytes-on-fd-1") {
			t.Errorf("the stray write did not land on stderr:\n%s", ed.stderr.String())
		}
		verifyStorage(t, storeA)
		verifyStorage(t, storeB)
	})
}

// Bad flags stop acp-serve before it speaks: exit 1 with the reason.
func TestACPServeFlags(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "bad.yaml"), "inputs: [unclosed\n", 0o644)
	for _, args := range [][]string{
		{"acp-serve", "--config", "missing.yaml"},
		{"acp-serve", "--config", "bad.yaml"},
		{"acp-serve", "--log-level", "loud"},
	} {
		res := runBinary(t, dir, args...)
		if res.code != 1 || !strings.Contains(res.stderr, args[1]) || res.stdout != "" {
			t.Errorf("%q: exit %d\nstdout %q\nstderr %q", args, res.code, res.stdout, res.stderr)
		}
	}
}
