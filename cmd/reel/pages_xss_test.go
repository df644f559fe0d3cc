package main

import (
	"context"
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/reelhq/reel/internal/browsertest"
	"github.com/reelhq/reel/internal/transcripttest"
	"github.com/reelhq/reel/transcript"
)

// hostile holds, in one string, a script element, event handlers (in text
// and breaking out of an attribute), javascript: URLs (raw, in a Markdown
// link and a reference, in an OSC 8 terminal hyperlink), an image and an
// iTerm inline image that would be fetched from elsewhere, and template
// syntax.
const hostile = `<script>alert("s")</script><img src=http://203.0.113.9/x.png onerror=alert("i")>"'><svg onload=alert("v")> ` +
	`javascript:alert("j") [md](javascript:alert("m")) [ref][r] ![pic](http://203.0.113.9/p.png) <a href="javascript:alert('a')">a</a> ` +
	"\x1b]8;;javascript:alert('o')\x1b\\osc\x1b]8;;\x1b\\ \x1b]1337;File=name=eA==;inline=1:aGk=\x07 {{.}} ${alert(1)}\n\n[r]: javascript:alert('r')\n"

// hostileRun records a run whose every string field holds hostile: names,
// paths, commands, errors, outputs, results, every block of both messages,
// every field of the tool pair. ended leaves run.completed off (a live
// page) when false.
func hostileRun(t *testing.T, storage, id string, ended bool) {
	t.Helper()
	r := transcripttest.NewRun(t, transcript.Dir(storage), id, "", transcripttest.Epoch)
	path := "step" + hostile
	r.Event(transcript.ExchangeEvent{Type: transcript.RunStarted, Payload: &transcript.StepPayload{Name: hostile, Kind: transcript.KindWorkflow, Input: map[string]any{hostile: hostile}}})
	r.Event(transcript.ExchangeEvent{Type: transcript.StepStarted, Path: "cmd", Payload: &transcript.StepPayload{Name: hostile, Kind: transcript.KindCommand, Command: hostile}})
	r.Complete("cmd", 0, transcript.KindCommand, 0, hostile, transcript.CommandResult{ExitCode: 1, Output: hostile, Stderr: hostile})
	r.Event(transcript.ExchangeEvent{Type: transcript.StepStarted, Path: path, Payload: &transcript.StepPayload{Name: hostile, Kind: hostile}})
	r.Event(transcript.ExchangeEvent{Type: transcript.MessageUser, Path: path, Payload: &transcript.MessagePayload{Role: "user", Blocks: []transcript.ContentBlock{
		{Type: transcript.BlockText, Fidelity: transcript.FidelityRouter, Text: hostile},
		{Type: transcript.BlockText, Fidelity: transcript.FidelityRouter, Text: hostile},
	}}})
	r.Event(transcript.ExchangeEvent{Type: transcript.MessageUser, Path: path, Payload: &transcript.MessagePayload{Role: "user", Blocks: []transcript.ContentBlock{
		{Type: transcript.BlockText, Fidelity: transcript.FidelityAgentEmitted, Text: "<command-name>" + hostile + "</command-name><command-args>" + hostile + "</command-args>"},
		{Type: transcript.BlockText, Fidelity: transcript.FidelityAgentEmitted, Text: "<local-command-stdout>" + hostile + "</local-command-stdout>"},
	}}})
	r.Event(transcript.ExchangeEvent{Type: transcript.MessageUser, Path: path, Payload: &transcript.MessagePayload{Role: "user", Blocks: []transcript.ContentBlock{
		{Type: transcript.BlockText, Fidelity: transcript.FidelityAgentEmitted, Text: "# Context from my IDE setup:\n" + hostile + "\n## My request for Codex:\n" + hostile},
	}}})
	in := map[string]any{hostile: hostile, "file_path": hostile, "old_string": hostile, "new_string": hostile + "\n" + hostile, "content": hostile,
		"image": map[string]any{"type": "image", "source": map[string]any{"type": "base64", "media_type": "image/svg+xml", "data": "PHN2ZyBvbmxvYWQ9YWxlcnQoMSk+"}}}
	r.Event(transcript.ExchangeEvent{Type: transcript.MessageAssistant, Path: path, Payload: &transcript.MessagePayload{Role: "assistant", Blocks: []transcript.ContentBlock{
		{Type: transcript.BlockThinking, Fidelity: transcript.FidelityAgentEmitted, Thinking: hostile},
		{Type: transcript.BlockText, Fidelity: transcript.FidelityAgentEmitted, Text: hostile},
		{Type: transcript.BlockToolUse, Fidelity: transcript.FidelityAgentEmitted, ToolName: hostile, ToolID: hostile, ToolInput: in},
		{Type: transcript.BlockToolResult, Fidelity: transcript.FidelityAgentEmitted, ToolID: hostile, ToolContent: hostile},
		{Type: transcript.BlockCommand, Fidelity: transcript.FidelityAgentEmitted, Command: hostile},
		{Type: transcript.BlockStream, Fidelity: transcript.FidelityAgentEmitted, Chunk: hostile},
	}}})
	for _, name := range []string{hostile, "Edit", "Write", "MultiEdit"} {
		call := name + hostile
		r.Event(transcript.ExchangeEvent{Type: transcript.ToolCall, Path: path, Payload: &transcript.ToolPayload{Name: name, CallID: call, Input: in, Fidelity: transcript.FidelityRouter}})
		r.Event(transcript.ExchangeEvent{Type: transcript.ToolResult, Path: path, Payload: &transcript.ToolPayload{Name: name, CallID: call, Input: in, Output: hostile, Error: hostile, Fidelity: transcript.FidelityAgentEmitted}})
	}
	r.Complete(path, 0, hostile, 0, hostile, transcript.AgentResult{Provider: hostile, Model: hostile, Output: hostile, RequestModel: hostile, SessionID: hostile})
	if ended {
		r.Event(transcript.ExchangeEvent{Type: transcript.RunCompleted, Payload: &transcript.StepPayload{Name: hostile, Kind: transcript.KindWorkflow, Error: hostile,
			Result: transcript.RunResult{Status: "failure", ExitCode: 1}}})
	}
	if err := r.Recorder().Close(); err != nil {
		t.Fatal(err)
	}
}

// The XSS test of issue 24: transcripts whose every string field holds
// script, event-handler, javascript: and Markdown-link payloads render as
// text in every page (run list, run page ended and live, search, the
// comparison, the error page and the html replay file), checked in
// Chromium: no dialog opens, no request leaves the page's own server, and
// the DOM holds no script but reel's, no event-handler attribute, no
// javascript: link and no image from elsewhere.
func TestHostileTranscriptRendersAsText(t *testing.T) {
	ctx := browsertest.New(t, pagesPkg)
	storage := t.TempDir()
	const a, b = transcripttest.RootID, transcripttest.OtherID
	hostileRun(t, storage, a, true)
	hostileRun(t, storage, b, false)
	base := servePages(t, storage)
	replay := filepath.Join(t.TempDir(), "replay.html")
	if _, errOut, err := runReel(t, context.Background(), "replay", a, "--storage", storage, "--format", "html", "-o", replay); err != nil {
		t.Fatalf("replay --format html: %v\n%s", err, errOut)
	}

	var mu sync.Mutex
	var dialogs, away []string
	chromedp.ListenTarget(ctx, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch e := ev.(type) {
		case *page.EventJavascriptDialogOpening:
			dialogs = append(dialogs, e.Message)
			go chromedp.Run(ctx, page.HandleJavaScriptDialog(false))
		case *network.EventRequestWillBeSent:
			u := e.Request.URL
			if !strings.HasPrefix(u, base+"/") && !strings.HasPrefix(u, "data:") && !strings.HasPrefix(u, "file://") && u != "about:blank" {
				away = append(away, u)
			}
		}
	})
	browsertest.Run(t, ctx, 10*time.Second, network.Enable())

	pages := []string{
		base + "/",
		base + "/runs/" + a,
		base + "/runs/" + b, // live: the events arrive over Server-Sent Events
		base + "/search?q=" + url.QueryEscape("alert"),
		base + "/search?q=" + url.QueryEscape(hostile),
		base + "/diff/" + a + "/" + b,
		base + "/runs/" + url.PathEscape(hostile),
		"file://" + replay,
	}
	const domJS = `JSON.stringify((() => {
	  const bad = [];
	  for (const e of document.querySelectorAll("*")) {
	    for (const at of e.attributes) {
	      const v = at.value.replace(/[\s\u0000-\u001f]/g, "").toLowerCase();
	      if (at.name.startsWith("on")) bad.push(e.tagName + " " + at.name);
	      if ((at.name === "href" || at.name === "src" || at.name === "action" || at.name === "formaction") && (v.startsWith("javascript:") || v.startsWith("vbscript:") || v.startsWith("data:text"))) bad.push(e.tagName + " " + at.name + "=" + at.value);
	    }
	    if (["IFRAME", "OBJECT", "EMBED", "SVG", "STYLE", "BASE", "FORM"].includes(e.tagName.toUpperCase()) && !(e.tagName === "FORM" && (e.className === "search" || e.className === "filters")) && !(e.tagName === "STYLE" && e.parentElement === document.head && document.querySelectorAll("style").length === 1)) bad.push(e.tagName);
	    if (e.tagName === "IMG" && !e.getAttribute("src").startsWith("data:image/")) bad.push("IMG " + e.getAttribute("src"));
	  }
	  const scripts = document.querySelectorAll("script").length;
	  if (scripts !== 1) bad.push(scripts + " scripts");
	  return {bad: bad, text: document.body.innerText.includes("alert(") || Array.from(document.querySelectorAll("input")).some(i => i.value.includes("alert("))};
	})())`
	for _, p := range pages {
		var raw string
		browsertest.Run(t, ctx, 30*time.Second,
			chromedp.Navigate(p),
			chromedp.WaitReady(`body`),
			chromedp.Sleep(300*time.Millisecond), // live events, images and handlers get their chance
			chromedp.Evaluate(`document.querySelectorAll("details").forEach(d => d.open = true)`, nil),
			chromedp.Sleep(100*time.Millisecond),
			chromedp.Evaluate(domJS, &raw),
		)
		var got struct {
			Bad  []string
			Text bool
		}
		if err := json.Unmarshal([]byte(raw), &got); err != nil {
			t.Fatal(err)
		}
		if len(got.Bad) > 0 {
			t.Errorf("%s: %q", p, got.Bad)
		}
		// the payload is there, as text (the error page names the run)
		if !got.Text {
			t.Errorf("%s: the payload is not shown as text", p)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(dialogs) > 0 || len(away) > 0 {
		t.Errorf("dialogs %q, requests off the page's server %q", dialogs, away)
	}
	_ = os.Remove(replay)
}
