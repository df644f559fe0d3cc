package flowstudio

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/reelhq/reel/transcript"
)

// exportParams is what a reel export puts in spec.json's params.
type exportParams struct {
	ReelRunID string      `json:"reel_run_id"`
	Children  []ChildInfo `json:"reel_children"`
}

// splitChildren moves the events of the child runs a reel export listed
// in params.reel_children out of the imported run into runs of their own,
// and puts back the call_workflow.started/completed pair around each in
// its parent's calling step. Events carry their exported run id in RunID
// while the run is read; it is cleared here. A listing that does not fit
// the run (an unknown parent, a duplicate) is reported and the child's
// steps stay in the parent, as in a run without the listing.
func (im *importer) splitChildren(raw json.RawMessage) {
	var params exportParams
	if len(raw) > 0 && string(raw) != "null" {
		if err := json.Unmarshal(raw, &params); err != nil {
			im.warn("spec.json: params: %v; child runs stay in the run", err)
			params = exportParams{ReelRunID: params.ReelRunID}
		}
	}
	im.res.ReelRunID = params.ReelRunID
	known := map[string]*ChildInfo{}
	var infos []*ChildInfo
	if params.ReelRunID != "" {
		for i := range params.Children {
			c := &params.Children[i]
			switch {
			case c.RunID == "" || c.RunID == params.ReelRunID || known[c.RunID] != nil:
				im.warn("spec.json: reel_children[%d]: run id %q missing or repeated; its steps stay in the parent", i, c.RunID)
				continue
			case c.ParentRunID != params.ReelRunID && known[c.ParentRunID] == nil:
				im.warn("spec.json: reel_children[%d]: parent run %q is not in the export; its steps stay in the parent", i, c.ParentRunID)
				continue
			}
			known[c.RunID] = c
			infos = append(infos, c)
		}
	} else if len(params.Children) > 0 {
		im.warn("spec.json: reel_children without reel_run_id; child runs stay in the run")
	}

	buckets := map[string][]transcript.ExchangeEvent{}
	root := params.ReelRunID
	for _, e := range im.res.Events {
		id := e.RunID
		e.RunID = ""
		c := known[id]
		if c == nil {
			buckets[root] = append(buckets[root], e)
			continue
		}
		if e.Path == c.PathPrefix {
			e.Path = ""
		} else if p, ok := strings.CutPrefix(e.Path, c.PathPrefix+"."); ok {
			e.Path = p
		}
		buckets[id] = append(buckets[id], e)
	}
	// Each run's calls, in export order, take its call_workflow steps'
	// executions of the same path and iteration in turn (a retried call
	// started one child per attempt).
	for _, id := range append([]string{root}, childIDs(infos)...) {
		evs := buckets[id]
		taken := map[callKey]int{}
		for _, c := range infos {
			if c.ParentRunID != id {
				continue
			}
			k := callKey{c.CallPath, c.CallIteration}
			evs = im.insertCall(evs, c, taken[k])
			taken[k]++
		}
		buckets[id] = evs
	}
	im.res.Events = buckets[root]
	for _, c := range infos {
		im.res.Children = append(im.res.Children, ChildRun{RunID: c.RunID, ParentRunID: c.ParentRunID, Events: childEvents(c, buckets[c.RunID])})
	}
}

func childIDs(infos []*ChildInfo) []string {
	ids := make([]string, len(infos))
	for i, c := range infos {
		ids[i] = c.RunID
	}
	return ids
}

type callKey struct {
	path string
	iter int
}

// insertCall puts c's call_workflow.started right after the step.started
// of the skip+1-th execution of its calling step and call_workflow.completed
// right before that execution's step.completed.
func (im *importer) insertCall(evs []transcript.ExchangeEvent, c *ChildInfo, skip int) []transcript.ExchangeEvent {
	start := -1
	for i := range evs {
		if evs[i].Type == transcript.StepStarted && evs[i].Path == c.CallPath && evs[i].Iteration == c.CallIteration {
			if skip == 0 {
				start = i
				break
			}
			skip--
		}
	}
	if start < 0 {
		im.warn("child run %s: its call_workflow step %s (iteration %d) is not in the parent run", c.RunID, c.CallPath, c.CallIteration)
		return evs
	}
	end := -1
	for i := start + 1; i < len(evs); i++ {
		if evs[i].Type == transcript.StepCompleted && evs[i].Path == c.CallPath && evs[i].Iteration == c.CallIteration {
			end = i
			break
		}
	}
	// The recorded time is kept when it fits between the neighbours the
	// event gets.
	call := func(typ transcript.EventType, info *EventInfo, lo, hi time.Time) transcript.ExchangeEvent {
		e := transcript.ExchangeEvent{Type: typ, Path: c.CallPath, Iteration: c.CallIteration, ChildRunID: c.RunID, Timestamp: lo,
			Payload: &transcript.StepPayload{Kind: transcript.KindCallWorkflow}}
		if info != nil {
			sp := e.Payload.(*transcript.StepPayload)
			sp.Name, sp.Error = info.Name, info.Error
			if len(info.Result) > 0 {
				sp.Result = info.Result
			}
			e.Timestamp = clampTime(info.TS, lo, hi)
		}
		return e
	}
	out := make([]transcript.ExchangeEvent, 0, len(evs)+2)
	out = append(out, evs[:start+1]...)
	next := evs[start].Timestamp
	if start+1 < len(evs) {
		next = evs[start+1].Timestamp
	}
	started := call(transcript.CallWorkflowStarted, c.CallStarted, evs[start].Timestamp, next)
	out = append(out, started)
	if end < 0 {
		// The calling step never completed (an interrupted run): the call
		// stays open, as the engine would have left it.
		return append(out, evs[start+1:]...)
	}
	out = append(out, evs[start+1:end]...)
	if c.CallCompleted != nil {
		lo := evs[end-1].Timestamp
		if started.Timestamp.After(lo) {
			lo = started.Timestamp
		}
		out = append(out, call(transcript.CallWorkflowCompleted, c.CallCompleted, lo, evs[end].Timestamp))
	}
	return append(out, evs[end:]...)
}

// clampTime keeps an inserted event's recorded time unless it would put the
// transcript's times out of order.
func clampTime(t, lo, hi time.Time) time.Time {
	if t.IsZero() || t.Before(lo) {
		return lo
	}
	if t.After(hi) {
		return hi
	}
	return t
}

// childEvents wraps a child run's steps in its run.started and
// run.completed.
func childEvents(c *ChildInfo, steps []transcript.ExchangeEvent) []transcript.ExchangeEvent {
	first, last := time.Time{}, time.Time{}
	if len(steps) > 0 {
		first, last = steps[0].Timestamp, steps[len(steps)-1].Timestamp
	} else if c.RunStarted != nil {
		first, last = c.RunStarted.TS, c.RunStarted.TS
	}
	started := &transcript.StepPayload{Name: c.FlowKey, Kind: transcript.KindWorkflow}
	ts := first
	if c.RunStarted != nil {
		if c.RunStarted.Name != "" {
			started.Name = c.RunStarted.Name
		}
		if !c.RunStarted.TS.IsZero() && (first.IsZero() || c.RunStarted.TS.Before(first)) {
			ts = c.RunStarted.TS
		}
	}
	out := make([]transcript.ExchangeEvent, 0, len(steps)+2)
	out = append(out, transcript.ExchangeEvent{Type: transcript.RunStarted, Timestamp: ts, Payload: started})
	out = append(out, steps...)
	// A child the export saw no end of (its run was killed) ends as
	// interrupted, as Import ends a Flow Studio run still "running".
	sp := &transcript.StepPayload{Name: started.Name, Kind: transcript.KindWorkflow, Result: transcript.RunResult{Status: "interrupted"}}
	end := last
	if r := c.RunCompleted; r != nil {
		sp.Error, sp.Result = r.Error, nil
		if r.Name != "" {
			sp.Name = r.Name
		}
		if len(r.Result) > 0 {
			sp.Result = r.Result
		}
		if r.TS.After(end) {
			end = r.TS
		}
	}
	if end.Before(ts) {
		end = ts
	}
	return append(out, transcript.ExchangeEvent{Type: transcript.RunCompleted, Timestamp: end, Payload: sp})
}
