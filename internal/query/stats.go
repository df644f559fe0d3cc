package query

import (
	"context"
	"encoding/json"
	"os"
	"runtime"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/reelhq/reel/internal/pricing"
	"github.com/reelhq/reel/internal/rawjson"
	"github.com/reelhq/reel/internal/runs"
	"github.com/reelhq/reel/internal/runstatus"
	"github.com/reelhq/reel/internal/warn"
	"github.com/reelhq/reel/transcript"
)

// Totals add up what a group of step executions consumed.
type Totals struct {
	Runs       int              `json:"runs,omitempty"`
	Steps      int              `json:"steps"`
	Failed     int              `json:"failed"`
	AgentSteps int              `json:"agent_steps"`
	ToolCalls  int              `json:"tool_calls"`
	Usage      transcript.Usage `json:"usage"`
	// CostUSD adds up the reported costs and, where a provider reported
	// none, the price of the tokens (internal/pricing); UnpricedSteps
	// counts the agent steps that used tokens of a model without a price,
	// whose cost is unknown and not in CostUSD.
	CostUSD       float64 `json:"cost_usd"`
	UnpricedSteps int     `json:"unpriced_steps,omitempty"`
	// DurationMS sums the executions' wall time (runs: the runs' time).
	DurationMS int64 `json:"duration_ms"`
}

func (t *Totals) add(o *Totals) {
	t.Runs += o.Runs
	t.Steps += o.Steps
	t.Failed += o.Failed
	t.AgentSteps += o.AgentSteps
	t.ToolCalls += o.ToolCalls
	t.Usage.Add(o.Usage)
	t.CostUSD += o.CostUSD
	t.UnpricedSteps += o.UnpricedSteps
	t.DurationMS += o.DurationMS
}

// RunStats are one transcript's own figures (a sub-workflow's steps count in
// its own transcript, so nothing is counted twice).
type RunStats struct {
	RunID       string `json:"run_id"`
	ParentRunID string `json:"parent_run_id,omitempty"`
	Path        string `json:"path"`
	Workflow    string `json:"workflow"`
	// Status is the last run.completed's status, or, without one, running
	// or interrupted (package runstatus).
	Status  string    `json:"status"`
	Started time.Time `json:"started,omitzero"`
	Totals
}

// Named is a group's name and totals.
type Named struct {
	Name string `json:"name"`
	Totals
}

// Report is the answer of Stats.
type Report struct {
	Total     Totals      `json:"total"`
	Runs      []*RunStats `json:"runs"`
	Steps     []Named     `json:"steps"`
	Providers []Named     `json:"providers"`
	Models    []Named     `json:"models"`
	Tools     []Named     `json:"tools"`
	Warnings  []string    `json:"warnings,omitempty"`
}

// fileStats is one transcript's scan.
type fileStats struct {
	run       RunStats
	steps     map[string]*Totals
	providers map[string]*Totals
	models    map[string]*Totals
	tools     map[string]*Totals
	paths     map[string]string
	warns     warn.List
	err       error
	prices    *pricing.Table
}

func group(m map[string]*Totals, k string) *Totals {
	t := m[k]
	if t == nil {
		if len(m) >= maxGroups {
			// A file naming a million distinct paths or tools must not
			// make a million groups.
			k = otherGroup
			if t = m[k]; t != nil {
				return t
			}
		}
		t = &Totals{}
		m[k] = t
	}
	return t
}

// maxGroups bounds the steps, providers, models and tools counted apart
// (and the steps open at once); the rest count as otherGroup.
const (
	maxGroups  = 100_000
	otherGroup = "(other)"
)

// Stats scans the runs' transcripts, in parallel, and adds up tokens,
// cost, durations and tool calls per run, step path, provider, model and
// tool. Steps whose provider reported no cost are priced from prices (nil:
// reported costs only). What could not be read is in the report's
// warnings, in the runs' order.
func Stats(ctx context.Context, list []*runs.Run, prices *pricing.Table) (*Report, error) {
	results := make([]*fileStats, len(list))
	next := make(chan int)
	var wg sync.WaitGroup
	workers := min(runtime.GOMAXPROCS(0), len(list))
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				results[i] = scanStats(list[i], prices)
			}
		}()
	}
feed:
	for i := range list {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}

	rep := &Report{Runs: make([]*RunStats, 0, len(list))}
	steps := map[string]*Totals{}
	providers := map[string]*Totals{}
	models := map[string]*Totals{}
	tools := map[string]*Totals{}
	merge := func(dst, src map[string]*Totals) {
		for k, v := range src {
			group(dst, k).add(v)
		}
	}
	var warns warn.List
	for _, fs := range results {
		warns.Merge(&fs.warns)
		if fs.err != nil {
			warns.Add("file", fs.err.Error())
			continue
		}
		r := fs.run
		rep.Runs = append(rep.Runs, &r)
		rep.Total.add(&r.Totals)
		merge(steps, fs.steps)
		merge(providers, fs.providers)
		merge(models, fs.models)
		merge(tools, fs.tools)
	}
	rep.Warnings = warns.Strings()
	rep.Steps = sorted(steps, false)
	rep.Providers = sorted(providers, true)
	rep.Models = sorted(models, true)
	rep.Tools = sorted(tools, true)
	return rep, nil
}

// sorted lists groups by name, or by most tool calls / tokens first.
func sorted(m map[string]*Totals, byWeight bool) []Named {
	out := make([]Named, 0, len(m))
	for k, v := range m {
		out = append(out, Named{Name: k, Totals: *v})
	}
	sort.Slice(out, func(i, j int) bool {
		if byWeight {
			wi := out[i].Usage.InputTokens + out[i].Usage.OutputTokens + int64(out[i].ToolCalls)
			wj := out[j].Usage.InputTokens + out[j].Usage.OutputTokens + int64(out[j].ToolCalls)
			if wi != wj {
				return wi > wj
			}
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// statsTypes are the events stats reads; the others are passed over on
// their type alone.
var statsTypes = []transcript.EventType{transcript.ToolCall, transcript.StepStarted, transcript.StepCompleted, transcript.RunStarted, transcript.RunCompleted}

type openKey struct {
	path string
	iter int
}

// scanStats reads one run. The files are read in parallel, so each read
// keeps its damage apart (fileStats.warns) until Stats merges them in order.
func scanStats(run *runs.Run, prices *pricing.Table) *fileStats {
	fs := &fileStats{
		prices:    prices,
		steps:     map[string]*Totals{},
		providers: map[string]*Totals{},
		models:    map[string]*Totals{},
		tools:     map[string]*Totals{},
	}
	path := run.Path
	fs.run.Path = path
	fs.run.Runs = 1
	opts := run.Options()
	opts.Warnings = &fs.warns
	run = runs.Open(path, opts)
	open := map[openKey][]time.Time{}
	var first, last time.Time
	completed := false
	warn := fs.warns.Addf
	for rec, err := range run.Events(runs.EnvelopeOnly, statsTypes...) {
		if err != nil {
			fs.err = err
			return fs
		}
		ev := rec.Envelope()
		if fs.run.RunID == "" {
			fs.run.RunID, fs.run.ParentRunID = ev.RunID, ev.ParentRunID
		}
		if rec.Type == transcript.ToolCall {
			p := fs.intern(ev.Path)
			fs.run.ToolCalls++
			group(fs.steps, p).ToolCalls++
			name := "(unnamed)"
			if v, ok, _ := rawjson.Field(ev.Payload, "name"); ok {
				if s, ok := rawjson.String(v); ok && s != "" {
					name = s
				}
			}
			group(fs.tools, name).ToolCalls++
			continue
		}
		ts := ev.Time()
		if first.IsZero() || ts.Before(first) {
			first = ts
		}
		if ts.After(last) {
			last = ts
		}
		var sp stepFields
		if rec.Type != transcript.StepStarted {
			sp.parse(ev.Payload, rec.Type == transcript.RunStarted || rec.Type == transcript.RunCompleted)
		}
		switch rec.Type {
		case transcript.RunStarted:
			// A resumed run's file starts one span per attempt; the run
			// started with the first and stands where the last ended.
			completed = false
			if fs.run.Started.IsZero() {
				fs.run.Workflow = sp.name
				fs.run.Started = ts
			}
		case transcript.RunCompleted:
			completed = true
			if fs.run.Workflow == "" {
				fs.run.Workflow = sp.name
			}
			fs.run.Status = runstatus.Success
			if sp.err != "" {
				fs.run.Status = runstatus.Failure
			}
			var rr transcript.RunResult
			if sp.result != nil && json.Unmarshal(sp.result, &rr) == nil {
				if rr.Status != "" {
					fs.run.Status = rr.Status
				}
				fs.run.DurationMS = rr.DurationMS
			}
		case transcript.StepStarted:
			k := openKey{fs.intern(ev.Path), ev.Iteration}
			if len(open) >= maxGroups && open[k] == nil {
				warn("%s: more than %d steps open at once; durations of the others are not counted", path, maxGroups)
				continue
			}
			open[k] = append(open[k], ts)
		default:
			fs.stepCompleted(fs.intern(ev.Path), ev.Iteration, ts, &sp, open)
		}
	}
	if fs.run.RunID == "" {
		fs.run.RunID = runIDOf(path)
	}
	if !completed {
		fs.run.Status = run.Status()
	}
	if fs.run.DurationMS == 0 && last.After(first) {
		fs.run.DurationMS = last.Sub(first).Milliseconds()
	}
	return fs
}

func (fs *fileStats) stepCompleted(path string, iteration int, ts time.Time, sp *stepFields, open map[openKey][]time.Time) {
	t := group(fs.steps, path)
	t.Steps++
	fs.run.Steps++
	var d int64
	k := openKey{path, iteration}
	if starts := open[k]; len(starts) > 0 {
		d = ts.Sub(starts[len(starts)-1]).Milliseconds()
		open[k] = starts[:len(starts)-1]
	}
	t.DurationMS += d
	if sp.err != "" {
		t.Failed++
		fs.run.Failed++
	}
	if sp.kind != transcript.KindAgent {
		return
	}
	t.AgentSteps++
	fs.run.AgentSteps++
	if sp.result == nil {
		return
	}
	var ar transcript.AgentResult
	if err := runs.DecodeAgentResult(sp.result, &ar); err != nil {
		fs.warns.Addf("%s: step %s: agent result: %v", fs.run.Path, path, err)
		return
	}
	cost, _, priced := fs.prices.Cost(&ar)
	one := Totals{Steps: 1, AgentSteps: 1, Usage: ar.Usage, CostUSD: cost, DurationMS: d}
	if sp.err != "" {
		one.Failed = 1
	}
	if !priced {
		one.UnpricedSteps = 1
		t.UnpricedSteps++
		fs.run.UnpricedSteps++
	}
	t.Usage.Add(ar.Usage)
	t.CostUSD += cost
	fs.run.Usage.Add(ar.Usage)
	fs.run.CostUSD += cost
	provider, model := ar.Provider, ar.Model
	if provider == "" {
		provider = "(unknown)"
	}
	if model == "" {
		model = "(unknown)"
	}
	group(fs.providers, provider).add(&one)
	group(fs.models, model).add(&one)
}

// intern returns path as a string, allocating each distinct path once per
// transcript.
func (fs *fileStats) intern(b []byte) string {
	if s, ok := fs.paths[string(b)]; ok {
		return s
	}
	s := string(b)
	if fs.paths == nil {
		fs.paths = map[string]string{}
	}
	if len(fs.paths) < maxGroups {
		fs.paths[s] = s
	}
	return s
}

// stepFields are the parts of a step payload stats reads. Strings are
// decoded only when needed: the name of runs, the kind "agent", an error.
type stepFields struct {
	name, kind, err string
	result          []byte
}

func (s *stepFields) parse(payload []byte, wantName bool) {
	rawjson.Each(payload, func(k, v []byte) bool {
		switch string(k) {
		case "name":
			if wantName {
				s.name, _ = rawjson.String(v)
			}
		case "kind":
			if string(v) == `"`+transcript.KindAgent+`"` {
				s.kind = transcript.KindAgent
			}
		case "error":
			if string(v) != `""` && string(v) != "null" {
				s.err, _ = rawjson.String(v)
			}
		case "result":
			if string(v) != "null" {
				s.result = v
			}
		}
		return true
	})
}

func runIDOf(path string) string {
	base := path
	for i := len(base) - 1; i >= 0; i-- {
		if os.IsPathSeparator(base[i]) {
			base = base[i+1:]
			break
		}
	}
	if len(base) > 6 && base[len(base)-6:] == ".jsonl" {
		return base[:len(base)-6]
	}
	return base
}

// FormatMS renders milliseconds as a duration.
func FormatMS(ms int64) string {
	d := time.Duration(ms) * time.Millisecond
	if d >= time.Minute {
		return d.Round(time.Second).String()
	}
	return d.String()
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
