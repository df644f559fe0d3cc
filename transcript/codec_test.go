package transcript

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite golden files")

const testRun = "550e8400-e29b-41d4-a716-446655440000"

var testTime = time.Date(2026, 6, 8, 8, 14, 42, 123456000, time.UTC)

// wireEvents covers every event type, every block type and every optional
// field once, including the hostile bytes providers send.
func wireEvents() []ExchangeEvent {
	ev := func(seq uint64, t EventType, path string, iter int, p any) ExchangeEvent {
		return ExchangeEvent{Seq: seq, RunID: testRun, Type: t, Path: path, Iteration: iter, Timestamp: testTime.Add(time.Duration(seq) * time.Millisecond), Payload: p}
	}
	child := "7c9e6679-7425-40de-944b-e07fc1f90ae7"
	cost := 0.0123
	evs := []ExchangeEvent{
		ev(1, RunStarted, "", 0, &StepPayload{Name: "code-review", Kind: KindWorkflow}),
		ev(2, StepStarted, "lint", 0, &StepPayload{Name: "lint", Kind: KindCommand, Command: "go vet ./...", Attempt: 1}),
		ev(3, StepCompleted, "lint", 0, &StepPayload{Name: "lint", Kind: KindCommand, Attempt: 1, Result: CommandResult{ExitCode: 0, Output: "ok\n", Stderr: ""}}),
		ev(4, StepStarted, "each_file.review", 2, &StepPayload{Name: "review", Kind: KindAgent}),
		ev(5, MessageUser, "each_file.review", 2, &MessagePayload{Role: "user", Blocks: []ContentBlock{
			{Type: BlockText, Fidelity: FidelityRouter, Text: "Review main.go for bugs.\n<tags> & \"quotes\""},
			{Type: BlockText, Fidelity: FidelityRouter, Text: "You are terse."},
		}}),
		ev(6, MessageAssistant, "each_file.review", 2, &MessagePayload{Role: "assistant", Blocks: []ContentBlock{
			{Type: BlockThinking, Fidelity: FidelityAgentEmitted, Thinking: "First I should read it."},
			{Type: BlockText, Fidelity: FidelityAgentEmitted, Text: "nul:\x00 bad:\xff\xfe tab:\t ls:\u2028 é 😀"},
			{Type: BlockToolUse, Fidelity: FidelityAgentEmitted, ToolName: "Read", ToolID: "toolu_01", ToolInput: json.RawMessage(`{"path":"main.go","limit":10}`)},
			{Type: BlockCommand, Fidelity: FidelityAgentEmitted, Command: "ls -la | wc -l"},
			{Type: BlockStream, Fidelity: FidelityAgentEmitted, Chunk: "partial"},
			{Type: BlockToolResult, Fidelity: FidelityAgentEmitted, ToolID: "toolu_01", ToolContent: "package main\n"},
		}}),
		ev(7, ToolCall, "each_file.review", 2, &ToolPayload{Name: "Read", CallID: "toolu_01", Input: map[string]any{"path": "main.go", "limit": 10}, Fidelity: FidelityAgentEmitted}),
		ev(8, ToolResult, "each_file.review", 2, &ToolPayload{Name: "Read", CallID: "toolu_01", Input: map[string]any{"path": "main.go", "limit": 10}, Output: "package main\n", Fidelity: FidelityAgentEmitted}),
		ev(9, ToolCall, "each_file.review", 2, &ToolPayload{Name: "Bash", CallID: "call_2", Input: json.RawMessage("{\n  \"command\": \"false\"\n}"), Fidelity: FidelityRouter}),
		ev(10, ToolResult, "each_file.review", 2, &ToolPayload{Name: "Bash", CallID: "call_2", Output: nil, Error: "exit status 1", Fidelity: FidelityRouter}),
		ev(11, StepCompleted, "each_file.review", 2, &StepPayload{Name: "review", Kind: KindAgent, Result: AgentResult{Output: "Found 2 issues.", Provider: "claude", Model: "claude-sonnet-4-5", Usage: Usage{InputTokens: 1200, OutputTokens: 80, CacheReadTokens: 1000, TotalTokens: 1280}, CostUSD: &cost, DurationMS: 4200}}),
		ev(12, StepStarted, "sub", 0, &StepPayload{Name: "sub", Kind: KindCallWorkflow}),
		ev(13, CallWorkflowStarted, "sub", 0, &StepPayload{Name: "sub", Kind: KindCallWorkflow}),
		ev(14, CallWorkflowCompleted, "sub", 0, &StepPayload{Name: "sub", Kind: KindCallWorkflow, Error: "child failed"}),
		ev(15, StepCompleted, "sub", 0, &StepPayload{Name: "sub", Kind: KindCallWorkflow, Error: "child failed"}),
		ev(16, RunCompleted, "", 0, &StepPayload{Name: "code-review", Kind: KindWorkflow, Error: "step sub failed", Result: RunResult{Status: "failure", ExitCode: 1, DurationMS: 16, Usage: Usage{InputTokens: 1200, OutputTokens: 80, CacheReadTokens: 1000, TotalTokens: 1280}, CostUSD: &cost}}),
	}
	evs[12].ChildRunID = child
	evs[13].ChildRunID = child
	return evs
}

func encodeAll(t testing.TB, evs []ExchangeEvent) []byte {
	t.Helper()
	var out []byte
	for i := range evs {
		var err error
		out, err = AppendEvent(out, &evs[i])
		if err != nil {
			t.Fatalf("encode event %d: %v", i, err)
		}
		out = append(out, '\n')
	}
	return out
}

// TestGoldenWireShape pins the canonical stream shape (NFR-004): any change
// to field names, order, escaping or timestamp layout fails here.
func TestGoldenWireShape(t *testing.T) {
	got := encodeAll(t, wireEvents())
	golden := filepath.Join("testdata", "wire.golden.jsonl")
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("read golden (run with -update to create): %v", err)
	}
	if !bytes.Equal(got, want) {
		gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
		for i := range gl {
			if i >= len(wl) || gl[i] != wl[i] {
				t.Fatalf("wire shape changed at line %d:\n got: %s\nwant: %s", i+1, gl[i], wl[min(i, len(wl)-1)])
			}
		}
		t.Fatal("wire shape changed")
	}
	// Every line is valid JSON for any consumer, and re-encodes byte-exactly.
	for i, line := range bytes.Split(bytes.TrimSuffix(want, []byte("\n")), []byte("\n")) {
		if !json.Valid(line) {
			t.Fatalf("golden line %d is not valid JSON", i+1)
		}
		ev, err := DecodeEvent(line)
		if err != nil {
			t.Fatalf("decode golden line %d: %v", i+1, err)
		}
		again, err := AppendEvent(nil, &ev)
		if err != nil {
			t.Fatalf("re-encode line %d: %v", i+1, err)
		}
		if !bytes.Equal(again, line) {
			t.Fatalf("round trip of line %d differs:\n got: %s\nwant: %s", i+1, again, line)
		}
	}
}

func TestEncodeMatchesEncodingJSONSemantics(t *testing.T) {
	// What encoding/json reads back from our lines equals the values we wrote.
	evs := wireEvents()
	data := encodeAll(t, evs)
	for i, line := range bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n")) {
		var m map[string]any
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		if m["type"] != string(evs[i].Type) || m["run_id"] != testRun || m["seq"].(float64) != float64(evs[i].Seq) {
			t.Fatalf("line %d envelope mismatch: %v", i+1, m)
		}
	}
	var m map[string]any
	line := bytes.Split(data, []byte("\n"))[5]
	if err := json.Unmarshal(line, &m); err != nil {
		t.Fatal(err)
	}
	text := m["payload"].(map[string]any)["blocks"].([]any)[1].(map[string]any)["text"].(string)
	if want := "nul:\x00 bad:\uFFFD\uFFFD tab:\t ls:\u2028 é 😀"; text != want {
		t.Fatalf("text = %q, want %q", text, want)
	}
}

func TestStrictEncoding(t *testing.T) {
	base := func() ExchangeEvent {
		return ExchangeEvent{RunID: testRun, Type: StepStarted, Timestamp: testTime, Payload: &StepPayload{Name: "a", Kind: "command"}}
	}
	cases := map[string]func(e *ExchangeEvent){
		"unknown event type": func(e *ExchangeEvent) { e.Type = "step.paused" },
		"empty run id":       func(e *ExchangeEvent) { e.RunID = "" },
		"wrong payload":      func(e *ExchangeEvent) { e.Payload = &ToolPayload{CallID: "x", Fidelity: FidelityRouter} },
		"nil step payload":   func(e *ExchangeEvent) { e.Payload = nil },
		"no kind":            func(e *ExchangeEvent) { e.Payload = &StepPayload{Name: "a"} },
		"unknown block": func(e *ExchangeEvent) {
			e.Type = MessageAssistant
			e.Payload = &MessagePayload{Role: "assistant", Blocks: []ContentBlock{{Type: "image", Fidelity: FidelityAgentEmitted}}}
		},
		"bad block fidelity": func(e *ExchangeEvent) {
			e.Type = MessageAssistant
			e.Payload = &MessagePayload{Role: "assistant", Blocks: []ContentBlock{{Type: BlockText, Fidelity: "model"}}}
		},
		"wrong role": func(e *ExchangeEvent) {
			e.Type = MessageUser
			e.Payload = &MessagePayload{Role: "assistant"}
		},
		"bad tool fidelity": func(e *ExchangeEvent) {
			e.Type = ToolCall
			e.Payload = &ToolPayload{Name: "Read", CallID: "1", Fidelity: ""}
		},
		"no call id": func(e *ExchangeEvent) {
			e.Type = ToolCall
			e.Payload = &ToolPayload{Name: "Read", Fidelity: FidelityRouter}
		},
		"invalid raw json": func(e *ExchangeEvent) {
			e.Payload = &StepPayload{Name: "a", Kind: "command", Result: json.RawMessage(`{"a":`)}
		},
		"NaN result": func(e *ExchangeEvent) {
			e.Payload = &StepPayload{Name: "a", Kind: "command", Result: map[string]any{"x": nanValue()}}
		},
		"unmarshalable result": func(e *ExchangeEvent) {
			e.Payload = &StepPayload{Name: "a", Kind: "command", Result: make(chan int)}
		},
	}
	for name, mutate := range cases {
		t.Run(name, func(t *testing.T) {
			e := base()
			mutate(&e)
			if _, err := AppendEvent(nil, &e); err == nil {
				t.Fatal("encoding succeeded, want refusal")
			}
		})
	}
	e := base()
	if _, err := AppendEvent(nil, &e); err != nil {
		t.Fatalf("base event refused: %v", err)
	}
	// Values as well as pointers are accepted.
	e.Payload = StepPayload{Name: "a", Kind: "command"}
	if _, err := AppendEvent(nil, &e); err != nil {
		t.Fatalf("value payload refused: %v", err)
	}
	e.Type, e.Payload = RunStarted, nil
	if b, err := AppendEvent(nil, &e); err != nil || !bytes.Contains(b, []byte(`"payload":null}`)) {
		t.Fatalf("run.started with null payload: %s %v", b, err)
	}
}

func nanValue() float64 {
	zero := 0.0
	return zero / zero
}

func TestEncodeValues(t *testing.T) {
	cases := []struct {
		in   any
		want string
	}{
		{nil, `null`},
		{"a\"b\\c\n\r\t\b\f\x01", `"a\"b\\c\n\r\t\b\f\u0001"`},
		{true, `true`},
		{42, `42`},
		{int64(-7), `-7`},
		{uint64(9), `9`},
		{1.5, `1.5`},
		{1e21, `1e+21`},
		{1e-7, `1e-07`},
		{json.Number("12.50"), `12.50`},
		{[]byte("bytes\x00"), `"bytes\u0000"`},
		{[]any{1.0, "x", nil}, `[1,"x",null]`},
		{[]string{"a", "b"}, `["a","b"]`},
		{map[string]any{"b": 1.0, "a": []any{}}, `{"a":[],"b":1}`},
		{map[string]string{"z": "1", "y": "<&>"}, `{"y":"<&>","z":"1"}`},
		{json.RawMessage(" {\"a\" :\n 1} "), `{"a":1}`},
		{json.RawMessage(nil), `null`},
		{struct {
			A string `json:"a"`
		}{"<x>"}, `{"a":"<x>"}`},
	}
	for _, c := range cases {
		got, err := appendValue(nil, c.in)
		if err != nil {
			t.Fatalf("%#v: %v", c.in, err)
		}
		if string(got) != c.want {
			t.Errorf("%#v: got %s, want %s", c.in, got, c.want)
		}
	}
}

func TestDecodeProbeOrder(t *testing.T) {
	line := func(payload string) string {
		return `{"seq":1,"run_id":"` + testRun + `","type":"step.started","path":"","iteration":0,"timestamp":"2026-06-08T08:14:42.123Z","payload":` + payload + `}`
	}
	cases := []struct {
		payload string
		check   func(any) bool
	}{
		{`[{"type":"text","fidelity":"router","text":"x"}]`, func(p any) bool { b, ok := p.([]ContentBlock); return ok && b[0].Text == "x" }},
		{`{"role":"user","kind":"agent","call_id":"1","blocks":[]}`, func(p any) bool { _, ok := p.(*MessagePayload); return ok }},
		{`{"call_id":"1","kind":"agent","name":"Read","fidelity":"router"}`, func(p any) bool { tp, ok := p.(*ToolPayload); return ok && tp.Name == "Read" }},
		{`{"kind":"agent","name":"a","result":{"n":1}}`, func(p any) bool {
			sp, ok := p.(*StepPayload)
			return ok && string(sp.Result.(json.RawMessage)) == `{"n":1}`
		}},
		{`{"other":1}`, func(p any) bool { r, ok := p.(json.RawMessage); return ok && string(r) == `{"other":1}` }},
		{`"just a string"`, func(p any) bool { r, ok := p.(json.RawMessage); return ok && string(r) == `"just a string"` }},
		{`null`, func(p any) bool { return p == nil }},
	}
	for _, c := range cases {
		ev, err := DecodeEvent([]byte(line(c.payload)))
		if err != nil {
			t.Fatalf("%s: %v", c.payload, err)
		}
		if !c.check(ev.Payload) {
			t.Errorf("%s: payload decoded as %T %#v", c.payload, ev.Payload, ev.Payload)
		}
	}
}

func TestDecodeForwardCompatible(t *testing.T) {
	line := `{"seq":3,"run_id":"` + testRun + `","type":"step.paused","path":"a","iteration":1,"timestamp":"2026-06-08T08:14:42.123456Z","payload":{"why":"human","kind":"x"},"new_field":[1,2]}`
	ev, err := DecodeEvent([]byte(line))
	if !errors.Is(err, ErrUnknownEventType) {
		t.Fatalf("err = %v, want ErrUnknownEventType", err)
	}
	if ev.Type != "step.paused" || ev.Seq != 3 || ev.Path != "a" || string(ev.Payload.(json.RawMessage)) != `{"why":"human","kind":"x"}` {
		t.Fatalf("event not intact: %+v", ev)
	}
	line = `{"seq":4,"run_id":"` + testRun + `","type":"message.assistant","path":"a","iteration":0,"timestamp":"2026-06-08T08:14:42.123456Z","payload":{"role":"assistant","blocks":[{"type":"text","fidelity":"agent_emitted","text":"hi"},{"type":"image","fidelity":"agent_emitted","url":"x.png"}]}}`
	ev, err = DecodeEvent([]byte(line))
	if !errors.Is(err, ErrUnknownBlockType) {
		t.Fatalf("err = %v, want ErrUnknownBlockType", err)
	}
	blocks := ev.Message().Blocks
	if len(blocks) != 2 || blocks[0].Text != "hi" || blocks[1].Type != "image" || string(blocks[1].Raw) != `{"type":"image","fidelity":"agent_emitted","url":"x.png"}` {
		t.Fatalf("blocks not intact: %+v", blocks)
	}
	var e ExchangeEvent
	if err := json.Unmarshal([]byte(line), &e); !errors.Is(err, ErrUnknownBlockType) || e.Seq != 4 {
		t.Fatalf("json.Unmarshal: %v %+v", err, e)
	}
}

func TestDecodeMalformed(t *testing.T) {
	good := `{"seq":1,"run_id":"r","type":"run.started","path":"","iteration":0,"timestamp":"2026-06-08T08:14:42.123Z","payload":null}`
	if _, err := DecodeEvent([]byte(good)); err != nil {
		t.Fatalf("good line: %v", err)
	}
	bad := []string{
		``, `{`, `[]`, `nul`, good + `x`, good[:len(good)-1],
		`{"seq":-1,"run_id":"r","type":"run.started","path":"","iteration":0,"timestamp":"2026-06-08T08:14:42.123Z","payload":null}`,
		`{"seq":1,"type":"run.started","path":"","iteration":0,"timestamp":"2026-06-08T08:14:42.123Z","payload":null}`,
		`{"seq":1,"run_id":"r","type":"run.started","path":"","iteration":0,"timestamp":"yesterday","payload":null}`,
		`{"seq":1,"run_id":"r","type":"run.started","path":"","iteration":0,"timestamp":"2026-06-08T08:14:42.123Z","payload":{"a":tru}}`,
		`{"seq":1,"run_id":"r\x01","type":"run.started","path":"","iteration":0,"timestamp":"2026-06-08T08:14:42.123Z","payload":null}`,
		`{"seq":1,"run_id":"\q","type":"run.started","path":"","iteration":0,"timestamp":"2026-06-08T08:14:42.123Z","payload":null}`,
		`{"seq":01,"run_id":"r","type":"run.started","path":"","iteration":0,"timestamp":"2026-06-08T08:14:42.123Z","payload":null}`,
	}
	for _, b := range bad {
		if _, err := DecodeEvent([]byte(b)); !errors.Is(err, ErrMalformed) {
			t.Errorf("%q: err = %v, want ErrMalformed", b, err)
		}
	}
}

func TestDecodeStrings(t *testing.T) {
	mk := func(s string) string {
		return `{"seq":1,"run_id":"r","type":"message.user","path":"","iteration":0,"timestamp":"2026-06-08T08:14:42Z","payload":{"role":"user","blocks":[{"type":"text","fidelity":"router","text":"` + s + `"}]}}`
	}
	cases := map[string]string{
		`plain`:                     "plain",
		`\u0000nul`:                 "\x00nul",
		`\ud83d\ude00`:              "😀",
		`\ud83d`:                    "\uFFFD",
		`\ud83dx`:                   "\uFFFDx",
		"raw\xffbad":                "raw\uFFFDbad",
		`esc\/\"\\\b\f\n\r\t\u00e9`: "esc/\"\\\b\f\n\r\té",
	}
	for in, want := range cases {
		ev, err := DecodeEvent([]byte(mk(in)))
		if err != nil {
			t.Fatalf("%q: %v", in, err)
		}
		if got := ev.Message().Blocks[0].Text; got != want {
			t.Errorf("%q: got %q, want %q", in, got, want)
		}
		if !ev.Timestamp.Equal(time.Date(2026, 6, 8, 8, 14, 42, 0, time.UTC)) {
			t.Errorf("timestamp %v", ev.Timestamp)
		}
	}
}

func TestAccessorsAndResults(t *testing.T) {
	evs := wireEvents()
	if evs[1].Step() == nil || evs[1].Tool() != nil || evs[1].Message() != nil {
		t.Fatal("Step accessor")
	}
	if evs[6].Tool() == nil || evs[4].Message() == nil {
		t.Fatal("Tool/Message accessors")
	}
	b, err := json.Marshal(evs[2])
	if err != nil || !bytes.HasPrefix(b, []byte(`{"seq":3,`)) {
		t.Fatalf("json.Marshal: %s %v", b, err)
	}
	if _, err := json.Marshal(ExchangeEvent{Type: "nope"}); err == nil {
		t.Fatal("json.Marshal accepted an unknown type")
	}
	var back ExchangeEvent
	if err := json.Unmarshal(b, &back); err != nil || back.Seq != 3 {
		t.Fatalf("json.Unmarshal: %v", err)
	}
	if err := json.Unmarshal([]byte(`{"seq":"x"}`), &back); !errors.Is(err, ErrMalformed) {
		t.Fatalf("bad json.Unmarshal: %v", err)
	}
	var cr CommandResult
	if err := DecodeResult(back.Step().Result, &cr); err != nil || cr.Output != "ok\n" {
		t.Fatalf("DecodeResult raw: %+v %v", cr, err)
	}
	var ar AgentResult
	if err := DecodeResult(evs[10].Step().Result, &ar); err != nil || ar.Usage.TotalTokens != 1280 || *ar.CostUSD != 0.0123 {
		t.Fatalf("DecodeResult value: %+v %v", ar, err)
	}
	if err := DecodeResult(nil, &ar); err != nil {
		t.Fatal(err)
	}
	if err := DecodeResult([]byte(`{"status":"success"}`), &RunResult{}); err != nil {
		t.Fatal(err)
	}
	u := Usage{InputTokens: 1, OutputTokens: 2, TotalTokens: 3}
	u.Add(Usage{InputTokens: 10, OutputTokens: 20, CacheReadTokens: 5, CacheWriteTokens: 6, CacheWrite1hTokens: 2, ReasoningTokens: 7, TotalTokens: 30})
	if u != (Usage{InputTokens: 11, OutputTokens: 22, CacheReadTokens: 5, CacheWriteTokens: 6, CacheWrite1hTokens: 2, ReasoningTokens: 7, TotalTokens: 33}) {
		t.Fatalf("Add: %+v", u)
	}
	if FormatTime(testTime) != "2026-06-08T08:14:42.123456Z" {
		t.Fatal(FormatTime(testTime))
	}
	rd := NewReader(bytes.NewReader(encodeAll(t, evs[:2])))
	rd.Next()
	if rd.Offset() != int64(len(rd.Raw())+1) || !bytes.HasPrefix(rd.Raw(), []byte(`{"seq":1,`)) {
		t.Fatalf("Offset %d Raw %q", rd.Offset(), rd.Raw())
	}
}

func TestAppendTimeMatchesLayout(t *testing.T) {
	rng := time.Unix(0, 0)
	for i := 0; i < 2000; i++ {
		tm := rng.Add(time.Duration(i) * 7919 * time.Hour).Add(time.Duration(i*104729) * time.Microsecond)
		if got, want := string(appendTime(nil, tm)), tm.UTC().Format(TimeLayout); got != want {
			t.Fatalf("appendTime(%v) = %s, want %s", tm, got, want)
		}
	}
	far := time.Date(12000, 1, 1, 0, 0, 0, 0, time.UTC)
	if got := string(appendTime(nil, far)); got != far.Format(TimeLayout) {
		t.Fatal(got)
	}
}

func TestAppendRawEdgeCases(t *testing.T) {
	cases := map[string]string{
		"{\"a\":\"x\xffy\"}": "{\"a\":\"x\uFFFDy\"}",
		"[1,\r\n2]":          "[1,2]",
		" 12 ":               " 12 ",
	}
	for in, want := range cases {
		got, err := appendRaw(nil, []byte(in))
		if err != nil || string(got) != want {
			t.Errorf("appendRaw(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{`{"a":1} x`, `{"a":}`, `"unterminated`} {
		if _, err := appendRaw(nil, []byte(bad)); err == nil {
			t.Errorf("appendRaw(%q) accepted", bad)
		}
	}
}
