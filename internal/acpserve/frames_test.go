package acpserve

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"
)

// filterRun passes in through filterFrames and returns what reached the
// SDK's side of the pipe and what was answered on out.
func filterRun(t testing.TB, in []byte) (passed, answered []string) {
	t.Helper()
	pr, pw := io.Pipe()
	var out bytes.Buffer
	done := make(chan error, 1)
	go func() { done <- filterFrames(bytes.NewReader(in), pw, &frameWriter{w: &out}, nil) }()
	sc := bufio.NewScanner(pr)
	sc.Buffer(nil, maxFrameBytes+2)
	for sc.Scan() {
		passed = append(passed, sc.Text())
	}
	if err := <-done; err != nil {
		t.Fatalf("filterFrames: %v", err)
	}
	for _, l := range strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n") {
		if l != "" {
			answered = append(answered, l)
		}
	}
	return passed, answered
}

// A frame that is not JSON, or is too long, is answered with a parse error
// and skipped; the frames around it go through, whatever bytes they hold.
func TestFilterFrames(t *testing.T) {
	huge := `{"jsonrpc":"2.0","id":7,"method":"x","params":"` + strings.Repeat("a", 20<<20) + `"}`
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`,
		"not json at all",
		"",
		"   ",
		"\x00\x00\x00",
		huge,
		`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s\u0000"}}`,
		"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"m\",\"params\":\"\xff\xfe\"}",
		`{"jsonrpc":"2.0","id":3,"method":"last-without-newline"}`,
	}, "\n")
	passed, answered := filterRun(t, []byte(in))
	if len(passed) != 4 || !strings.Contains(passed[0], "initialize") || !strings.Contains(passed[1], "session/cancel") ||
		!strings.Contains(passed[3], "last-without-newline") {
		t.Errorf("passed %d frames: %.200q", len(passed), passed)
	}
	if len(answered) != 3 {
		t.Fatalf("answered %q", answered)
	}
	for _, a := range answered {
		var f struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
			Error   struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal([]byte(a), &f); err != nil || f.JSONRPC != "2.0" || string(f.ID) != "null" || f.Error.Code != -32700 {
			t.Errorf("answer %q", a)
		}
	}
	if !strings.Contains(answered[2], "more than 10485760 bytes") {
		t.Errorf("the long frame's answer: %q", answered[2])
	}
}

// Whatever the editor sends, every frame that reaches the SDK is one line
// of valid JSON, every answer is a JSON-RPC error, and each input line
// yields one or the other.
func FuzzFilterFrames(f *testing.F) {
	for _, s := range []string{`{"jsonrpc":"2.0","id":1,"method":"m"}` + "\n", "garbage\n{}\n", "\x00\n\xff\n", "[1,2]", "\n\n\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		passed, answered := filterRun(t, in)
		for _, p := range passed {
			if !json.Valid([]byte(p)) || strings.Contains(p, "\n") {
				t.Fatalf("passed %q", p)
			}
		}
		for _, a := range answered {
			if !json.Valid([]byte(a)) || !strings.Contains(a, `"code":-32700`) {
				t.Fatalf("answered %q", a)
			}
		}
		lines := 0
		for _, l := range bytes.Split(in, []byte("\n")) {
			if len(bytes.TrimSpace(l)) > 0 {
				lines++
			}
		}
		if len(passed)+len(answered) != lines {
			t.Fatalf("%d lines in, %d passed, %d answered", lines, len(passed), len(answered))
		}
	})
}

// session/cancel is taken as it comes in the stream, for the prompts sent
// before it alone, and does not reach the SDK, whose queue of
// notifications could deliver it after the next prompt.
func TestInOrder(t *testing.T) {
	srv := &server{log: slog.New(slog.DiscardHandler), sessions: map[sdk.SessionId]*session{}}
	s := &session{id: "s1", srv: srv}
	srv.sessions[s.id] = s
	frames := []struct {
		frame   string
		forward bool
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"sessionId":"s1","prompt":[]}}`, true},
		{`{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"s1","prompt":[{"type":"text","text":"session/cancel"}]}}`, true},
		{`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s1"}}`, false},
		{`{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"s1","prompt":[]}}`, true},
		{`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"nope"}}`, false},
		{`{"jsonrpc":"2.0","id":4,"method":"session/prompt","params":{"sessionId":"nope","prompt":[]}}`, true},
		{`{"jsonrpc":"2.0","id":5,"method":"session/new","params":{"cwd":"/","mcpServers":[]}}`, true},
		{`{"jsonrpc":"2.0","id":6,"result":{"outcome":{"outcome":"cancelled"}}}`, true},
	}
	for _, f := range frames {
		if got := srv.inOrder([]byte(f.frame)); got != f.forward {
			t.Errorf("%s: forwarded %v", f.frame, got)
		}
	}
	if p, c := s.prompts.Load(), s.cancelledTo.Load(); p != 3 || c != 2 {
		t.Errorf("prompts %d, cancelled up to %d; want 3 and 2", p, c)
	}
}
