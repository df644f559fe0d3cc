package secrets

import (
	"github.com/reelhq/reel/transcript"

	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

func TestMasker(t *testing.T) {
	env := []string{
		"OPENAI_API_KEY=sk-proj-abcdefghijklmnop1234",
		"GITHUB_TOKEN=gh-token-value-123",
		"DB_PASSWORD=hunter2hunter2",
		"AWS_SECRET=aws\"quoted\\secret",
		"SHORT_KEY=abc",                                     // too short to mask safely
		"HOME=/home/user",                                   // not secret-looking
		"MY_TOKEN=ghp_abcdefghijklmnopqrstuvwxyz0123456789", // also a known shape
	}
	m := NewMasker(env)
	cases := map[string]string{
		"key sk-proj-abcdefghijklmnop1234 end":                   "key [MASKED] end",
		"token gh-token-value-123":                               "token [MASKED]",
		"pw=hunter2hunter2;":                                     "pw=[MASKED];",
		`aws"quoted\secret`:                                      "[MASKED]",
		"abc stays, /home/user stays":                            "abc stays, /home/user stays",
		"unknown sk-ant-api03-ZZZZZZZZZZZZZZZZZZ":                "unknown [MASKED]",
		"AKIAZ52HGXYRN4WBTEST":                                   "[MASKED]",
		"Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.payload":     "Authorization: Bearer [MASKED]",
		"ghp_abcdefghijklmnopqrstuvwxyz0123456789":               "[MASKED]",
		"xoxb-2917361735-3059274619385-Kx7Tq9LmW2vRb4NzY8pHc1sD": "[MASKED]",
	}
	for in, want := range cases {
		if got := m.MaskString(in); got != want {
			t.Errorf("MaskString(%q) = %q, want %q", in, got, want)
		}
	}
	var nilMasker *Masker
	if nilMasker.MaskString("sk-proj-abcdefghijklmnop1234") != "sk-proj-abcdefghijklmnop1234" {
		t.Error("nil masker masked")
	}
	nilMasker.MaskEvent(&transcript.ExchangeEvent{})
}

func TestMaskerOnRecordedEvents(t *testing.T) {
	const secret = "s3cr3t-value-42"
	m := NewMasker([]string{"API_KEY=" + secret})
	r, err := transcript.Create(t.TempDir(), transcript.NewRunID(), transcript.Options{Masker: m})
	if err != nil {
		t.Fatal(err)
	}
	sub := r.Subscribe()
	orig := &transcript.ToolPayload{Name: "Bash", CallID: "1", Input: map[string]any{"command": "curl -H 'x: " + secret + "'", "n": 1}, Output: json.RawMessage(`{"out":"` + secret + `\n","list":["` + secret + `",2]}`), Error: "failed with " + secret, Fidelity: transcript.FidelityRouter}
	events := []transcript.ExchangeEvent{
		{Type: transcript.RunStarted, Payload: &transcript.StepPayload{Name: "w", Kind: "workflow"}},
		{Type: transcript.StepStarted, Path: "a", Payload: &transcript.StepPayload{Name: "a", Kind: "command", Command: "echo " + secret}},
		{Type: transcript.MessageUser, Path: "a", Payload: &transcript.MessagePayload{Role: "user", Blocks: []transcript.ContentBlock{{Type: transcript.BlockText, Fidelity: transcript.FidelityRouter, Text: "use " + secret}, {Type: transcript.BlockToolUse, Fidelity: transcript.FidelityRouter, ToolName: "x", ToolID: "1", ToolInput: map[string]string{"k": secret}}}}},
		{Type: transcript.ToolCall, Path: "a", Payload: orig},
		{Type: transcript.StepCompleted, Path: "a", Payload: &transcript.StepPayload{Name: "a", Kind: "command", Error: secret, Result: transcript.CommandResult{Output: secret}}},
	}
	for _, e := range events {
		if _, err := r.Record(e); err != nil {
			t.Fatal(err)
		}
	}
	r.Close()
	data, _ := os.ReadFile(r.Path())
	if bytes.Contains(data, []byte(secret)) {
		t.Fatalf("secret written:\n%s", data)
	}
	if n := bytes.Count(data, []byte(Masked)); n < 9 {
		t.Fatalf("only %d masks:\n%s", n, data)
	}
	if _, err := transcript.ReadAll(bytes.NewReader(data)); err != nil {
		t.Fatal(err)
	}
	for e := range sub.C() {
		b, _ := transcript.AppendEvent(nil, &e)
		if bytes.Contains(b, []byte(secret)) {
			t.Fatalf("secret broadcast: %s", b)
		}
	}
	// The caller's own payload is untouched.
	if !strings.Contains(orig.Error, secret) {
		t.Fatal("masking modified the caller's payload")
	}
}

// BenchmarkMaskString masks ordinary build output (a secret every 50 lines)
// beside the plain standard-library way: a regular expression per prefix
// rule, run when the string holds its prefix (stdlibMasker), which still
// does less than the masker (no key block, header or assignment rules).
func BenchmarkMaskString(b *testing.B) {
	var lines []string
	for i := 0; i < 1000; i++ {
		line := fmt.Sprintf("[%05d] compiled ./pkg/module%d/file.go ok in 0.%03ds", i, i%97, i%1000)
		if i%50 == 0 {
			line = "connecting with token ghp_abcdefghijklmnopqrstuvwxyz0123456789"
		}
		lines = append(lines, line)
	}
	size := 0
	for _, l := range lines {
		size += len(l)
	}
	m := NewMasker([]string{"REEL_BENCH_TOKEN=not-in-the-output-123"})
	b.SetBytes(int64(size))
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		for _, l := range lines {
			m.MaskString(l)
		}
	}
	dur := time.Since(start)
	b.StopTimer()
	sm := newStdlibMasker()
	baseStart := time.Now()
	for i := 0; i < b.N; i++ {
		for _, l := range lines {
			sm.mask(l)
		}
	}
	base := time.Since(baseStart)
	b.ReportMetric(float64(base)/float64(dur), "x-vs-stdlib")
}

// run.started's input and run.completed's outputs round-trip, masked like
// every other value.
func TestRunInputRoundTrip(t *testing.T) {
	in := transcript.RunInput{
		Inputs:   map[string]any{"n": 3, "tok": "ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5"},
		Workflow: &transcript.WorkflowSource{File: "/w.yaml", SHA256: "ab", States: map[string]string{"a": "01"}},
		Reused:   [][2]int{{1, 4}, {7, 7}},
		Step:     "a", Mocks: map[string]string{"states.b.Output": "x"},
	}
	ev := transcript.ExchangeEvent{Seq: 1, RunID: transcript.NewRunID(), Type: transcript.RunStarted, Payload: &transcript.StepPayload{Name: "w", Kind: transcript.KindWorkflow, Attempt: 2, Input: in}}
	NewMasker(nil).MaskEvent(&ev)
	b, err := transcript.AppendEvent(nil, &ev)
	if err != nil {
		t.Fatal(err)
	}
	got, err := transcript.DecodeEvent(b)
	if err != nil {
		t.Fatal(err)
	}
	var back transcript.RunInput
	if err := transcript.DecodeResult(got.Step().Input, &back); err != nil {
		t.Fatal(err)
	}
	if got.Step().Attempt != 2 || back.Inputs["tok"] != Masked || back.Inputs["n"] != 3.0 || back.Reused[1] != [2]int{7, 7} || back.Workflow.States["a"] != "01" || back.Mocks["states.b.Output"] != "x" {
		t.Fatalf("round trip: %s\n%+v", b, back)
	}
	b2, _ := transcript.AppendEvent(nil, &got)
	if string(b2) != string(b) {
		t.Fatalf("re-encoded differs:\n%s\n%s", b, b2)
	}
}

// WithLinesOf adds the lines of the multi-line values the masker masks
// whole, each on its own, and nothing when there are none.
func TestWithLinesOf(t *testing.T) {
	const shape = "ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5"
	environ := []string{"HOME=/home/u", "API_KEY=abcdefgh", "NOTES=first line\nsecond line", "CONFIG=a: 1\nkey: " + shape}
	m := NewMasker(environ)
	if got := m.WithLinesOf(environ); got != m {
		t.Fatal("a new masker for an environment without multi-line secrets")
	}
	environ = append(environ, "SSH_PRIVATE_KEY=-----BEGIN-----\r\nAAAAbbbbCCCC\r\n-----END-----")
	m = NewMasker(environ)
	wide := m.WithLinesOf(environ)
	for in, want := range map[string]string{
		"x AAAAbbbbCCCC y second line":                     "x [MASKED] y second line",
		"-----BEGIN-----\r\nAAAAbbbbCCCC\r\n-----END-----": "[MASKED]",
		"abcdefgh and " + shape:                            "[MASKED] and [MASKED]",
	} {
		if got := wide.MaskString(in); got != want {
			t.Errorf("MaskString(%q) = %q, want %q", in, got, want)
		}
	}
	if got := m.MaskString("x AAAAbbbbCCCC"); got != "x AAAAbbbbCCCC" {
		t.Errorf("the masker itself changed: %q", got)
	}
	if (*Masker)(nil).WithLinesOf(environ) != nil {
		t.Error("a nil masker widened to one that masks")
	}
}
