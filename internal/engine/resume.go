package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/reelhq/reel/internal/rerun"
	"github.com/reelhq/reel/internal/runstatus"
	"github.com/reelhq/reel/internal/workflow"
	"github.com/reelhq/reel/transcript"
	"github.com/reelhq/reel/transcript/secrets"
)

// A resume continues a run from its transcript (docs/decisions.md §11): it appends
// to the run's own file a new run.started (attempt N), the steps not yet
// completed, and one run.completed.
//
// Which recorded results it keeps is decided by walking the workflow as
// the run would, before anything runs: the plan walk. It follows the flow
// over the recorded executions, each state taking the next recorded visit
// at its path and iteration (its retry attempts together), keeps every
// visit that completed and that the run went past (a success, or a failure
// the flow handled), and stops a thread of the flow at the first state it
// cannot keep: the resume point. Parallel branches are threads of their
// own, so a finished branch is kept while an unfinished one runs again. A
// loop, parallel block or whose every step is kept is passed through
// silently; one with work left is run again, keeping what finished inside.
// A call_workflow step whose child did not finish resumes the child in the
// child's own file (or takes its result, when the child had succeeded).
// Terminal states always run.
//
// The kept executions are named in run.started (RunInput.Reused) so that a
// later resume of the same file knows what this one stood on. The walk
// that then runs keeps exactly those; the rest runs for real. Kept steps
// write nothing to the transcript (their record is earlier in the file) and
// nothing to the audit trail; the display shows them with ↷.
//
// A resume refuses, with every reason, when the recorded steps no longer
// describe the workflow: a kept step's state changed (its digest differs
// from the one recorded at run.started) or became another kind of step.
// A changed flow (on_success, transitions, a new state) is followed: the
// walk goes where the workflow now says.

// ResumeOptions parameterize a resume.
type ResumeOptions struct {
	// Inputs override recorded inputs (as text, like RunOptions.Inputs).
	Inputs map[string]string
	// From, when set, runs again from the latest recorded execution of
	// this state (a state name or a dot path): it and every execution
	// recorded after it run again.
	From string
	// OnStart, Pause and Turns are as in RunOptions.
	OnStart func(runID, transcriptPath string)
	Pause   PauseFunc
	Turns   TurnFunc
	// ReplayFrom is the recorded run a replay (run --replay-from) took its
	// agent replies from, loaded with its exchange: a resumed replay goes
	// on taking them from it. A replay is refused without it, rather than
	// calling the providers. AllowPromptDrift is as in RunOptions.
	ReplayFrom       *rerun.Run
	AllowPromptDrift bool
}

// ResumeError says why a run cannot be resumed.
type ResumeError struct {
	RunID   string
	Reasons []string
	// Hint says what the user can do instead.
	Hint string
}

func (e *ResumeError) Error() string {
	msg := fmt.Sprintf("cannot resume run %s: %s", e.RunID, strings.Join(e.Reasons, "; "))
	if e.Hint != "" {
		msg += " (" + e.Hint + ")"
	}
	return msg
}

// Resume continues the run rec records, with wf (the run's workflow, read
// again). The error is set when the run cannot be resumed (*ResumeError,
// *InputError, an unwritable storage); once it starts, a resume always ends
// with a report like Run.
func (e *Engine) Resume(ctx context.Context, wf *workflow.Workflow, rec *rerun.Run, opts ResumeOptions) (*Report, error) {
	if err := resumable(wf, rec); err != nil {
		return nil, err
	}
	if from := rec.Input().ReplayFrom; from != "" && (opts.ReplayFrom == nil || opts.ReplayFrom.RunID != from) {
		return nil, &ResumeError{RunID: rec.RunID, Reasons: []string{fmt.Sprintf("it replays run %s, which is not given", from)},
			Hint: "a resumed replay takes its agent replies from the same recording"}
	}
	inputs, err := resumeInputs(wf, rec, opts.Inputs)
	if err != nil {
		return nil, err
	}
	file, _ := filepath.Abs(wf.File)
	stack := []string{file}
	p, err := e.prepare(ctx, wf, rec, inputs, opts.From, 0, stack)
	if err != nil {
		return nil, err
	}
	audit, err := openAudit(e.Storage)
	if err != nil {
		return nil, err
	}
	defer audit.close()
	r, err := e.newRun(wf, rec.RunID, "", inputs, 0, stack, audit)
	if err != nil {
		return nil, err
	}
	r.lifecycle = lifecycle{attempt: rec.Attempts() + 1, ran: rec.Ran(), past: p, pause: opts.Pause, turns: opts.Turns, onStart: opts.OnStart}
	if opts.ReplayFrom != nil {
		r.replay = newReplaySource(opts.ReplayFrom, opts.AllowPromptDrift)
	}
	return r.execute(ctx), nil
}

// resumable refuses runs there is nothing to continue in.
func resumable(wf *workflow.Workflow, rec *rerun.Run) error {
	refuse := func(hint, format string, args ...any) error {
		return &ResumeError{RunID: rec.RunID, Reasons: []string{fmt.Sprintf(format, args...)}, Hint: hint}
	}
	switch {
	case rec.Status == runstatus.Running:
		return refuse("", "it is still running (a recorder holds its transcript)")
	case rec.Status == runstatus.Success:
		return refuse("reel run starts it again", "it succeeded: there is nothing to resume")
	case rec.ParentRunID != "":
		return refuse("reel resume "+rec.ParentRunID+" resumes it with its parent", "it is a sub-workflow of run %s", rec.ParentRunID)
	case rec.Input().Step != "":
		return refuse("run the step again", "it ran a single step (--step %s)", rec.Input().Step)
	case wf.Name != rec.Workflow:
		return refuse("name the workflow the run ran with --workflow", "the run ran workflow %q and %s defines %q", rec.Workflow, wf.File, wf.Name)
	}
	return nil
}

// resumeInputs are the recorded inputs, with overrides, checked again
// against the workflow's declarations.
func resumeInputs(wf *workflow.Workflow, rec *rerun.Run, overrides map[string]string) (map[string]any, error) {
	recorded := rec.Spans[0].Input.Inputs
	given := map[string]string{}
	var probs []string
	for _, in := range wf.Inputs {
		v, ok := recorded[in.Name]
		if !ok || v == nil {
			continue
		}
		s := inputText(v)
		if s == secrets.Masked {
			if _, over := overrides[in.Name]; !over {
				probs = append(probs, fmt.Sprintf("input %q was masked in the transcript: give it again with --input %s=VALUE", in.Name, in.Name))
			}
			continue
		}
		given[in.Name] = s
	}
	if len(probs) > 0 {
		return nil, &InputError{Problems: probs}
	}
	maps.Copy(given, overrides)
	return resolveInputs(wf, given, nil)
}

// inputText turns a recorded input value (decoded from JSON) back into the
// text an input is given as.
func inputText(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case json.Number:
		return x.String()
	}
	return fmt.Sprint(v)
}

// prepare runs the plan walk of a resume and returns the past the resumed
// run keeps.
func (e *Engine) prepare(ctx context.Context, wf *workflow.Workflow, rec *rerun.Run, inputs map[string]any, from string, depth int, stack []string) (*past, error) {
	execs := rec.Executions
	if from != "" {
		cut, err := cutFrom(rec, from)
		if err != nil {
			return nil, err
		}
		execs = slices.DeleteFunc(slices.Clone(execs), func(x *rerun.Execution) bool { return x.Ordinal >= cut })
	}
	p := &past{wf: wf, rec: rec, all: rerun.Group(execs), plan: true, consumed: map[*rerun.Visit]bool{}}
	p.queues = cloneQueues(p.all)
	pr := &run{
		e: e, wf: wf, id: rec.RunID, inputs: inputs, depth: depth, stack: stack,
		states: make(map[string]map[string]any, len(wf.States)),
		env:    envMap(e.environ()),
	}
	pr.lifecycle = lifecycle{past: p, planning: true}
	pr.machine(ctx)
	if len(p.problems) > 0 {
		hint := "reel resume --from STATE runs a state and what follows it again; reel run starts over"
		if len(p.changedStates) > 0 {
			hint = fmt.Sprintf("reel resume --from %s runs it and what follows it again; reel run starts over", p.changedStates[0])
		}
		return nil, &ResumeError{RunID: rec.RunID, Reasons: p.problems, Hint: hint}
	}
	p.arm()
	return p, nil
}

// cutFrom is the first ordinal --from drops: that of the first attempt of
// the latest recorded visit of the state. AWF's keywords name states by
// where the run stopped, unless a state of that name ran: current is the
// state it stopped in, where a plain resume starts (a loop resumes at the
// iteration that did not finish), previous the state the flow ran before
// it, which runs again with everything after it.
func cutFrom(rec *rerun.Run, from string) (int, error) {
	var hit *rerun.Execution
	for _, x := range rec.Executions {
		if x.Path == from || x.Name == from {
			hit = x
		}
	}
	if hit == nil && (from == "current" || from == "previous") {
		var top []*rerun.Execution
		for _, x := range rec.Executions {
			if !strings.Contains(x.Path, ".") {
				top = append(top, x)
			}
		}
		if len(top) == 0 {
			return 0, &ResumeError{RunID: rec.RunID, Reasons: []string{"--from " + from + ": the run recorded no state"}}
		}
		current := top[len(top)-1]
		if from == "current" {
			return math.MaxInt, nil // drop nothing: a plain resume
		}
		for i := len(top) - 2; i >= 0; i-- {
			if top[i].Path != current.Path {
				return cutFrom(rec, top[i].Path)
			}
		}
		return 0, &ResumeError{RunID: rec.RunID, Reasons: []string{fmt.Sprintf("--from previous: %s, where the run stopped, is the first state it ran", current.Path)}}
	}
	if hit == nil {
		var names []string
		seen := map[string]bool{}
		for _, x := range rec.Executions {
			if !seen[x.Path] {
				seen[x.Path] = true
				names = append(names, x.Path)
			}
		}
		return 0, &ResumeError{RunID: rec.RunID, Reasons: []string{fmt.Sprintf("--from %s: the run recorded no execution of it (recorded: %s)", from, strings.Join(names, ", "))}}
	}
	for _, v := range rec.Visits()[hit.Key()] {
		if slices.Contains(v.Executions, hit) {
			return v.Executions[0].Ordinal, nil
		}
	}
	return hit.Ordinal, nil
}

func cloneQueues(m map[rerun.Key][]*rerun.Visit) map[rerun.Key][]*rerun.Visit {
	out := make(map[rerun.Key][]*rerun.Visit, len(m))
	for k, v := range m {
		out[k] = slices.Clone(v)
	}
	return out
}

// past is what a resumed run takes from the attempts before it.
type past struct {
	wf  *workflow.Workflow
	rec *rerun.Run
	all map[rerun.Key][]*rerun.Visit

	mu     sync.Mutex
	queues map[rerun.Key][]*rerun.Visit // visits not yet reached
	// plan is set during the plan walk, which records what it can keep in
	// consumed, where it stopped in frontiers (paths, in order) and why
	// it cannot resume in problems.
	plan      bool
	consumed  map[*rerun.Visit]bool
	frontiers []string
	problems  []string
	// changedStates are the kept states whose definition changed, in the
	// order the walk met them.
	changedStates []string
	// live holds, by key, the recorded visit a live execution replaces,
	// for a call_workflow step to find its child.
	live map[rerun.Key]*rerun.Visit
	// continued names the child runs of earlier attempts that this one
	// continued (childRun): their reports already hold what they spent.
	continued map[string]bool
}

// continueChild notes that the run continues the child run id.
func (p *past) continueChild(id string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.continued[id] = true
}

// spentBefore is what the earlier attempts of the run spent that the
// resumed run's own executions do not report again (rerun, Spent): all
// their agent executions, kept or not, and the sub-workflow runs they
// started that this attempt did not continue. A child that cannot be read
// counts as nothing; the error says which.
func (p *past) spentBefore() (rerun.Spend, error) {
	s := p.rec.Spent()
	p.mu.Lock()
	defer p.mu.Unlock()
	var first error
	for _, id := range p.rec.ChildRuns() {
		if p.continued[id] {
			continue
		}
		c, err := rerun.ChildSpent(p.rec.Path, id)
		if err != nil && first == nil {
			first = err
		}
		s.Add(c.Usage, c.CostUSD)
	}
	return s, first
}

// arm turns a planned past into the one the resumed run walks: the same
// visits from the start, of which the consumed ones are kept.
func (p *past) arm() {
	p.plan = false
	p.queues = cloneQueues(p.all)
	p.live = map[rerun.Key]*rerun.Visit{}
	p.continued = map[string]bool{}
}

// reusedRanges names the kept executions for run.started.
func (p *past) reusedRanges() [][2]int {
	var ords []int
	for v := range p.consumed {
		for _, x := range v.Executions {
			ords = append(ords, x.Ordinal)
		}
	}
	sort.Ints(ords)
	return rerun.Ranges(ords)
}

func (p *past) pop(k rerun.Key) *rerun.Visit {
	p.mu.Lock()
	defer p.mu.Unlock()
	q := p.queues[k]
	if len(q) == 0 {
		return nil
	}
	p.queues[k] = q[1:]
	return q[0]
}

func (p *past) takeLive(k rerun.Key) *rerun.Visit {
	p.mu.Lock()
	defer p.mu.Unlock()
	v := p.live[k]
	delete(p.live, k)
	return v
}

func (p *past) frontier(path string) outcome {
	p.mu.Lock()
	p.frontiers = append(p.frontiers, path)
	p.mu.Unlock()
	return outcome{cancelled: true, err: "resume point"}
}

func (p *past) mark() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.frontiers)
}

// stoppedUnder reports whether the walk stopped below path since mark.
func (p *past) stoppedUnder(mark int, path string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, f := range p.frontiers[mark:] {
		if strings.HasPrefix(f, path+".") {
			return true
		}
	}
	return false
}

func (p *past) problem(msg string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !slices.Contains(p.problems, msg) {
		p.problems = append(p.problems, msg)
	}
}

func isBlock(st *workflow.State) bool {
	return st.Type == workflow.TypeParallel || st.Type == workflow.TypeForEach || st.Type == workflow.TypeWhile
}

// stateKind is the step kind a state records.
func stateKind(st *workflow.State) string {
	if st.Type == workflow.TypeStep {
		return transcript.KindCommand
	}
	return st.Type
}

// intercept answers for st when the resume keeps its recorded visit (or,
// in the plan walk, when the walk stops there).
func (p *past) intercept(ctx context.Context, r *run, sc scope, st *workflow.State) (outcome, bool) {
	key := rerun.Key{Path: joinPath(sc.prefix, st.Name), Iteration: sc.iteration}
	v := p.pop(key)
	if p.plan {
		return p.planned(ctx, r, sc, st, key, v), true
	}
	if v == nil {
		return outcome{}, false
	}
	if !p.consumed[v] {
		p.mu.Lock()
		p.live[key] = v
		p.mu.Unlock()
		return outcome{}, false
	}
	if isBlock(st) {
		inner := sc
		inner.hooked, inner.silent = st, true
		return r.exec(ctx, inner, st), true
	}
	return p.restore(r, st, v, key), true
}

// planned is the plan walk's step: keep the visit, pass through a block to
// keep what finished in it, or stop.
func (p *past) planned(ctx context.Context, r *run, sc scope, st *workflow.State, key rerun.Key, v *rerun.Visit) outcome {
	if v == nil || st.Type == workflow.TypeTerminal {
		return p.frontier(key.Path)
	}
	last := v.Last()
	if kind := stateKind(st); last.Kind != kind {
		p.problem(fmt.Sprintf("state %s ran as a %s step and is now a %s step", key.Path, last.Kind, kind))
		return p.frontier(key.Path)
	}
	inner := sc
	inner.hooked = st
	if !last.Reusable() {
		if isBlock(st) {
			r.exec(ctx, inner, st)
		}
		return p.frontier(key.Path)
	}
	if msg := p.changed(v, st); msg != "" {
		p.problem(msg)
		p.mu.Lock()
		if !slices.Contains(p.changedStates, key.Path) {
			p.changedStates = append(p.changedStates, key.Path)
		}
		p.mu.Unlock()
		return p.frontier(key.Path)
	}
	if isBlock(st) {
		mark := p.mark()
		out := r.exec(ctx, inner, st)
		if p.stoppedUnder(mark, key.Path) {
			return p.frontier(key.Path)
		}
		p.consume(v)
		return out
	}
	p.consume(v)
	return p.restore(r, st, v, key)
}

func (p *past) consume(v *rerun.Visit) {
	p.mu.Lock()
	p.consumed[v] = true
	p.mu.Unlock()
}

// changed says why a kept visit's state no longer matches its record, or
// "" when it does (or the record has no digest to compare).
func (p *past) changed(v *rerun.Visit, st *workflow.State) string {
	span := p.rec.Span(v.Executions[0])
	if span.Input.Workflow == nil {
		return ""
	}
	old, ok := span.Input.Workflow.States[st.Name]
	now := p.wf.StateDigests[st.Name]
	if !ok || now == "" || now == old {
		return ""
	}
	return fmt.Sprintf("state %s changed since attempt %d ran it, so its recorded result no longer describes it", st.Name, span.Attempt)
}

// restore puts a kept visit's recorded result where the run's templates
// and expressions read it and returns the outcome the flow continues from.
func (p *past) restore(r *run, st *workflow.State, v *rerun.Visit, key rerun.Key) outcome {
	x := v.Last()
	o := outcome{ok: x.Error == "", err: x.Error, cancelled: x.Cancelled()}
	if !o.ok {
		o.exitCode = 1
	}
	var val map[string]any
	switch st.Type {
	case workflow.TypeStep:
		var cr transcript.CommandResult
		_ = transcript.DecodeResult(x.Result, &cr)
		if !o.ok && cr.ExitCode != 0 {
			o.exitCode = cr.ExitCode
		}
		val = stateValue(o, cr.Output, cr.Stderr)
	case workflow.TypeAgent:
		var ar transcript.AgentResult
		_ = transcript.DecodeResult(x.Result, &ar)
		// Its tokens, and its retries', are in what the earlier attempts
		// spent (spentBefore).
		var conv *conversationLog
		if st.Tracked() {
			conv = conversationOf(x, &ar)
		}
		val = agentStateValue(stateValue(o, ar.Output, ""), &ar, conv)
	case workflow.TypeOperation:
		if st.Operation != "http.request" {
			var or *opResult
			if len(x.Result) > 0 {
				or = &opResult{}
				_ = json.Unmarshal(x.Result, or)
				out, _ := json.Marshal(or.Outputs)
				or.Output = string(out)
			}
			val = opValue(o, or)
			break
		}
		var hr *httpResult
		if len(x.Result) > 0 {
			hr = &httpResult{}
			_ = json.Unmarshal(x.Result, hr)
		}
		val = operationValue(o, hr)
	case workflow.TypeCallWorkflow:
		var cr struct {
			ExitCode int            `json:"exit_code"`
			Outputs  map[string]any `json:"outputs"`
		}
		_ = json.Unmarshal(x.Result, &cr)
		if !o.ok && cr.ExitCode != 0 {
			o.exitCode = cr.ExitCode
		}
		val = callValue(o, cr.Outputs)
		if c := x.ChildResult; c != nil {
			// What the child spent is in spentBefore.
			val["TokensUsed"] = c.Usage.TotalTokens
		}
	default:
		var sr StepResult
		_ = json.Unmarshal(x.Result, &sr)
		val = stateValue(o, sr.Output, "")
		if sr.Data != nil {
			val["Data"] = sr.Data
		}
	}
	r.setState(st.Name, val)
	label := key.Path
	if r.loopDepthOf(key.Path) > 0 {
		label += fmt.Sprintf(" [%d]", key.Iteration)
	}
	r.display(fmt.Sprintf("%s↷ %s (%s in attempt %d, kept)", r.indent(), label, status(o), p.rec.Span(x).Attempt))
	return o
}

// childRun decides the child run a call_workflow step executes. It is a
// new run, except in a resumed run whose interrupted execution of the step
// had started a child: that child is resumed in its own file, or, when it
// had succeeded, its result is taken as it is. It returns the child's run
// id and the function that runs it to its report.
func (r *run) childRun(ctx context.Context, sp *span, child *workflow.Workflow, inputs map[string]any, stack []string) (string, func(context.Context) *Report, error) {
	key := rerun.Key{Path: sp.path, Iteration: sp.iter}
	var prior *rerun.Run
	if r.past != nil && r.rec != nil {
		if v := r.past.takeLive(key); v != nil && v.Last().ChildRunID != "" {
			// A child file without run.started was cut before its first
			// event: the call starts a new child.
			prior, _ = rerun.LoadChild(r.rec.Path(), v.Last().ChildRunID, rerun.Options{Exchange: true})
		}
	}
	switch {
	case prior != nil && prior.Status == runstatus.Success:
		// What the child spent, read from its files as spentBefore
		// would have counted it.
		spent, _ := prior.TotalSpent()
		rep := &Report{RunID: prior.RunID, TranscriptPath: prior.Path, Status: prior.Status, ExitCode: prior.Result.ExitCode,
			Duration: prior.Ran(), Usage: spent.Usage, CostUSD: spent.CostUSD, Outputs: prior.Result.Outputs, Attempt: prior.Attempts()}
		r.past.continueChild(prior.RunID)
		r.display(fmt.Sprintf("%s↷ %s: sub-workflow %s succeeded in attempt %d, kept", r.indent(), sp.path, child.Name, prior.Attempts()))
		return prior.RunID, func(context.Context) *Report { return rep }, nil
	case prior != nil:
		if prior.Workflow != child.Name {
			return "", nil, &ResumeError{RunID: prior.RunID, Reasons: []string{fmt.Sprintf("the child ran workflow %q and the call now names %q", prior.Workflow, child.Name)}}
		}
		p, err := r.e.prepare(ctx, child, prior, inputs, "", r.depth+1, stack)
		if err != nil {
			return "", nil, err
		}
		cr, err := r.e.newRun(child, prior.RunID, r.id, inputs, r.depth+1, stack, r.audit)
		if err != nil {
			return "", nil, err
		}
		r.inherit(cr)
		cr.attempt, cr.ran, cr.past = prior.Attempts()+1, prior.Ran(), p
		r.past.continueChild(prior.RunID)
		return cr.id, cr.execute, nil
	}
	id := transcript.NewRunID()
	cr, err := r.e.newRun(child, id, r.id, inputs, r.depth+1, stack, r.audit)
	if err != nil {
		return "", nil, err
	}
	r.inherit(cr)
	if r.replay != nil {
		cr.replay = r.replay.child(key)
	}
	return id, cr.execute, nil
}
