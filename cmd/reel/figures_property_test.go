package main

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"maps"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/reelhq/reel/internal/otlptest"
	"github.com/reelhq/reel/internal/pricing"
	"github.com/reelhq/reel/internal/serve"
	"github.com/reelhq/reel/internal/transcripttest"
	"github.com/reelhq/reel/transcript"
)

// figures is what a generated run spent, worked out here from its steps by
// the rules docs/pricing.md states, apart from package pricing's account.
type figures struct {
	tokens   int64
	usd      float64
	known    bool
	unpriced int
}

// shown is the cost as every view must print it.
func (f figures) shown() string {
	switch {
	case !f.known:
		return "—"
	case f.unpriced > 0:
		return fmt.Sprintf("$%.4f+", f.usd)
	}
	return fmt.Sprintf("$%.4f", f.usd)
}

// gen writes random runs, as the engine or reel import writes them, and
// works out what each spent (want), its child runs included.
type gen struct {
	t    *testing.T
	rng  *rand.Rand
	dir  string
	want map[string]figures
	ids  []string
}

// newID is a fresh run id.
func (g *gen) newID() string {
	id := fmt.Sprintf("0199f1f0-0000-4000-8000-%012d", len(g.ids))
	g.ids = append(g.ids, id)
	return id
}

// run writes a random run: agent steps of priced, unpriced and unnamed
// models, with and without a reported cost (zero included), some that used
// no tokens, command steps between them, sub-workflows in their own
// transcripts (to depth 2: a child and a grandchild) whose agents report
// costs or only tokens, and a run.completed whose totals are the engine's
// (every step's tokens and the reported costs, its sub-workflows'
// included) or none (an interrupted run). It returns the run's figures
// and the part of its cost that providers reported, as the engine adds it
// up.
func (g *gen) run(id, parent string, depth int, start time.Time) (figures, *float64) {
	t, rng := g.t, g.rng
	run := transcripttest.NewRun(t, g.dir, id, parent, start)
	run.Event(transcript.ExchangeEvent{Type: transcript.RunStarted, Payload: &transcript.StepPayload{Name: "gen", Kind: transcript.KindWorkflow}})
	models := []string{"claude-sonnet-4-5-20250929", "gpt-5", "gemini-2.5-pro", "acme-unlisted-1", ""}
	var f figures
	var total transcript.Usage
	var reported *float64
	addReported := func(c *float64) {
		if c == nil {
			return
		}
		r := *c
		if reported != nil {
			r += *reported
		}
		reported = &r
	}
	for i := range rng.IntN(6) {
		path := fmt.Sprintf("s%d", i)
		if depth < 2 && rng.IntN(4) == 0 {
			child := g.newID()
			run.Start(path, 0, transcript.KindCallWorkflow, 0)
			run.Event(transcript.ExchangeEvent{Type: transcript.CallWorkflowStarted, Path: path, ChildRunID: child,
				Payload: &transcript.StepPayload{Name: path, Kind: transcript.KindCallWorkflow}})
			cf, cr := g.run(child, id, depth+1, run.Now())
			run.Advance(time.Minute)
			run.Event(transcript.ExchangeEvent{Type: transcript.CallWorkflowCompleted, Path: path, ChildRunID: child,
				Payload: &transcript.StepPayload{Name: path, Kind: transcript.KindCallWorkflow}})
			run.Complete(path, 0, transcript.KindCallWorkflow, 0, "", nil)
			f.usd += cf.usd
			f.known = f.known || cf.known
			f.unpriced += cf.unpriced
			total.TotalTokens += cf.tokens
			addReported(cr)
			continue
		}
		if rng.IntN(3) == 0 {
			run.Command(path, 0, 1, "true", 0, "ok", "")
			continue
		}
		ar := transcript.AgentResult{Provider: "p", Model: models[rng.IntN(len(models))]}
		if rng.IntN(4) > 0 {
			in, out := rng.Int64N(200_000), rng.Int64N(20_000)
			ar.Usage = transcript.Usage{InputTokens: in, OutputTokens: out, CacheReadTokens: rng.Int64N(in + 1), ReasoningTokens: rng.Int64N(out + 1), TotalTokens: in + out}
		}
		switch rng.IntN(3) {
		case 0:
			c := 0.0
			ar.CostUSD = &c
		case 1:
			c := math.Round(rng.Float64()*200) / 100
			ar.CostUSD = &c
		}
		run.Start(path, 0, transcript.KindAgent, 1)
		run.Advance(time.Second)
		run.Complete(path, 0, transcript.KindAgent, 1, "", ar)
		total.Add(ar.Usage)
		addReported(ar.CostUSD)
		used := ar.Usage != (transcript.Usage{})
		switch {
		case ar.CostUSD != nil && (*ar.CostUSD != 0 || used):
			f.usd += *ar.CostUSD
			f.known = true
		case used:
			if usd, ok := pricing.Default().Price(ar.Model, ar.Usage); ok {
				f.usd += usd
				f.known = true
			} else {
				f.unpriced++
			}
		}
	}
	f.tokens = total.TotalTokens
	if rng.IntN(4) > 0 {
		run.Event(transcript.ExchangeEvent{Type: transcript.RunCompleted, Payload: &transcript.StepPayload{Name: "gen", Kind: transcript.KindWorkflow,
			Result: transcript.RunResult{Status: "success", DurationMS: 1000, Usage: total, CostUSD: reported}}})
	}
	run.Close()
	g.want[id] = f
	return f, reported
}

// costJSON is how every JSON view gives a cost.
type costJSON struct {
	CostUSD       *float64         `json:"cost_usd"`
	UnpricedSteps int              `json:"unpriced_steps"`
	Usage         transcript.Usage `json:"usage"`
}

func (c costJSON) check(t *testing.T, view string, want figures) {
	t.Helper()
	switch {
	case c.CostUSD == nil && want.known:
		t.Errorf("%s: no cost_usd, want %s", view, want.shown())
	case c.CostUSD != nil && !want.known:
		t.Errorf("%s: cost_usd %v, want none (—)", view, *c.CostUSD)
	case c.CostUSD != nil && math.Abs(*c.CostUSD-want.usd) > 1e-9:
		t.Errorf("%s: cost_usd %v, want %v", view, *c.CostUSD, want.usd)
	}
	if c.UnpricedSteps != want.unpriced {
		t.Errorf("%s: unpriced_steps %d, want %d", view, c.UnpricedSteps, want.unpriced)
	}
	if c.Usage.TotalTokens != want.tokens {
		t.Errorf("%s: %d tokens, want %d", view, c.Usage.TotalTokens, want.tokens)
	}
}

// pageTokens is the run page's token figure (webview's count).
func pageTokens(n int64) string {
	switch {
	case n == 0:
		return "—"
	case n >= 1_000_000:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	case n >= 10_000:
		return fmt.Sprintf("%.0fk", float64(n)/1e3)
	case n >= 1000:
		return fmt.Sprintf("%.1fk", float64(n)/1e3)
	}
	return fmt.Sprint(n)
}

var (
	pageCost   = regexp.MustCompile(`<dt>cost</dt><dd>([^<]*)</dd>`)
	pageTokenN = regexp.MustCompile(`<dt>tokens</dt><dd[^>]*>([^<]*)</dd>`)
)

func checkPage(t *testing.T, view, page string, want figures) {
	t.Helper()
	if m := pageCost.FindStringSubmatch(page); m == nil || html.UnescapeString(m[1]) != want.shown() {
		t.Errorf("%s: cost %q, want %q", view, m, want.shown())
	}
	if m := pageTokenN.FindStringSubmatch(page); m == nil || html.UnescapeString(m[1]) != pageTokens(want.tokens) {
		t.Errorf("%s: tokens %q, want %q", view, m, pageTokens(want.tokens))
	}
}

// Issue 24: for any run, every view (runs, status, tree, stats, the run
// page, the HTML replay, /api/runs) reports the same tokens and the same
// cost, or the same "—", its child runs' included (reported, priced from
// the table, unpriced, nested two deep).
func TestEveryViewShowsTheSameFigures(t *testing.T) {
	n := 30
	if testing.Short() {
		n = 8
	}
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 24))
	storage := t.TempDir()
	g := &gen{t: t, rng: rng, dir: transcript.Dir(storage), want: map[string]figures{}}
	for range n {
		g.run(g.newID(), "", 0, time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC).Add(time.Duration(rng.IntN(1000))*time.Hour))
	}
	checkEveryView(t, storage, g.want)
	checkOTLPRunSpans(t, storage, g.want)
}

// checkOTLPRunSpans exports every run of storage with reel export --to
// otlp and checks that each run's span carries the tokens and cost want
// gives (OTLP has no "+": the cost is the known part): through a real
// OpenTelemetry Collector when one is built (scripts/otelcol.sh, as CI
// does), else through otlptest's receiver.
func checkOTLPRunSpans(t *testing.T, storage string, want map[string]figures) {
	t.Helper()
	otelEnv(t)
	type runSpan struct {
		cost   *float64
		tokens int64
	}
	got := map[string]runSpan{}
	export := func(endpoint string) int {
		t.Helper()
		out := reelIn(t, storage)("export", "--to", "otlp", "--all", "--json", "--otel-exporter", endpoint)
		var doc otlpExported
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		return doc.Spans
	}
	if _, ok := otelcolPath(); ok {
		t.Log("through a real OpenTelemetry Collector")
		c := startCollector(t)
		for _, s := range c.waitSpans(t, export(c.grpc)) {
			if !strings.HasPrefix(s.Name, "invoke_workflow ") {
				continue
			}
			var rs runSpan
			if v, ok := s.Attrs["reel.usage.cost_usd"]; ok {
				usd, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimPrefix(v, "Double("), ")"), 64)
				if err != nil {
					t.Fatalf("%s: cost %s", s.Name, v)
				}
				rs.cost = &usd
			}
			if v, ok := s.Attrs["reel.usage.total_tokens"]; ok {
				rs.tokens, _ = strconv.ParseInt(strings.TrimSuffix(strings.TrimPrefix(v, "Int("), ")"), 10, 64)
			}
			got[strings.TrimSuffix(strings.TrimPrefix(s.Attrs["reel.run.id"], "Str("), ")")] = rs
		}
	} else {
		t.Log("no OpenTelemetry Collector built: through otlptest's receiver")
		rcv := otlptest.NewGRPC(t)
		for _, s := range rcv.Wait(t, export(rcv.Endpoint), 30*time.Second) {
			if !strings.HasPrefix(s.Name, "invoke_workflow ") {
				continue
			}
			var rs runSpan
			if usd, ok := s.Attrs["reel.usage.cost_usd"].(float64); ok {
				rs.cost = &usd
			}
			rs.tokens, _ = s.Attrs["reel.usage.total_tokens"].(int64)
			got[s.Attrs["reel.run.id"].(string)] = rs
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d run spans, want %d", len(got), len(want))
	}
	for id, w := range want {
		c := costJSON{CostUSD: got[id].cost, UnpricedSteps: w.unpriced, Usage: transcript.Usage{TotalTokens: got[id].tokens}}
		c.check(t, "the run span of reel export --to otlp "+id, w)
	}
}

// reelIn runs reel with args on storage and returns its output; a
// failure ends the test.
func reelIn(t *testing.T, storage string) func(args ...string) string {
	return func(args ...string) string {
		t.Helper()
		out, errOut, err := runReel(t, context.Background(), append(args, "--storage", storage)...)
		if err != nil {
			t.Fatalf("reel %s: %v\n%s", strings.Join(args, " "), err, errOut)
		}
		return out
	}
}

// serveGet serves storage as reel serve does, until the test ends, and
// returns a GET of a path that must answer 200.
func serveGet(t *testing.T, storage string) func(path string) string {
	s, err := serve.New(context.Background(), serve.Options{Storage: storage, Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(func() {
		srv.Close()
		s.Close()
	})
	return func(path string) string {
		t.Helper()
		res, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		if res.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %s\n%s", path, res.Status, b)
		}
		return string(b)
	}
}

// checkEveryView checks that every view of each run of storage in want
// (which names every run there) gives the figures want says.
func checkEveryView(t *testing.T, storage string, want map[string]figures) {
	t.Helper()
	ids := slices.Sorted(maps.Keys(want))
	n := len(ids)
	reel := reelIn(t, storage)

	// reel runs and /api/runs read the run index.
	var list []struct {
		RunID string `json:"run_id"`
		costJSON
	}
	if err := json.Unmarshal([]byte(reel("runs", "--json")), &list); err != nil {
		t.Fatal(err)
	}
	if len(list) != n {
		t.Fatalf("reel runs lists %d runs, want %d", len(list), n)
	}
	for _, r := range list {
		r.check(t, "reel runs --json "+r.RunID, want[r.RunID])
	}
	table := reel("runs")
	get := serveGet(t, storage)
	var page struct {
		Runs []struct {
			RunID string `json:"run_id"`
			costJSON
		} `json:"runs"`
	}
	if err := json.Unmarshal([]byte(get("/api/runs?limit=1000")), &page); err != nil {
		t.Fatal(err)
	}
	for _, r := range page.Runs {
		r.check(t, "/api/runs "+r.RunID, want[r.RunID])
	}

	for _, id := range ids {
		w := want[id]
		if !strings.Contains(table, id+" ") || !regexp.MustCompile(`(?m)^`+id+`\b.*`+regexp.QuoteMeta(w.shown())+`\s*$`).MatchString(table) {
			t.Errorf("reel runs: the row of %s does not end in %s:\n%s", id, w.shown(), table)
		}

		var st costJSON
		if err := json.Unmarshal([]byte(reel("status", "--json", id)), &st); err != nil {
			t.Fatal(err)
		}
		st.check(t, "reel status --json "+id, w)
		if out := reel("status", id); !regexp.MustCompile(`(?m)^cost\s+` + regexp.QuoteMeta(w.shown()) + `$`).MatchString(out) {
			t.Errorf("reel status %s: no line cost %s:\n%s", id, w.shown(), out)
		}

		var tree struct {
			Run costJSON `json:"run"`
		}
		if err := json.Unmarshal([]byte(reel("tree", "--json", id)), &tree); err != nil {
			t.Fatal(err)
		}
		tree.Run.check(t, "reel tree --json "+id, w)
		if out := reel("tree", id); !strings.Contains(strings.SplitN(out, "\n", 2)[0], "  "+w.shown()) {
			t.Errorf("reel tree %s: the run's line lacks %s:\n%s", id, w.shown(), out)
		}

		var stats struct {
			Total costJSON `json:"total"`
		}
		if err := json.Unmarshal([]byte(reel("stats", "--json", id)), &stats); err != nil {
			t.Fatal(err)
		}
		stats.Total.check(t, "reel stats --json "+id, w)
		if out := reel("stats", id); !strings.Contains(out, "cost    "+w.shown()+"\n") {
			t.Errorf("reel stats %s: no cost %s:\n%s", id, w.shown(), out)
		}

		file := filepath.Join(t.TempDir(), "run.html")
		reel("replay", "--format", "html", "-o", file, id)
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		checkPage(t, "replay --format html "+id, string(b), w)
		checkPage(t, "/runs/"+id, get("/runs/"+id), w)
	}
}
