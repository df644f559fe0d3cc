package serve

import (
	"bufio"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/reelhq/reel/internal/browsertest"
	"github.com/reelhq/reel/transcript"
)

// The live path, end to end: a recorder appends an event to its transcript
// and reel serve's event stream, a real HTTP server on loopback following
// the real file, delivers it to a client. The target is an event on
// screen within 100 ms of being recorded; TestBrowserLiveLatency measures
// up to the screen, these up to the client's socket.

// sseClient reads an event stream and reports each event's id as it
// arrives.
type sseClient struct {
	resp *http.Response
	ids  chan uint64
}

func openSSE(t testing.TB, url string) *sseClient {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", url, resp.Status)
	}
	c := &sseClient{resp: resp, ids: make(chan uint64, 1024)}
	go func() {
		defer close(c.ids)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 64<<10), 16<<20)
		for sc.Scan() {
			if v, ok := strings.CutPrefix(sc.Text(), "id: "); ok {
				n, _ := strconv.ParseUint(v, 10, 64)
				c.ids <- n
			}
		}
	}()
	t.Cleanup(func() { resp.Body.Close() })
	return c
}

// await waits for the event with id seq and returns when it arrived.
func (c *sseClient) await(t testing.TB, seq uint64) time.Time {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case id, ok := <-c.ids:
			if !ok {
				t.Fatalf("stream ended before event %d", seq)
			}
			if id == seq {
				return time.Now()
			}
			if id > seq {
				t.Fatalf("event %d skipped (got %d)", seq, id)
			}
		case <-timeout:
			t.Fatalf("event %d did not arrive within 10s", seq)
		}
	}
}

// newLiveRun creates a run in storage and records its run.started; the
// caller closes the recorder.
func newLiveRun(t testing.TB, storage, workflow string) (*transcript.Recorder, string) {
	t.Helper()
	id := transcript.NewRunID()
	rec, err := transcript.Create(transcript.Dir(storage), id, transcript.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rec.Record(transcript.ExchangeEvent{Type: transcript.RunStarted, Payload: &transcript.StepPayload{Name: workflow, Kind: transcript.KindWorkflow}}); err != nil {
		rec.Close()
		t.Fatal(err)
	}
	return rec, id
}

func liveEvent(i int) transcript.ExchangeEvent {
	return transcript.ExchangeEvent{Type: transcript.StepCompleted, Path: "s", Payload: &transcript.StepPayload{Name: "s", Kind: transcript.KindCommand,
		Result: transcript.CommandResult{Output: fmt.Sprintf("line %d of live output", i)}}}
}

// measureLive records n events, one at a time, and returns how long each
// took to reach a client of the event stream (format=html, what the run
// page uses).
func measureLive(t testing.TB, n int) []time.Duration {
	storage := t.TempDir()
	_, url := start(t, storage, Options{})
	rec, id := newLiveRun(t, storage, "live")
	defer rec.Close()
	c := openSSE(t, url+"/api/runs/"+id+"/events?format=html")
	c.await(t, 1)
	lat := make([]time.Duration, 0, n)
	for i := range n {
		// Land at a random point of the follower's poll cycle, as a real
		// writer does.
		time.Sleep(time.Duration(i%7) * 3 * time.Millisecond)
		t0 := time.Now()
		seq, err := rec.Record(liveEvent(i))
		if err != nil {
			t.Fatal(err)
		}
		lat = append(lat, c.await(t, seq).Sub(t0))
	}
	return lat
}

// measureBaseline is the floor any live view has: a net/http event stream
// fed by a Go channel straight from the writer, no file in between.
func measureBaseline(t testing.TB, n int) []time.Duration {
	feed := make(chan uint64)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		for {
			select {
			case seq := <-feed:
				fmt.Fprintf(w, "id: %d\ndata: {}\n\n", seq)
				w.(http.Flusher).Flush()
			case <-r.Context().Done():
				return
			}
		}
	}))
	defer ts.Close()
	c := openSSE(t, ts.URL)
	lat := make([]time.Duration, 0, n)
	for i := range n {
		time.Sleep(time.Duration(i%7) * 3 * time.Millisecond)
		t0 := time.Now()
		feed <- uint64(i + 1)
		lat = append(lat, c.await(t, uint64(i+1)).Sub(t0))
	}
	c.resp.Body.Close()
	return lat
}

func quantile(d []time.Duration, q float64) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[min(len(s)-1, int(q*float64(len(s))))]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// TestLiveLatency: an event recorded reaches an event-stream client of
// reel serve well within the 100 ms the issue allows for reaching the
// screen.
func TestLiveLatency(t *testing.T) {
	lat := measureLive(t, 40)
	p50, p95 := quantile(lat, 0.5), quantile(lat, 0.95)
	t.Logf("record → SSE client: p50 %.1f ms, p95 %.1f ms, max %.1f ms", ms(p50), ms(p95), ms(slices.Max(lat)))
	// The follower polls every 20 ms; the rest is slack for a busy machine.
	if p50 > 60*time.Millisecond {
		t.Errorf("median latency %s, want well under 100ms", p50)
	}
	if os.Getenv("REEL_STRICT_TIMING") != "" && p95 > 100*time.Millisecond {
		t.Errorf("p95 latency %s, want under 100ms", p95)
	}
}

// BenchmarkLive: record → event-stream client through reel serve, against
// the stdlib floor (a channel-fed net/http stream). Reports p50/p95 of
// both; x-vs-stdlib is the floor's p50 over reel's (1 would be no cost for
// the file and the follower).
func BenchmarkLive(b *testing.B) {
	var lat, base []time.Duration
	for range b.N {
		lat = append(lat, measureLive(b, 50)...)
		base = append(base, measureBaseline(b, 50)...)
	}
	b.ReportMetric(ms(quantile(lat, 0.5)), "p50-ms")
	b.ReportMetric(ms(quantile(lat, 0.95)), "p95-ms")
	b.ReportMetric(ms(quantile(base, 0.5)), "stdlib-p50-ms")
	b.ReportMetric(ms(quantile(base, 0.95)), "stdlib-p95-ms")
	b.ReportMetric(float64(quantile(base, 0.5))/float64(quantile(lat, 0.5)), "x-vs-stdlib")
}

// TestBrowserLiveLatency: from recorder.Record to the event on screen in a
// real Chromium showing the run page: the time of the first animation
// frame after the event's element was added, on the same clock as the
// recorder's (Date.now and time.Now read the system clock). The issue's
// target is 100 ms.
func TestBrowserLiveLatency(t *testing.T) {
	ctx := browsertest.New(t, pkg)
	storage := t.TempDir()
	_, url := start(t, storage, Options{})
	rec, id := newLiveRun(t, storage, "live")
	defer rec.Close()
	const observe = `window.shown = {};
new MutationObserver(function (ms) {
  ms.forEach(function (m) {
    m.addedNodes.forEach(function (n) {
      var id = n.id || "";
      if (!/^e\d+$/.test(id)) return;
      requestAnimationFrame(function () { window.shown[id.slice(1)] = Date.now(); });
    });
  });
}).observe(document.getElementById("events"), { childList: true, subtree: true });
true`
	browsertest.Run(t, ctx, 30*time.Second,
		chromedp.Navigate(url+"/runs/"+id),
		chromedp.WaitVisible(`#e1`),
		chromedp.WaitVisible(`#live`),
		chromedp.Evaluate(observe, nil),
	)
	const n = 30
	recorded := map[uint64]time.Time{}
	for i := range n {
		time.Sleep(time.Duration(10+i%7*3) * time.Millisecond)
		t0 := time.Now()
		seq, err := rec.Record(liveEvent(i))
		if err != nil {
			t.Fatal(err)
		}
		recorded[seq] = t0
	}
	var shown map[string]int64
	browsertest.Run(t, ctx, 20*time.Second,
		chromedp.Poll(fmt.Sprintf(`Object.keys(window.shown).length >= %d`, n), nil, chromedp.WithPollingTimeout(15*time.Second)),
		chromedp.Evaluate(`window.shown`, &shown),
	)
	var lat []time.Duration
	for seq, t0 := range recorded {
		ms, ok := shown[strconv.FormatUint(seq, 10)]
		if !ok {
			t.Fatalf("event %d never shown", seq)
		}
		// Date.now has millisecond resolution: round the start down too.
		lat = append(lat, time.UnixMilli(ms).Sub(t0.Truncate(time.Millisecond)))
	}
	p50, p95 := quantile(lat, 0.5), quantile(lat, 0.95)
	t.Logf("record → on screen in Chromium: p50 %.0f ms, p95 %.0f ms, max %.0f ms (%d events)", ms(p50), ms(p95), ms(slices.Max(lat)), len(lat))
	if testing.Verbose() {
		slices.Sort(lat)
		t.Logf("all: %v", lat)
	}
	if p50 > 100*time.Millisecond {
		t.Errorf("median record → screen latency %s, want under 100ms", p50)
	}
	if os.Getenv("REEL_STRICT_TIMING") != "" && p95 > 100*time.Millisecond {
		t.Errorf("p95 record → screen latency %s, want under 100ms", p95)
	}
}
