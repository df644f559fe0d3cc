package awfapi

import (
	"slices"
	"time"

	"github.com/reelhq/reel/internal/runs"
	"github.com/reelhq/reel/internal/runstatus"
	"github.com/reelhq/reel/internal/workflow"
	"github.com/reelhq/reel/transcript"
)

// execState is where a run stands, read from its transcript.
type execState struct {
	workflow string
	// status is in reel's vocabulary (package runstatus).
	status  string
	current string
	started time.Time
	updated time.Time
	// attemptSeq is the seq of the last run.started: where the current
	// attempt's events begin.
	attemptSeq uint64
}

// hookNames are the names hooks are recorded under: steps of their own in
// the transcript, none of AWF's.
var hookNames = []string{workflow.HookPre, workflow.HookPost, workflow.HookWorkflowStart, workflow.HookWorkflowEnd, workflow.HookWorkflowError, workflow.HookWorkflowCancel}

// awfStep reports whether a step event is one AWF reports: not a hook, not
// a terminal state.
func awfStepEvent(p *transcript.StepPayload) bool {
	return p != nil && p.Kind != transcript.KindTerminal && !slices.Contains(hookNames, p.Name)
}

// readState reads the transcript at path. Damaged lines are skipped: they
// are reel verify's to report.
func readState(path string, limits transcript.Limits) (execState, error) {
	var st execState
	// Whether a recorder holds the file is asked before reading it: asked
	// after, a run that ended between the two would read as interrupted.
	live, _ := transcript.Writing(path)
	var open []string
	types := []transcript.EventType{transcript.RunStarted, transcript.StepStarted, transcript.StepCompleted, transcript.RunCompleted}
	for rec, err := range runs.Open(path, runs.Options{Limits: limits}).Events(runs.EnvelopeOnly) {
		if err != nil {
			return st, err
		}
		env := rec.Envelope()
		if env == nil {
			continue
		}
		if ts, err := time.Parse(time.RFC3339Nano, string(env.Timestamp)); err == nil {
			st.updated = ts
		}
		if !slices.Contains(types, rec.Type) {
			continue
		}
		ev := rec.Event()
		if ev == nil {
			continue
		}
		p := ev.Step()
		switch ev.Type {
		case transcript.RunStarted:
			if st.started.IsZero() {
				st.started = ev.Timestamp
			}
			if p != nil && p.Name != "" {
				st.workflow = p.Name
			}
			st.attemptSeq, st.status, open = ev.Seq, "", nil
		case transcript.StepStarted:
			if awfStepEvent(p) {
				open = append(open, p.Name)
			}
		case transcript.StepCompleted:
			if awfStepEvent(p) {
				if i := slices.Index(open, p.Name); i >= 0 {
					open = slices.Delete(open, i, i+1)
				}
			}
		case transcript.RunCompleted:
			st.status, _ = runstatus.Completed(p)
			open = nil
		}
	}
	if st.status == "" {
		st.status = runstatus.Interrupted
		if live {
			st.status = runstatus.Running
		}
	}
	if len(open) > 0 && st.status == runstatus.Running {
		st.current = open[len(open)-1]
	}
	return st, nil
}

// awfStatus is a status in AWF's words. A run whose process died
// (interrupted) reads failed, as AWF reads an execution that stopped
// without completing.
func awfStatus(s string) string {
	switch s {
	case runstatus.Success:
		return "completed"
	case runstatus.Failure, runstatus.Interrupted:
		return "failed"
	}
	return s // running, cancelled
}
