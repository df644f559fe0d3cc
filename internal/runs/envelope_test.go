package runs

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/reelhq/reel/transcript"
)

func TestParse(t *testing.T) {
	ev := transcript.ExchangeEvent{Seq: 7, RunID: "r1", ParentRunID: "p", ChildRunID: "c", Type: transcript.ToolCall,
		Path: "a.\"b\"", Iteration: 3, Timestamp: time.Date(2026, 6, 8, 8, 14, 42, 123456000, time.UTC),
		Payload: &transcript.ToolPayload{Name: "Read", CallID: "x", Fidelity: transcript.FidelityRouter}}
	line, err := transcript.AppendEvent(nil, &ev)
	if err != nil {
		t.Fatal(err)
	}
	var e Envelope
	if err := e.Parse(line); err != nil {
		t.Fatal(err)
	}
	if e.RunID != "r1" || e.ParentRunID != "p" || e.ChildRunID != "c" || string(e.Type) != "tool.call" ||
		string(e.Path) != `a."b"` || e.Iteration != 3 || !e.Time().Equal(ev.Timestamp) || len(e.Payload) == 0 {
		t.Errorf("envelope %+v", e)
	}
	if typ, ok, err := lineType(line); !ok || err != nil || string(typ) != "tool.call" {
		t.Errorf("Type = %q %v %v", typ, ok, err)
	}
	for _, bad := range []string{`{"type":"x"}`, `{"type":"x","path":1,"timestamp":"t","payload":{}}`, `{"type":"x","path":"","iteration":"one","timestamp":"t","payload":{}}`, `nope`} {
		if err := e.Parse([]byte(bad)); err == nil {
			t.Errorf("Parse(%s): no error", bad)
		}
	}
}

func TestParseTime(t *testing.T) {
	for in, want := range map[string]time.Time{
		"2026-06-08T08:14:42.123456Z": time.Date(2026, 6, 8, 8, 14, 42, 123456000, time.UTC),
		"2026-06-08T08:14:42.123Z":    time.Date(2026, 6, 8, 8, 14, 42, 123000000, time.UTC),
		"2026-06-08T10:14:42+02:00":   time.Date(2026, 6, 8, 8, 14, 42, 0, time.UTC),
		"2026-13-08T08:14:42.123456Z": {},
		"garbage":                     {},
		"2026-06-08T08:14:4x.123456Z": {},
	} {
		if got := ParseTime([]byte(in)); !got.Equal(want) {
			t.Errorf("ParseTime(%s) = %v, want %v", in, got, want)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"seq":1,"run_id":"r","type":"step.started","path":"a","iteration":0,"timestamp":"2026-06-08T08:14:42.000000Z","payload":{"name":"a","kind":"agent"}}`))
	f.Add([]byte(`{"type":"x","path":"a\\u0000","iteration":-1,"timestamp":"2026-99-08T08:14:42.000000Z","payload":null}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		var e Envelope
		err := e.Parse(line)
		e.Time()
		lineType(line)
		if err != nil {
			return
		}
		// What Parse accepts as an event, the library decoder reads with the
		// same envelope when it accepts it too.
		ev, derr := transcript.DecodeEvent(line)
		if derr != nil {
			return
		}
		if string(e.Type) != string(ev.Type) || string(e.Path) != ev.Path || e.Iteration != ev.Iteration || e.RunID != ev.RunID {
			t.Fatalf("%q: envelope %+v, decoder %+v", line, e, ev)
		}
	})
}

func TestDecodeAgentResult(t *testing.T) {
	cost := 0.0123
	want := transcript.AgentResult{Output: "done \"ok\"\n", Provider: "claude", Model: "m", SessionID: "s",
		Usage:   transcript.Usage{InputTokens: 1, OutputTokens: 2, CacheReadTokens: 3, CacheWriteTokens: 4, ReasoningTokens: 5, TotalTokens: 3},
		CostUSD: &cost, DurationMS: 99, Turns: 2}
	raw, _ := json.Marshal(want)
	var got transcript.AgentResult
	if err := DecodeAgentResult(raw, &got); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
	for _, bad := range []string{`{"usage":{"input_tokens":"many"}}`, `{"output":3}`, `{"cost_usd":"free"}`, `[1]`, `{"turns":1.5}`} {
		if err := DecodeAgentResult([]byte(bad), &got); err == nil {
			t.Errorf("DecodeAgentResult(%s): no error", bad)
		}
	}
}

// FuzzDecodeAgentResult: wherever encoding/json decodes a result written in
// lower case, the fast
// decoder either agrees with it or reports an error (it is stricter about
// numbers, never looser).
func FuzzDecodeAgentResult(f *testing.F) {
	f.Add([]byte(`{"output":"x","provider":"p","model":"m","usage":{"input_tokens":1,"output_tokens":2,"total_tokens":3},"cost_usd":0.5,"duration_ms":7,"turns":1}`))
	f.Add([]byte(`{"usage":null,"cost_usd":null,"output":"\u00e9\ud800"}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		var fast, std transcript.AgentResult
		err := DecodeAgentResult(raw, &fast)
		if !bytes.Equal(bytes.ToLower(raw), raw) || !utf8.Valid(raw) {
			// encoding/json also matches keys case-insensitively; reel
			// writes them in lower case, which is all the fast path reads.
			return
		}
		if json.Unmarshal(raw, &std) != nil || err != nil {
			return
		}
		std.Skipped = nil
		if !reflect.DeepEqual(fast, std) {
			t.Fatalf("%s:\nfast %+v\nstd  %+v", raw, fast, std)
		}
	})
}

// The envelope path names an event's type once per line: a type of the
// vocabulary must come back as the package's own value, without a copy.
func TestEventTypeDoesNotAllocate(t *testing.T) {
	for _, want := range transcript.EventTypes {
		b := []byte(want)
		if got := eventType(b); got != want {
			t.Errorf("eventType(%q) = %q", b, got)
		}
		if n := testing.AllocsPerRun(100, func() { _ = eventType(b) }); n != 0 {
			t.Errorf("eventType(%q) allocates %v times", b, n)
		}
	}
	if got := eventType([]byte("step.paused")); got != "step.paused" {
		t.Errorf("unknown type = %q, want it kept as read", got)
	}
}
