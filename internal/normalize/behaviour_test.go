package normalize

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/reelhq/reel/internal/golden"
	"github.com/reelhq/reel/internal/rawjson"
	"github.com/reelhq/reel/transcript"
)

// shape is the block-type sequence of a conversation's assistant messages
// plus its tool calls' names and inputs, the part every provider must agree
// on.
func shape(t *testing.T, p parsed) []string {
	t.Helper()
	var out []string
	for _, ev := range p.events {
		switch ev.Type {
		case transcript.MessageAssistant:
			var types []string
			for _, b := range ev.Message().Blocks {
				types = append(types, string(b.Type))
			}
			out = append(out, "assistant["+strings.Join(types, ",")+"]")
		case transcript.ToolCall:
			in, err := transcript.AppendEvent(nil, &transcript.ExchangeEvent{Type: transcript.ToolCall, RunID: "x",
				Payload: &transcript.ToolPayload{CallID: "x", Input: ev.Tool().Input, Fidelity: transcript.FidelityAgentEmitted}})
			if err != nil {
				t.Fatal(err)
			}
			// Compare inputs by their compact JSON.
			s := string(in)
			i := strings.Index(s, `"input":`)
			j := strings.Index(s, `,"output"`)
			out = append(out, "tool.call "+strings.ReplaceAll(s[i+8:j], " ", ""))
		}
	}
	return out
}

func TestStructuralEquivalence(t *testing.T) {
	files := map[Format]string{
		ClaudeStreamJSON: "claude-stream-json.jsonl",
		CodexExecJSON:    "codex-exec-json.jsonl",
		GeminiStreamJSON: "gemini-stream-json.jsonl",
		OpenAIChatStream: "openai-chat-stream.txt",
		AnthropicSSE:     "anthropic-sse.txt",
		VibeStreaming:    "vibe-streaming.jsonl",
		OpencodeJSON:     "opencode-json.jsonl",
	}
	want := []string{`tool.call {"city":"Paris"}`, "assistant[text,tool_use]", "assistant[text]"}
	for f, name := range files {
		data, err := os.ReadFile(filepath.Join("testdata", "equiv", name))
		if err != nil {
			t.Fatal(err)
		}
		p := parse(t, f, data, nil)
		if got := shape(t, p); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: shape %q, want %q", f, got, want)
		}
		if p.res.Agent.Output != "It is sunny in Paris." {
			t.Errorf("%s: output %q", f, p.res.Agent.Output)
		}
		var text string
		for _, ev := range p.events {
			if ev.Type == transcript.MessageAssistant {
				text = messageText(ev)
				break
			}
		}
		if text != "I'll check the weather." {
			t.Errorf("%s: first text %q", f, text)
		}
	}
}

// allRecordings collects every recording with its format, for the
// properties that hold for all of them.
func allRecordings(t *testing.T) map[string]Format {
	out := map[string]Format{}
	forEachRecording(t, func(t *testing.T, f Format, path string) { out[path] = f })
	return out
}

func TestIncrementalFeedingMatchesWhole(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	forEachRecording(t, func(t *testing.T, f Format, path string) {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		whole := render(t, parse(t, f, data, nil))
		byteByByte := render(t, parse(t, f, data, func(d []byte) [][]byte {
			out := make([][]byte, len(d))
			for i := range d {
				out[i] = d[i : i+1]
			}
			return out
		}))
		if !bytes.Equal(whole, byteByByte) {
			t.Errorf("byte-by-byte feeding differs:\n%s", golden.Diff(whole, byteByByte))
		}
		for round := 0; round < 3; round++ {
			random := render(t, parse(t, f, data, func(d []byte) [][]byte {
				var out [][]byte
				for len(d) > 0 {
					k := 1 + rng.IntN(min(len(d), 700))
					out = append(out, d[:k])
					d = d[k:]
				}
				return out
			}))
			if !bytes.Equal(whole, random) {
				t.Errorf("random chunks differ:\n%s", golden.Diff(whole, random))
			}
		}
	})
}

// TestEmitsBeforeStreamEnds checks that events come out while the provider
// is still writing, not at Close.
func TestEmitsBeforeStreamEnds(t *testing.T) {
	cases := map[Format]string{
		ClaudeStreamJSON: "testdata/equiv/claude-stream-json.jsonl",
		CodexExecJSON:    "testdata/equiv/codex-exec-json.jsonl",
		GeminiStreamJSON: "testdata/equiv/gemini-stream-json.jsonl",
		OpenAIChatStream: "testdata/equiv/openai-chat-stream.txt",
		AnthropicSSE:     "testdata/equiv/anthropic-sse.txt",
		CodexRollout:     "testdata/recordings/codex-rollout/custom-and-fallback.jsonl",
		CopilotJSON:      "testdata/recordings/copilot-json/session-events.jsonl",
		ClaudeSessionLog: "testdata/recordings/claude-session-log/two-turns.jsonl",
		VibeStreaming:    "testdata/equiv/vibe-streaming.jsonl",
		OpencodeJSON:     "testdata/equiv/opencode-json.jsonl",
	}
	for f, path := range cases {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		lines := bytes.SplitAfter(data, []byte("\n"))
		var kinds []string
		p, _ := NewParser(f, func(ev transcript.ExchangeEvent) error {
			kinds = append(kinds, string(ev.Type))
			return nil
		})
		// Stop before the last two lines (and any blank framing after them).
		end := len(lines)
		for end > 0 && len(bytes.TrimSpace(lines[end-1])) == 0 {
			end--
		}
		end -= 2
		for _, l := range lines[:end] {
			p.Write(l)
		}
		if len(kinds) == 0 {
			t.Errorf("%s: nothing emitted after %d of %d lines", f, end, len(lines))
		}
		for _, l := range lines[end:] {
			p.Write(l)
		}
		if _, err := p.Close("end"); err != nil {
			t.Fatal(err)
		}
	}
}

func TestClaudeMergesBlockLinesIntoOneMessage(t *testing.T) {
	data, err := os.ReadFile("testdata/equiv/claude-stream-json.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	var seen []transcript.EventType
	p, _ := NewParser(ClaudeStreamJSON, func(ev transcript.ExchangeEvent) error {
		seen = append(seen, ev.Type)
		return nil
	})
	lines := bytes.SplitAfter(data, []byte("\n"))
	// After both block lines of msg_1 only the tool.call is out: the
	// message is complete only when the next line shows it ended.
	p.Write(bytes.Join(lines[:3], nil))
	if want := []transcript.EventType{transcript.ToolCall}; !reflect.DeepEqual(seen, want) {
		t.Fatalf("after msg_1's lines: %v, want %v", seen, want)
	}
	p.Write(lines[3])
	if want := []transcript.EventType{transcript.ToolCall, transcript.MessageAssistant, transcript.ToolResult}; !reflect.DeepEqual(seen, want) {
		t.Fatalf("after the tool result: %v, want %v", seen, want)
	}
	p.Close("end")
}

// bad input: parsers keep what surrounds it and count what they skipped.

func claudeText(id, text string) string {
	return fmt.Sprintf(`{"type":"assistant","message":{"id":%q,"role":"assistant","content":[{"type":"text","text":%q}]}}`, id, text)
}

func TestGarbageAroundContent(t *testing.T) {
	in := strings.Join([]string{
		"# a comment",
		"",
		"not json at all",
		claudeText("m1", "first"),
		`{"type":"assistant","message":{"id":"m2",`, // torn line mid-file
		"\x00\x00\x00",
		`{"type":"brand_new_event","x":1}`,
		`{"type":"assistant","message":{"id":"m3","content":[{"type":"hologram","data":1},{"type":"text","text":"nul\u0000 and raw NUL:` + "\x00" + ` bad utf8:` + "\xff\xfe" + ` end"}]}}`,
		"\r",
		claudeText("m4", "last") + "\r",
		`{"type":"assistant","message":{"id":"m5","content":[{"type":"text","text":"cut`,
	}, "\n")
	p := parse(t, ClaudeStreamJSON, []byte(in), nil)
	var texts []string
	for _, ev := range p.events {
		if ev.Type == transcript.MessageAssistant {
			texts = append(texts, messageText(ev))
		}
	}
	want := []string{"first", "nul\x00 and raw NUL:\x00 bad utf8:\uFFFD\uFFFD end", "last"}
	if !reflect.DeepEqual(texts, want) {
		t.Errorf("texts %q, want %q", texts, want)
	}
	wantSkip := map[string]int{SkipComment: 1, SkipNonJSON: 2, SkipMalformed: 1, SkipUnknownEvent: 1, SkipUnknownBlock: 1, SkipTruncated: 1}
	if !reflect.DeepEqual(p.res.Agent.Skipped, wantSkip) {
		t.Errorf("skipped %v, want %v", p.res.Agent.Skipped, wantSkip)
	}
	// Everything emitted must be writable by the strict transcript encoder.
	render(t, p)
}

func TestHugeLineIsSkippedNotBuffered(t *testing.T) {
	huge := `{"type":"assistant","message":{"id":"big","content":[{"type":"text","text":"` + strings.Repeat("a", 20<<20) + `"}]}}`
	for _, f := range Formats() {
		var events int
		p, _ := NewParser(f, func(transcript.ExchangeEvent) error { events++; return nil })
		write := func(s string) {
			for b := []byte(s); len(b) > 0; {
				k := min(len(b), 64<<10)
				if _, err := p.Write(b[:k]); err != nil {
					t.Fatal(err)
				}
				b = b[k:]
				if f != GeminiSession && cap(p.buf) > MaxLineSize {
					t.Fatalf("%s: line buffer grew to %d", f, cap(p.buf))
				}
			}
		}
		if f == ClaudeStreamJSON {
			write(claudeText("m1", "before") + "\n")
		}
		write(huge + "\n")
		if f == ClaudeStreamJSON {
			write(claudeText("m2", "after") + "\n")
		}
		res, err := p.Close("end")
		if err != nil {
			t.Fatal(err)
		}
		if f == GeminiSession {
			continue // a whole-document format: the document limit applies
		}
		if res.Agent.Skipped[SkipLineTooLong] != 1 {
			t.Errorf("%s: skipped %v, want one %q", f, res.Agent.Skipped, SkipLineTooLong)
		}
		if f == ClaudeStreamJSON && events != 2 {
			t.Errorf("lines around the huge one: %d events, want 2", events)
		}
	}
	// Unterminated at the end of the stream too.
	p, _ := NewParser(CodexRollout, func(transcript.ExchangeEvent) error { return nil })
	p.Write([]byte(huge))
	res, _ := p.Close("end")
	if res.Agent.Skipped[SkipLineTooLong] != 1 {
		t.Errorf("unterminated huge line: skipped %v", res.Agent.Skipped)
	}
}

func TestDanglingToolUseClosedAtClose(t *testing.T) {
	in := claudeText("m1", "x") + "\n" +
		`{"type":"assistant","message":{"id":"m1","content":[{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"sleep 9"}}]}}` + "\n"
	p := parse(t, ClaudeStreamJSON, []byte(in), nil)
	last := p.events[len(p.events)-1]
	if last.Type != transcript.ToolResult || last.Tool().CallID != "toolu_1" || last.Tool().Error != "no result: recording ended" {
		t.Errorf("last event %s %+v, want the dangling tool closed", last.Type, last.Tool())
	}
}

func TestToolInputKeptRawWhenNotJSON(t *testing.T) {
	in := `{"id":"r","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1","function":{"name":"f","arguments":"{not json"}}]},"finish_reason":"tool_calls"}]}` + "\n"
	p := parse(t, OpenAIChatStream, []byte(in), nil)
	if in := p.events[0].Tool().Input; in != "{not json" {
		t.Errorf("input %#v, want the raw text", in)
	}
}

func TestDuplicateKeysLastWins(t *testing.T) {
	in := `{"type":"item.completed","item":{"id":"item_2","type":"web_search","id":"exec-9","query":"q"}}` + "\n"
	p := parse(t, CodexExecJSON, []byte(in), nil)
	var id string
	for _, ev := range p.events {
		if ev.Type == transcript.ToolCall {
			id = ev.Tool().CallID
			break
		}
	}
	if id != "exec-9" {
		t.Errorf("call id %q, want the last duplicate key exec-9", id)
	}
}

func TestEmitErrorStopsParser(t *testing.T) {
	boom := errors.New("disk full")
	p, _ := NewParser(ClaudeStreamJSON, func(transcript.ExchangeEvent) error { return boom })
	_, err := p.Write([]byte(claudeText("m1", "a") + "\n" + claudeText("m2", "b") + "\n"))
	if !errors.Is(err, boom) {
		t.Fatalf("write: %v, want %v", err, boom)
	}
	if _, err := p.Close("end"); !errors.Is(err, boom) {
		t.Errorf("close: %v", err)
	}
}

func TestParseFormatAndDetect(t *testing.T) {
	for _, f := range Formats() {
		if got, err := ParseFormat(string(f)); err != nil || got != f {
			t.Errorf("ParseFormat(%q) = %q, %v", f, got, err)
		}
	}
	if _, err := ParseFormat("claude"); err == nil {
		t.Error("ParseFormat(claude) accepted an unknown name")
	}
	if _, err := NewParser("nope", func(transcript.ExchangeEvent) error { return nil }); err == nil {
		t.Error("NewParser accepted an unknown format")
	}
	for path, f := range allRecordings(t) {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if got, ok := Detect(data[:min(len(data), 4096)]); !ok || got != f {
			t.Errorf("Detect(%s) = %q, %v; want %q", path, got, ok, f)
		}
	}
	for _, junk := range []string{"", "hello\nworld\n", `{"a":1}`, "\x00\xff", "data:\n", "data: \n\n"} {
		if f, ok := Detect([]byte(junk)); ok {
			t.Errorf("Detect(%q) = %q", junk, f)
		}
	}
}

func TestShellOutputFastPath(t *testing.T) {
	lit := []byte(`"{\"output\":\"a \\\"q\\\" b\\\\c\\nd\",\"metadata\":{\"exit_code\":3,\"duration_seconds\":0.1}}"`)
	out, meta, ok := shellOutputRaw(lit[1 : len(lit)-1])
	if !ok || out != "a \"q\" b\\c\nd" || rawjson.Int(field(meta, "exit_code")) != 3 {
		t.Errorf("fast path: %q %s %v", out, meta, ok)
	}
	// \u escapes take the ordinary path and give the same result.
	lit = []byte(`"{\"output\":\"\\u00e9\",\"metadata\":{\"exit_code\":0}}"`)
	if _, _, ok := shellOutputRaw(lit[1 : len(lit)-1]); ok {
		t.Error("fast path took a \\u escape")
	}
	var scratch []byte
	if got, _ := codexToolOutput(lit, &scratch); got.(map[string]any)["output"] != "é" {
		t.Errorf("slow path: %#v", got)
	}
}
