package normalize

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/reelhq/reel/internal/golden"
	"github.com/reelhq/reel/internal/rawjson"
	"github.com/reelhq/reel/transcript"
)

// fuzzSeeds adds this package's recordings of format f and, when the shared
// fixtures sit beside the checkout, theirs.
func fuzzSeeds(f *testing.F, format Format) {
	paths := ownRecordings(f, format)
	shared, _ := filepath.Glob(filepath.Join("..", "..", "..", "shared", "fixtures", string(format), "*"))
	equiv, _ := filepath.Glob(filepath.Join("testdata", "equiv", string(format)+".*"))
	for _, p := range append(append(paths, shared...), equiv...) {
		data, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		// Large seeds slow every mutation down; their first lines carry
		// the shapes just as well.
		if len(data) > 8<<10 {
			data = data[:8<<10]
		}
		f.Add(data, uint16(len(data)/2))
	}
	f.Add([]byte("{\"type\":\n\x00\xff}\n{}\n[\n"), uint16(3))
}

// fuzzParser checks, for any input: no panic; every event passes the strict
// transcript encoder; every tool.call gets exactly one tool.result after
// Close; feeding in two chunks gives the same output as feeding it whole.
//
// Run these targets with -fuzzminimizetime=200x. The fuzzer minimizes every
// new input, and its minimizer tries removing each span of bytes (quadratic
// in the input's length) for up to 60 s by default; inputs grown from the
// kilobyte seeds keep both workers minimizing, at 0 execs/s, for most of a
// short run, whatever the fuzz cache holds. The parsers are not the cause:
// each seed and cached input parses in about a millisecond at most.
func fuzzParser(f *testing.F, format Format) {
	fuzzSeeds(f, format)
	f.Fuzz(func(t *testing.T, data []byte, split uint16) {
		whole := parse(t, format, data, nil)
		calls, results := map[string]int{}, map[string]int{}
		for _, ev := range whole.events {
			switch ev.Type {
			case transcript.ToolCall:
				calls[ev.Tool().CallID]++
			case transcript.ToolResult:
				results[ev.Tool().CallID]++
				if calls[ev.Tool().CallID] == 0 {
					t.Fatalf("tool.result %s before its tool.call", ev.Tool().CallID)
				}
			}
		}
		for id, c := range calls {
			if c != 1 || results[id] != 1 {
				t.Fatalf("tool %s: %d calls, %d results", id, c, results[id])
			}
		}
		a := render(t, whole)
		k := 0
		if len(data) > 0 {
			k = int(split) % (len(data) + 1)
		}
		b := render(t, parse(t, format, data, func(d []byte) [][]byte { return [][]byte{d[:k], d[k:]} }))
		if !bytes.Equal(a, b) {
			t.Fatalf("split at %d changes the output:\n%s", k, golden.Diff(a, b))
		}
	})
}

func FuzzClaudeStreamJSON(f *testing.F) { fuzzParser(f, ClaudeStreamJSON) }
func FuzzClaudeSessionLog(f *testing.F) { fuzzParser(f, ClaudeSessionLog) }
func FuzzCodexExecJSON(f *testing.F)    { fuzzParser(f, CodexExecJSON) }
func FuzzCodexRollout(f *testing.F)     { fuzzParser(f, CodexRollout) }
func FuzzGeminiStreamJSON(f *testing.F) { fuzzParser(f, GeminiStreamJSON) }
func FuzzGeminiSession(f *testing.F)    { fuzzParser(f, GeminiSession) }
func FuzzCopilotJSON(f *testing.F)      { fuzzParser(f, CopilotJSON) }
func FuzzOpenAIChatStream(f *testing.F) { fuzzParser(f, OpenAIChatStream) }
func FuzzAnthropicSSE(f *testing.F)     { fuzzParser(f, AnthropicSSE) }
func FuzzVibeStreaming(f *testing.F)    { fuzzParser(f, VibeStreaming) }
func FuzzOpencodeJSON(f *testing.F)     { fuzzParser(f, OpencodeJSON) }

// FuzzDetect: any head is either recognized or not, never a panic, and a
// recognized format is one NewParser accepts.
func FuzzDetect(f *testing.F) {
	for _, format := range Formats() {
		for _, p := range ownRecordings(f, format) {
			if data, err := os.ReadFile(p); err == nil {
				f.Add(data)
			}
		}
	}
	f.Fuzz(func(t *testing.T, head []byte) {
		if format, ok := Detect(head); ok {
			if _, err := ParseFormat(string(format)); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// FuzzScanner compares the scanner's string decoding with the transcript
// round trip: whatever str returns must encode as valid JSON.
func FuzzScanner(f *testing.F) {
	f.Add([]byte(`{"a":"x\u0000\ud83d\ude00\\\"","b":[1,{"c":null}],"a":"last"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		_ = eachField(data, func(k, v []byte) {
			s := rawjson.Str(v)
			ev := transcript.ExchangeEvent{Type: transcript.MessageUser, RunID: "r", Payload: &transcript.MessagePayload{Role: "user",
				Blocks: []transcript.ContentBlock{{Type: transcript.BlockText, Fidelity: transcript.FidelityRouter, Text: s}}}}
			if _, err := transcript.AppendEvent(nil, &ev); err != nil {
				t.Fatal(err)
			}
			_ = raw(v)
			_ = rawjson.EachElem(v, func([]byte) {})
		})
	})
}

// FuzzShellOutput checks the one-pass decoder of Codex shell output against
// the ordinary two-pass decoding, for any output text and exit code.
func FuzzShellOutput(f *testing.F) {
	f.Add("CLAUDE.md\nREADME.md\n", int64(0))
	f.Add(`say "hi" \ C:\path\n`+"\t\u00e9\u2028\x00\x1f", int64(2))
	f.Fuzz(func(t *testing.T, text string, code int64) {
		// The shape Codex writes: output first, then metadata.
		outJSON, _ := json.Marshal(text)
		inner := []byte(`{"output":` + string(outJSON) + `,"metadata":{"exit_code":` + strconv.FormatInt(code, 10) + `,"duration_seconds":0.5}}`)
		lit, _ := json.Marshal(string(inner))
		var scratch []byte
		got, gotErr, ran := codexToolOutput(lit, &scratch)
		// The slow path: decode twice with encoding/json.
		var outer string
		if err := json.Unmarshal(lit, &outer); err != nil {
			t.Fatal(err)
		}
		var v struct {
			Output   string
			Metadata struct {
				ExitCode int64 `json:"exit_code"`
			}
		}
		if err := json.Unmarshal([]byte(outer), &v); err != nil {
			t.Fatal(err)
		}
		m, ok := got.(map[string]any)
		if !ok || m["output"] != v.Output || m["exit_code"] != v.Metadata.ExitCode {
			t.Fatalf("got %#v, want output %q exit %d", got, v.Output, v.Metadata.ExitCode)
		}
		if (gotErr != "") != (code != 0) {
			t.Fatalf("error %q for exit code %d", gotErr, code)
		}
		if ran != 500*time.Millisecond {
			t.Fatalf("ran %v, want the 0.5 s the metadata states", ran)
		}
	})
}
