package serve

import (
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/reelhq/reel/internal/browsertest"
)

// apiGreet has an input of each kind a start form draws: a required text,
// an integer and an enum with defaults, a boolean.
const apiGreet = `name: greet
description: greet someone
inputs:
  - name: who
    type: string
    required: true
    description: whom to greet
  - name: count
    type: integer
    default: 2
  - name: tone
    type: string
    default: warm
    validation:
      enum: [warm, dry, loud]
  - name: shout
    type: boolean
    default: false
states:
  initial: greet
  greet:
    type: step
    command: echo "greeting {{.inputs.who}} x{{.inputs.count}} {{.inputs.tone}} shout={{.inputs.shout}}"
    on_success: done
  done:
    type: terminal
`

// runIDOf is the run id of a run page's URL.
func runIDOf(t *testing.T, u string) string {
	t.Helper()
	pu, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	id, ok := strings.CutPrefix(pu.Path, "/runs/")
	if !ok || strings.Contains(id, "/") {
		t.Fatalf("not a run page: %s", u)
	}
	return id
}

// TestBrowserStartCancelResume starts a workflow from its form, cancels a
// live run from its page and resumes a failed one, as a user does in
// Chromium; each run is an ordinary run the AWF API and reel verify see.
func TestBrowserStartCancelResume(t *testing.T) {
	// SKIPMARK
	ctx := browsertest.New(t, pkg)
	a := startAPI(t, map[string]string{"greet": apiGreet, "stubborn": apiStubborn, "flaky": apiFlaky}, Options{AllowRuns: true})

	// The form: typed controls holding the defaults, the enum as a select.
	var countType, countValue, toneValue, options, whoRequired, shoutOptions string
	browsertest.Run(t, ctx, 30*time.Second,
		chromedp.Navigate(a.url+"/workflows"),
		chromedp.WaitVisible(`details[data-workflow="greet"] summary`),
		chromedp.Click(`details[data-workflow="greet"] summary`),
		chromedp.WaitVisible(`details[data-workflow="greet"] input[name="in.who"]`),
		chromedp.Evaluate(`document.querySelector('details[data-workflow="greet"] input[name="in.count"]').type`, &countType),
		chromedp.Evaluate(`document.querySelector('details[data-workflow="greet"] input[name="in.count"]').value`, &countValue),
		chromedp.Evaluate(`document.querySelector('details[data-workflow="greet"] select[name="in.tone"]').value`, &toneValue),
		chromedp.Evaluate(`[...document.querySelectorAll('details[data-workflow="greet"] select[name="in.tone"] option')].map(o => o.value).join(",")`, &options),
		chromedp.Evaluate(`String(document.querySelector('details[data-workflow="greet"] input[name="in.who"]').required)`, &whoRequired),
		chromedp.Evaluate(`[...document.querySelectorAll('details[data-workflow="greet"] select[name="in.shout"] option')].map(o => o.value).join(",")`, &shoutOptions),
	)
	if countType != "number" || countValue != "2" || toneValue != "warm" || options != ",warm,dry,loud" || whoRequired != "true" || shoutOptions != ",true,false" {
		t.Fatalf("form: count %s %q, tone %q of %q, who required %s, shout %q", countType, countValue, toneValue, options, whoRequired, shoutOptions)
	}

	// Start it: the browser lands on the new run's page.
	var loc string
	browsertest.Run(t, ctx, 30*time.Second,
		chromedp.SendKeys(`details[data-workflow="greet"] input[name="in.who"]`, "browser"),
		chromedp.SetValue(`details[data-workflow="greet"] select[name="in.tone"]`, "dry"),
		chromedp.SetValue(`details[data-workflow="greet"] select[name="in.shout"]`, "true"),
		chromedp.Click(`details[data-workflow="greet"] button[type=submit]`),
		chromedp.WaitVisible(`body[data-page="run"]`),
		chromedp.Location(&loc),
	)
	id := runIDOf(t, loc)
	if ex := a.wait(id); ex.Body.Status != "completed" || ex.Body.WorkflowName != "greet" {
		t.Fatalf("started run: %+v", ex.Body)
	}
	var text string
	browsertest.Run(t, ctx, 30*time.Second,
		chromedp.Navigate(a.url+"/runs/"+id),
		chromedp.WaitVisible(`main`),
		chromedp.Text(`main`, &text),
	)
	if !strings.Contains(text, "greeting browser x2 dry shout=true") {
		t.Fatalf("the run did not take the form's values and defaults:\n%s", text)
	}

	// A refused start puts the form back with its values and the reason.
	resp, err := http.PostForm(a.url+"/workflows/run", url.Values{"workflow": {"greet"}, "in.who": {"again"}, "in.count": {"many"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("bad input: %s", resp.Status)
	}
	// A form cannot name a file.
	resp, err = http.PostForm(a.url+"/workflows/run", url.Values{"workflow": {"../../etc/passwd"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("a path as the workflow: %s", resp.Status)
	}

	// Cancel a live run whose step ignores SIGTERM.
	browsertest.Run(t, ctx, 30*time.Second,
		chromedp.Navigate(a.url+"/workflows"),
		chromedp.Click(`details[data-workflow="stubborn"] summary`),
		chromedp.Click(`details[data-workflow="stubborn"] button[type=submit]`),
		chromedp.WaitVisible(`button[data-act="cancel-run"]`),
		chromedp.Location(&loc),
	)
	id = runIDOf(t, loc)
	pid := 0
	for deadline := time.Now().Add(20 * time.Second); pid == 0; time.Sleep(10 * time.Millisecond) {
		if b, err := os.ReadFile(filepath.Join(a.dir, "stubborn.pid")); err == nil {
			pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		}
		if time.Now().After(deadline) {
			t.Fatal("the step never started")
		}
	}
	var resumable bool
	browsertest.Run(t, ctx, 30*time.Second,
		chromedp.Click(`button[data-act="cancel-run"]`),
		chromedp.WaitVisible(`button[data-act="resume-run"]`),
		chromedp.Evaluate(`document.querySelector('button[data-act="cancel-run"]') === null`, &resumable),
	)
	if ex := a.execution(id); ex.Body.Status != "cancelled" {
		t.Errorf("after the cancel: %+v", ex.Body)
	}
	if !resumable {
		t.Error("an ended run still offers its cancel")
	}
	if err := syscall.Kill(pid, 0); err != syscall.ESRCH {
		t.Errorf("the step's shell %d is still there (%v)", pid, err)
	}

	// Resume a failed run once what it lacked is there.
	browsertest.Run(t, ctx, 30*time.Second,
		chromedp.Navigate(a.url+"/workflows"),
		chromedp.Click(`details[data-workflow="flaky"] summary`),
		chromedp.Click(`details[data-workflow="flaky"] button[type=submit]`),
		chromedp.WaitVisible(`body[data-page="run"]`),
		chromedp.Location(&loc),
	)
	id = runIDOf(t, loc)
	if ex := a.wait(id); ex.Body.Status != "failed" {
		t.Fatalf("flaky: %+v", ex.Body)
	}
	if err := os.WriteFile(filepath.Join(a.dir, "ok"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	browsertest.Run(t, ctx, 30*time.Second,
		chromedp.Navigate(a.url+"/runs/"+id),
		chromedp.WaitVisible(`button[data-act="resume-run"]`),
		chromedp.Click(`button[data-act="resume-run"]`),
	)
	// The post lands back on the run's page, resumed: no resume offered.
	// A loaded machine has lost the first click of a page that was still
	// loading its live script; a user clicks again, and so does this.
	for try := 0; ; try++ {
		var still bool
		browsertest.Run(t, ctx, 30*time.Second,
			chromedp.Sleep(2*time.Second),
			chromedp.Evaluate(`document.querySelector('button[data-act="resume-run"]') !== null`, &still),
		)
		if !still {
			break
		}
		if try == 4 {
			t.Fatal("the run page still offers its resume after five clicks")
		}
		browsertest.Run(t, ctx, 30*time.Second, chromedp.Click(`button[data-act="resume-run"]`))
	}
	if ex := a.wait(id); ex.Body.Status != "completed" {
		t.Fatalf("resumed: %+v", ex.Body)
	}
	var offered bool
	browsertest.Run(t, ctx, 30*time.Second,
		chromedp.Navigate(a.url+"/runs/"+id),
		chromedp.WaitVisible(`main`),
		chromedp.Evaluate(`document.querySelector('div.actions') !== null`, &offered),
	)
	if offered {
		t.Error("a run that succeeded offers a cancel or a resume")
	}
	a.verified()
}

// TestBrowserRunsOff: a server started without runs shows the forms but
// cannot start anything.
func TestBrowserRunsOff(t *testing.T) {
	ctx := browsertest.New(t, pkg)
	a := startAPI(t, map[string]string{"greet": apiGreet}, Options{})
	var text string
	var buttons int
	browsertest.Run(t, ctx, 30*time.Second,
		chromedp.Navigate(a.url+"/workflows"),
		chromedp.WaitVisible(`details[data-workflow="greet"]`),
		chromedp.Text(`main`, &text),
		chromedp.Evaluate(`document.querySelectorAll('form.start button').length`, &buttons),
	)
	if buttons != 0 || !strings.Contains(text, "--allow-runs") {
		t.Fatalf("%d buttons:\n%s", buttons, text)
	}
	resp, err := http.PostForm(a.url+"/workflows/run", url.Values{"workflow": {"greet"}, "in.who": {"x"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("start with runs off: %s", resp.Status)
	}
}
