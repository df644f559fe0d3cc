// Package browsertest starts a real headless Chromium for the tests of
// reel's web pages, or skips the test with a message naming the package
// when no Chromium is installed (Debian: apt-get install -y chromium).
package browsertest

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// Find returns the path of a Chromium (or Chrome) executable, or "".
// REEL_CHROMIUM names one explicitly.
func Find() string {
	if p := os.Getenv("REEL_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// New starts a headless Chromium with a fresh profile and returns a
// browser context that ends with the test. pkg names the calling package
// in the skip message.
func New(t testing.TB, pkg string) context.Context {
	t.Helper()
	path := Find()
	if path == "" {
		t.Skipf("%s: Chromium not found, browser test skipped (install it: apt-get install -y chromium, or set REEL_CHROMIUM)", pkg)
	}
	// A fresh profile per test; Chromium may still be writing to it for a
	// moment after it was told to quit, so it is removed after it exited.
	profile, err := os.MkdirTemp("", "reel-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	// The flags keep Chromium off the network: on a closed network its
	// background requests stall it.
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(profile),
		chromedp.WindowSize(1400, 1000),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() {
		chromedp.Cancel(ctx)
		cancel()
		cancelAlloc()
		for range 20 {
			if os.RemoveAll(profile) == nil {
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
	})
	// Start the browser now, so a broken install fails here, clearly. The
	// first Run must not carry a timeout: its context owns the browser.
	if err := chromedp.Run(ctx); err != nil {
		t.Fatalf("start Chromium %s: %v", path, err)
	}
	return ctx
}

// Run runs actions with a timeout, failing the test on error.
func Run(t testing.TB, ctx context.Context, timeout time.Duration, actions ...chromedp.Action) {
	t.Helper()
	tctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := chromedp.Run(tctx, actions...); err != nil {
		t.Fatal(err)
	}
}
