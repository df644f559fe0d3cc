package serve

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/reelhq/reel/internal/browsertest"
	"github.com/reelhq/reel/internal/transcripttest"
	"github.com/reelhq/reel/transcript"
)

const pkg = "internal/serve"

// sampleStorage holds two runs of the sample workflow (one failed) and
// their child runs.
func sampleStorage(t testing.TB) string {
	t.Helper()
	storage := t.TempDir()
	dir := transcript.Dir(storage)
	transcripttest.WriteSample(t, dir, transcripttest.Variant{})
	transcripttest.WriteSample(t, dir, transcripttest.Variant{ID: transcripttest.OtherID, ChildID: "44444444-4444-4444-8444-444444444444",
		LintFails: true, Review: "main.go: the shadowed err hides a failure."})
	return storage
}

// start serves storage on a free loopback port, as reel serve does.
func start(t testing.TB, storage string, opts Options) (*Server, string) {
	t.Helper()
	opts.Storage = storage
	if opts.Addr == "" {
		opts.Addr = "127.0.0.1:0"
	}
	s, err := New(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(func() {
		ts.Close()
		s.Close()
	})
	return s, ts.URL
}

func TestBrowserList(t *testing.T) {
	ctx := browsertest.New(t, pkg)
	_, url := start(t, sampleStorage(t), Options{})
	var rows int
	var text string
	browsertest.Run(t, ctx, 30*time.Second,
		chromedp.Navigate(url+"/"),
		chromedp.WaitVisible(`table.runs`),
		chromedp.Evaluate(`document.querySelectorAll("table.runs tbody tr").length`, &rows),
		chromedp.Text(`table.runs`, &text),
	)
	if rows != 4 || !strings.Contains(text, "review-flow") || !strings.Contains(text, "fixer") || !strings.Contains(text, "failure") {
		t.Fatalf("%d rows:\n%s", rows, text)
	}
	// Filter through the form, as a user would.
	browsertest.Run(t, ctx, 30*time.Second,
		chromedp.SetValue(`select[name=status]`, "failure"),
		chromedp.Submit(`form.filters`),
		chromedp.WaitVisible(`a[href="/"]`), // "clear" appears once filtered
		chromedp.Evaluate(`document.querySelectorAll("table.runs tbody tr").length`, &rows),
		chromedp.Text(`table.runs tbody`, &text),
	)
	if rows != 1 || !strings.Contains(text, transcripttest.OtherID[:8]) {
		t.Fatalf("status=failure: %d rows:\n%s", rows, text)
	}
}

func TestBrowserRunPage(t *testing.T) {
	ctx := browsertest.New(t, pkg)
	_, url := start(t, sampleStorage(t), Options{})
	var tree, conv string
	var bad, thinkingOpen, childEvents, bars int
	browsertest.Run(t, ctx, 30*time.Second,
		chromedp.Navigate(url+"/runs/"+transcripttest.OtherID),
		chromedp.WaitVisible(`#overview table.tree`),
		chromedp.Text(`#overview table.tree`, &tree),
		chromedp.Text(`#events`, &conv),
		chromedp.Evaluate(`document.querySelectorAll(".ev.bad").length`, &bad),
		chromedp.Evaluate(`document.querySelectorAll("details.fold-thinking[open]").length`, &thinkingOpen),
		chromedp.Evaluate(`document.querySelectorAll("details.child .ev").length`, &childEvents),
		chromedp.Evaluate(`document.querySelectorAll(".bar-row .bar").length`, &bars),
	)
	for _, want := range []string{"each_file", "iteration 1", "build_all", "lint", "fixer", "failure"} {
		if !strings.Contains(tree, want) {
			t.Errorf("tree lacks %q:\n%s", want, tree)
		}
	}
	for _, want := range []string{"Find the bugs in main.go.", "go vet ./...", "exit status 1", "Fix the loop in main.go.", "PASS"} {
		if !strings.Contains(conv, want) {
			t.Errorf("conversation lacks %q", want)
		}
	}
	if bad == 0 || thinkingOpen != 0 || childEvents == 0 || bars < 10 {
		t.Errorf("errors highlighted %d, thinking unfolded %d, child events inline %d, timeline bars %d", bad, thinkingOpen, childEvents, bars)
	}
	// Folding: thinking opens on click; the toolbar hides tool calls.
	var opened int
	var toolsShown bool
	browsertest.Run(t, ctx, 10*time.Second,
		chromedp.Click(`details.fold-thinking > summary`, chromedp.NodeVisible),
		chromedp.Evaluate(`document.querySelectorAll("details.fold-thinking[open]").length`, &opened),
		chromedp.Click(`input[data-toggle=tools]`),
		chromedp.Evaluate(`getComputedStyle(document.querySelector(".ev.tool-call")).display !== "none"`, &toolsShown),
	)
	if opened != 1 || toolsShown {
		t.Errorf("after clicks: %d thinking open, tool calls shown %v", opened, toolsShown)
	}
	// The child run link leads to the child's own page.
	var child string
	browsertest.Run(t, ctx, 10*time.Second,
		chromedp.Click(`a.child-link`, chromedp.NodeVisible),
		chromedp.WaitVisible(`h1`),
		chromedp.Text(`h1`, &child),
	)
	if !strings.Contains(child, "fixer") {
		t.Errorf("child page heading %q", child)
	}
}

func TestBrowserSearch(t *testing.T) {
	ctx := browsertest.New(t, pkg)
	_, url := start(t, sampleStorage(t), Options{})
	var hits int
	var mark string
	browsertest.Run(t, ctx, 30*time.Second,
		chromedp.Navigate(url+"/"),
		chromedp.WaitVisible(`form.search input`),
		chromedp.SendKeys(`form.search input`, `"shadowed err hides"`),
		chromedp.Submit(`form.search`),
		chromedp.WaitVisible(`ol.hits`),
		chromedp.Evaluate(`document.querySelectorAll("li.hit").length`, &hits),
		chromedp.Text(`li.hit mark`, &mark),
	)
	if hits != 1 || !strings.EqualFold(mark, "shadowed") {
		t.Fatalf("%d hits, first mark %q", hits, mark)
	}
	var hash, target string
	browsertest.Run(t, ctx, 30*time.Second,
		chromedp.Click(`a.hit-link`),
		chromedp.WaitVisible(`#events`),
		chromedp.Evaluate(`location.hash`, &hash),
		chromedp.Evaluate(`document.querySelector(location.hash).textContent`, &target),
	)
	if !strings.HasPrefix(hash, "#e") || !strings.Contains(target, "shadowed err hides") {
		t.Fatalf("hit led to %q holding %q", hash, target)
	}
}

// liveRun serves a fresh storage with a run started in it, to record into
// while its page is open.
func liveRun(t *testing.T, workflow string) (ctx context.Context, url, id string, record func(transcript.ExchangeEvent)) {
	t.Helper()
	ctx = browsertest.New(t, pkg)
	storage := t.TempDir()
	_, url = start(t, storage, Options{})
	rec, id := newLiveRun(t, storage, workflow)
	t.Cleanup(func() { rec.Close() })
	record = func(ev transcript.ExchangeEvent) {
		t.Helper()
		if _, err := rec.Record(ev); err != nil {
			t.Fatal(err)
		}
	}
	return ctx, url, id, record
}

// TestBrowserLive writes a run while its page is open: the steps appear
// without a reload, and the page says when the run finished.
func TestBrowserLive(t *testing.T) {
	ctx, url, id, record := liveRun(t, "live-flow")
	record(transcript.ExchangeEvent{Type: transcript.StepStarted, Path: "first", Payload: &transcript.StepPayload{Name: "first", Kind: transcript.KindCommand, Command: "echo one"}})
	browsertest.Run(t, ctx, 30*time.Second,
		chromedp.Navigate(url+"/runs/"+id),
		chromedp.WaitVisible(`#e2`),
		chromedp.WaitVisible(`#live`),
	)
	for i, step := range []string{"second", "third"} {
		record(transcript.ExchangeEvent{Type: transcript.StepStarted, Path: step, Payload: &transcript.StepPayload{Name: step, Kind: transcript.KindCommand, Command: "echo " + step}})
		record(transcript.ExchangeEvent{Type: transcript.StepCompleted, Path: step, Payload: &transcript.StepPayload{Name: step, Kind: transcript.KindCommand,
			Result: transcript.CommandResult{ExitCode: 0, Output: "live output " + step}}})
		seq := 4 + 2*i
		var text string
		browsertest.Run(t, ctx, 10*time.Second,
			chromedp.WaitVisible(fmt.Sprintf(`#e%d`, seq)),
			chromedp.Text(fmt.Sprintf(`#e%d`, seq), &text),
		)
		if !strings.Contains(text, "live output "+step) {
			t.Fatalf("event %d shows %q", seq, text)
		}
	}
	// The tree refreshes on step events.
	var tree string
	browsertest.Run(t, ctx, 10*time.Second,
		chromedp.Poll(`document.querySelector("#overview table.tree").textContent.includes("third")`, nil, chromedp.WithPollingTimeout(5*time.Second)),
		chromedp.Text(`#overview table.tree`, &tree),
	)
	record(transcript.ExchangeEvent{Type: transcript.RunCompleted, Payload: &transcript.StepPayload{Name: "live-flow", Kind: transcript.KindWorkflow, Result: transcript.RunResult{Status: "success"}}})
	var badge string
	browsertest.Run(t, ctx, 10*time.Second,
		chromedp.WaitVisible(`#live.done`),
		chromedp.Text(`#live`, &badge),
	)
	if badge != "finished" {
		t.Errorf("live badge %q after run.completed", badge)
	}
}

// TestBrowserToken serves on every interface, which needs a token: the
// browser is refused without it, and let in, from then on, with it.
func TestBrowserToken(t *testing.T) {
	storage := sampleStorage(t)
	if _, err := New(context.Background(), Options{Storage: storage, Addr: "0.0.0.0:0"}); err == nil || !strings.Contains(err.Error(), "--token") {
		t.Fatalf("serving 0.0.0.0 without a token: %v", err)
	}
	ctx := browsertest.New(t, pkg)
	const token = "s3cret-token-for-test"
	s, err := New(context.Background(), Options{Storage: storage, Addr: "0.0.0.0:0", Token: token})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	sctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	bound := make(chan string, 1)
	done := make(chan error, 1)
	go func() { done <- s.Serve(sctx, func(a string) { bound <- a }) }()
	addr := <-bound
	port := addr[strings.LastIndex(addr, ":")+1:]
	base := "http://127.0.0.1:" + port
	var body string
	browsertest.Run(t, ctx, 30*time.Second,
		chromedp.Navigate(base+"/"),
		chromedp.Text(`body`, &body),
	)
	if !strings.Contains(body, "needs its token") {
		t.Fatalf("without the token the page says %q", body)
	}
	var rows int
	var loc string
	browsertest.Run(t, ctx, 30*time.Second,
		chromedp.Navigate(base+"/?token="+token),
		chromedp.WaitVisible(`table.runs`),
		chromedp.Evaluate(`location.href`, &loc),
		chromedp.Evaluate(`document.querySelectorAll("table.runs tbody tr").length`, &rows),
	)
	if rows != 4 || strings.Contains(loc, token) {
		t.Fatalf("with the token: %d rows at %s", rows, loc)
	}
	// The cookie carries the token to the next pages.
	browsertest.Run(t, ctx, 30*time.Second,
		chromedp.Navigate(base+"/runs/"+transcripttest.RootID),
		chromedp.WaitVisible(`#events`),
	)
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestBrowserLiveToolCard: a tool result that arrives while the page is
// open goes inside its call's card, as a reloaded page shows it.
func TestBrowserLiveToolCard(t *testing.T) {
	ctx, url, id, record := liveRun(t, "live-tools")
	record(transcript.ExchangeEvent{Type: transcript.StepStarted, Path: "agent", Payload: &transcript.StepPayload{Name: "agent", Kind: transcript.KindAgent}})
	record(transcript.ExchangeEvent{Type: transcript.ToolCall, Path: "agent", Payload: &transcript.ToolPayload{Name: "Bash", CallID: `toolu_"01`, Input: map[string]any{"command": "npm test"}, Fidelity: transcript.FidelityAgentEmitted}})
	browsertest.Run(t, ctx, 30*time.Second,
		chromedp.Navigate(url+"/runs/"+id),
		chromedp.WaitVisible(`#e3`),
	)
	record(transcript.ExchangeEvent{Type: transcript.ToolResult, Path: "agent", Payload: &transcript.ToolPayload{Name: "Bash", CallID: `toolu_"01`, Output: "\x1b[32m4 passed\x1b[39m", Fidelity: transcript.FidelityAgentEmitted}})
	var inside, loose, green int
	browsertest.Run(t, ctx, 10*time.Second,
		chromedp.WaitReady(`#e3 > #e4`),
		chromedp.Evaluate(`document.querySelectorAll(".ev.tool-call > .ev.tool-result").length`, &inside),
		chromedp.Evaluate(`document.querySelectorAll("#events > .ev.tool-result").length`, &loose),
		chromedp.Evaluate(`document.querySelectorAll("#e4 .term-fg32").length`, &green),
	)
	if inside != 1 || loose != 0 || green != 1 {
		t.Fatalf("live result: %d inside its card, %d on its own, %d green spans", inside, loose, green)
	}
}

// An imported recording without times (runs.Untimed) is listed where its
// time bound puts it, with "—" for its start and duration, and its run
// page says the same.
func TestBrowserListUntimedRun(t *testing.T) {
	ctx := browsertest.New(t, pkg)
	storage := sampleStorage(t)
	const id = "55555555-5555-4555-8555-555555555555"
	at := transcripttest.Epoch.AddDate(-1, 0, 0) // before the sample runs
	r := transcripttest.NewRun(t, transcript.Dir(storage), id, "", at)
	r.Event(transcript.ExchangeEvent{Type: transcript.RunStarted, Payload: &transcript.StepPayload{Name: "import:capture.sse", Kind: transcript.KindWorkflow,
		Result: map[string]any{"import": map[string]any{"path": "/tmp/capture.sse", "format": "anthropic-sse", "size": 10, "sha256": "00", "untimed": true}}}})
	r.Advance(-10 * time.Millisecond) // every event at the one instant
	r.Event(transcript.ExchangeEvent{Type: transcript.RunCompleted, Timestamp: at, Payload: &transcript.StepPayload{Name: "import:capture.sse", Kind: transcript.KindWorkflow,
		Result: transcript.RunResult{Status: "success", DurationMS: 1200}}})
	r.Close()
	_, url := start(t, storage, Options{})
	var cells []string
	var last, facts string
	var width float64
	browsertest.Run(t, ctx, 30*time.Second,
		chromedp.Navigate(url+"/"),
		chromedp.WaitVisible(`table.runs`),
		chromedp.Evaluate(`[...document.querySelector('a.run-link[href="/runs/`+id+`"]').closest("tr").cells].map(c => c.innerText.trim())`, &cells),
		chromedp.Evaluate(`document.querySelector("table.runs tbody tr:last-child a.run-link").getAttribute("href")`, &last),
		chromedp.Evaluate(`document.querySelector('a.run-link[href="/runs/`+id+`"]').closest("tr").querySelector("td.untimed").getBoundingClientRect().width`, &width),
		chromedp.Navigate(url+"/runs/"+id),
		chromedp.WaitVisible(`dl.facts`),
		chromedp.Text(`dl.facts`, &facts),
	)
	if len(cells) < 5 || cells[3] != "—" || cells[4] != "—" || width <= 0 {
		t.Errorf("the untimed run's row: %q (start cell %.0f px wide), want — for its start and duration", cells, width)
	}
	if last != "/runs/"+id {
		t.Errorf("the last row is %s, want the untimed run, whose time bound is before every other run's", last)
	}
	if !strings.Contains(facts, "started\n—") || !strings.Contains(facts, "duration\n—") {
		t.Errorf("run page facts:\n%s", facts)
	}
}
