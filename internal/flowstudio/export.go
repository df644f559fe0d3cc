package flowstudio

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/reelhq/reel/internal/safefile"
	"github.com/reelhq/reel/transcript"
)

// Run is one reel run to export: its events, and the events of the child
// runs its call_workflow steps started, by child run id.
type Run struct {
	Events   []transcript.ExchangeEvent
	Children map[string][]transcript.ExchangeEvent
}

// ExportResult says what Export wrote.
type ExportResult struct {
	// RunID is the Flow Studio run id (run-YYYYMMDD-HHMMSS-xxxxxx).
	RunID       string
	Flows       []string
	Transcripts []string
	Receipts    []string
}

type exporter struct {
	children []ChildInfo
	dir      string
	runID    string
	res      ExportResult
	events   []fsEvent
	stepIDs  map[string]map[string]bool // flow → used step ids
	flows    map[string]bool
	index    int
}

type fsEvent struct {
	RunID    string  `json:"run_id"`
	TS       string  `json:"ts"`
	Kind     string  `json:"kind"`
	FlowKey  *string `json:"flow_key"`
	StepID   *string `json:"step_id"`
	AgentKey *string `json:"agent_key"`
	Payload  any     `json:"payload"`
}

// Export writes run as a Flow Studio run directory at dir (created if
// needed; existing files of the same names are replaced). See the package
// documentation for how reel paths map to flows, steps and agents.
func Export(dir string, run Run) (*ExportResult, error) {
	evs := run.Events
	if len(evs) == 0 || evs[0].Type != transcript.RunStarted {
		return nil, fmt.Errorf("export flow studio: transcript does not start with run.started")
	}
	start := evs[0].Timestamp
	x := &exporter{dir: dir, stepIDs: map[string]map[string]bool{}, flows: map[string]bool{}}
	x.runID = fmt.Sprintf("run-%s-%s", start.UTC().Format("20060102-150405"), shortID(evs[0].RunID))
	x.res.RunID = x.runID
	if err := safefile.MkdirAll(dir); err != nil {
		return nil, fmt.Errorf("export flow studio: %w", err)
	}
	name := ""
	if sp := evs[0].Step(); sp != nil {
		name = sp.Name
	}
	mainFlow := x.flowKey(name)
	x.event(start, "run_created", mainFlow, "", "", map[string]any{
		"flows": []string{mainFlow}, "backend": "reel", "initiator": "reel export", "reel_run_id": evs[0].RunID,
	})
	x.event(start, "run_started", mainFlow, "", "", map[string]any{"mode": "stepwise", "reel": eventInfo(&evs[0])})
	if err := x.run(mainFlow, "", evs, run.Children, 0); err != nil {
		return nil, err
	}
	last := evs[len(evs)-1]
	status, errText := "running", ""
	var completedAt any
	if last.Type == transcript.RunCompleted {
		status = "succeeded"
		if sp := last.Step(); sp != nil {
			errText = sp.Error
			var rr transcript.RunResult
			if transcript.DecodeResult(sp.Result, &rr) == nil {
				switch rr.Status {
				case "failure":
					status = "failed"
				case "cancelled", "interrupted":
					status = "canceled"
				}
			}
			if errText != "" && status == "succeeded" {
				status = "failed"
			}
		}
		completedAt = fsTime(last.Timestamp)
		x.event(last.Timestamp, "run_completed", mainFlow, "", "", map[string]any{"status": status, "error": nullable(errText), "reel": eventInfo(&last)})
	}
	title := any(nil)
	if name != "" {
		title = name
	}
	params := map[string]any{"reel_run_id": evs[0].RunID}
	if len(x.children) > 0 {
		params["reel_children"] = x.children
	}
	spec := map[string]any{
		"flow_keys": x.res.Flows, "profile_id": nil, "backend": "reel", "initiator": "reel export",
		"params": params,
	}
	meta := map[string]any{
		"id": x.runID, "spec": spec, "status": status,
		"created_at": fsTime(start), "updated_at": fsTime(last.Timestamp), "started_at": fsTime(start),
		"completed_at": completedAt, "error": nullable(errText),
		"tags": []string{"reel", "reel-run:" + evs[0].RunID}, "title": title, "description": nil,
	}
	if err := writeJSON(filepath.Join(dir, "meta.json"), meta); err != nil {
		return nil, err
	}
	if err := writeJSON(filepath.Join(dir, "spec.json"), spec); err != nil {
		return nil, err
	}
	var lines []byte
	for _, e := range x.events {
		b, err := json.Marshal(e)
		if err != nil {
			return nil, fmt.Errorf("export flow studio: events: %w", err)
		}
		lines = append(append(lines, b...), '\n')
	}
	if err := writeFile(filepath.Join(dir, "events.jsonl"), lines); err != nil {
		return nil, err
	}
	return &x.res, nil
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// fsTime writes timestamps in the documented form.
func fsTime(t time.Time) string { return formatTime(t) }

func shortID(runID string) string {
	var b strings.Builder
	for _, c := range strings.ToLower(runID) {
		if ('a' <= c && c <= 'z') || ('0' <= c && c <= '9') {
			b.WriteRune(c)
			if b.Len() == 6 {
				break
			}
		}
	}
	for b.Len() < 6 {
		b.WriteByte('0')
	}
	return b.String()
}

func (x *exporter) flowKey(name string) string {
	base := FlowKey(name)
	k := base
	for n := 2; x.flows[k]; n++ {
		k = fmt.Sprintf("%s_%d", base, n)
	}
	x.flows[k] = true
	x.stepIDs[k] = map[string]bool{}
	x.res.Flows = append(x.res.Flows, k)
	return k
}

func (x *exporter) event(ts time.Time, kind, flow, step, agent string, payload any) {
	e := fsEvent{RunID: x.runID, TS: fsTime(ts), Kind: kind, Payload: payload}
	f := flow
	e.FlowKey = &f
	if step != "" {
		s, a := step, agent
		e.StepID, e.AgentKey = &s, &a
	}
	x.events = append(x.events, e)
}

type stepExec struct {
	flow, stepID, agent, engine string
	started                     *transcript.ExchangeEvent
	path                        string
	lines                       []any
	calls                       map[string]*transcript.ExchangeEvent
	agentic                     bool
	// seq numbers the step's exchange events; callSeq keeps each open
	// call's. A tool line stands for two events (its call and its result)
	// at one place, so the lines carry both numbers and the import puts
	// each event back where it was (reel_seq, reel_call_seq).
	seq     int
	callSeq map[string]int
}

// run exports the steps of one reel run into flow; prefix is the path of
// the call_workflow step that started it (for child runs).
func (x *exporter) run(flow, prefix string, evs []transcript.ExchangeEvent, children map[string][]transcript.ExchangeEvent, depth int) error {
	if depth > 32 {
		return fmt.Errorf("export flow studio: call_workflow nesting deeper than 32")
	}
	// Agent steps' providers are only known at step.completed: look ahead.
	type key struct {
		path string
		iter int
	}
	open := map[key]*stepExec{}
	for i := range evs {
		e := &evs[i]
		k := key{e.Path, e.Iteration}
		switch e.Type {
		case transcript.StepStarted:
			sp := e.Step()
			if sp == nil {
				return fmt.Errorf("export flow studio: event %d: step.started without a step payload", e.Seq)
			}
			path := joinPath(prefix, e.Path)
			s := &stepExec{flow: flow, started: e, path: path, calls: map[string]*transcript.ExchangeEvent{}, callSeq: map[string]int{}}
			s.stepID = x.stepID(flow, StepID(path, e.Iteration, sp.Attempt))
			s.agent = AgentKey(sp.Name)
			s.engine = Engine(providerAhead(evs[i:], e.Path, e.Iteration))
			s.agentic = sp.Kind == transcript.KindAgent
			open[k] = s
			x.index++
			x.event(e.Timestamp, "step_start", flow, s.stepID, s.agent, map[string]any{
				"role": sp.Name, "agents": []string{s.agent}, "step_index": x.index, "engine": s.engine + "-step",
				"reel": ReelInfo{RunID: e.RunID, Path: path, Iteration: e.Iteration, Attempt: sp.Attempt, Kind: sp.Kind, Name: sp.Name, Command: sp.Command},
			})
		case transcript.MessageUser, transcript.MessageAssistant, transcript.ToolCall, transcript.ToolResult:
			s := open[k]
			if s == nil {
				// An exchange outside a step: give it a step of its own.
				s = &stepExec{flow: flow, path: joinPath(prefix, e.Path), calls: map[string]*transcript.ExchangeEvent{}, callSeq: map[string]int{}, agentic: true}
				s.stepID = x.stepID(flow, StepID(s.path, e.Iteration, 0))
				s.agent, s.engine = AgentKey(lastSegment(e.Path)), "agent"
				s.started = &transcript.ExchangeEvent{RunID: e.RunID, Type: transcript.StepStarted, Path: e.Path, Iteration: e.Iteration, Timestamp: e.Timestamp,
					Payload: &transcript.StepPayload{Name: lastSegment(e.Path), Kind: transcript.KindAgent}}
				open[k] = s
				x.event(e.Timestamp, "step_start", flow, s.stepID, s.agent, map[string]any{"agents": []string{s.agent}, "engine": "agent-step",
					"reel": ReelInfo{RunID: e.RunID, Path: s.path, Iteration: e.Iteration, Kind: transcript.KindAgent, Name: lastSegment(e.Path)}})
			}
			s.agentic = true
			if err := s.add(e); err != nil {
				return err
			}
		case transcript.StepCompleted:
			s := open[k]
			if s == nil {
				continue
			}
			delete(open, k)
			if err := x.endStep(s, e); err != nil {
				return err
			}
		case transcript.CallWorkflowStarted:
			if e.ChildRunID == "" {
				continue
			}
			child, ok := children[e.ChildRunID]
			if !ok || len(child) == 0 {
				continue
			}
			name := ""
			if sp := child[0].Step(); sp != nil {
				name = sp.Name
			}
			childFlow := x.flowKey(name)
			info := ChildInfo{RunID: e.ChildRunID, ParentRunID: e.RunID, FlowKey: childFlow, ParentFlowKey: flow,
				CallPath: e.Path, CallIteration: e.Iteration, PathPrefix: joinPath(prefix, e.Path),
				CallStarted: eventInfo(e), RunStarted: eventInfo(&child[0])}
			if s := open[k]; s != nil {
				info.CallStepID = s.stepID
			}
			for j := i + 1; j < len(evs); j++ {
				if evs[j].Type == transcript.CallWorkflowCompleted && evs[j].ChildRunID == e.ChildRunID {
					info.CallCompleted = eventInfo(&evs[j])
					break
				}
			}
			if last := &child[len(child)-1]; last.Type == transcript.RunCompleted {
				info.RunCompleted = eventInfo(last)
			}
			x.children = append(x.children, info)
			if err := x.run(childFlow, info.PathPrefix, child, children, depth+1); err != nil {
				return err
			}
		}
	}
	// Steps still open at the end of the transcript (an interrupted run).
	for _, s := range open {
		if err := x.endStep(s, nil); err != nil {
			return err
		}
	}
	return nil
}

// ChildInfo keeps a child run of a reel export attributable. Flow Studio
// has flows but no nesting, so a child run's steps go into a flow of their
// own and spec.json's params.reel_children lists, per child run and parent
// first, which run and call_workflow step started it, the path prefix its
// steps carry and the run's own boundary events; Import rebuilds the child
// runs from it.
type ChildInfo struct {
	RunID       string `json:"run_id"`
	ParentRunID string `json:"parent_run_id"`
	// FlowKey is the child's flow; ParentFlowKey and CallStepID name the
	// call_workflow step's Flow Studio step.
	FlowKey       string `json:"flow_key"`
	ParentFlowKey string `json:"parent_flow_key"`
	CallStepID    string `json:"call_step_id,omitempty"`
	// CallPath and CallIteration are the call_workflow step's reel path and
	// iteration in the parent run.
	CallPath      string `json:"call_path"`
	CallIteration int    `json:"call_iteration"`
	// PathPrefix is what the child's steps' reel paths are prefixed with
	// in the export: every calling step's path from the root run down.
	PathPrefix    string     `json:"path_prefix"`
	CallStarted   *EventInfo `json:"call_started,omitempty"`
	CallCompleted *EventInfo `json:"call_completed,omitempty"`
	RunStarted    *EventInfo `json:"run_started,omitempty"`
	RunCompleted  *EventInfo `json:"run_completed,omitempty"`
}

// EventInfo is a run- or call-level event of a child run: its time and
// step payload.
type EventInfo struct {
	TS     time.Time       `json:"ts"`
	Name   string          `json:"name,omitempty"`
	Kind   string          `json:"kind,omitempty"`
	Error  string          `json:"error,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
}

func eventInfo(e *transcript.ExchangeEvent) *EventInfo {
	info := &EventInfo{TS: e.Timestamp}
	if sp := e.Step(); sp != nil {
		info.Name, info.Kind, info.Error = sp.Name, sp.Kind, sp.Error
		if !isNull(sp.Result) {
			if raw, err := json.Marshal(sp.Result); err == nil {
				info.Result = raw
			}
		}
	}
	return info
}

func joinPath(prefix, p string) string {
	switch {
	case prefix == "":
		return p
	case p == "":
		return prefix
	}
	return prefix + "." + p
}

func lastSegment(p string) string {
	if i := strings.LastIndexByte(p, '.'); i >= 0 {
		return p[i+1:]
	}
	return p
}

func (x *exporter) stepID(flow, base string) string {
	used := x.stepIDs[flow]
	id := base
	for n := 2; used[id]; n++ {
		id = fmt.Sprintf("%s_%d", base, n)
	}
	used[id] = true
	return id
}

// providerAhead finds the provider the step's step.completed reports.
func providerAhead(evs []transcript.ExchangeEvent, path string, iter int) string {
	for i := 1; i < len(evs); i++ {
		e := &evs[i]
		if e.Type == transcript.StepStarted && e.Path == path && e.Iteration == iter {
			return ""
		}
		if e.Type == transcript.StepCompleted && e.Path == path && e.Iteration == iter {
			var ar transcript.AgentResult
			if sp := e.Step(); sp != nil && transcript.DecodeResult(sp.Result, &ar) == nil {
				return ar.Provider
			}
			return ""
		}
	}
	return ""
}

// endStep writes the step's step_end event and, for an agent step, its
// transcript and receipt. completed is nil for a step the run never ended.
func (x *exporter) endStep(s *stepExec, completed *transcript.ExchangeEvent) error {
	sp := s.started.Step()
	end := s.started.Timestamp
	var cp *transcript.StepPayload
	if completed != nil {
		end = completed.Timestamp
		cp = completed.Step()
	}
	status, errText := "succeeded", ""
	if cp == nil {
		status, errText = "failed", "the run ended before the step completed"
	} else if cp.Error != "" {
		status, errText = "failed", cp.Error
	}
	var ar transcript.AgentResult
	var result json.RawMessage
	if cp != nil && cp.Result != nil {
		raw, err := json.Marshal(cp.Result)
		if err != nil {
			return fmt.Errorf("export flow studio: step %s result: %w", s.path, err)
		}
		result = raw
		_ = json.Unmarshal(raw, &ar)
	}
	duration := ar.DurationMS
	if duration == 0 {
		duration = end.Sub(s.started.Timestamp).Milliseconds()
	}
	info := ReelInfo{RunID: s.started.RunID, Path: s.path, Iteration: s.started.Iteration, Attempt: sp.Attempt, Kind: sp.Kind, Name: sp.Name, Command: sp.Command, Error: errText, Result: result}
	if cp == nil {
		info.Error = ""
	}
	if s.agentic {
		// Tool calls the step never closed still get a line.
		for id, c := range s.calls {
			tp := c.Tool()
			cs := s.callSeq[id]
			l := toolLine{Timestamp: fsTime(end), Role: "tool", ToolName: tp.Name, ToolInput: map[string]any{}, CallID: id,
				CallTimestamp: fsTime(c.Timestamp), Error: "no result: the step ended without a tool result", ReelCallSeq: &cs}
			if tp.Fidelity != transcript.FidelityAgentEmitted {
				l.Fidelity = tp.Fidelity
			}
			if !isNull(tp.Input) {
				l.ToolInput, l.InputWrapped = objectInput(tp.Input)
			}
			s.lines = append(s.lines, l)
		}
		base := s.stepID + "-" + s.agent
		tname := base + "-" + s.engine + ".jsonl"
		var data []byte
		for _, l := range s.lines {
			b, err := json.Marshal(l)
			if err != nil {
				return fmt.Errorf("export flow studio: step %s: %w", s.path, err)
			}
			data = append(append(data, b...), '\n')
		}
		tpath := filepath.Join(x.dir, s.flow, "llm", tname)
		if err := writeFile(tpath, data); err != nil {
			return err
		}
		provider := ar.Provider
		if provider == "" {
			provider = s.engine
		}
		model := ar.Model
		if model == "" {
			model = "unknown"
		}
		receipt := Receipt{
			Engine: s.engine + "-step", Mode: "cli", Provider: provider, Model: model,
			StepID: s.stepID, FlowKey: s.flow, RunID: x.runID, AgentKey: s.agent,
			StartedAt: fsTime(s.started.Timestamp), CompletedAt: fsTime(end), DurationMS: duration, Status: status,
			Tokens:         Tokens{Prompt: ar.Usage.InputTokens, Completion: ar.Usage.OutputTokens, Total: ar.Usage.TotalTokens},
			TranscriptPath: "llm/" + tname, Reel: &info,
		}
		if errText != "" {
			receipt.Error, _ = json.Marshal(errText)
		}
		rpath := filepath.Join(x.dir, s.flow, "receipts", base+".json")
		if err := writeJSON(rpath, receipt); err != nil {
			return err
		}
		x.res.Transcripts = append(x.res.Transcripts, tpath)
		x.res.Receipts = append(x.res.Receipts, rpath)
	}
	if errText != "" {
		x.event(end, "step_error", s.flow, s.stepID, s.agent, map[string]any{"error": errText})
	}
	endPayload := map[string]any{"status": status, "duration_ms": duration, "error": nullable(errText), "engine": s.engine + "-step"}
	if !s.agentic {
		endPayload["reel"] = info
	}
	x.event(end, "step_end", s.flow, s.stepID, s.agent, endPayload)
	return nil
}

func writeJSON(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return writeFile(path, append(data, '\n'))
}

// writeFile replaces path atomically, 0600 in 0700 directories, never
// through a link planted at its name (package safefile).
func writeFile(path string, data []byte) error {
	return safefile.WriteFile(path, data)
}
