package index

import (
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"time"

	"github.com/reelhq/reel/internal/importer"
	"github.com/reelhq/reel/internal/pricing"
	"github.com/reelhq/reel/internal/rawjson"
	"github.com/reelhq/reel/internal/runs"
	"github.com/reelhq/reel/internal/runstatus"
	"github.com/reelhq/reel/transcript"
)

// Run is one run as the index knows it: what the run list shows and filters
// on. Everything is derived from the run's transcript.
type Run struct {
	RunID       string `json:"run_id"`
	ParentRunID string `json:"parent_run_id,omitempty"`
	Workflow    string `json:"workflow"`
	// Imported is set for sessions brought in by reel import.
	Imported bool `json:"imported,omitempty"`
	// Status is success, failure, cancelled, interrupted or running
	// (package runstatus).
	Status   string `json:"status"`
	ExitCode *int   `json:"exit_code,omitempty"`
	// Started is the run's first event's time; the runs are listed by it.
	Started   time.Time `json:"started"`
	LastEvent time.Time `json:"last_event"`
	// DurationMS is the run's own account when it ended, else the time
	// from its start to its last event.
	DurationMS int64 `json:"duration_ms"`
	// Untimed is set for an imported recording that gave none of its
	// events a time (runs.Untimed): its start and duration are unknown.
	// Started and LastEvent hold the source file's modification time,
	// which orders it among the runs; in JSON, started, last_event and
	// duration_ms are left out.
	Untimed bool `json:"untimed,omitempty"`
	// Tokens is Usage.TotalTokens, at the top level for jq. Usage and
	// CostUSD are the run's with its child runs' (sub-workflows, imported
	// subagents), as reel tree counts them (rollup.go).
	Tokens int64            `json:"tokens"`
	Usage  transcript.Usage `json:"usage"`
	// CostUSD is what the run cost (pricing.RunTotal), absent when
	// nothing in it has a known cost; UnpricedSteps counts its steps and
	// its children's of a model without a price, which CostUSD leaves out.
	CostUSD       *float64 `json:"cost_usd,omitempty"`
	UnpricedSteps int      `json:"unpriced_steps,omitempty"`
	Error         string   `json:"error,omitempty"`
	// Steps counts the run's steps where it stands, and FailedSteps those
	// of them that failed, by the rule reel status counts them with
	// (runstatus.StepCounts: a step's retries, and the executions a
	// resume ran again, count once, by the outcome that stands).
	// ToolCalls counts tool.call events, ToolErrors tool results with an
	// error.
	Steps       int      `json:"steps"`
	FailedSteps int      `json:"failed_steps,omitempty"`
	ToolCalls   int      `json:"tool_calls"`
	ToolErrors  int      `json:"tool_errors,omitempty"`
	Events      int      `json:"events"`
	Providers   []string `json:"providers,omitempty"`
	Models      []string `json:"models,omitempty"`
	Path        string   `json:"path"`
}

// Cost is what the run cost, as every reader shows it.
func (r Run) Cost() pricing.Total { return pricing.Of(r.CostUSD, r.UnpricedSteps) }

// MarshalJSON leaves an untimed run's times out: what is not known is
// absent, never a time that looks like one.
func (r Run) MarshalJSON() ([]byte, error) {
	type plain Run
	if !r.Untimed {
		return json.Marshal(plain(r))
	}
	return json.Marshal(struct {
		plain
		Started    *time.Time `json:"started,omitempty"`
		LastEvent  *time.Time `json:"last_event,omitempty"`
		DurationMS *int64     `json:"duration_ms,omitempty"`
	}{plain: plain(r)})
}

// fold is the state of reading one transcript, kept in the index between
// incremental updates so that new lines are added to it without reading
// the file again from the start.
type fold struct {
	RunID       string `json:"run_id"`
	ParentRunID string `json:"parent_run_id,omitempty"`
	Workflow    string `json:"workflow"`
	// Imported: run.started names the run's import source (result.import).
	Imported bool `json:"imported,omitempty"`
	// Untimed: its events carry no time of their own (runs.Untimed).
	Untimed bool  `json:"untimed,omitempty"`
	Started int64 `json:"started"`
	Last    int64 `json:"last"`
	Ended   bool  `json:"ended"`
	// Status, ExitCode, RunDurationMS, RunUsage and RunCost come from the
	// last run.completed; they are cleared by a later run.started (resume).
	Status        string            `json:"status,omitempty"`
	ExitCode      *int              `json:"exit_code,omitempty"`
	RunDurationMS int64             `json:"run_duration_ms,omitempty"`
	RunUsage      *transcript.Usage `json:"run_usage,omitempty"`
	RunCost       *float64          `json:"run_cost,omitempty"`
	Error         string            `json:"error,omitempty"`
	// AgentUsage and AgentCost add up the agent steps' results (AgentCost
	// the costs providers reported), for runs whose run.completed has no
	// totals (yet). Unreported adds up, by model, the usage of the agent
	// steps whose provider reported no cost: it is priced when the row is
	// written (cost), so the fold does not depend on a price table.
	AgentUsage transcript.Usage      `json:"agent_usage"`
	AgentCost  *float64              `json:"agent_cost,omitempty"`
	Unreported map[string]unreported `json:"unreported,omitempty"`
	// Steps decides how the steps count (Run.Steps, Run.FailedSteps).
	Steps      runstatus.Tally `json:"steps"`
	ToolCalls  int             `json:"tool_calls"`
	ToolErrors int             `json:"tool_errors"`
	Events     int             `json:"events"`
	LastSeq    uint64          `json:"last_seq"`
	Providers  []string        `json:"providers,omitempty"`
	Models     []string        `json:"models,omitempty"`
}

// line folds one complete transcript line in. env is reused between calls.
func (f *fold) line(env *runs.Envelope, line []byte) error {
	if err := env.Parse(line); err != nil {
		return err
	}
	f.Events++
	if f.RunID == "" {
		f.RunID, f.ParentRunID = env.RunID, env.ParentRunID
	}
	if v, ok, _ := rawjson.Field(line, "seq"); ok {
		var n uint64
		for _, c := range v {
			if c < '0' || c > '9' {
				n = 0
				break
			}
			n = n*10 + uint64(c-'0')
		}
		if n > f.LastSeq {
			f.LastSeq = n
		}
	}
	ts := env.Time()
	if !ts.IsZero() {
		us := ts.UnixMicro()
		if f.Started == 0 {
			f.Started = us
		}
		f.Last = max(f.Last, us)
	}
	switch transcript.EventType(env.Type) {
	case transcript.ToolCall:
		f.ToolCalls++
	case transcript.ToolResult:
		if v, ok, _ := rawjson.Field(env.Payload, "error"); ok {
			if s, _ := rawjson.String(v); s != "" {
				f.ToolErrors++
			}
		}
	case transcript.StepStarted:
		attempt := 0
		if v, ok, _ := rawjson.Field(env.Payload, "attempt"); ok {
			attempt, _ = strconv.Atoi(string(v))
		}
		f.Steps.StepStarted(string(env.Path), env.Iteration, attempt)
	case transcript.RunStarted, transcript.RunCompleted, transcript.StepCompleted:
		ev, err := transcript.DecodeEvent(line)
		if err != nil && !errors.Is(err, transcript.ErrUnknownBlockType) {
			return err
		}
		f.event(&ev)
	}
	return nil
}

func (f *fold) event(ev *transcript.ExchangeEvent) {
	sp := ev.Step()
	switch ev.Type {
	case transcript.RunStarted:
		if sp != nil && f.Workflow == "" {
			f.Workflow = sp.Name
		}
		if src, imported := importer.Imported(ev); imported {
			f.Imported = true
			f.Untimed = src != nil && src.Untimed
		}
		if !ev.Timestamp.IsZero() && f.Started == 0 {
			f.Started = ev.Timestamp.UnixMicro()
		}
		var in transcript.RunInput
		known := sp != nil && sp.Input != nil && transcript.DecodeResult(sp.Input, &in) == nil
		f.Steps.RunStarted(in.Reused, known)
		// A resumed run opens a new span: until its run.completed the
		// run has not ended.
		f.Ended, f.Status, f.ExitCode, f.RunUsage, f.RunCost, f.Error = false, "", nil, nil, nil, ""
	case transcript.RunCompleted:
		st, rr := runstatus.Completed(sp)
		f.Ended, f.Status = true, st
		ec := rr.ExitCode
		f.ExitCode = &ec
		f.RunDurationMS = rr.DurationMS
		if rr.Usage != (transcript.Usage{}) {
			u := rr.Usage
			f.RunUsage = &u
		}
		f.RunCost = rr.CostUSD
		if sp != nil {
			f.Error = sp.Error
			if f.Workflow == "" {
				f.Workflow = sp.Name
			}
		}
	case transcript.StepCompleted:
		if sp == nil {
			return
		}
		f.Steps.StepCompleted(ev.Path, ev.Iteration, sp.Error)
		if sp.Kind != transcript.KindAgent || sp.Result == nil {
			return
		}
		var ar transcript.AgentResult
		if transcript.DecodeResult(sp.Result, &ar) != nil {
			return
		}
		f.AgentUsage.Add(ar.Usage)
		used := ar.Usage != (transcript.Usage{})
		switch {
		case ar.CostUSD != nil && (*ar.CostUSD != 0 || used):
			sum := *ar.CostUSD
			if f.AgentCost != nil {
				sum += *f.AgentCost
			}
			f.AgentCost = &sum
		case used:
			// priced when the row is written (fold.own), as
			// pricing.Table.Step would price it
			if f.Unreported == nil {
				f.Unreported = map[string]unreported{}
			}
			u := f.Unreported[ar.Model]
			u.Usage.Add(ar.Usage)
			u.Steps++
			f.Unreported[ar.Model] = u
		}
		f.Providers = addSorted(f.Providers, ar.Provider)
		f.Models = addSorted(f.Models, ar.Model)
	}
}

// unreported is what the steps of one model whose provider reported no
// cost used.
type unreported struct {
	Usage transcript.Usage `json:"usage"`
	Steps int              `json:"steps"`
}

func addSorted(list []string, s string) []string {
	if s == "" {
		return list
	}
	i, found := slices.BinarySearch(list, s)
	if found {
		return list
	}
	return slices.Insert(list, i, s)
}

// durationMS is the run's own account when it ended, else the span of its
// events; 0 for an untimed run, whose duration is unknown.
func (f *fold) durationMS() int64 {
	if f.Untimed {
		return 0 // unknown
	}
	if f.Ended && f.RunDurationMS > 0 {
		return f.RunDurationMS
	}
	return max(0, (f.Last-f.Started)/1000)
}

// imported reports whether the run came from reel import
// (importer.Imported).
func (f *fold) imported() bool { return f.Imported }
