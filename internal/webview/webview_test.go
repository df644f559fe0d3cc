package webview

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/reelhq/reel/internal/browsertest"
	"github.com/reelhq/reel/internal/runs"
	"github.com/reelhq/reel/internal/transcripttest"
	"github.com/reelhq/reel/transcript"
	"github.com/reelhq/reel/transcript/secrets"
)

func standalone(t *testing.T, path string, red *Redactor) []byte {
	t.Helper()
	run, err := LoadRun(runs.Open(path, runs.Options{}), RunOptions{Redact: red})
	if err != nil {
		t.Fatal(err)
	}
	v, err := New()
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := v.Render(&buf, &Page{Name: "run", Title: run.Workflow, Standalone: true, Data: run}); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestStandaloneSelfContained: the replay file loads nothing from
// anywhere: no src or href attribute leaves the file.
func TestStandaloneSelfContained(t *testing.T) {
	path := transcripttest.Sample(t, transcripttest.Variant{})
	html := standalone(t, path, nil)
	for _, m := range regexp.MustCompile(`(?i)\b(src|href)\s*=\s*"([^"]*)"`).FindAllSubmatch(html, -1) {
		v := string(m[2])
		if !strings.HasPrefix(v, "#") && !strings.HasPrefix(v, "data:") {
			t.Errorf("%s=%q points outside the file", m[1], v)
		}
	}
	for _, want := range []string{"<style>", "<script>", "Find the bugs in main.go.", `id="run-` + transcripttest.ChildID + `"`} {
		if !bytes.Contains(html, []byte(want)) {
			t.Errorf("replay lacks %q", want)
		}
	}
}

func TestRedaction(t *testing.T) {
	dir := t.TempDir()
	id := transcript.NewRunID()
	r := transcripttest.NewRun(t, dir, id, "", transcripttest.Epoch)
	r.Event(transcript.ExchangeEvent{Type: transcript.RunStarted, Payload: &transcript.StepPayload{Name: "leaky", Kind: transcript.KindWorkflow}})
	r.Agent("call", 0, "use key sk-abcdefghijklmnopqrstuvwx1234 and ticket JIRA-4242", "", []transcripttest.Tool{
		{Name: "Bash", ID: "t1", Input: map[string]any{"command": "curl -H 'X-Token: hunter2hunter2' internal.example"}, Output: "JIRA-4242 done", Took: time.Millisecond},
	}, "done with JIRA-4242", transcript.Usage{}, 0)
	r.Close()
	path := filepath.Join(dir, id+".jsonl")
	t.Setenv("DEPLOY_TOKEN", "hunter2hunter2")
	red, err := NewRedactor(secrets.NewMasker(os.Environ()), []string{`JIRA-\d+`})
	if err != nil {
		t.Fatal(err)
	}
	html := standalone(t, path, red)
	for _, secret := range []string{"sk-abcdefghijklmnopqrstuvwx1234", "hunter2hunter2", "JIRA-4242"} {
		if bytes.Contains(html, []byte(secret)) {
			t.Errorf("replay still holds %q", secret)
		}
	}
	if !bytes.Contains(html, []byte(Redacted)) || !bytes.Contains(html, []byte(secrets.Masked)) {
		t.Error("no redaction marker in the replay")
	}
	if _, err := NewRedactor(nil, []string{"("}); err == nil {
		t.Error("a bad expression was accepted")
	}
}

// A secret two stream blocks (a reply's deltas) split is masked in the
// page, though each block alone holds no secret.
func TestRedactionOfSplitStreamDeltas(t *testing.T) {
	dir := t.TempDir()
	id := transcript.NewRunID()
	r := transcripttest.NewRun(t, dir, id, "", transcripttest.Epoch)
	r.Event(transcript.ExchangeEvent{Type: transcript.RunStarted, Payload: &transcript.StepPayload{Name: "stream", Kind: transcript.KindWorkflow}})
	r.Event(transcript.ExchangeEvent{Type: transcript.StepStarted, Path: "a", Payload: &transcript.StepPayload{Name: "a", Kind: transcript.KindAgent}})
	var blocks []transcript.ContentBlock
	for _, d := range []string{"use sk-ant-", "api03-Xq7vT2mN9", "pL4kR8sW1yZ6bC3dF5gH0jKq now"} {
		blocks = append(blocks, transcript.ContentBlock{Type: transcript.BlockStream, Fidelity: transcript.FidelityAgentEmitted,
			Chunk: `{"delta":{"text":"` + d + `"}}`})
	}
	r.Event(transcript.ExchangeEvent{Type: transcript.MessageAssistant, Path: "a", Payload: &transcript.MessagePayload{Role: "assistant", Blocks: blocks}})
	r.Event(transcript.ExchangeEvent{Type: transcript.StepCompleted, Path: "a", Payload: &transcript.StepPayload{Name: "a", Kind: transcript.KindAgent}})
	r.Event(transcript.ExchangeEvent{Type: transcript.RunCompleted, Payload: &transcript.StepPayload{Name: "stream", Kind: transcript.KindWorkflow, Result: transcript.RunResult{Status: "success"}}})
	r.Close()
	red, err := NewRedactor(secrets.NewMasker(nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	html := standalone(t, filepath.Join(dir, id+".jsonl"), red)
	for _, part := range []string{"api03-Xq7vT2mN9", "pL4kR8sW1yZ6bC3dF5gH0jKq"} {
		if bytes.Contains(html, []byte(part)) {
			t.Errorf("the page shows %q of the split key", part)
		}
	}
	if !bytes.Contains(html, []byte("now")) || !bytes.Contains(html, []byte(secrets.Masked)) {
		t.Error("the deltas are not shown masked")
	}
}

func TestBlocks(t *testing.T) {
	png := "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
	b := value(json.RawMessage(`[{"type":"text","text":"here"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"`+png+`"}}]`), 0)
	if b.Kind != "parts" || len(b.Parts) != 2 || b.Parts[1].Kind != "image" || !strings.HasPrefix(string(b.Parts[1].Img), "data:image/png;base64,") {
		t.Errorf("image part: %+v", b)
	}
	big := strings.Repeat("QUJD", 300)
	if b := value(json.RawMessage(`"`+big+`"`), 0); b.Kind != "note" || !strings.Contains(b.Text, "base64") {
		t.Errorf("base64 text shown as %+v", b)
	}
	svg := value(json.RawMessage(`{"type":"image","source":{"type":"base64","media_type":"image/svg+xml","data":"PHN2Zz48L3N2Zz4="}}`), 0)
	if svg.Kind != "note" {
		t.Errorf("an svg image is drawn: %+v", svg)
	}
	kv := value(json.RawMessage(`{"command":"ls -l\nwc","timeout":5}`), 0)
	if kv.Kind != "kv" || len(kv.KV) != 2 || kv.KV[0].Key != "command" || kv.KV[0].Value.Kind != "pre" {
		t.Errorf("object laid out as %+v", kv)
	}
	edit := toolInput("Edit", json.RawMessage(`{"file_path":"a.go","old_string":"a\nb\nc","new_string":"a\nB\nc"}`))
	if edit.Kind != "diff" || edit.Label != "a.go" || len(edit.Lines) != 4 {
		t.Errorf("edit: %+v", edit)
	}
	write := toolInput("Write", json.RawMessage(`{"file_path":"n.go","content":"x\ny\n"}`))
	if write.Kind != "diff" || len(write.Lines) != 2 || write.Lines[0].Op != '+' {
		t.Errorf("write: %+v", write)
	}
}

func TestDiff(t *testing.T) {
	got := Diff("a\nb\nc\nd", "a\nc\nd\ne")
	var ops []string
	for _, l := range got {
		ops = append(ops, string(l.Op)+l.Text)
	}
	if strings.Join(ops, ",") != " a,-b, c, d,+e" {
		t.Errorf("diff %v", ops)
	}
	// Property: dropping '+' lines gives old, dropping '-' gives new.
	cases := [][2]string{{"", "x"}, {"x", ""}, {"1\n2\n3", "3\n2\n1"}, {"a\na\nb", "b\na\na"}}
	for _, c := range cases {
		var olds, news []string
		for _, l := range Diff(c[0], c[1]) {
			if l.Op != '+' {
				olds = append(olds, l.Text)
			}
			if l.Op != '-' {
				news = append(news, l.Text)
			}
		}
		if strings.Join(olds, "\n") != strings.TrimSuffix(c[0], "\n") || strings.Join(news, "\n") != strings.TrimSuffix(c[1], "\n") {
			t.Errorf("%q → %q: old %q new %q", c[0], c[1], olds, news)
		}
	}
}

// TestBrowserReplayFile opens the replay from disk in Chromium and plays it.
func TestBrowserReplayFile(t *testing.T) {
	ctx := browsertest.New(t, "internal/webview")
	path := transcripttest.Sample(t, transcripttest.Variant{LintFails: true})
	file := filepath.Join(t.TempDir(), "replay.html")
	if err := os.WriteFile(file, standalone(t, path, nil), 0o600); err != nil {
		t.Fatal(err)
	}
	var total, pendingAtStart, pendingMid int
	var ended bool
	var conv string
	browsertest.Run(t, ctx, 30*time.Second,
		chromedp.Navigate("file://"+file),
		chromedp.WaitVisible(`#events`),
		chromedp.Text(`#events`, &conv),
		chromedp.Evaluate(`document.querySelectorAll(".ev").length`, &total),
		// Scrub to the start: nothing after the first instant shows.
		chromedp.SetValue(`#scrub`, "0"),
		chromedp.Evaluate(`document.getElementById("scrub").dispatchEvent(new Event("input")); document.querySelectorAll(".ev.pending").length`, &pendingAtStart),
		chromedp.SetValue(`#speed`, "1"),
		chromedp.Click(`#play`),
		chromedp.Sleep(600*time.Millisecond),
		chromedp.Evaluate(`document.querySelectorAll(".ev.pending").length`, &pendingMid),
		chromedp.SetValue(`#speed`, "0"),
		chromedp.Poll(`document.querySelectorAll(".ev.pending").length === 0`, &ended, chromedp.WithPollingTimeout(10*time.Second)),
	)
	if !strings.Contains(conv, "Find the bugs in main.go.") || total < 30 {
		t.Fatalf("%d events; conversation: %.200s", total, conv)
	}
	if pendingAtStart == 0 || pendingMid == 0 || pendingMid >= pendingAtStart {
		t.Errorf("playback: %d hidden at start, %d after 0.6 s at 1×", pendingAtStart, pendingMid)
	}
}

// The redactor walks an event's strings once, in place: free-form JSON
// keeps its keys, their order, its numbers and its literals, and only the
// strings a pattern matches change; ids and types stay as they are.
func TestRedactorWalksOnce(t *testing.T) {
	red, err := NewRedactor(nil, []string{`JIRA-\d+`})
	if err != nil {
		t.Fatal(err)
	}
	in := json.RawMessage(`{"z":1.50,"a":"fix JIRA-1 now","list":[true,null,{"k":"JIRA-22"},"x"],"JIRA-3":"key"}`)
	ev := transcript.ExchangeEvent{Seq: 4, RunID: "JIRA-9", Type: transcript.ToolCall, Path: "step JIRA-5",
		Payload: &transcript.ToolPayload{Name: "Bash", CallID: "JIRA-7", Input: in, Output: json.RawMessage(`"done JIRA-8"`), Fidelity: transcript.FidelityRouter}}
	red.Event(&ev)
	tp := ev.Tool()
	if got := string(tp.Input.(json.RawMessage)); got != `{"z":1.50,"a":"fix [REDACTED] now","list":[true,null,{"k":"[REDACTED]"},"x"],"JIRA-3":"key"}` {
		t.Errorf("input %s", got)
	}
	if got := string(tp.Output.(json.RawMessage)); got != `"done [REDACTED]"` {
		t.Errorf("output %s", got)
	}
	if ev.Path != "step [REDACTED]" || ev.RunID != "JIRA-9" || tp.CallID != "JIRA-7" || ev.Type != transcript.ToolCall {
		t.Errorf("event %+v %+v", ev, tp)
	}
	if string(in) != `{"z":1.50,"a":"fix JIRA-1 now","list":[true,null,{"k":"JIRA-22"},"x"],"JIRA-3":"key"}` {
		t.Error("the original value changed")
	}
}
