package index

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reelhq/reel/internal/runstatus"
	"github.com/reelhq/reel/internal/transcripttest"
	"github.com/reelhq/reel/transcript"
)

func sampleStorage(t *testing.T) string {
	t.Helper()
	storage := t.TempDir()
	dir := transcript.Dir(storage)
	transcripttest.WriteSample(t, dir, transcripttest.Variant{})
	transcripttest.WriteSample(t, dir, transcripttest.Variant{ID: transcripttest.OtherID, ChildID: "44444444-4444-4444-8444-444444444444", LintFails: true, Review: "main.go: the shadowed err hides a failure."})
	return storage
}

func openIndex(t *testing.T, storage string) *Index {
	t.Helper()
	ix, err := Open(context.Background(), storage)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	return ix
}

func TestListAndGet(t *testing.T) {
	ix := openIndex(t, sampleStorage(t))
	ctx := context.Background()
	page, err := ix.List(ctx, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if page.Total != 4 || len(page.Runs) != 4 {
		t.Fatalf("want 4 runs, got total %d, %d runs", page.Total, len(page.Runs))
	}
	for i := 1; i < len(page.Runs); i++ {
		a, b := page.Runs[i-1], page.Runs[i]
		if a.Started.Before(b.Started) {
			t.Errorf("not newest first: %s before %s", a.Started, b.Started)
		}
	}
	root, err := ix.Get(ctx, transcripttest.RootID)
	if err != nil {
		t.Fatal(err)
	}
	if root.Workflow != "review-flow" || root.Status != runstatus.Success || root.ParentRunID != "" {
		t.Errorf("root: %+v", root)
	}
	if root.Usage.TotalTokens == 0 || root.CostUSD == nil || *root.CostUSD < 0.02 {
		t.Errorf("root tokens/cost: %+v %v", root.Usage, root.CostUSD)
	}
	// The root's one failure was retried and made good: it counts as
	// the step that succeeded (runstatus.StepCounts).
	if root.ToolCalls == 0 || root.Steps == 0 || root.FailedSteps != 0 {
		t.Errorf("root counts: steps %d failed %d tools %d", root.Steps, root.FailedSteps, root.ToolCalls)
	}
	other, err := ix.Get(ctx, transcripttest.OtherID)
	if err != nil {
		t.Fatal(err)
	}
	if other.Status != runstatus.Failure || other.Error == "" || other.ExitCode == nil || *other.ExitCode != 1 || other.FailedSteps == 0 {
		t.Errorf("failed run: %+v", other)
	}
	child, err := ix.Get(ctx, transcripttest.ChildID)
	if err != nil {
		t.Fatal(err)
	}
	if child.ParentRunID != transcripttest.RootID || child.Workflow != "fixer" {
		t.Errorf("child: %+v", child)
	}
	kids, err := ix.Children(ctx, transcripttest.RootID)
	if err != nil || len(kids) != 1 || kids[0].RunID != transcripttest.ChildID {
		t.Errorf("children: %v %v", kids, err)
	}
	if _, err := ix.Get(ctx, "99999999-9999-4999-8999-999999999999"); err == nil {
		t.Error("Get of an unknown run succeeded")
	}
}

func TestFilters(t *testing.T) {
	ix := openIndex(t, sampleStorage(t))
	ctx := context.Background()
	count := func(f Filter) int {
		t.Helper()
		p, err := ix.List(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		if p.Total != len(p.Runs) {
			t.Errorf("%+v: total %d but %d runs", f, p.Total, len(p.Runs))
		}
		return len(p.Runs)
	}
	fc, err := ix.Facets(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(fc.Workflows, []string{"fixer", "review-flow"}) {
		t.Errorf("workflows facet: %v", fc.Workflows)
	}
	if len(fc.Providers) == 0 || len(fc.Models) == 0 {
		t.Errorf("providers/models facet empty: %+v", fc)
	}
	cases := []struct {
		f    Filter
		want int
	}{
		{Filter{Workflow: "review-flow"}, 2},
		{Filter{Workflow: "fixer"}, 2},
		{Filter{Workflow: "nope"}, 0},
		{Filter{Status: runstatus.Failure}, 1},
		{Filter{Status: runstatus.Success}, 3},
		{Filter{Status: runstatus.Interrupted}, 0},
		{Filter{Provider: fc.Providers[0]}, 4},
		{Filter{Provider: "no%such"}, 0},
		{Filter{Model: fc.Models[0]}, 4},
		{Filter{Since: transcripttest.Epoch.Add(-time.Hour)}, 4},
		{Filter{Since: transcripttest.Epoch.Add(time.Hour)}, 0},
		{Filter{Until: transcripttest.Epoch.Add(time.Millisecond)}, 2},
	}
	for _, c := range cases {
		if got := count(c.f); got != c.want {
			t.Errorf("%+v: %d runs, want %d", c.f, got, c.want)
		}
	}
	if _, err := ix.List(ctx, Filter{Status: "incomplete"}); err == nil {
		t.Error("an unknown status was accepted")
	}
	if _, err := ix.List(ctx, Filter{After: "garbage"}); err == nil {
		t.Error("a bad cursor was accepted")
	}
}

func TestPaging(t *testing.T) {
	storage := t.TempDir()
	dir := transcript.Dir(storage)
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range 23 {
		id := transcript.NewRunID()
		r := transcripttest.NewRun(t, dir, id, "", start.Add(time.Duration(i%7)*time.Minute)) // ties in start time
		r.Event(transcript.ExchangeEvent{Type: transcript.RunStarted, Payload: &transcript.StepPayload{Name: "w", Kind: transcript.KindWorkflow}})
		r.Event(transcript.ExchangeEvent{Type: transcript.RunCompleted, Payload: &transcript.StepPayload{Name: "w", Kind: transcript.KindWorkflow, Result: transcript.RunResult{Status: "success"}}})
		r.Close()
	}
	ix := openIndex(t, storage)
	seen := map[string]bool{}
	cursor := ""
	var prev *Run
	for pages := 0; ; pages++ {
		p, err := ix.List(context.Background(), Filter{Limit: 5, After: cursor})
		if err != nil {
			t.Fatal(err)
		}
		if p.Total != 23 {
			t.Errorf("total %d", p.Total)
		}
		for i := range p.Runs {
			r := p.Runs[i]
			if seen[r.RunID] {
				t.Fatalf("run %s on two pages", r.RunID)
			}
			seen[r.RunID] = true
			if prev != nil && (r.Started.After(prev.Started) || r.Started.Equal(prev.Started) && r.RunID > prev.RunID) {
				t.Errorf("order broken at %s", r.RunID)
			}
			prev = &r
		}
		if p.Next == "" {
			break
		}
		cursor = p.Next
		if pages > 10 {
			t.Fatal("paging does not end")
		}
	}
	if len(seen) != 23 {
		t.Errorf("paged through %d runs, want 23", len(seen))
	}
}

// hits are the first 100 hits of q, page after page: on a loaded machine
// one page may stop at its time budget with hits still to come.
func hits(t *testing.T, ix *Index, q string) []Hit {
	t.Helper()
	h, err := ix.SearchAll(context.Background(), q, 100, 0)
	if err != nil {
		t.Fatalf("search %q: %v", q, err)
	}
	return h
}

func TestSearch(t *testing.T) {
	ix := openIndex(t, sampleStorage(t))
	// the reply of analyze, in both runs
	h := hits(t, ix, "shadowed")
	if len(h) < 2 {
		t.Fatalf("shadowed: %d hits", len(h))
	}
	for _, x := range h {
		if !strings.Contains(snippetText(x), "shadowed") || !hasMatch(x, "shadowed") {
			t.Errorf("snippet %q does not mark the term", snippetText(x))
		}
		if x.Workflow != "review-flow" || x.Seq == 0 || x.Type == "" {
			t.Errorf("hit %+v", x)
		}
	}
	// only the second run's first review says this
	h = hits(t, ix, `"shadowed err hides"`)
	if len(h) != 1 || h[0].RunID != transcripttest.OtherID || h[0].Path != "each_file.review" {
		t.Fatalf("phrase: %+v", h)
	}
	if len(hits(t, ix, `"err shadowed"`)) != 0 {
		t.Error("a phrase matched its words out of order")
	}
	if n := len(hits(t, ix, "shadow*")); n < 3 {
		t.Errorf("prefix: %d hits", n)
	}
	if n := len(hits(t, ix, "shadowed -hides")); n != len(hits(t, ix, "shadowed"))-1 {
		t.Errorf("exclusion: %d hits", n)
	}
	// tool input, tool output, command, command output, system prompt
	for _, q := range []string{"go vet", "golangci-lint", "PASS", "careful reviewer", "toolu_30", "i++"} {
		if len(hits(t, ix, q)) == 0 {
			t.Errorf("%q: no hit", q)
		}
	}
	// child run events are found, with their own run id
	h = hits(t, ix, "Fix the loop")
	if len(h) == 0 || h[0].RunID == transcripttest.RootID {
		t.Errorf("child hit: %+v", h)
	}
	// field names are not text
	if n := len(hits(t, ix, "fidelity")); n != 0 {
		t.Errorf("a JSON key matched: %d hits", n)
	}
	if _, err := ix.Search(context.Background(), " -x ", SearchOptions{}); err == nil {
		t.Error("a query without a word was accepted")
	}
}

// allHits pages through every hit of q.
func allHits(t *testing.T, ix *Index, q string) []Hit {
	t.Helper()
	var all []Hit
	cursor := ""
	for {
		p, err := ix.Search(context.Background(), q, SearchOptions{Limit: 100, After: cursor})
		if err != nil {
			t.Fatalf("search %q: %v", q, err)
		}
		all = append(all, p.Hits...)
		if p.Next == "" {
			return all
		}
		cursor = p.Next
	}
}

func snippetText(h Hit) string {
	var b strings.Builder
	for _, s := range h.Snippet {
		b.WriteString(s.Text)
	}
	return b.String()
}

func hasMatch(h Hit, term string) bool {
	for _, s := range h.Snippet {
		if s.Match && strings.EqualFold(s.Text, term) {
			return true
		}
	}
	return false
}

func TestSearchPaging(t *testing.T) {
	storage := t.TempDir()
	dir := transcript.Dir(storage)
	r := transcripttest.NewRun(t, dir, transcript.NewRunID(), "", transcripttest.Epoch)
	r.Event(transcript.ExchangeEvent{Type: transcript.RunStarted, Payload: &transcript.StepPayload{Name: "w", Kind: transcript.KindWorkflow}})
	big := strings.Repeat("filler text that pads the chunk ", 200)
	for i := range 400 {
		r.Command("step", i, 0, "echo needle", 0, big, "")
	}
	r.Close()
	ix := openIndex(t, storage)
	var all []Hit
	cursor := ""
	for {
		p, err := ix.Search(context.Background(), "needle", SearchOptions{Limit: 7, After: cursor})
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, p.Hits...)
		if p.Next == "" {
			break
		}
		cursor = p.Next
	}
	if len(all) != 400 {
		t.Fatalf("paged through %d hits, want 400", len(all))
	}
	for i := 1; i < len(all); i++ {
		if all[i].Seq >= all[i-1].Seq {
			t.Fatalf("hits not newest first at %d: %d then %d", i, all[i-1].Seq, all[i].Seq)
		}
	}
}

// TestIncremental follows a run being written: each Sync indexes only what
// is new, and the result equals a rebuild from scratch.
func TestIncremental(t *testing.T) {
	storage := t.TempDir()
	dir := transcript.Dir(storage)
	ix := openIndex(t, storage)
	id := transcript.NewRunID()
	r := transcripttest.NewRun(t, dir, id, "", transcripttest.Epoch)
	r.Event(transcript.ExchangeEvent{Type: transcript.RunStarted, Payload: &transcript.StepPayload{Name: "live", Kind: transcript.KindWorkflow}})
	ctx := context.Background()
	if err := ix.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	got, err := ix.Get(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status == runstatus.Success || got.Events != 1 {
		t.Fatalf("open run: %+v", got)
	}
	for i := range 30 {
		r.Command("work", i, 0, "echo step", 0, strings.Repeat("output ", 2000)+"marker"+string(rune('a'+i%26)), "")
		if err := ix.Sync(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(hits(t, ix, "markerd")); n != 2 {
		t.Errorf("markerd: %d hits, want 2", n)
	}
	r.Event(transcript.ExchangeEvent{Type: transcript.RunCompleted, Payload: &transcript.StepPayload{Name: "live", Kind: transcript.KindWorkflow, Result: transcript.RunResult{Status: "success"}}})
	r.Close()
	if err := ix.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	got, _ = ix.Get(ctx, id)
	if got.Status != runstatus.Success || got.Events != 62 || got.Steps != 30 {
		t.Errorf("after completion: %+v", got)
	}
	var chunks int
	ix.conn().QueryRow(`SELECT count(*) FROM chunks`).Scan(&chunks)
	st, _ := os.Stat(filepath.Join(dir, id+".jsonl"))
	if max := int(st.Size()/(chunkSize/4)) + 1; chunks > max {
		t.Errorf("%d chunks for %d bytes: small chunks were not merged", chunks, st.Size())
	}
	assertSameAsRebuild(t, ix, storage)
}

func assertSameAsRebuild(t *testing.T, ix *Index, storage string) {
	t.Helper()
	ctx := context.Background()
	inc, err := ix.List(ctx, Filter{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	fresh := t.TempDir()
	if err := os.Symlink(transcript.Dir(storage), transcript.Dir(fresh)); err != nil {
		t.Fatal(err)
	}
	rb, _, err := Rebuild(ctx, fresh)
	if err != nil {
		t.Fatal(err)
	}
	defer rb.Close()
	full, err := rb.List(ctx, Filter{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	for i := range inc.Runs {
		inc.Runs[i].Path = ""
	}
	for i := range full.Runs {
		full.Runs[i].Path = ""
	}
	if !reflect.DeepEqual(inc, full) {
		t.Errorf("incremental index differs from a rebuild:\n%+v\n%+v", inc, full)
	}
	for _, q := range []string{"output", "marker*", "echo step", "markerq"} {
		a, b := allHits(t, ix, q), allHits(t, rb, q)
		if len(a) != len(b) {
			t.Errorf("%q: %d hits incrementally, %d after a rebuild", q, len(a), len(b))
		}
	}
}

// TestConcurrentWriters has two index handles (as reel serve and a
// finishing reel run would) update the same index while runs are written.
func TestConcurrentWriters(t *testing.T) {
	storage := t.TempDir()
	dir := transcript.Dir(storage)
	a, b := openIndex(t, storage), openIndex(t, storage)
	ctx := context.Background()
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for _, ix := range []*Index{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if err := ix.Sync(ctx); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	for range 4 {
		r := transcripttest.NewRun(t, dir, transcript.NewRunID(), "", transcripttest.Epoch)
		r.Event(transcript.ExchangeEvent{Type: transcript.RunStarted, Payload: &transcript.StepPayload{Name: "c", Kind: transcript.KindWorkflow}})
		for i := range 50 {
			r.Command("s", i, 0, "echo hi", 0, "line of output", "")
		}
		r.Event(transcript.ExchangeEvent{Type: transcript.RunCompleted, Payload: &transcript.StepPayload{Name: "c", Kind: transcript.KindWorkflow, Result: transcript.RunResult{Status: "success"}}})
		r.Close()
	}
	close(stop)
	wg.Wait()
	if _, err := a.Scan(ctx); err != nil {
		t.Fatal(err)
	}
	p, _ := a.List(ctx, Filter{})
	for _, r := range p.Runs {
		if r.Events != 102 || r.Status != runstatus.Success {
			t.Errorf("run %s: %d events, %s", r.RunID, r.Events, r.Status)
		}
	}
	if n := len(allHits(t, b, "output")); n != 200 {
		t.Errorf("%d hits for output, want 200 (each event once)", n)
	}
	assertSameAsRebuild(t, a, storage)
}

func TestStaleness(t *testing.T) {
	storage := sampleStorage(t)
	ctx := context.Background()
	ix := openIndex(t, storage)
	// a removed transcript leaves the index
	if err := os.Remove(filepath.Join(transcript.Dir(storage), transcripttest.OtherID+".jsonl")); err != nil {
		t.Fatal(err)
	}
	if err := ix.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := ix.Get(ctx, transcripttest.OtherID); err == nil {
		t.Error("a removed run is still listed")
	}
	ix.Close()
	// a damaged index file is rebuilt
	if err := os.WriteFile(Path(storage), []byte("not a database at all, just garbage bytes"), 0o600); err != nil {
		t.Fatal(err)
	}
	os.Remove(Path(storage) + "-wal")
	ix2 := openIndex(t, storage)
	if _, err := ix2.Get(ctx, transcripttest.RootID); err != nil {
		t.Errorf("after rebuilding a damaged index: %v", err)
	}
	// an index of another schema version is rebuilt
	if _, err := ix2.conn().Exec(`UPDATE meta SET value = '0' WHERE key = 'schema'; DELETE FROM runs`); err != nil {
		t.Fatal(err)
	}
	ix2.Close()
	ix3 := openIndex(t, storage)
	if _, err := ix3.Get(ctx, transcripttest.RootID); err != nil {
		t.Errorf("after an old schema: %v", err)
	}
	// a transcript replaced by another file is indexed afresh
	p := filepath.Join(transcript.Dir(storage), transcripttest.ChildID+".jsonl")
	other := t.TempDir()
	r := transcripttest.NewRun(t, other, transcripttest.ChildID, "", transcripttest.Epoch)
	r.Event(transcript.ExchangeEvent{Type: transcript.RunStarted, Payload: &transcript.StepPayload{Name: "replaced", Kind: transcript.KindWorkflow}})
	r.Close()
	b, _ := os.ReadFile(filepath.Join(other, transcripttest.ChildID+".jsonl"))
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ix3.Scan(ctx); err != nil {
		t.Fatal(err)
	}
	if got, _ := ix3.Get(ctx, transcripttest.ChildID); got.Workflow != "replaced" || got.Events != 1 {
		t.Errorf("replaced transcript: %+v", got)
	}
	for _, h := range hits(t, ix3, "Fix the loop") {
		if h.RunID == transcripttest.ChildID {
			t.Errorf("text of the replaced transcript still found: %+v", h)
		}
	}
}

func TestTornTail(t *testing.T) {
	storage := t.TempDir()
	dir := transcript.Dir(storage)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	id := transcript.NewRunID()
	p := filepath.Join(dir, id+".jsonl")
	line := `{"seq":1,"run_id":"` + id + `","type":"run.started","path":"","iteration":0,"timestamp":"2026-06-08T08:14:42.000000Z","payload":{"name":"t","kind":"workflow"}}` + "\n"
	torn := `{"seq":2,"run_id":"` + id + `","type":"message.user","path":"a","iteration":0,"timestamp":"2026-06-08T08:14:43.000000Z","payload":{"role":"user","blocks":[{"type":"text","fidelity":"router","text":"half writ`
	if err := os.WriteFile(p, []byte(line+torn), 0o600); err != nil {
		t.Fatal(err)
	}
	ix := openIndex(t, storage)
	got, err := ix.Get(context.Background(), id)
	if err != nil || got.Events != 1 {
		t.Fatalf("%+v %v", got, err)
	}
	f, _ := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`ten"}]}}` + "\n")
	f.Close()
	if err := ix.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	got, _ = ix.Get(context.Background(), id)
	if got.Events != 2 || len(hits(t, ix, "written")) != 1 {
		t.Errorf("completed line not indexed: %+v", got)
	}
}

func TestParseQuery(t *testing.T) {
	cases := []struct {
		in   string
		want Query
	}{
		{`Hello world`, Query{Terms: []string{"hello", "world"}}},
		{`read_file`, Query{Terms: []string{"read", "file"}, Phrases: [][]string{{"read", "file"}}}},
		{`"go  test" -skip`, Query{Terms: []string{"go", "test"}, Phrases: [][]string{{"go", "test"}}, Exclude: []string{"skip"}}},
		{`shad* "unterminated`, Query{Terms: []string{"unterminated"}, Prefixes: []string{"shad"}}},
		{`Ünïcode`, Query{Terms: []string{"ünïcode"}}},
	}
	for _, c := range cases {
		got, err := ParseQuery(c.in)
		if err != nil {
			t.Errorf("%q: %v", c.in, err)
			continue
		}
		if !reflect.DeepEqual(*got, c.want) {
			t.Errorf("%q: got %+v, want %+v", c.in, *got, c.want)
		}
	}
	for _, bad := range []string{"", "  ", "-only", `"!!"`, "*"} {
		if _, err := ParseQuery(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestTokenizer(t *testing.T) {
	var got []string
	tk := tokenizer{emit: func(b []byte) { got = append(got, string(b)) }}
	tk.jsonString([]byte(`Line1\nfunc main() {\u00e9t\u00C9 \ud83d\ude00x ` + strings.Repeat("A", 70) + ` ok\"q`))
	want := []string{"line1", "nfunc", "main", "été", "x", "ok", "q"}
	// \n is an escape: "func" must stand alone
	want[1] = "func"
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	var strs []string
	eachString([]byte(`{"a":"x","b":["y",{"c":"z"}],"d":1,"e" : "w"}`), func(s []byte) { strs = append(strs, string(s)) })
	if !reflect.DeepEqual(strs, []string{"x", "y", "z", "w"}) {
		t.Errorf("strings: %q", strs)
	}
}

// A run reel import wrote names its source in run.started's result: it is
// marked imported whatever its name.
func TestImportedFromSource(t *testing.T) {
	storage := t.TempDir()
	id := "66666666-6666-4666-8666-666666666666"
	r := transcripttest.NewRun(t, transcript.Dir(storage), id, "", time.Date(2026, 6, 8, 8, 0, 0, 0, time.UTC))
	r.Event(transcript.ExchangeEvent{Type: transcript.RunStarted, Payload: &transcript.StepPayload{Name: "shop: Why does CI fail?", Kind: transcript.KindWorkflow,
		Result: map[string]any{"import": map[string]any{"path": "/s.jsonl", "format": "claude-session-log", "size": 1, "sha256": "00"}}}})
	r.Event(transcript.ExchangeEvent{Type: transcript.RunCompleted, Payload: &transcript.StepPayload{Name: "shop: Why does CI fail?", Kind: transcript.KindWorkflow,
		Result: transcript.RunResult{Status: "success"}}})
	r.Close()
	got, err := openIndex(t, storage).Get(context.Background(), id)
	if err != nil || !got.Imported {
		t.Errorf("run %+v (%v): not marked imported", got, err)
	}
}

// A query over MaxQueryBytes or MaxQueryWords is refused, whatever makes up
// its words; one at the limits is parsed.
func TestParseQueryLimits(t *testing.T) {
	words := func(w string, n int) string { return strings.TrimSpace(strings.Repeat(w+" ", n)) }
	for _, q := range []string{
		words("w", MaxQueryWords),
		words(`"a b"`, MaxQueryWords/2),
		"word" + strings.Repeat(" ", MaxQueryBytes-4),
	} {
		if _, err := ParseQuery(q); err != nil {
			t.Errorf("%.40q…: %v", q, err)
		}
	}
	for _, q := range []string{
		words("w", MaxQueryWords+1),
		words(`"a b"`, MaxQueryWords/2+1),
		words("-w", MaxQueryWords) + " x",
		words("p*", MaxQueryWords+1),
		strings.Repeat("x", MaxQueryBytes+1),
		words("lorem", 50000),
	} {
		if _, err := ParseQuery(q); !errors.Is(err, ErrQueryTooLarge) {
			t.Errorf("%.40q… (%d bytes): %v", q, len(q), err)
		}
	}
}
