package engine

import (
	"fmt"
	"strings"
	"time"

	"github.com/reelhq/reel/internal/workflow"
	"github.com/reelhq/reel/transcript"
)

// span is one step execution (one attempt) between its started and
// completed events.
type span struct {
	r       *run
	path    string
	iter    int
	name    string
	kind    string
	attempt int
	start   time.Time
	// st and sc are the state and scope of a state's span (nil for a
	// hook's); hookOf is the path of the step a hook span belongs to.
	st     *workflow.State
	sc     scope
	try    *try // the attempt of a state that retries (nil for others)
	hookOf string
	silent bool // writes nothing: see scope.silent
	// shown is path masked, as the audit trail and the display show it
	// (the transcript keeps the path as it is).
	shown string
}

func joinPath(prefix, name string) string {
	if prefix == "" {
		return name
	}
	return prefix + "." + name
}

func (r *run) startSpan(sc scope, name, kind, command string, attempt int) *span {
	sp := &span{r: r, path: joinPath(sc.prefix, name), iter: sc.iteration, name: name, kind: kind, attempt: attempt, start: time.Now(), silent: sc.silent}
	if sp.silent {
		return sp
	}
	if sc.prefix == "" {
		r.mu.Lock()
		r.lastState = name
		r.mu.Unlock()
	}
	r.open(sp, command)
	return sp
}

// open writes a span's start: the step.started event, the audit entry and
// the display line.
func (r *run) open(sp *span, command string) {
	sp.shown = r.e.mask(sp.path)
	r.record(transcript.ExchangeEvent{
		Type: transcript.StepStarted, Path: sp.path, Iteration: sp.iter,
		Payload: &transcript.StepPayload{Name: sp.name, Kind: sp.kind, Command: command, Attempt: sp.attempt},
	}, func(*transcript.StepPayload) {
		r.audit.write(auditEntry{Event: "step.started", RunID: r.id, Workflow: r.shownName, Path: sp.shown, Iteration: sp.iter, Attempt: sp.attempt, Kind: sp.kind})
		r.show(r.indent() + "▶ " + sp.label())
	})
}

// end closes the span. status is success, failure or cancelled. It
// returns the payload as written, masked, for what the display adds from
// it (nil when the span writes nothing).
func (sp *span) end(status string, result any, errMsg string) *transcript.StepPayload {
	r := sp.r
	if sp.silent {
		return nil
	}
	d := time.Since(sp.start)
	return r.record(transcript.ExchangeEvent{
		Type: transcript.StepCompleted, Path: sp.path, Iteration: sp.iter,
		Payload: &transcript.StepPayload{Name: sp.name, Kind: sp.kind, Attempt: sp.attempt, Error: errMsg, Result: result},
	}, func(p *transcript.StepPayload) {
		r.audit.write(auditEntry{Event: "step.completed", RunID: r.id, Workflow: r.shownName, Path: sp.shown, Iteration: sp.iter, Attempt: sp.attempt, Kind: sp.kind, Status: status, DurationMS: d.Milliseconds(), Error: p.Error})
		mark := "✔"
		switch status {
		case "failure":
			mark = "✘"
		case "cancelled":
			mark = "⊘"
		}
		line := fmt.Sprintf("%s%s %s (%s)", r.indent(), mark, sp.label(), fmtDuration(d))
		if p.Error != "" {
			line += ": " + firstLine(p.Error)
		}
		r.show(line)
	})
}

// label is how the display names the span: its masked path, its iteration
// inside a loop, its attempt when retried.
func (sp *span) label() string {
	l := sp.shown
	at := sp.path
	if sp.hookOf != "" {
		// a loop's own hook runs outside its iterations
		at = sp.hookOf
	}
	if sp.r.loopDepthOf(at) > 0 {
		l += fmt.Sprintf(" [%d]", sp.iter)
	}
	if sp.attempt > 1 {
		l += fmt.Sprintf(" (attempt %d)", sp.attempt)
	}
	return l
}

// loopDepthOf tells whether a path sits inside a loop (its iteration is
// worth showing).
func (r *run) loopDepthOf(path string) int {
	n := 0
	parts := strings.Split(path, ".")
	for _, p := range parts[:len(parts)-1] {
		if s := r.wf.States[p]; s != nil && (s.Type == workflow.TypeForEach || s.Type == workflow.TypeWhile) {
			n++
		}
	}
	return n
}
