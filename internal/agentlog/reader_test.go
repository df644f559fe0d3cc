package agentlog

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reelhq/reel/internal/transcripttest"
	"github.com/reelhq/reel/transcript"
)

// v02Trace builds a trace with every v0.1 and v0.2 kind through the
// Builder, so its ids and parents are real.
func v02Trace(t testing.TB) []Record {
	t.Helper()
	b := NewBuilder()
	ts := time.Date(2026, 4, 24, 10, 0, 0, 0, time.UTC)
	step := func() time.Time { ts = ts.Add(10 * time.Millisecond); return ts }
	add := func(kind string, payload string, meta string) {
		t.Helper()
		var m any
		if meta != "" {
			m = json.RawMessage(meta)
		}
		if _, err := b.Add(kind, step(), json.RawMessage(payload), m); err != nil {
			t.Fatal(err)
		}
	}
	add(KindMetadata, `{"sdk":{"name":"shadow","version":"3.2.5"},"tags":{"env":"test"}}`, `{"session_tag":"agent-0"}`)
	add(KindChatRequest, `{"model":"gpt-5","messages":[{"role":"system","content":"Be brief."},{"role":"user","content":[{"type":"text","text":"Hi "},{"type":"text","text":"there"}]}],"params":{}}`, "")
	add(KindChunk, `{"chunk_index":0,"time_unix_nano":1777024800010000000,"delta":{"text":"He"}}`, "")
	add(KindChunk, `{"chunk_index":1,"time_unix_nano":1777024800020000000,"delta":{"text":"llo"},"is_final":true}`, "")
	add(KindChatResponse, `{"model":"gpt-5","content":[{"type":"thinking","text":"greet"},{"type":"text","text":"Hello"},{"type":"tool_use","id":"c1","name":"lookup","input":{"q":"x"}}],"stop_reason":"tool_use","latency_ms":40,"usage":{"input_tokens":9,"output_tokens":4,"thinking_tokens":2,"cache_read_input_tokens":5}}`, "")
	add(KindToolCall, `{"tool_name":"lookup","tool_call_id":"c1","arguments":{"q":"x"}}`, "")
	add(KindHarnessEvent, `{"category":"retry","name":"backoff","severity":"warning","attributes":{"attempt":2}}`, "")
	add(KindToolResult, `{"tool_call_id":"c1","output":{"rows":[]},"is_error":false,"latency_ms":3}`, "")
	add(KindBlobRef, `{"blob_id":"sha256:00","mime":"image/png","size_bytes":12}`, "")
	add(KindToolCall, `{"tool_name":"slow","tool_call_id":"c2","arguments":{}}`, "")
	add(KindError, `{"source":"llm","code":"rate_limited","message":"429 from upstream","retriable":true,"upstream_status":429}`, "")
	add(KindMetadata, `{"sdk":{"name":"shadow","version":"3.2.5"},"tags":{"env":"test"},"baseline_of":"x"}`, `{"session_tag":"agent-0"}`)
	add(KindChatRequest, `{"model":"gpt-5","messages":[{"role":"user","content":"again"}]}`, "")
	add(KindChatResponse, `{"model":"gpt-5","content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn","latency_ms":5,"usage":{"input_tokens":1,"output_tokens":1,"thinking_tokens":0}}`, "")
	add(KindReplaySummary, `{"baseline_trace_id":"sha256:aa","backend_id":"mock","input_count":1,"output_count":1,"error_count":0,"duration_ms":7}`, "")
	add("future_kind", `{"x":1}`, "")
	return b.Records()
}

func TestAllKinds(t *testing.T) {
	recs := v02Trace(t)
	var buf bytes.Buffer
	if err := Encode(&buf, recs); err != nil {
		t.Fatal(err)
	}
	back, err := ReadAll(&buf, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := ToTranscript(back, "")
	if err != nil {
		t.Fatal(err)
	}
	transcripttest.CheckValid(t, res.Events)
	var steps, streams, calls, dangling int
	var harness, blobs, errs int
	var usage transcript.Usage
	var runRes RunResult
	for _, e := range res.Events {
		switch e.Type {
		case transcript.StepStarted:
			steps++
		case transcript.MessageUser:
			if got := e.Message().Blocks[0].Text; got != "Hi there" && got != "again" {
				t.Errorf("prompt %q", got)
			}
		case transcript.MessageAssistant:
			for _, b := range e.Message().Blocks {
				if b.Type == transcript.BlockStream {
					streams++
				}
			}
		case transcript.ToolCall:
			calls++
		case transcript.ToolResult:
			if strings.HasPrefix(e.Tool().Error, "no result:") {
				dangling++
			}
		case transcript.StepCompleted:
			var sr StepResult
			if err := transcript.DecodeResult(e.Step().Result, &sr); err != nil {
				t.Fatal(err)
			}
			usage.Add(sr.Usage)
			if sr.Agentlog != nil {
				harness += len(sr.Agentlog.HarnessEvents)
				blobs += len(sr.Agentlog.Blobs)
				errs += len(sr.Agentlog.Errors)
			}
			if e.Path == "agent-0" && !strings.Contains(e.Step().Error, "429 from upstream") {
				t.Errorf("step error %q", e.Step().Error)
			}
		case transcript.RunCompleted:
			if err := transcript.DecodeResult(e.Step().Result, &runRes); err != nil {
				t.Fatal(err)
			}
		}
	}
	if steps != 2 || streams != 2 || calls != 2 || dangling != 1 || harness != 1 || blobs != 1 || errs != 1 {
		t.Errorf("steps %d streams %d calls %d dangling %d harness %d blobs %d errors %d", steps, streams, calls, dangling, harness, blobs, errs)
	}
	want := transcript.Usage{InputTokens: 10 + 5, OutputTokens: 5, CacheReadTokens: 5, ReasoningTokens: 2, TotalTokens: 20}
	if usage != want || runRes.Usage != want {
		t.Errorf("usage %+v, run %+v", usage, runRes.Usage)
	}
	if runRes.Status != "failure" || runRes.Agentlog == nil || len(runRes.Agentlog.ReplaySummary) != 1 || len(runRes.Agentlog.Unknown) != 1 || len(runRes.Agentlog.Sessions) != 1 || len(res.Warnings) != 1 {
		t.Errorf("run result %+v, warnings %v", runRes, res.Warnings)
	}
}

func TestReaderErrors(t *testing.T) {
	recs := v02Trace(t)[:3]
	var good bytes.Buffer
	if err := Encode(&good, recs); err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(good.String(), "\n")
	cases := []struct {
		name string
		in   string
		opts ReadOptions
		want error
		line int
	}{
		{"empty", "", ReadOptions{}, ErrMalformed, 0},
		{"not json", "{oops\n", ReadOptions{}, ErrMalformed, 1},
		{"missing payload", `{"version":"0.1","id":"sha256:x","kind":"metadata","ts":"2026-01-01T00:00:00.000Z","parent":null}` + "\n", ReadOptions{}, ErrMalformed, 1},
		{"bad version", strings.Replace(lines[0], `"0.1"`, `"9.9"`, 1), ReadOptions{}, ErrMalformed, 1},
		{"bad ts", strings.Replace(lines[0], `"ts":"2026`, `"ts":"x2026`, 1), ReadOptions{}, ErrMalformed, 1},
		{"root not first", lines[1], ReadOptions{}, ErrParent, 1},
		{"dangling parent", lines[0] + lines[2], ReadOptions{}, ErrParent, 2},
		{"tampered payload", lines[0] + strings.Replace(lines[1], "Be brief", "Be long", 1), ReadOptions{}, ErrIDMismatch, 2},
		{"line limit", good.String(), ReadOptions{MaxLineBytes: 100}, ErrLineTooLong, 1},
		{"total limit", good.String(), ReadOptions{MaxTotalBytes: int64(len(lines[0]) + 10)}, ErrTraceTooLarge, 2},
	}
	for _, c := range cases {
		_, err := ReadAll(strings.NewReader(c.in), c.opts)
		if !errors.Is(err, c.want) {
			t.Errorf("%s: err = %v, want %v", c.name, err, c.want)
			continue
		}
		var re *RecordError
		if c.line > 0 && (!errors.As(err, &re) || re.Line != c.line) {
			t.Errorf("%s: err %v, want line %d", c.name, err, c.line)
		}
	}
	// A final record without newline, CRLF endings and blank lines are fine.
	in := strings.ReplaceAll(good.String(), "\n", "\r\n\n")
	in = strings.TrimSuffix(in, "\r\n\n")
	if got, err := ReadAll(strings.NewReader(in), ReadOptions{}); err != nil || len(got) != 3 {
		t.Errorf("CRLF/blank/torn: %d records, %v", len(got), err)
	}
	// The tampered payload is accepted on request.
	if _, err := ReadAll(strings.NewReader(cases[7].in), ReadOptions{AcceptIDMismatch: true}); err != nil {
		t.Errorf("AcceptIDMismatch: %v", err)
	}
}

// TestLongLineBounded feeds a line far over the limit and checks the reader
// fails with the limit error rather than buffering it.
func TestLongLineBounded(t *testing.T) {
	huge := `{"version":"0.1","payload":"` + strings.Repeat("a", 3<<20) + "\"}\n"
	_, err := ReadAll(strings.NewReader(huge), ReadOptions{MaxLineBytes: 1 << 20})
	if !errors.Is(err, ErrLineTooLong) || !strings.Contains(err.Error(), "1048576") {
		t.Fatalf("err = %v", err)
	}
}

func FuzzParseRecord(f *testing.F) {
	f.Add([]byte(`{"version":"0.1","id":"sha256:93a23971a914e5eacbf0a8d25154cda309c3c1c72fbb9914d47c60f3cb681588","kind":"metadata","ts":"2026-04-22T04:03:27.228Z","parent":null,"payload":{"hello":"world"}}`))
	f.Add([]byte(`{"version":"0.1","id":"x","kind":"chat_response","ts":"2026-04-22T04:03:27Z","parent":"y","meta":{"reel":{"path":"a","final":{"result":{}}}},"payload":{"content":[{"type":"text","text":"\u0000\ud800"}],"latency_ms":1e400}}`))
	f.Add([]byte("{\"payload\":\"\xff\xfe\"}"))
	f.Fuzz(func(t *testing.T, line []byte) {
		rec, err := ParseRecord(line)
		if err != nil {
			return
		}
		// A parsed record encodes, and its canonical payload is stable.
		out, err := AppendRecord(nil, &rec)
		if err != nil {
			return
		}
		again, err := ParseRecord(out)
		if err != nil {
			t.Fatalf("re-parse of %s: %v", out, err)
		}
		id1, err1 := ContentID(rec.Payload)
		id2, err2 := ContentID(again.Payload)
		if err1 != nil || err2 != nil || id1 != id2 {
			t.Fatalf("content id changed on rewrite: %s %s (%v %v)", id1, id2, err1, err2)
		}
		// Conversion never panics on whatever the envelope holds.
		if rec.Kind == KindMetadata && rec.Parent == "" {
			_, _ = ToTranscript([]Record{rec}, "")
		} else {
			root := Record{Version: Version, ID: "r", Kind: KindMetadata, TS: rec.TS, Payload: json.RawMessage(`{}`)}
			_, _ = ToTranscript([]Record{root, rec}, "")
		}
	})
}

// FuzzImportTrace reads whole traces (ids not checked, so the fuzzer can
// reach the converter) and checks that whatever imports is a valid run.
func FuzzImportTrace(f *testing.F) {
	var buf bytes.Buffer
	if err := Encode(&buf, v02Trace(f)); err == nil {
		f.Add(buf.Bytes())
	}
	f.Add([]byte(`{"version":"0.1","id":"a","kind":"metadata","ts":"2026-01-01T00:00:00Z","parent":null,"payload":{}}
{"version":"0.1","id":"b","kind":"tool_result","ts":"2026-01-01T00:00:00Z","parent":"a","meta":{"reel":{"path":"x","iteration":-3,"final":{"result":{"usage":{"input_tokens":1}}}}},"payload":{"tool_call_id":"","output":null,"is_error":true}}
`))
	if b, err := os.ReadFile(filepath.Join("testdata", "tool-use-without-calls.agentlog")); err == nil {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		recs, err := ReadAll(bytes.NewReader(data), ReadOptions{AcceptIDMismatch: true, MaxLineBytes: 1 << 16})
		if err != nil {
			return
		}
		res, err := ToTranscript(recs, "fuzz")
		if err != nil {
			return
		}
		transcripttest.CheckValid(t, res.Events)
		// Whatever imports exports back record for record.
		back, err := FromTranscript(res.Events, ExportOptions{})
		if err != nil {
			t.Fatalf("export of an import: %v", err)
		}
		if len(back) != len(recs) {
			t.Fatalf("%d records back, %d in", len(back), len(recs))
		}
		for i := range recs {
			a, _ := Canonical(recs[i].Payload)
			b, _ := Canonical(back[i].Payload)
			if back[i].Kind != recs[i].Kind || back[i].TS != recs[i].TS || !bytes.Equal(a, b) {
				t.Fatalf("record %d: %s %s %s back as %s %s %s", i+1, recs[i].Kind, recs[i].TS, a, back[i].Kind, back[i].TS, b)
			}
		}
	})
}
