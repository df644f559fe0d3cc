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
	// none, the price of the tokens (pricing.Table.Step); it is absent
	// when nothing counted has a known cost. UnpricedSteps counts the
	// agent steps that used tokens of a model without a price, whose cost
	// is unknown and not in CostUSD.
	CostUSD       *float64 `json:"cost_usd,omitempty"`
	UnpricedSteps int      `json:"unpriced_steps,omitempty"`
	// DurationMS sums the executions' wall time (runs: the runs' time).
	DurationMS int64 `json:"duration_ms"`

	cost pricing.Total
}

// Cost is what the group cost, as every reader shows it.
func (t Totals) Cost() pricing.Total { return t.cost }

// settle fills the JSON figures of the cost from the account.
func (t *Totals) settle() {
	t.CostUSD, t.UnpricedSteps = t.cost.USDPtr(), t.cost.Unpriced
}

func (t *Totals) add(o *Totals) {
	t.Runs += o.Runs
	t.Steps += o.Steps
	t.Failed += o.Failed
	t.AgentSteps += o.AgentSteps
	t.ToolCalls += o.ToolCalls
	t.Usage.Add(o.Usage)
	t.cost.Add(o.cost)
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
	// Untimed: an imported recording that gave its events no time
	// (runs.Untimed); Started is left out and its duration is 0, unknown.
	Untimed bool `json:"untimed,omitempty"`
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
// pricing.Default()). What could not be read is in the report's warnings,
// in the runs' order.
func Stats(ctx context.Context, list []*runs.Run, prices *pricing.Table) (*Report, error) {
	if prices == nil {
		prices = pricing.Default()
	}
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
		r.settle()
		rep.Runs = append(rep.Runs, &r)
		rep.Total.add(&r.Totals)
		merge(steps, fs.steps)
		merge(providers, fs.providers)
		merge(models, fs.models)
		merge(tools, fs.tools)
	}
	rep.Total.settle()
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
		v.settle()
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
	s := &statScan{fileStats: fs, open: map[openKey][]time.Time{}, calls: map[openKey]int{}}
	for rec, err := range run.Events(runs.EnvelopeOnly, statsTypes...) {
		if err != nil {
			fs.err = err
			return fs
		}
		s.record(rec)
	}
	if fs.run.RunID == "" {
		fs.run.RunID = runIDOf(path)
	}
	if !s.completed {
		fs.run.Status = run.Status()
	}
	if fs.run.DurationMS == 0 && s.last.After(s.first) {
		fs.run.DurationMS = s.last.Sub(s.first).Milliseconds()
	}
	if fs.run.Untimed {
		fs.run.Started, fs.run.DurationMS = time.Time{}, 0
	}
	return fs
}

// statScan is the state of one file's read beyond what it counts.
type statScan struct {
	*fileStats
	// open holds the start times of the step executions under way.
	open map[openKey][]time.Time
	// calls counts the tool calls of each step execution under way, for
	// its provider and model when it completes.
	calls       map[openKey]int
	first, last time.Time
	completed   bool // the last attempt has its run.completed
}

// record counts one of the statsTypes events.
func (s *statScan) record(rec *runs.Record) {
	fs := s.fileStats
	ev := rec.Envelope()
	if fs.run.RunID == "" {
		fs.run.RunID, fs.run.ParentRunID = ev.RunID, ev.ParentRunID
	}
	if rec.Type == transcript.ToolCall {
		s.toolCall(ev)
		return
	}
	ts := ev.Time()
	if s.first.IsZero() || ts.Before(s.first) {
		s.first = ts
	}
	if ts.After(s.last) {
		s.last = ts
	}
	var sp stepFields
	if rec.Type != transcript.StepStarted {
		sp.parse(ev.Payload, rec.Type == transcript.RunStarted || rec.Type == transcript.RunCompleted)
	}
	switch rec.Type {
	case transcript.RunStarted:
		// A resumed run's file starts one span per attempt; the run
		// started with the first and stands where the last ended.
		s.completed = false
		if fs.run.Started.IsZero() {
			fs.run.Workflow = sp.name
			fs.run.Started = ts
			fs.run.Untimed = sp.result != nil && runs.Untimed(&transcript.StepPayload{Result: json.RawMessage(sp.result)})
		}
	case transcript.RunCompleted:
		s.completed = true
		s.runCompleted(&sp)
	case transcript.StepStarted:
		k := openKey{fs.intern(ev.Path), ev.Iteration}
		if len(s.open) >= maxGroups && s.open[k] == nil {
			fs.warns.Addf("%s: more than %d steps open at once; durations of the others are not counted", fs.run.Path, maxGroups)
			return
		}
		s.open[k] = append(s.open[k], ts)
	default:
		fs.stepCompleted(fs.intern(ev.Path), ev.Iteration, ts, &sp, s.open, s.calls)
	}
}

// toolCall counts a tool call for its step, its step execution and its
// tool.
func (s *statScan) toolCall(ev *runs.Envelope) {
	fs := s.fileStats
	p := fs.intern(ev.Path)
	fs.run.ToolCalls++
	group(fs.steps, p).ToolCalls++
	if k := (openKey{p, ev.Iteration}); len(s.calls) < maxGroups || s.calls[k] > 0 {
		s.calls[k]++
	}
	name := "(unnamed)"
	if v, ok, _ := rawjson.Field(ev.Payload, "name"); ok {
		if s, ok := rawjson.String(v); ok && s != "" {
			name = s
		}
	}
	group(fs.tools, name).ToolCalls++
}

// runCompleted takes the run's workflow, status and duration from its
// run.completed.
func (s *statScan) runCompleted(sp *stepFields) {
	r := &s.run
	if r.Workflow == "" {
		r.Workflow = sp.name
	}
	r.Status = runstatus.Success
	if sp.err != "" {
		r.Status = runstatus.Failure
	}
	var rr transcript.RunResult
	if sp.result != nil && json.Unmarshal(sp.result, &rr) == nil {
		if rr.Status != "" {
			r.Status = rr.Status
		}
		r.DurationMS = rr.DurationMS
	}
}

func (fs *fileStats) stepCompleted(path string, iteration int, ts time.Time, sp *stepFields, open map[openKey][]time.Time, pending map[openKey]int) {
	t := group(fs.steps, path)
	calls := pending[openKey{path, iteration}]
	delete(pending, openKey{path, iteration})
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
	if ar.DurationMS > d {
		// the step's own account, when its events span less (an
		// import of a recording without real times), as reel tree
		t.DurationMS += ar.DurationMS - d
		d = ar.DurationMS
	}
	cost := fs.prices.Step(&ar)
	one := Totals{Steps: 1, AgentSteps: 1, Usage: ar.Usage, DurationMS: d, ToolCalls: calls, cost: cost}
	if sp.err != "" {
		one.Failed = 1
	}
	t.Usage.Add(ar.Usage)
	t.cost.Add(cost)
	fs.run.Usage.Add(ar.Usage)
	fs.run.cost.Add(cost)
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
