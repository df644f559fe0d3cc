package query

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reelhq/reel/internal/exectree"
	"github.com/reelhq/reel/internal/golden"
	"github.com/reelhq/reel/internal/pricing"
	"github.com/reelhq/reel/internal/runs"
	"github.com/reelhq/reel/internal/transcripttest"
	"github.com/reelhq/reel/internal/warn"
	"github.com/reelhq/reel/transcript"
)

func sample(t *testing.T) (dir, root string) {
	dir = t.TempDir()
	return dir, transcripttest.WriteSample(t, dir, transcripttest.Variant{})
}

// open opens the transcripts at paths as the commands do, their warnings
// in one list.
func open(warnings *warn.List, paths ...string) []*runs.Run {
	var list []*runs.Run
	for _, p := range paths {
		list = append(list, runs.Open(p, runs.Options{Warnings: warnings}))
	}
	return list
}

func TestEvents(t *testing.T) {
	dir, root := sample(t)
	child := filepath.Join(dir, transcripttest.ChildID+".jsonl")
	cases := []struct {
		name string
		f    Filter
		p    Projection
		want int64
	}{
		{"tool-names", Filter{Types: []transcript.EventType{transcript.ToolResult}}, Projection{Fields: []string{"payload.name"}}, 6},
		{"path-glob", Filter{PathGlob: "each_file.*", Types: []transcript.EventType{transcript.StepStarted}}, Projection{Fields: []string{"path", "iteration", "payload.kind"}}, 4},
		{"router", Filter{Fidelity: transcript.FidelityRouter}, Projection{Fields: []string{"type", "path"}, JSON: true}, 6},
		{"window", Filter{Since: transcripttest.Epoch.Add(2 * time.Second), Until: transcripttest.Epoch.Add(3 * time.Second)}, Projection{Fields: []string{"seq", "timestamp", "type"}}, 12},
		{"whole-lines", Filter{Types: []transcript.EventType{transcript.RunStarted, transcript.RunCompleted}}, Projection{}, 4},
		{"nested-field", Filter{Types: []transcript.EventType{transcript.MessageUser}}, Projection{Fields: []string{"payload.blocks.1.text", "payload.blocks.0.text"}}, 4},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var out bytes.Buffer
			var warnings warn.List
			n, err := Events(context.Background(), &out, open(&warnings, root, child), c.f, c.p)
			if err != nil {
				t.Fatal(err)
			}
			if warnings.Len() > 0 {
				t.Errorf("warnings: %q", warnings.Strings())
			}
			if n.Matched != c.want {
				t.Errorf("matched %d, want %d", n.Matched, c.want)
			}
			golden.Check(t, filepath.Join("testdata", "events-"+c.name+".txt"), bytes.ReplaceAll(out.Bytes(), []byte(dir), []byte("DIR")))
		})
	}
	bad := []Filter{{PathGlob: "a["}, {Fidelity: "robot"}, {Types: []transcript.EventType{"tool.calls"}}}
	for _, f := range bad {
		if _, err := Events(context.Background(), &bytes.Buffer{}, open(nil, root), f, Projection{}); err == nil {
			t.Errorf("filter %+v: no error", f)
		}
	}
}

// The fast path must select exactly what decoding every line selects.
func TestEventsMatchesDecoding(t *testing.T) {
	_, root := sample(t)
	events, err := transcript.ReadFile(root)
	if err != nil {
		t.Fatal(err)
	}
	since := transcripttest.Epoch.Add(1500 * time.Millisecond)
	for _, typ := range transcript.EventTypes {
		for _, glob := range []string{"", "*", "each_file.*", "outer.*.check"} {
			f := Filter{Types: []transcript.EventType{typ}, PathGlob: glob, Since: since}
			var want int64
			for _, ev := range events {
				ok := ev.Type == typ && !ev.Timestamp.Before(since)
				if glob != "" {
					ok = ok && globMatch(glob, ev.Path)
				}
				if ok {
					want++
				}
			}
			n, err := Events(context.Background(), &bytes.Buffer{}, open(nil, root), f, Projection{})
			if err != nil || n.Matched != want {
				t.Errorf("%s %q: matched %d, decoding finds %d (err %v)", typ, glob, n.Matched, want, err)
			}
		}
	}
}

func globMatch(glob, p string) bool {
	gs, ps := strings.Split(glob, "."), strings.Split(p, ".")
	if len(gs) != len(ps) {
		return false
	}
	for i := range gs {
		if gs[i] != "*" && gs[i] != ps[i] {
			return false
		}
	}
	return true
}

func TestEventsDamaged(t *testing.T) {
	dir, root := sample(t)
	data, _ := os.ReadFile(root)
	lines := strings.SplitAfter(string(data), "\n")
	bad := filepath.Join(dir, "bad.jsonl")
	os.WriteFile(bad, []byte(lines[0]+"{\"seq\":2,\"type\n\x00\xff garbage\n"+lines[1]+lines[2][:30]), 0o600)
	var out bytes.Buffer
	var warnings warn.List
	n, err := Events(context.Background(), &out, open(&warnings, bad, filepath.Join(dir, "missing.jsonl"), root), Filter{Types: []transcript.EventType{transcript.RunStarted, transcript.StepStarted}}, Projection{Fields: []string{"seq"}})
	if err != nil {
		t.Fatal(err)
	}
	if warnings.Len() != 4 {
		t.Errorf("warnings = %q, want 4 (2 malformed, torn, missing)", warnings.Strings())
	}
	events, _ := transcript.ReadFile(root)
	want := int64(2) // run.started and analyze's step.started before the damage
	for _, ev := range events {
		if ev.Type == transcript.RunStarted || ev.Type == transcript.StepStarted {
			want++
		}
	}
	if n.Matched != want {
		t.Errorf("matched %d", n.Matched)
	}
}

func TestStats(t *testing.T) {
	dir, root := sample(t)
	transcripttest.WriteSample(t, dir, transcripttest.Variant{ID: transcripttest.OtherID, ChildID: "44444444-4444-4444-8444-444444444444", LintFails: true})
	rep, err := Stats(context.Background(), open(nil, root, filepath.Join(dir, transcripttest.ChildID+".jsonl")), pricing.Default())
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Warnings) != 0 {
		t.Errorf("warnings %q", rep.Warnings)
	}
	// The run.completed totals of the sample are the sum of its agent steps.
	if u := rep.Total.Usage; u.InputTokens != 2810 || u.OutputTokens != 580 || u.CacheReadTokens != 100 || u.ReasoningTokens != 50 {
		t.Errorf("usage %+v", u)
	}
	if rep.Total.ToolCalls != 6 || rep.Total.AgentSteps != 4 || rep.Total.Failed != 1 {
		t.Errorf("totals %+v", rep.Total)
	}
	var buf bytes.Buffer
	RenderStats(&buf, rep)
	golden.Check(t, filepath.Join("testdata", "stats.txt"), bytes.ReplaceAll(buf.Bytes(), []byte(dir), []byte("DIR")))

	paths, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	all, err := Stats(context.Background(), open(nil, paths...), pricing.Default())
	if err != nil {
		t.Fatal(err)
	}
	if len(all.Runs) != 4 || all.Total.Usage.InputTokens != 2*2810 || all.Total.Failed != 4 {
		t.Errorf("all runs: %d runs, totals %+v", len(all.Runs), all.Total)
	}
	js, _ := json.Marshal(all)
	if !json.Valid(js) {
		t.Error("report is not JSON")
	}
}

func TestStatsDamaged(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "x.jsonl")
	os.WriteFile(p, []byte("{\"seq\":1,\"type\":\"step.completed\",\"payload\":{\"kind\":\"agent\",\"result\":{\"usage\":\"lots\"}}}\nnot json\n{\"seq\":3"), 0o600)
	rep, err := Stats(context.Background(), open(nil, p, filepath.Join(dir, "gone.jsonl")), pricing.Default())
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Warnings) != 4 || len(rep.Runs) != 1 || rep.Runs[0].Status != "interrupted" {
		t.Errorf("warnings %q runs %+v", rep.Warnings, rep.Runs)
	}
}

func TestTools(t *testing.T) {
	dir, root := sample(t)
	pairs, warnings, err := Tools(runs.Open(root, runs.Options{}))
	if err != nil || len(warnings) != 0 {
		t.Fatalf("err %v warnings %q", err, warnings)
	}
	var buf bytes.Buffer
	RenderTools(&buf, pairs)
	golden.Check(t, filepath.Join("testdata", "tools.txt"), buf.Bytes())
	dangling := 0
	for _, p := range pairs {
		if p.Dangling {
			dangling++
			if p.CallID != "toolu_19" {
				t.Errorf("dangling %s", p.CallID)
			}
		}
	}
	if len(pairs) != 6 || dangling != 1 {
		t.Errorf("%d pairs, %d dangling", len(pairs), dangling)
	}
	if pairs[0].DurationMS != 50 || pairs[1].Error != "exit status 1" || pairs[1].Fidelity != transcript.FidelityRouter {
		t.Errorf("pairs[0..1] = %+v %+v", pairs[0], pairs[1])
	}
	// An interrupted run leaves calls without any result.
	idir := t.TempDir()
	ipath := transcripttest.WriteSample(t, idir, transcripttest.Variant{Interrupted: true})
	_ = dir
	if _, _, err := Tools(runs.Open(ipath, runs.Options{})); err != nil {
		t.Fatal(err)
	}
	r := transcripttest.NewRun(t, idir, transcripttest.OtherID, "", transcripttest.Epoch)
	r.Event(transcript.ExchangeEvent{Type: transcript.ToolCall, Path: "a", Payload: &transcript.ToolPayload{Name: "Bash", CallID: "c1", Fidelity: transcript.FidelityAgentEmitted}})
	r.Event(transcript.ExchangeEvent{Type: transcript.ToolResult, Path: "a", Payload: &transcript.ToolPayload{Name: "Bash", CallID: "c2", Fidelity: transcript.FidelityAgentEmitted}})
	r.Close()
	pairs, _, err = Tools(runs.Open(r.Recorder().Path(), runs.Options{}))
	if err != nil || len(pairs) != 2 || !pairs[0].Dangling || !pairs[1].Orphan {
		t.Errorf("unclosed/orphan: %+v %v", pairs, err)
	}
}

func TestDiff(t *testing.T) {
	dir, root := sample(t)
	other := transcripttest.WriteSample(t, dir, transcripttest.Variant{ID: transcripttest.OtherID, ChildID: "44444444-4444-4444-8444-444444444444", LintFails: true, Review: "main.go has a bug."})
	a, err := exectree.Build(runs.Open(root, runs.Options{}), exectree.Options{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := exectree.Build(runs.Open(other, runs.Options{}), exectree.Options{})
	if err != nil {
		t.Fatal(err)
	}
	d := Compare(a, b)
	var buf bytes.Buffer
	RenderDiff(&buf, d)
	golden.Check(t, filepath.Join("testdata", "diff.txt"), buf.Bytes())
	changed := map[string]string{}
	for _, s := range d.Steps {
		if len(s.Changed) > 0 {
			changed[s.Label] = strings.Join(s.Changed, ",")
		}
	}
	want := map[string]string{"each_file.review[0]": "output", "build_all.lint": "status", "build_all": "status"}
	for k, v := range want {
		if changed[k] != v {
			t.Errorf("%s changed %q, want %q (all: %v)", k, changed[k], v, changed)
		}
	}
	if len(changed) != len(want) {
		t.Errorf("changed = %v", changed)
	}
	// The interrupted run lacks a step: it shows as only in a.
	idir := t.TempDir()
	c, _ := exectree.Build(runs.Open(transcripttest.WriteSample(t, idir, transcripttest.Variant{Interrupted: true}), runs.Options{}), exectree.Options{})
	d = Compare(a, c)
	only := 0
	for _, s := range d.Steps {
		if s.B == nil {
			only++
		}
	}
	if only != 0 {
		// verify exists (open) in the interrupted run; nothing is missing.
		t.Errorf("only-in-a = %d", only)
	}
	d = Compare(c, a)
	buf.Reset()
	RenderDiff(&buf, d)
	golden.Check(t, filepath.Join("testdata", "diff-interrupted.txt"), buf.Bytes())
}

// Loops that ran a different number of times: the extra iterations show as
// only in one run, in place.
func TestDiffIterations(t *testing.T) {
	dir := t.TempDir()
	loop := func(id string, n int) *exectree.Tree {
		r := transcripttest.NewRun(t, dir, id, "", transcripttest.Epoch)
		r.Event(transcript.ExchangeEvent{Type: transcript.RunStarted, Payload: &transcript.StepPayload{Name: "w", Kind: "workflow"}})
		r.Start("poll", 0, transcript.KindWhile, 0)
		for i := 0; i < n; i++ {
			r.Command("poll.check", i, 0, "curl -f localhost", 7, "", "")
		}
		r.Complete("poll", 0, transcript.KindWhile, 0, "", nil)
		r.Command("after", 0, 0, "true", 0, "", "")
		r.Event(transcript.ExchangeEvent{Type: transcript.RunCompleted, Payload: &transcript.StepPayload{Name: "w", Kind: "workflow"}})
		r.Close()
		tree, err := exectree.Build(runs.Open(r.Recorder().Path(), runs.Options{}), exectree.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return tree
	}
	d := Compare(loop(transcripttest.RootID, 2), loop(transcripttest.OtherID, 4))
	var marks []string
	for _, s := range d.Steps {
		m := "="
		switch {
		case s.A == nil:
			m = "+"
		case s.B == nil:
			m = "-"
		}
		marks = append(marks, m+s.Label)
	}
	want := "=poll =poll.check[0] =poll.check[1] +poll.check[2] +poll.check[3] =after"
	if got := strings.Join(marks, " "); got != want {
		t.Errorf("alignment\n got %s\nwant %s", got, want)
	}
}

// A step whose provider reported no cost is priced from the table; one
// whose model has no price is unknown, shown as —, never $0.
func TestStatsPricesUnreportedCost(t *testing.T) {
	dir := t.TempDir()
	id := "55555555-5555-4555-8555-555555555555"
	r := transcripttest.NewRun(t, dir, id, "", time.Date(2026, 6, 8, 8, 0, 0, 0, time.UTC))
	r.Event(transcript.ExchangeEvent{Type: transcript.RunStarted, Payload: &transcript.StepPayload{Name: "priced", Kind: transcript.KindWorkflow}})
	agent := func(path, model string, u transcript.Usage) {
		r.Start(path, 0, transcript.KindAgent, 0)
		r.Complete(path, 0, transcript.KindAgent, 0, "", transcript.AgentResult{Provider: "codex", Model: model, Usage: u})
	}
	agent("known", "gpt-5", transcript.Usage{InputTokens: 1_000_000, CacheReadTokens: 400_000, OutputTokens: 100_000, TotalTokens: 1_100_000})
	agent("unknown", "gpt-5.6-luna", transcript.Usage{InputTokens: 10, OutputTokens: 5, TotalTokens: 15})
	r.Event(transcript.ExchangeEvent{Type: transcript.RunCompleted, Payload: &transcript.StepPayload{Name: "priced", Kind: transcript.KindWorkflow,
		Result: transcript.RunResult{Status: "success"}}})
	r.Close()
	rep, err := Stats(context.Background(), open(nil, filepath.Join(dir, id+".jsonl")), pricing.Default())
	if err != nil {
		t.Fatal(err)
	}
	want := (600_000*1.25 + 400_000*0.125 + 100_000*10) / 1e6
	if math.Abs(rep.Total.CostUSD-want) > 1e-9 || rep.Total.UnpricedSteps != 1 {
		t.Errorf("total cost %v (%d unpriced), want %v and 1", rep.Total.CostUSD, rep.Total.UnpricedSteps, want)
	}
	var buf bytes.Buffer
	RenderStats(&buf, rep)
	out := buf.String()
	for _, want := range []string{"cost    $1.8000+\n", "1 agent steps used models without a known price", "gpt-5.6-luna  1           0", "—"} {
		if !strings.Contains(out, want) {
			t.Errorf("stats output lacks %q:\n%s", want, out)
		}
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "gpt-5.6-luna") && strings.Contains(line, "$0.0000") {
			t.Errorf("unpriced model shown as $0: %s", line)
		}
	}
	// Without a table only reported costs count.
	rep, _ = Stats(context.Background(), open(nil, filepath.Join(dir, id+".jsonl")), nil)
	if rep.Total.CostUSD != 0 || rep.Total.UnpricedSteps != 2 {
		t.Errorf("no table: %+v", rep.Total)
	}
}
