package flowstudio

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/reelhq/reel/internal/testfixtures"
	"github.com/reelhq/reel/internal/transcripttest"
	"github.com/reelhq/reel/transcript"
)

func countTypes(events []transcript.ExchangeEvent) map[transcript.EventType]int {
	n := map[transcript.EventType]int{}
	for _, e := range events {
		n[e.Type]++
	}
	return n
}

func TestImportFixtureRun(t *testing.T) {
	dir := filepath.Join(testfixtures.Dir(t, "flowstudio-run"), "stepwise-build-claude")
	res, err := Import(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Warnings) != 0 {
		t.Errorf("warnings: %v", res.Warnings)
	}
	transcripttest.CheckValid(t, res.Events)
	n := countTypes(res.Events)
	// 44 step executions in events.jsonl (loops re-run steps); 26 of them
	// carry the transcript that Flow Studio kept, 3 lines each.
	if n[transcript.StepStarted] != 44 || n[transcript.MessageUser] != 26 || n[transcript.MessageAssistant] != 26 {
		t.Errorf("counts %v", n)
	}
	if res.RunID != "run-20251209-093851-zhdxx7" {
		t.Errorf("run id %q", res.RunID)
	}
	iters := map[string]int{}
	for _, e := range res.Events {
		if e.Type == transcript.StepStarted && e.Iteration+1 > iters[e.Path] {
			iters[e.Path] = e.Iteration + 1
		}
	}
	// route_decision looped back to author_reqs 3 times: 4 executions.
	if iters["signal.author_reqs"] != 4 || iters["build.implement"] != 4 || iters["signal.normalize"] != 1 {
		t.Errorf("iterations %v", iters)
	}
	for _, e := range res.Events {
		if e.Type == transcript.StepCompleted && e.Path == "build.fix" {
			var sr StepResult
			if err := transcript.DecodeResult(e.Step().Result, &sr); err != nil {
				t.Fatal(err)
			}
			if sr.Model != "claude-stub" || sr.Provider != "anthropic" || sr.FlowStudio.AgentKey != "fixer" || sr.FlowStudio.Mode != "stub" ||
				!strings.HasPrefix(sr.Output, "[STUB] Completed step fix") {
				t.Errorf("fix result %+v %+v", sr, sr.FlowStudio)
			}
		}
		if e.Type == transcript.MessageUser && e.Path == "build.fix" {
			b := e.Message().Blocks
			if len(b) != 2 || !strings.HasPrefix(b[0].Text, "Step role: Apply targeted fixes") || b[1].Text != "Executing step fix with agent fixer" {
				t.Errorf("fix prompt %+v", b)
			}
		}
	}
	var runRes struct {
		FlowStudio struct {
			Wisdom struct {
				Flows map[string]struct{ Status string } `json:"flows"`
			} `json:"wisdom_summary"`
		} `json:"flowstudio"`
	}
	if err := transcript.DecodeResult(res.Events[len(res.Events)-1].Step().Result, &runRes); err != nil || runRes.FlowStudio.Wisdom.Flows["gate"].Status != "skipped" {
		t.Errorf("wisdom summary not kept: %+v %v", runRes, err)
	}
	// The whole run records and verifies.
	path := transcripttest.RecordAll(t, t.TempDir(), res.Events)
	transcripttest.Verify(t, path)
	if ts := res.Events[0].Timestamp; !ts.Equal(time.Date(2025, 12, 9, 9, 38, 51, 8683000, time.UTC)) {
		t.Errorf("run start %v", ts)
	}
}

func TestImportOldReceipts(t *testing.T) {
	dir := filepath.Join(testfixtures.Dir(t, "flowstudio-run"), "stepwise-claude-receipts-old")
	res, err := Import(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	transcripttest.CheckValid(t, res.Events)
	n := countTypes(res.Events)
	if n[transcript.StepStarted] != 14 || len(res.Warnings) != 0 {
		t.Errorf("counts %v, warnings %v", n, res.Warnings)
	}
	for _, e := range res.Events {
		if e.Type == transcript.StepCompleted {
			var sr StepResult
			if err := transcript.DecodeResult(e.Step().Result, &sr); err != nil {
				t.Fatal(err)
			}
			// No provider in the old schema: it comes from the engine.
			if sr.Provider != "claude" || sr.FlowStudio.Mode != "" || sr.FlowStudio.ReceiptFile == "" {
				t.Errorf("%s: %+v %+v", e.Path, sr.AgentResult, sr.FlowStudio)
			}
		}
	}
	transcripttest.Verify(t, transcripttest.RecordAll(t, t.TempDir(), res.Events))
}

func TestInvalidReceiptSkipped(t *testing.T) {
	bad, err := os.ReadFile(filepath.Join(testfixtures.Dir(t, "flowstudio-run"), "invalid-build_receipt.json"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ParseReceipt(bad); err == nil || !strings.Contains(err.Error(), "invalid receipt") {
		t.Fatalf("ParseReceipt accepted two concatenated objects: %v", err)
	}
	// A run holding the invalid receipt beside a good one.
	dir := t.TempDir()
	good, err := os.ReadFile(filepath.Join(testfixtures.Dir(t, "flowstudio-run"), "stepwise-build-claude", "build", "receipts", "fix-fixer.json"))
	if err != nil {
		t.Fatal(err)
	}
	testfixtures.WriteFile(t, filepath.Join(dir, "build", "receipts", "invalid-build_receipt.json"), string(bad))
	testfixtures.WriteFile(t, filepath.Join(dir, "build", "receipts", "fix-fixer.json"), string(good))
	testfixtures.WriteFile(t, filepath.Join(dir, "build", "receipts", "nodash.json"), string(good))
	testfixtures.WriteFile(t, filepath.Join(dir, "build", "receipts", "x-missing.json"), `{"engine":"claude-step"}`)
	res, err := Import(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	transcripttest.CheckValid(t, res.Events)
	if n := countTypes(res.Events); n[transcript.StepStarted] != 1 {
		t.Errorf("steps %v", n)
	}
	joined := strings.Join(res.Warnings, "\n")
	for _, want := range []string{"invalid-build_receipt.json: invalid receipt", "nodash.json: not a receipt name", "x-missing.json: invalid receipt: missing model, step_id"} {
		if !strings.Contains(joined, want) {
			t.Errorf("warnings lack %q:\n%s", want, joined)
		}
	}
}

func TestNotARun(t *testing.T) {
	if _, err := Import(t.TempDir(), Options{}); err == nil {
		t.Fatal("an empty directory imported")
	}
	if _, err := Import(filepath.Join(t.TempDir(), "missing"), Options{}); err == nil {
		t.Fatal("a missing directory imported")
	}
}

func TestParseTime(t *testing.T) {
	want := time.Date(2025, 12, 9, 10, 20, 43, 245463000, time.UTC)
	for _, s := range []string{"2025-12-09T10:20:43.245463+00:00Z", "2025-12-09T10:20:43.245463Z", "2025-12-09T10:20:43.245463+00:00",
		"2025-12-09T10:20:43.245463", "2025-12-09T11:20:43.245463+01:00", "2025-12-09 10:20:43.245463"} {
		got, err := ParseTime(s)
		if err != nil || !got.Equal(want) {
			t.Errorf("ParseTime(%q) = %v, %v", s, got, err)
		}
	}
	for _, s := range []string{"", "yesterday", "2025-13-09T10:20:43Z", "+00:00Z"} {
		if _, err := ParseTime(s); err == nil {
			t.Errorf("ParseTime(%q) accepted", s)
		}
	}
}

// TestLineShapes covers the three line shapes real runs contain.
func TestLineShapes(t *testing.T) {
	cases := []struct {
		line string
		want []EntryKind
		chk  func(t *testing.T, e []Entry)
	}{
		{`{"timestamp": "2025-12-09T14:30:22.123456Z", "role": "system", "content": "You are the code-implementer agent..."}`, []EntryKind{EntryMessage}, func(t *testing.T, e []Entry) {
			if e[0].Role != "system" || e[0].Text != "You are the code-implementer agent..." {
				t.Errorf("%+v", e[0])
			}
		}},
		{`{"timestamp": "2025-12-09T14:30:26.123456Z", "role": "tool", "tool_name": "Read", "tool_input": {"file_path": "/p.py"}, "content": "# file contents..."}`, []EntryKind{EntryTool}, func(t *testing.T, e []Entry) {
			if e[0].ToolName != "Read" || string(e[0].Input) != `{"file_path": "/p.py"}` || string(e[0].Output) != `"# file contents..."` {
				t.Errorf("%+v", e[0])
			}
		}},
		{`{"timestamp": "2025-12-09T14:30:27.234567Z", "role": "tool", "tool_name": "Write", "tool_input": {"file_path": "/n.py"}, "tool_output": "File written successfully"}`, []EntryKind{EntryTool}, func(t *testing.T, e []Entry) {
			if string(e[0].Output) != `"File written successfully"` {
				t.Errorf("%+v", e[0])
			}
		}},
		{`{"timestamp": "2025-12-09T10:20:43.245463+00:00Z", "type": "message", "role": "assistant", "content": "hi"}`, []EntryKind{EntryMessage}, nil},
		{`{"timestamp": "2025-12-09T10:20:43Z", "type": "tool_use", "tool": "Bash", "input": {"command": "ls"}}`, []EntryKind{EntryToolUse}, func(t *testing.T, e []Entry) {
			if e[0].ToolName != "Bash" || string(e[0].Input) != `{"command": "ls"}` {
				t.Errorf("%+v", e[0])
			}
		}},
		{`{"timestamp": "2025-12-09T10:20:44Z", "type": "tool_result", "tool": "Bash", "success": false, "output": "boom"}`, []EntryKind{EntryToolResult}, func(t *testing.T, e []Entry) {
			if e[0].Error != "tool failed" || string(e[0].Output) != `"boom"` {
				t.Errorf("%+v", e[0])
			}
		}},
		{`{"timestamp": "2025-12-09T10:20:45Z", "type": "result", "usage": {"prompt": 12, "completion": 3, "total": 15}}`, []EntryKind{EntryUsage}, func(t *testing.T, e []Entry) {
			if *e[0].Usage != (transcript.Usage{InputTokens: 12, OutputTokens: 3, TotalTokens: 15}) {
				t.Errorf("%+v", e[0].Usage)
			}
		}},
		{`{"timestamp": "2025-12-09T10:20:45Z", "type": "error", "error": "rate limited"}`, []EntryKind{EntryError}, func(t *testing.T, e []Entry) {
			if e[0].Text != "rate limited" {
				t.Errorf("%+v", e[0])
			}
		}},
		// CLI runs: raw stream-json with a timestamp added.
		{`{"timestamp":"2025-12-09T10:20:46Z","type":"assistant","message":{"model":"claude-sonnet-4-5","role":"assistant","content":[{"type":"thinking","thinking":"hmm"},{"type":"text","text":"Reading."},{"type":"tool_use","id":"toolu_1","name":"Read","input":{"file_path":"a"}}]}}`, []EntryKind{EntryMessage, EntryToolUse}, func(t *testing.T, e []Entry) {
			if len(e[0].Blocks) != 3 || e[0].Model != "claude-sonnet-4-5" || e[1].ToolID != "toolu_1" {
				t.Errorf("%+v", e)
			}
		}},
		{`{"timestamp":"2025-12-09T10:20:47Z","type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"data","is_error":true}]}}`, []EntryKind{EntryToolResult}, func(t *testing.T, e []Entry) {
			if e[0].ToolID != "toolu_1" || e[0].Error != "data" {
				t.Errorf("%+v", e[0])
			}
		}},
		{`{"timestamp":"2025-12-09T10:20:48Z","type":"result","subtype":"success","is_error":false,"usage":{"input_tokens":130,"output_tokens":76,"cache_read_input_tokens":5}}`, []EntryKind{EntryUsage}, func(t *testing.T, e []Entry) {
			if *e[0].Usage != (transcript.Usage{InputTokens: 130, OutputTokens: 76, CacheReadTokens: 5, TotalTokens: 206}) {
				t.Errorf("%+v", e[0].Usage)
			}
		}},
		{`{"timestamp":"2025-12-09T10:20:48Z","type":"result","subtype":"error_during_execution","is_error":true,"errors":["denied"],"usage":{"input_tokens":1,"output_tokens":1}}`, []EntryKind{EntryUsage, EntryError}, nil},
		{`{"type":"tool_use","tool_name":"Bash","tool_id":"tool_1","parameters":{"command":"echo hello"},"timestamp":"2026-01-15T10:00:01Z"}`, []EntryKind{EntryToolUse}, func(t *testing.T, e []Entry) {
			if e[0].ToolID != "tool_1" || e[0].ToolName != "Bash" {
				t.Errorf("%+v", e[0])
			}
		}},
		{`{"type":"tool_result","tool_id":"tool_1","status":"error","output":"x","timestamp":"2026-01-15T10:00:02Z"}`, []EntryKind{EntryToolResult}, func(t *testing.T, e []Entry) {
			if e[0].Error != "tool error" {
				t.Errorf("%+v", e[0])
			}
		}},
		{`{"type":"error","message":"API key invalid or expired","timestamp":"2026-01-15T10:00:01Z"}`, []EntryKind{EntryError}, func(t *testing.T, e []Entry) {
			if e[0].Text != "API key invalid or expired" {
				t.Errorf("%+v", e[0])
			}
		}},
		{`{"type":"system","subtype":"init","model":"m","timestamp":"2026-01-15T10:00:00Z"}`, []EntryKind{EntryOther}, nil},
		{`{"type":"rate_limit_event","timestamp":"2026-01-15T10:00:00Z"}`, []EntryKind{EntryOther}, nil},
	}
	for _, c := range cases {
		got, err := ParseLine([]byte(c.line))
		if err != nil {
			t.Errorf("%s: %v", c.line, err)
			continue
		}
		var kinds []EntryKind
		for _, e := range got {
			kinds = append(kinds, e.Kind)
			if e.Time.IsZero() {
				t.Errorf("%s: no time", c.line)
			}
		}
		if !reflect.DeepEqual(kinds, c.want) {
			t.Errorf("%s: kinds %v, want %v", c.line, kinds, c.want)
			continue
		}
		if c.chk != nil {
			c.chk(t, got)
		}
	}
	for _, bad := range []string{`not json`, `{}`, `{"role":"robot","content":"x"}`, `{"timestamp":"soon","role":"user","content":"x"}`, `{"type":"assistant"}`,
		`{"role":"assistant","content":"x","reel_blocks":[{"type":"video","fidelity":"router"}]}`} {
		if _, err := ParseLine([]byte(bad)); err == nil {
			t.Errorf("ParseLine(%s) accepted", bad)
		}
	}
}

// fsTranscriptName and fsReceiptName are the patterns Flow Studio's own
// code uses to read artifact names back (flowstudio-details.md); they are
// spelled out here, apart from the package's, so the test checks the
// documented semantics.
var (
	fsTranscriptName = regexp.MustCompile(`^([a-zA-Z0-9_]+)-(.+)-([a-zA-Z0-9]+)\.jsonl$`)
	fsReceiptName    = regexp.MustCompile(`^([a-zA-Z0-9_]+)-(.+)\.json$`)
	fsRunID          = regexp.MustCompile(`^run-\d{8}-\d{6}-[a-z0-9]{6}$`)
)

// canonicalJSON rewrites a JSON value with its object keys sorted.
func canonicalJSON(raw []byte) ([]byte, error) {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, err
	}
	return json.Marshal(v)
}

func TestRoundTrip(t *testing.T) {
	dir := t.TempDir()
	src := transcripttest.WriteExchangeSample(t, filepath.Join(dir, "src"))
	orig, err := transcript.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "run")
	res, err := Export(out, Run{Events: orig})
	if err != nil {
		t.Fatal(err)
	}
	if !fsRunID.MatchString(res.RunID) || len(res.Transcripts) != 4 || len(res.Receipts) != 4 {
		t.Fatalf("export %+v", res)
	}
	checkExportedNames(t, out, res)
	back, err := Import(out, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(back.Warnings) > 0 {
		t.Errorf("warnings: %v", back.Warnings)
	}
	transcripttest.CheckValid(t, back.Events)
	imported := transcripttest.RecordAll(t, filepath.Join(dir, "imported"), back.Events)
	transcripttest.Verify(t, imported)
	got, err := transcript.ReadFile(imported)
	if err != nil {
		t.Fatal(err)
	}
	want, have := transcripttest.Summarize(t, orig, canonicalJSON), transcripttest.Summarize(t, got, canonicalJSON)
	if !reflect.DeepEqual(want, have) {
		t.Errorf("round trip changed the exchange:\nwant %s\n got %s", want, have)
	}
	// Command and loop steps come back too, with their kinds.
	kinds := map[string]string{}
	for _, e := range got {
		if e.Type == transcript.StepStarted {
			kinds[fmt.Sprintf("%s#%d", e.Path, e.Iteration)] = e.Step().Kind + "/" + e.Step().Command
		}
		if e.Type == transcript.StepCompleted && e.Path == "fix" && e.Step().Error != "provider exited with status 1" {
			t.Errorf("fix error %q", e.Step().Error)
		}
	}
	wantKinds := map[string]string{"analyze#0": "agent/", "lint#0": "command/go vet ./...", "each_file#0": "for_each/", "each_file.review#0": "agent/", "each_file.review#1": "agent/", "fix#0": "agent/"}
	if !reflect.DeepEqual(kinds, wantKinds) {
		t.Errorf("steps %v", kinds)
	}
}

// checkExportedNames parses every exported artifact name with Flow
// Studio's patterns and checks the parts against the receipt.
func checkExportedNames(t *testing.T, dir string, res *ExportResult) {
	t.Helper()
	var meta struct {
		ID     string `json:"id"`
		Status string `json:"status"`
	}
	readJSONFile(t, filepath.Join(dir, "meta.json"), &meta)
	if meta.ID != res.RunID || meta.Status != "failed" {
		t.Errorf("meta %+v", meta)
	}
	var spec struct {
		FlowKeys []string `json:"flow_keys"`
	}
	readJSONFile(t, filepath.Join(dir, "spec.json"), &spec)
	if !reflect.DeepEqual(spec.FlowKeys, []string{"review"}) {
		t.Errorf("flow keys %v", spec.FlowKeys)
	}
	wantTokens := map[string]Tokens{"analyze": {1200, 345, 1545}, "each_file_review": {100, 20, 120}, "each_file_review_i1": {101, 21, 122}, "fix_a2": {50, 5, 55}}
	for _, rp := range res.Receipts {
		m := fsReceiptName.FindStringSubmatch(filepath.Base(rp))
		if m == nil {
			t.Fatalf("receipt %s does not match Flow Studio's pattern", rp)
		}
		var r map[string]any
		readJSONFile(t, rp, &r)
		for _, k := range receiptRequired {
			if _, ok := r[k]; !ok {
				t.Errorf("%s lacks %s", rp, k)
			}
		}
		rec, err := ReadReceipt(rp)
		if err != nil {
			t.Fatal(err)
		}
		if m[1] != rec.StepID || m[2] != rec.AgentKey || rec.FlowKey != "review" || rec.RunID != res.RunID {
			t.Errorf("%s parses as step %q agent %q; receipt says %q %q", rp, m[1], m[2], rec.StepID, rec.AgentKey)
		}
		if rec.Tokens != wantTokens[rec.StepID] {
			t.Errorf("%s tokens %+v, want %+v", rp, rec.Tokens, wantTokens[rec.StepID])
		}
		if rec.Model != "claude-sonnet-4-5" || rec.Engine != "claude-step" || (rec.DurationMS != 1234 && rec.StepID != "fix_a2") {
			t.Errorf("%s: %+v", rp, rec)
		}
		if want := "succeeded"; rec.StepID == "fix_a2" {
			if rec.Status != "failed" {
				t.Errorf("fix status %q", rec.Status)
			}
		} else if rec.Status != want {
			t.Errorf("%s status %q", rp, rec.Status)
		}
		tm := fsTranscriptName.FindStringSubmatch(strings.TrimPrefix(rec.TranscriptPath, "llm/"))
		if tm == nil || tm[1] != rec.StepID || tm[2] != rec.AgentKey || tm[3] != "claude" {
			t.Errorf("transcript_path %s parses as %v", rec.TranscriptPath, tm)
		}
		tp := filepath.Join(dir, rec.FlowKey, rec.TranscriptPath)
		data, err := os.ReadFile(tp)
		if err != nil {
			t.Fatal(err)
		}
		// Every line is the documented form: timestamp, role, and
		// content or tool fields.
		for i, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			var line map[string]any
			if err := json.Unmarshal([]byte(l), &line); err != nil {
				t.Fatalf("%s:%d: %v", tp, i+1, err)
			}
			ts, _ := line["timestamp"].(string)
			if !regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$`).MatchString(ts) {
				t.Errorf("%s:%d: timestamp %q", tp, i+1, ts)
			}
			switch line["role"] {
			case "system", "user", "assistant":
				if _, ok := line["content"].(string); !ok {
					t.Errorf("%s:%d: no content", tp, i+1)
				}
			case "tool":
				if _, ok := line["tool_name"].(string); !ok {
					t.Errorf("%s:%d: no tool_name", tp, i+1)
				}
				if _, ok := line["tool_input"].(map[string]any); !ok {
					t.Errorf("%s:%d: tool_input is not an object", tp, i+1)
				}
			default:
				t.Errorf("%s:%d: role %v", tp, i+1, line["role"])
			}
		}
	}
}

func readJSONFile(t *testing.T, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

func TestStepIDs(t *testing.T) {
	cases := []struct {
		path      string
		iter, att int
		want      string
	}{
		{"analyze", 0, 0, "analyze"},
		{"each_file.review", 2, 1, "each_file_review_i2"},
		{"build-all.lint", 0, 3, "build_all_lint_a3"},
		{"", 0, 0, "step"},
		{"naïve step", 0, 0, "na_ve_step"},
	}
	for _, c := range cases {
		got := StepID(c.path, c.iter, c.att)
		if got != c.want || !regexp.MustCompile(`^[a-zA-Z0-9_]+$`).MatchString(got) {
			t.Errorf("StepID(%q,%d,%d) = %q, want %q", c.path, c.iter, c.att, got, c.want)
		}
		name := got + "-" + AgentKey("code-implementer") + "-" + Engine("claude") + ".jsonl"
		if m := fsTranscriptName.FindStringSubmatch(name); m == nil || m[1] != got || m[2] != "code-implementer" || m[3] != "claude" {
			t.Errorf("%s parses as %v", name, m)
		}
	}
	if AgentKey("") != "agent" || AgentKey("a/b c") != "a-b-c" || Engine("") != "agent" || Engine("Gemini-CLI") != "gemini" || FlowKey("My Flow!") != "my_flow" {
		t.Error("sanitisers")
	}
}

func FuzzParseLine(f *testing.F) {
	for _, s := range []string{
		`{"timestamp": "2025-12-09T14:30:22.123456Z", "role": "system", "content": "x"}`,
		`{"timestamp": "2025-12-09T10:20:43.245463+00:00Z", "role": "tool", "tool_name": "Read", "tool_input": {"a": 1}, "content": "y", "reel_blocks": null}`,
		`{"type":"assistant","message":{"content":[{"type":"tool_use","id":"1","name":"n","input":{}}]},"timestamp":"2026-01-15T10:00:00Z"}`,
		`{"type":"result","usage":{"prompt":1,"completion":2,"total":3}}`,
		`{"role":"assistant","content":"x","reel_blocks":[{"type":"text","fidelity":"agent_emitted","text":"\u0000"}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		entries, err := ParseLine(line)
		if err != nil {
			return
		}
		for _, e := range entries {
			if e.Kind < EntryMessage || e.Kind > EntryOther {
				t.Fatalf("entry kind %d", e.Kind)
			}
			// Whatever a line yields must fit the strict writer.
			for _, b := range e.Blocks {
				ev := transcript.ExchangeEvent{Seq: 1, RunID: "r", Type: transcript.MessageAssistant,
					Payload: &transcript.MessagePayload{Role: "assistant", Blocks: []transcript.ContentBlock{b}}}
				if _, err := transcript.AppendEvent(nil, &ev); err != nil {
					t.Fatalf("block %+v does not encode: %v", b, err)
				}
			}
		}
	})
}

// FuzzImportTranscript imports a run whose one step transcript is the
// fuzzer's data and checks that the result is a valid run.
func FuzzImportTranscript(f *testing.F) {
	f.Add([]byte("{\"timestamp\": \"2025-12-09T09:38:51.060335+00:00Z\", \"role\": \"system\", \"content\": \"x\"}\n{\"role\":\"tool\",\"tool_name\":\"Read\",\"tool_input\":{}}\n"))
	f.Add([]byte("{\"type\":\"tool_use\",\"tool\":\"Bash\",\"input\":{}}\n{\"type\":\"tool_result\",\"tool\":\"Bash\"}\n{\"type\":\"tool_use\",\"tool_id\":\"1\"}\n{\"type\":\"result\",\"usage\":{\"prompt\":1}}"))
	f.Add([]byte("{\"role\":\"assistant\",\"content\":\"x\",\"reel_blocks\":[{\"type\":\"tool_use\",\"fidelity\":\"agent_emitted\",\"tool_input\":{\"a\":1}}]}\n\x00\xff\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		run := fstest.MapFS{"build/llm/fix-fixer-claude.jsonl": &fstest.MapFile{Data: data}}
		res, err := ImportFS(run, "fuzz", Options{MaxLineBytes: 1 << 16})
		if err != nil {
			t.Fatal(err)
		}
		transcripttest.CheckValid(t, res.Events)
	})
}

// TestExportInterrupted exports a run killed mid-step (no step.completed,
// no run.completed) and imports it back as a valid run.
func TestExportInterrupted(t *testing.T) {
	events := transcripttest.ExchangeSample(t)
	// Cut inside the fix step, after its user message.
	cut := 0
	for i, e := range events {
		if e.Type == transcript.MessageUser && e.Path == "fix" {
			cut = i + 1
		}
	}
	dir := t.TempDir()
	if _, err := Export(dir, Run{Events: events[:cut]}); err != nil {
		t.Fatal(err)
	}
	var meta struct {
		Status      string  `json:"status"`
		CompletedAt *string `json:"completed_at"`
	}
	readJSONFile(t, filepath.Join(dir, "meta.json"), &meta)
	if meta.Status != "running" || meta.CompletedAt != nil {
		t.Errorf("meta %+v", meta)
	}
	r, err := ReadReceipt(filepath.Join(dir, "review", "receipts", "fix_a2-fix.json"))
	if err != nil || r.Status != "failed" {
		t.Fatalf("fix receipt %+v, %v", r, err)
	}
	res, err := Import(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	transcripttest.CheckValid(t, res.Events)
	last := res.Events[len(res.Events)-1]
	var rr transcript.RunResult
	if err := transcript.DecodeResult(last.Step().Result, &rr); err != nil || rr.Status != "interrupted" {
		t.Errorf("run result %+v, %v", rr, err)
	}
}

// FuzzStr checks the reflection-free string decoder against encoding/json.
func FuzzStr(f *testing.F) {
	for _, s := range []string{`"plain"`, `"a\u2192b\n\"q\"\\"`, `"\ud83d\ude00\ud800x\udc00"`, "\"\xff\xfe\"", `"\u00"`, `"a"b"`, `"` + "\x01" + `"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		got, ok := str(in)
		var want string
		err := json.Unmarshal(in, &want)
		if ok != (err == nil) {
			t.Fatalf("%q: str ok=%v, encoding/json err=%v", in, ok, err)
		}
		if ok && got != want {
			t.Fatalf("%q: str %q, encoding/json %q", in, got, want)
		}
	})
}
