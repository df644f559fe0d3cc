package normalize

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reelhq/reel/internal/testfixtures"
	"github.com/reelhq/reel/transcript"
)

func parseFile(t *testing.T, f Format, path string) parsed {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return parse(t, f, data, nil)
}

// A Codex session's total_token_usage starts again from zero when Codex
// starts a new conversation in the file: each run of totals counts by its
// last, not the file's last total alone (issue 24: a 1.36M-token rollout
// was imported as 37k tokens).
func TestCodexRolloutTokensAcrossRestarts(t *testing.T) {
	p := parseFile(t, CodexRollout, "testdata/recordings/codex-rollout/compacted-restart.jsonl")
	want := transcript.Usage{InputTokens: 320000, OutputTokens: 7000, CacheReadTokens: 250000, ReasoningTokens: 3500, TotalTokens: 327000}
	if got := p.res.Agent.Usage; got != want {
		t.Errorf("usage %+v, want %+v", got, want)
	}

	// The shared real rollout (jnarowski/agentcmd, Codex 0.40, 35
	// token_count events climbing to 543,488), written twice into one
	// file as a resumed session restarts its count: twice its tokens.
	real := filepath.Join(testfixtures.Dir(t, "codex-rollout"), "rollout-2025-09-25T15-12-14-019982b8-3422-79e0-8b3b-05abaf4f3c3e.jsonl")
	data, err := os.ReadFile(real)
	if err != nil {
		t.Fatal(err)
	}
	once := parse(t, CodexRollout, data, nil).res.Agent.Usage
	if once.TotalTokens != 543488 {
		t.Fatalf("one pass: %d tokens, want 543488 (the file's last total_token_usage)", once.TotalTokens)
	}
	twice := parse(t, CodexRollout, bytes.Join([][]byte{data, data}, nil), nil).res.Agent.Usage
	if twice.TotalTokens != 2*once.TotalTokens || twice.InputTokens != 2*once.InputTokens || twice.CacheReadTokens != 2*once.CacheReadTokens {
		t.Errorf("restarted count: %+v, want twice %+v", twice, once)
	}
}

// codex exec --json reports each thread's running total in turn.completed;
// a count that starts again within a thread adds up the same way.
func TestCodexExecThreadTotalsAcrossRestarts(t *testing.T) {
	rec := strings.Join([]string{
		`{"type":"thread.started","thread_id":"t1"}`,
		`{"type":"turn.started"}`,
		`{"type":"turn.completed","usage":{"input_tokens":1000,"cached_input_tokens":800,"output_tokens":100}}`,
		`{"type":"turn.started"}`,
		`{"type":"turn.completed","usage":{"input_tokens":2500,"cached_input_tokens":2000,"output_tokens":300}}`,
		`{"type":"turn.started"}`,
		`{"type":"turn.completed","usage":{"input_tokens":400,"cached_input_tokens":0,"output_tokens":50}}`,
	}, "\n") + "\n"
	got := parse(t, CodexExecJSON, []byte(rec), nil).res.Agent.Usage
	if got.InputTokens != 2900 || got.OutputTokens != 350 || got.CacheReadTokens != 2000 {
		t.Errorf("usage %+v, want 2900 in, 350 out, 2000 cache read", got)
	}
}

// The title of a Codex session is what the user asked, not the IDE
// extension's preamble: in the shared real rollout (jnarowski/agentcmd) the
// prompt starts "# Context from my IDE setup:".
func TestCodexTitleIsTheRequest(t *testing.T) {
	real := filepath.Join(testfixtures.Dir(t, "codex-rollout"), "rollout-2025-09-25T15-12-14-019982b8-3422-79e0-8b3b-05abaf4f3c3e.jsonl")
	p := parseFile(t, CodexRollout, real)
	if !strings.HasPrefix(p.res.Prompt, "Evaluate @packages/services and create a new") {
		t.Errorf("prompt %.80q, want the request under ## My request for Codex:", p.res.Prompt)
	}
	p = parseFile(t, CodexRollout, "testdata/recordings/codex-rollout/compacted-restart.jsonl")
	if p.res.Prompt != "Make the health endpoint report the database status" {
		t.Errorf("prompt %q", p.res.Prompt)
	}
	// The message itself stays as it was sent.
	for _, ev := range p.events {
		if ev.Type == transcript.MessageUser {
			if mp := ev.Message(); mp != nil && strings.HasPrefix(mp.Blocks[0].Text, "# Context from my IDE setup") {
				return
			}
		}
	}
	t.Error("the IDE preamble is no longer in the transcript")
}

// A Claude log's summary line titles the session only when its leafUuid is
// one of this session's messages, as claude-code-log matches them; Claude
// Code writes other sessions' summaries into a log it resumes.
func TestClaudeSummaryTitleByLeaf(t *testing.T) {
	for _, c := range []struct{ file, title, prompt string }{
		{"foreign-summary.jsonl", "Fix flaky login test", "Why does the login test fail on CI only?"},
		{"no-own-summary.jsonl", "", "Add a retry to the payment webhook"},
		{"two-turns.jsonl", "Weather check", "What's the weather in Paris?"},
	} {
		p := parseFile(t, ClaudeSessionLog, filepath.Join("testdata/recordings/claude-session-log", c.file))
		if p.res.Title != c.title || p.res.Prompt != c.prompt {
			t.Errorf("%s: title %q, prompt %q; want %q, %q", c.file, p.res.Title, p.res.Prompt, c.title, c.prompt)
		}
	}
	// The shared real session (jnarowski/agentcmd, Claude Code 2.0.26)
	// has no summary line: its first real prompt, not the /clear markup.
	p := parseFile(t, ClaudeSessionLog, filepath.Join(testfixtures.Dir(t, "claude-session-log"), "full-session-two.jsonl"))
	if p.res.Title != "" || p.res.Prompt == "" || strings.HasPrefix(p.res.Prompt, "<command-name>") {
		t.Errorf("full-session-two: title %q, prompt %.60q", p.res.Title, p.res.Prompt)
	}
}

// Codex 0.40 writes a shell call together with its output when the call
// ends, so the call's own line says nothing of when it started; the output
// says how long it ran. The tool.call starts at the output's time minus that
// duration, the recording's order is kept, and a call written on its own
// line before its output (newer Codex) keeps the time of that line.
func TestCodexRolloutCallStartsWhenItRan(t *testing.T) {
	p := parseFile(t, CodexRollout, "testdata/recordings/codex-rollout/calls-with-outputs.jsonl")
	at := func(s string) time.Time { return time.Date(2025, 9, 25, 10, 0, 0, 0, time.UTC).Add(secs(t, s)) }
	want := map[string]time.Time{
		"call_t1": at("1.701"),  // written at 8.201 with 6.5 s
		"call_l1": at("10.401"), // local_shell_call, 11.601 with 1.2 s
		"call_t2": at("11.601"), // 0.0 s: its own time
		"call_t3": at("13"),     // no output: its own time
		"call_t4": at("21"),     // written 3 s before its 0.4 s output
	}
	calls, order := callTimes(p)
	for id, w := range want {
		if got := calls[id]; !got.Equal(w) {
			t.Errorf("%s starts at %s, want %s", id, got.Format(time.StampMilli), w.Format(time.StampMilli))
		}
	}
	// The same events in the same order as when calls went out at once.
	wantOrder := "message.user tool.call message.assistant tool.result tool.call message.assistant tool.result " +
		"tool.call message.assistant tool.result tool.call message.assistant message.user tool.call message.assistant " +
		"tool.result message.assistant tool.result"
	if order != wantOrder {
		t.Errorf("events\n%s\nwant\n%s", order, wantOrder)
	}

	// Two calls of one response, then both outputs (parallel calls), and a
	// call the exec_command_end event times (extended rollouts); a call
	// whose output never comes goes out at the end with its own time. No
	// call starts before the session does.
	rec := strings.Join([]string{
		`{"timestamp":"2025-09-25T10:00:06.000Z","type":"session_meta","payload":{"id":"s","cwd":"/w","cli_version":"0.40.0"}}`,
		`{"timestamp":"2025-09-25T10:00:09.000Z","type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{\"command\":[\"ls\"]}","call_id":"a"}}`,
		`{"timestamp":"2025-09-25T10:00:09.000Z","type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{\"command\":[\"pwd\"]}","call_id":"b"}}`,
		`{"timestamp":"2025-09-25T10:00:09.000Z","type":"response_item","payload":{"type":"function_call_output","call_id":"a","output":"{\"output\":\"x\\n\",\"metadata\":{\"exit_code\":0,\"duration_seconds\":2.0}}"}}`,
		`{"timestamp":"2025-09-25T10:00:09.000Z","type":"response_item","payload":{"type":"function_call_output","call_id":"b","output":"{\"output\":\"/w\\n\",\"metadata\":{\"exit_code\":0,\"duration_seconds\":3.5}}"}}`,
		`{"timestamp":"2025-09-25T10:00:12.000Z","type":"response_item","payload":{"type":"function_call","name":"exec_command","arguments":"{\"cmd\":\"make\"}","call_id":"c"}}`,
		`{"timestamp":"2025-09-25T10:00:12.000Z","type":"event_msg","payload":{"type":"exec_command_end","call_id":"c","exit_code":0,"duration":{"secs":1,"nanos":250000000}}}`,
		`{"timestamp":"2025-09-25T10:00:12.000Z","type":"response_item","payload":{"type":"function_call_output","call_id":"c","output":"Process exited with code 0\nOutput:\nok\n"}}`,
		`{"timestamp":"2025-09-25T10:00:15.000Z","type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{\"command\":[\"sleep\",\"9\"]}","call_id":"d"}}`,
		`{"timestamp":"2025-09-25T10:00:16.000Z","type":"event_msg","payload":{"type":"turn_aborted","reason":"interrupted"}}`,
	}, "\n") + "\n"
	p = parse(t, CodexRollout, []byte(rec), nil)
	calls, order = callTimes(p)
	want = map[string]time.Time{"a": at("7"), "b": at("6"), "c": at("10.75"), "d": at("15")}
	for id, w := range want {
		if got := calls[id]; !got.Equal(w) {
			t.Errorf("%s starts at %s, want %s", id, got.Format(time.StampMilli), w.Format(time.StampMilli))
		}
	}
	if want := "tool.call tool.call message.assistant tool.result tool.result tool.call message.assistant tool.result " +
		"tool.call message.assistant tool.result"; order != want {
		t.Errorf("events\n%s\nwant\n%s", order, want)
	}
	if last := p.events[len(p.events)-1].Payload.(*transcript.ToolPayload); last.CallID != "d" || !strings.HasPrefix(last.Error, "no result") {
		t.Errorf("the call without output ends with %+v", last)
	}
}

func secs(t *testing.T, s string) time.Duration {
	d, err := time.ParseDuration(s + "s")
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// callTimes is the time of each tool.call by call id, and the events'
// types in order.
func callTimes(p parsed) (map[string]time.Time, string) {
	calls := make(map[string]time.Time)
	var types []string
	for _, ev := range p.events {
		types = append(types, string(ev.Type))
		if ev.Type == transcript.ToolCall {
			calls[ev.Payload.(*transcript.ToolPayload).CallID] = ev.Timestamp
		}
	}
	return calls, strings.Join(types, " ")
}

// A held call whose output does not come soon holds at most maxHeld events:
// then they go out, in order, and the events after them go out at once.
func TestHeldEventsAreBounded(t *testing.T) {
	var got []transcript.EventType
	s := newState(func(ev transcript.ExchangeEvent) error { got = append(got, ev.Type); return nil })
	s.heldCall("a", "shell", nil, time.Time{})
	for range 10 * maxHeld {
		s.send(transcript.MessageAssistant, time.Time{}, nil)
		if len(s.held) > maxHeld {
			t.Fatalf("%d events held, want at most %d", len(s.held), maxHeld)
		}
	}
	if want := 10*maxHeld + 1 - (len(s.held)); len(got) != want || got[0] != transcript.ToolCall {
		t.Fatalf("%d events out (first %v), want %d, the call first", len(got), got[0], want)
	}
}
