package main

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/reelhq/reel/internal/browsertest"
	"github.com/reelhq/reel/internal/serve"
	"github.com/reelhq/reel/internal/testfixtures"
	"github.com/reelhq/reel/internal/transcripttest"
	"github.com/reelhq/reel/transcript"
)

const pagesPkg = "cmd/reel (pages)"

// servePages serves storage as reel serve does and returns its address.
func servePages(t *testing.T, storage string) string {
	t.Helper()
	s, err := serve.New(context.Background(), serve.Options{Storage: storage, Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(func() {
		ts.Close()
		s.Close()
	})
	return ts.URL
}

// pageFacts is what the run page shows, measured in the browser.
type pageFacts struct {
	H2, Noise                                   []string
	Strong, Table, CodeTS, Tasks, ThinkingItems int
	TermRed, Calls, Nested, Loose               int
	RawEscapes                                  bool
	AgentEmitted, FidelityNote, Compaction      int
	ExitCode1                                   int
	DiffLines                                   int
	DiffGap, DiffLineHeight, FontSize           float64
	RawCommandXML                               bool
}

const factsJS = `(() => {
  const q = s => Array.from(document.querySelectorAll(s));
  const spans = q('.diff span');
  const box = e => e.getBoundingClientRect();
  return {
    H2: q('.ev.message-assistant .md h2').map(e => e.textContent),
    Noise: q('.ev.noise .title, .ev.compaction .title').map(e => e.textContent),
    Strong: q('.ev.message-user .md strong').length,
    Table: q('.ev.message-assistant .md table').length,
    CodeTS: q('.md pre code.language-ts').length,
    Tasks: q('.md input[type=checkbox]').length,
    ThinkingItems: q('.thinking.md li').length,
    TermRed: q('.ev.tool-call .term-fg31').length,
    Calls: q('#events .ev.tool-call').length,
    Nested: q('#events .ev.tool-call > .ev.tool-result').length,
    Loose: q('#events > .ev.tool-result').length,
    RawEscapes: document.body.textContent.includes('[31m') || document.body.innerHTML.includes('\u001b'),
    AgentEmitted: q('.ev > header').filter(h => h.textContent.includes('agent_emitted')).length,
    FidelityNote: q('p.fidelity').length,
    Compaction: q('.ev.compaction').length,
    ExitCode1: (document.getElementById('events').textContent.match(/Exit code 1/g) || []).length,
    DiffLines: spans.length,
    DiffGap: spans.length > 1 ? Math.max(...spans.slice(1).map((s, i) => box(s).top - box(spans[i]).bottom)) : 0,
    DiffLineHeight: spans.length ? box(spans[0]).height : 0,
    FontSize: spans.length ? parseFloat(getComputedStyle(spans[0]).fontSize) : 0,
    RawCommandXML: document.getElementById('events').textContent.includes('<command-name>'),
  };
})()`

func runFacts(t *testing.T, ctx context.Context, url string) pageFacts {
	t.Helper()
	var raw string
	browsertest.Run(t, ctx, 30*time.Second,
		chromedp.Navigate(url),
		chromedp.WaitVisible(`#events`),
		chromedp.Evaluate(`JSON.stringify(`+factsJS+`)`, &raw),
	)
	var f pageFacts
	if err := json.Unmarshal([]byte(raw), &f); err != nil {
		t.Fatalf("%v: %s", err, raw)
	}
	return f
}

// Issue 24, points 7, 8, 9 and 11, on the run page in Chromium: our own
// session (Markdown, vitest's colours, a failed call, an Edit, noise) and,
// when ../shared is there, two real ones.
func TestRunPageReadsASession(t *testing.T) {
	ctx := browsertest.New(t, pagesPkg)
	storage := t.TempDir()
	ids := importRuns(t, storage, ownSession)
	url := servePages(t, storage)

	f := runFacts(t, ctx, url+"/runs/"+ids[0])
	// 7: Markdown rendered in the prompt, the thinking and the replies
	if len(f.H2) != 1 || f.H2[0] != "Summary" || f.Strong != 1 || f.Table != 1 || f.CodeTS != 1 || f.Tasks != 2 || f.ThinkingItems != 2 {
		t.Errorf("Markdown not rendered: %+v", f)
	}
	// 8: colours, not escapes; the error once
	if f.TermRed == 0 || f.RawEscapes {
		t.Errorf("terminal output: %d red spans, raw escapes %v", f.TermRed, f.RawEscapes)
	}
	if f.ExitCode1 != 1 {
		t.Errorf("the failed call's error shown %d times", f.ExitCode1)
	}
	// 9: noise as what it is
	want := []string{"command /clear", "command stdout", "context compacted", "context: environment context"}
	if strings.Join(f.Noise, "|") != strings.Join(want, "|") || f.Compaction != 1 || f.RawCommandXML {
		t.Errorf("noise shown as %q (compaction %d), want %q", f.Noise, f.Compaction, want)
	}
	// 11: one card per call, agent_emitted said once, diffs single-spaced
	if f.Calls != 3 || f.Nested != 3 || f.Loose != 0 {
		t.Errorf("%d call cards, %d results inside them, %d on their own", f.Calls, f.Nested, f.Loose)
	}
	if f.AgentEmitted != 0 || f.FidelityNote != 1 {
		t.Errorf("agent_emitted on %d cards, said above them %d times", f.AgentEmitted, f.FidelityNote)
	}
	if f.DiffLines < 4 || f.DiffGap > 1 || f.DiffLineHeight > 2*f.FontSize {
		t.Errorf("diff: %d lines, gap %.1fpx, line %.1fpx at font %.1fpx", f.DiffLines, f.DiffGap, f.DiffLineHeight, f.FontSize)
	}

	// 11: the jump from the top to the conversation
	var top float64
	browsertest.Run(t, ctx, 10*time.Second,
		chromedp.Click(`.summary a.jump`),
		chromedp.Sleep(200*time.Millisecond),
		chromedp.Evaluate(`document.getElementById("conversation").getBoundingClientRect().top`, &top),
	)
	if top < -2 || top > 80 {
		t.Errorf("after the jump the conversation starts %.0fpx down the window", top)
	}

	// 11: at 420 px nothing overflows the window: the execution table,
	// the timeline, the cards
	var narrow struct {
		ScrollWidth  float64
		TreeRight    float64
		WidestRight  float64
		WidestMarkup string
	}
	var raw string
	browsertest.Run(t, ctx, 30*time.Second,
		chromedp.EmulateViewport(420, 900),
		chromedp.Navigate(url+"/runs/"+ids[0]),
		chromedp.WaitVisible(`#events`),
		chromedp.Evaluate(`JSON.stringify((() => {
		  let w = 0, m = "";
		  for (const e of document.querySelectorAll("main *")) {
		    const r = e.getBoundingClientRect();
		    if (r.width && r.right > w && !e.closest("pre, .md table, .bar-label")) { w = r.right; m = e.outerHTML.slice(0, 120); }
		  }
		  return {ScrollWidth: document.documentElement.scrollWidth, TreeRight: document.querySelector("table.tree").getBoundingClientRect().right, WidestRight: w, WidestMarkup: m};
		})())`, &raw),
	)
	if err := json.Unmarshal([]byte(raw), &narrow); err != nil {
		t.Fatal(err)
	}
	if narrow.ScrollWidth > 420 || narrow.TreeRight > 420 || narrow.WidestRight > 420 {
		t.Errorf("at 420px: page %vpx wide, execution table ends at %vpx, widest element ends at %vpx: %s", narrow.ScrollWidth, narrow.TreeRight, narrow.WidestRight, narrow.WidestMarkup)
	}
	browsertest.Run(t, ctx, 5*time.Second, chromedp.EmulateViewport(1400, 1000))

	// Real sessions (../shared/fixtures): Claude Code 2.0.26's /clear and
	// empty output, Codex's environment context and IDE preamble.
	real := importRuns(t, storage,
		filepath.Join(testfixtures.Dir(t, "claude-session-log"), "full-session-two.jsonl"),
		filepath.Join(testfixtures.Dir(t, "codex-rollout"), "rollout-2025-09-25T15-12-14-019982b8-3422-79e0-8b3b-05abaf4f3c3e.jsonl"))
	claude := runFacts(t, ctx, url+"/runs/"+real[0])
	if len(claude.Noise) < 2 || claude.Noise[0] != "command /clear" || claude.Noise[1] != "command stdout" || claude.RawCommandXML {
		t.Errorf("full-session-two: noise %q", claude.Noise)
	}
	if claude.Calls != 10 || claude.Nested != 10 || claude.Loose != 0 || claude.AgentEmitted != 0 {
		t.Errorf("full-session-two: %+v", claude)
	}
	codex := runFacts(t, ctx, url+"/runs/"+real[1])
	if len(codex.Noise) == 0 || codex.Noise[0] != "context: environment context" {
		t.Errorf("codex rollout: noise %q", codex.Noise)
	}
	var ide int
	browsertest.Run(t, ctx, 10*time.Second,
		chromedp.Evaluate(`Array.from(document.querySelectorAll(".ev.message-user details.fold > summary")).filter(s => s.textContent === "IDE context").length`, &ide))
	if ide != 1 {
		t.Errorf("codex rollout: %d folded IDE preambles", ide)
	}
	if os.Getenv("REEL_UPDATE_SCREENSHOT") != "" {
		sessionScreenshot(t, ctx, url+"/runs/"+real[1])
	}
}

// sessionScreenshot writes docs/session-page.png, the README's picture: a
// real Codex session (../shared/fixtures/codex-rollout) imported and opened
// in reel serve, at its last tool call and the Markdown reply after it
// (REEL_UPDATE_SCREENSHOT=1 go test ./cmd/reel -run TestRunPageReadsASession).
func sessionScreenshot(t *testing.T, ctx context.Context, url string) {
	var png []byte
	browsertest.Run(t, ctx, 30*time.Second,
		chromedp.EmulateViewport(1280, 1100),
		chromedp.Navigate(url),
		chromedp.WaitVisible(`#events`),
		chromedp.Evaluate(`(() => { const a = document.querySelectorAll(".ev.message-assistant"); a[a.length-1].scrollIntoView({block: "end"}); })()`, nil),
		chromedp.Sleep(200*time.Millisecond),
		chromedp.CaptureScreenshot(&png),
	)
	out := filepath.Join("..", "..", "docs", "session-page.png")
	if err := os.WriteFile(out, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s", out)
}

// Issue 24, point 11: a failed run's error (a whole JSON body) takes one
// line of the run list; the run page shows all of it.
func TestRunListErrorOnOneLine(t *testing.T) {
	ctx := browsertest.New(t, pagesPkg)
	storage := t.TempDir()
	body := `API Error: 529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"},"request_id":"req_011CUdq4t1Vwz5w8Yk2dtoFz","details":{"retry_after":` + strings.Repeat(`"x",`, 80) + `"end"}}`
	r := transcripttest.NewRun(t, transcript.Dir(storage), transcripttest.RootID, "", transcripttest.Epoch)
	r.Event(transcript.ExchangeEvent{Type: transcript.RunStarted, Payload: &transcript.StepPayload{Name: "review", Kind: transcript.KindWorkflow}})
	r.Start("review", 0, transcript.KindAgent, 0)
	r.Complete("review", 0, transcript.KindAgent, 0, body, transcript.AgentResult{Provider: "claude"})
	r.Event(transcript.ExchangeEvent{Type: transcript.RunCompleted, Payload: &transcript.StepPayload{Name: "review", Kind: transcript.KindWorkflow, Error: body,
		Result: transcript.RunResult{Status: "failure", ExitCode: 1}}})
	if err := r.Recorder().Close(); err != nil {
		t.Fatal(err)
	}
	url := servePages(t, storage)
	var h, lh, rowH float64
	var full string
	browsertest.Run(t, ctx, 30*time.Second,
		chromedp.Navigate(url+"/"),
		chromedp.WaitVisible(`table.runs`),
		chromedp.Evaluate(`document.querySelector(".runs .error").getBoundingClientRect().height`, &h),
		chromedp.Evaluate(`parseFloat(getComputedStyle(document.querySelector(".runs .error")).lineHeight) || 1.45*parseFloat(getComputedStyle(document.querySelector(".runs .error")).fontSize)`, &lh),
		chromedp.Evaluate(`document.querySelector("table.runs tbody tr").getBoundingClientRect().height`, &rowH),
		chromedp.Navigate(url+"/runs/"+transcripttest.RootID),
		chromedp.WaitVisible(`.run-error`),
		chromedp.Text(`.run-error`, &full),
	)
	if h > 2*lh || rowH > 80 {
		t.Errorf("the error takes %.0fpx (line %.0fpx), its row %.0fpx", h, lh, rowH)
	}
	if !strings.Contains(full, `"end"}}`) {
		t.Errorf("the run page does not show the whole error: %q", full)
	}
}

// Shapes found importing public recordings not in ../shared (docs/import.md,
// "Checked against public recordings"), on our own Claude Code session in
// the same shapes: a long MCP tool name (claude-code-log's showcase
// session made the page 466 px wide at 420), a subagent's report in
// Markdown (agentcmd's sessions showed it raw), a system reminder inside
// the prompt (claude-replay's sample showed it as the user's words).
func TestRunPageReadsPublicShapes(t *testing.T) {
	ctx := browsertest.New(t, pagesPkg)
	storage := t.TempDir()
	ids := importRuns(t, storage, "testdata/pages/claude-public-shapes.jsonl")
	url := servePages(t, storage)
	var raw string
	browsertest.Run(t, ctx, 30*time.Second,
		chromedp.EmulateViewport(420, 900),
		chromedp.Navigate(url+"/runs/"+ids[0]),
		chromedp.WaitVisible(`#events`),
		chromedp.Evaluate(`JSON.stringify({
		  Width: document.documentElement.scrollWidth,
		  ReportH2: Array.from(document.querySelectorAll('.ev.tool-call .md h2')).map(e => e.textContent),
		  Folds: Array.from(document.querySelectorAll('.ev.message-user details.fold > summary')).map(e => e.textContent),
		  Prompt: (document.querySelector('.ev.message-user .md') || {}).textContent || "",
		})`, &raw))
	var f struct {
		Width           float64
		ReportH2, Folds []string
		Prompt          string
	}
	if err := json.Unmarshal([]byte(raw), &f); err != nil {
		t.Fatal(err)
	}
	if f.Width > 420 {
		t.Errorf("at 420px the page is %vpx wide", f.Width)
	}
	if len(f.ReportH2) != 1 || f.ReportH2[0] != "Guest checkout" {
		t.Errorf("the subagent's report: headings %q, want it rendered", f.ReportH2)
	}
	if len(f.Folds) != 1 || f.Folds[0] != "system reminder" || strings.Contains(f.Prompt, "cart.ts") || !strings.Contains(f.Prompt, "Look at the cart service") {
		t.Errorf("prompt %q, folds %q: want the reminder folded apart", f.Prompt, f.Folds)
	}
}
