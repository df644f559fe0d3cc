package flowstudio

import (
	"encoding/json"

	"github.com/reelhq/reel/transcript"
)

func strp(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

type stepEventPayload struct {
	Status     string          `json:"status"`
	DurationMS *int64          `json:"duration_ms"`
	Error      json.RawMessage `json:"error"`
	Reel       *ReelInfo       `json:"reel"`
}

// executions pairs step_start and step_end events. lastExec maps an
// artifact key to its last execution.
func (im *importer) executions(events []Event) ([]*execution, map[artKey]int) {
	var execs []*execution
	last := map[artKey]int{}
	for _, e := range events {
		if e.Kind != "step_start" {
			continue
		}
		k := artKey{strp(e.FlowKey), strp(e.StepID), strp(e.AgentKey)}
		last[k] = len(execs)
		execs = append(execs, &execution{key: k})
	}
	return execs, last
}

func (im *importer) emitExecutions(events []Event, execs []*execution, lastExec map[artKey]int, arts map[artKey]*artifact) {
	next := 0
	open := map[artKey][]int{}
	var order []int
	for n, e := range events {
		ts, err := ParseTime(e.TS)
		if err != nil {
			im.warn("events.jsonl: event %d (%s): %v", n+1, e.Kind, err)
		}
		k := artKey{strp(e.FlowKey), strp(e.StepID), strp(e.AgentKey)}
		var p stepEventPayload
		if len(e.Payload) > 0 {
			_ = json.Unmarshal(e.Payload, &p)
		}
		switch e.Kind {
		case "step_start":
			x := execs[next]
			next++
			x.start, x.reel = ts, p.Reel
			open[k] = append(open[k], next-1)
			order = append(order, next-1)
			im.startStep(x, im.artifactFor(x, lastExec, arts, next-1))
		case "step_end", "step_error":
			idx := open[k]
			if len(idx) == 0 {
				if e.Kind == "step_end" {
					im.warn("events.jsonl: event %d: step_end for %s/%s without step_start", n+1, k.flow, k.step)
				}
				continue
			}
			x := execs[idx[len(idx)-1]]
			if t := rawErrorText(p.Error); t != "" {
				x.errText = t
			}
			if e.Kind == "step_error" {
				if x.status == "" {
					x.status = "failed"
				}
				continue
			}
			open[k] = idx[:len(idx)-1]
			x.end, x.ended, x.duration = ts, true, p.DurationMS
			if p.Status != "" {
				x.status = p.Status
			}
			if p.Reel != nil && x.reel != nil {
				// A non-agent step's outcome travels in its step_end.
				x.reel.Result, x.reel.Error = p.Reel.Result, p.Reel.Error
			}
			im.endStep(x, im.artifactFor(x, lastExec, arts, idx[len(idx)-1]))
		}
	}
	// Steps that never ended close at the end, innermost first.
	for i := len(order) - 1; i >= 0; i-- {
		x := execs[order[i]]
		if x.ended {
			continue
		}
		x.ended = true
		if x.errText == "" {
			x.errText = "no step_end: the run stopped before the step finished"
		}
		x.status = "failed"
		im.endStep(x, im.artifactFor(x, lastExec, arts, order[i]))
	}
}

func (im *importer) artifactFor(x *execution, lastExec map[artKey]int, arts map[artKey]*artifact, idx int) *artifact {
	if lastExec[x.key] != idx {
		return nil
	}
	return arts[x.key]
}

// step is an execution being emitted.
type stepState struct {
	path string
	iter int
	name string
	kind string
	att  int
}

func (im *importer) stepOf(x *execution, a *artifact) stepState {
	ri := x.reel
	if a != nil && a.receipt != nil && a.receipt.Reel != nil {
		ri = a.receipt.Reel
		x.reel = ri
	}
	if ri != nil && ri.Path != "" {
		kind := ri.Kind
		if kind == "" {
			kind = transcript.KindAgent
		}
		name := ri.Name
		if name == "" {
			name = ri.Path
		}
		return stepState{path: ri.Path, iter: max(ri.Iteration, 0), name: name, kind: kind, att: max(ri.Attempt, 0)}
	}
	step := x.key.step
	if step == "" {
		step = "step"
	}
	path := step
	if x.key.flow != "" {
		path = x.key.flow + "." + step
	}
	return stepState{path: path, name: step, kind: transcript.KindAgent}
}

func (im *importer) startStep(x *execution, a *artifact) {
	s := im.stepOf(x, a)
	if x.reel == nil || x.reel.Path == "" {
		s.iter = im.iters[s.path]
		im.iters[s.path]++
		x.reel = &ReelInfo{Path: s.path, Iteration: s.iter, Name: s.name, Kind: s.kind}
	}
	im.run = x.reel.RunID
	sp := &transcript.StepPayload{Name: s.name, Kind: s.kind, Attempt: s.att}
	if x.reel.Command != "" {
		sp.Command = x.reel.Command
	}
	im.emit(x.start, transcript.StepStarted, s.path, s.iter, sp)
}

// emitStep emits a whole step from its artifacts (no step events).
func (im *importer) emitStep(x *execution, a *artifact) {
	x.start = im.artifactStart(a)
	im.startStep(x, a)
	if a.receipt != nil {
		x.status = a.receipt.Status
		if t, err := ParseTime(a.receipt.CompletedAt); err == nil {
			x.end = t
		}
	}
	im.endStep(x, a)
}

func (im *importer) endStep(x *execution, a *artifact) {
	s := im.stepOf(x, a)
	s.path, s.iter = x.reel.Path, max(x.reel.Iteration, 0)
	im.run = x.reel.RunID
	info := &StepInfo{FlowKey: x.key.flow, StepID: x.key.step, AgentKey: x.key.agent, Status: x.status}
	var ar transcript.AgentResult
	var usageFromLines *transcript.Usage
	errText := x.errText
	if a != nil {
		a.used = true
		info.ReceiptFile, info.TranscriptFile, info.Engine = a.receiptFile, a.transcriptFile, a.engine
		if a.transcriptFile != "" {
			usageFromLines = im.emitTranscript(a, s, info, &ar, &errText)
		}
		if r := a.receipt; r != nil {
			info.Engine, info.Mode, info.Routing = r.Engine, r.Mode, r.Routing
			info.Status = r.Status
			ar.Provider = r.Provider
			if ar.Provider == "" {
				ar.Provider = providerOf(r.Engine)
			}
			ar.Model = r.Model
			ar.Usage = transcript.Usage{InputTokens: r.Tokens.Prompt, OutputTokens: r.Tokens.Completion, TotalTokens: r.Tokens.Total}
			ar.DurationMS = r.DurationMS
			if t := rawErrorText(r.Error); t != "" {
				errText = t
			}
			if r.Status == "failed" && errText == "" {
				errText = "step failed"
			}
			if r.Tokens == (Tokens{}) && usageFromLines != nil {
				ar.Usage = *usageFromLines
			}
		} else if usageFromLines != nil {
			ar.Usage = *usageFromLines
		}
	}
	if ar.Provider == "" && a != nil {
		ar.Provider = a.engine
	}
	if ar.DurationMS == 0 && x.duration != nil {
		ar.DurationMS = *x.duration
	}
	if x.status == "failed" && errText == "" {
		errText = "step failed"
	}
	sp := &transcript.StepPayload{Name: s.name, Kind: s.kind, Attempt: s.att, Error: errText}
	switch {
	case x.reel != nil && len(x.reel.Result) > 0:
		sp.Result = x.reel.Result
		sp.Error = x.reel.Error
		if s.kind == transcript.KindAgent {
			var r transcript.AgentResult
			if transcript.DecodeResult(x.reel.Result, &r) == nil {
				im.total.Add(r.Usage)
			}
		}
	case s.kind == transcript.KindAgent:
		sp.Result = StepResult{AgentResult: ar, FlowStudio: info}
		im.total.Add(ar.Usage)
	default:
		if x.reel != nil && x.reel.Error != "" {
			sp.Error = x.reel.Error
		}
	}
	if sp.Error != "" {
		im.failed = true
	}
	end := x.end
	if end.IsZero() {
		end = im.last
	}
	im.emit(end, transcript.StepCompleted, s.path, s.iter, sp)
}
