package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/reelhq/reel/internal/workflow"
	"github.com/reelhq/reel/transcript"
)

// A loop's body runs as AWF runs it. After each body state, the state's
// own next state (its transitions, then on_success, or on_failure when it
// failed) decides what comes next:
//
//   - a state of the body: jump there, forward or back, in this iteration;
//   - the loop itself, a name that is no state, or nothing: the next body
//     state in order (after the last one the iteration ends);
//   - any other state: the loop ends at once and the run goes there.
//
// A failing body state fails the iteration, and the loop, unless it has
// continue_on_error (its next state is then read as on success) or its
// failure leads back to the loop itself (on_failure: <the loop>), which
// goes on with the next body state. After an iteration, break_when is
// evaluated (even when the iteration failed: a true break_when ends the
// loop successfully); a break_when that cannot be evaluated is reported
// and ignored.

// bodyResult is how one iteration's body ended.
type bodyResult struct {
	out  outcome
	exit string // a state outside the body the run goes to next
}

// body runs one iteration of loop st.
func (r *run) body(ctx context.Context, sc scope, st *workflow.State) bodyResult {
	index := make(map[string]int, len(st.Body))
	for i, name := range st.Body {
		index[name] = i
	}
	visits := 0
	for i := 0; i < len(st.Body); i++ {
		if visits++; visits > maxStateVisits {
			return bodyResult{out: fail("body of %s stopped after %d state executions: its transitions loop", st.Name, maxStateVisits)}
		}
		child := r.wf.States[st.Body[i]]
		out := r.exec(ctx, sc, child)
		if out.end != nil || out.cancelled {
			return bodyResult{out: out}
		}
		next, err := r.bodyNext(child, out, sc)
		if err != nil {
			o := fail("%s: %v", child.Name, err)
			return bodyResult{out: o}
		}
		if !out.ok && !child.ContinueOnError && next != st.Name {
			o := out
			o.err = fmt.Sprintf("%s: %s", child.Name, out.err)
			return bodyResult{out: o}
		}
		if j, in := index[next]; in {
			i = j - 1
			continue
		}
		if next == "" || next == st.Name || r.wf.States[next] == nil {
			continue
		}
		return bodyResult{out: outcome{ok: true}, exit: next}
	}
	return bodyResult{out: outcome{ok: true}}
}

// bodyNext is the state a body state hands control to: its first matching
// transition, else on_success (or where a nested loop exited) when it
// succeeded or continues on error, else its on_failure state.
func (r *run) bodyNext(st *workflow.State, out outcome, sc scope) (string, error) {
	if len(st.Transitions) > 0 {
		env := r.exprEnv(sc)
		for _, t := range st.Transitions {
			if t.When == nil {
				return t.Goto, nil
			}
			ok, err := t.When.True(env)
			if err != nil {
				return "", fmt.Errorf("transition: %w", err)
			}
			if ok {
				return t.Goto, nil
			}
		}
	}
	if out.ok || st.ContinueOnError {
		switch {
		case out.next != "":
			return out.next, nil
		case st.OnComplete != "":
			return st.OnComplete, nil
		}
		return st.OnSuccess, nil
	}
	if st.OnFailure != nil && !st.OnFailure.Inline {
		return st.OnFailure.State, nil
	}
	return "", nil
}

// items resolves a for_each's items: the YAML list, or the template's
// result read as AWF reads it: a JSON array, or else comma-separated
// values. An empty result is no items.
func (r *run) items(sc scope, st *workflow.State) ([]any, error) {
	if st.ItemsLiteral != nil {
		return st.ItemsLiteral, nil
	}
	s, err := st.Items.Execute(r.data(sc))
	if err != nil {
		return nil, fmt.Errorf("items: %w", err)
	}
	if strings.TrimSpace(s) == "" {
		return []any{}, nil
	}
	var v []any
	if err := json.Unmarshal([]byte(s), &v); err == nil {
		return v, nil
	}
	parts := strings.Split(s, ",")
	out := make([]any, len(parts))
	for i, p := range parts {
		out[i] = strings.TrimSpace(p)
	}
	return out, nil
}

// maxIterations is a loop's bound: its max_iterations, or the template's
// value when the loop starts, read as an integer or as arithmetic on
// integers (+ - * / %), between 1 and workflow.MaxMaxIterations.
func (r *run) maxIterations(sc scope, st *workflow.State) (int, error) {
	if st.MaxIterationsExpr == nil {
		return st.MaxIterations, nil
	}
	s, err := st.MaxIterationsExpr.Execute(r.data(sc))
	if err != nil {
		return 0, fmt.Errorf("max_iterations: %w", err)
	}
	s = strings.TrimSpace(s)
	n, err := strconv.Atoi(s)
	if err != nil {
		if n, err = workflow.Arithmetic(s); err != nil {
			return 0, fmt.Errorf("max_iterations %q: %v", s, err)
		}
	}
	if n < 1 || n > workflow.MaxMaxIterations {
		return 0, fmt.Errorf("max_iterations %q is %d; it must be between 1 and %d", st.MaxIterationsExpr.Source, n, workflow.MaxMaxIterations)
	}
	return n, nil
}

// loopFail ends a loop that could not start.
func (r *run) loopFail(ctx context.Context, sp *span, st *workflow.State, err error) outcome {
	o := fail("%v", err)
	r.setState(st.Name, stateValue(o, "", ""))
	sp.finish(ctx, o, nil)
	return o
}

func (r *run) execForEach(ctx context.Context, sc scope, st *workflow.State) outcome {
	sp := r.startStep(ctx, sc, st, transcript.KindForEach, "", nil)
	items, err := r.items(sc, st)
	if err != nil {
		return r.loopFail(ctx, sp, st, err)
	}
	limit, err := r.maxIterations(sc, st)
	if err != nil {
		return r.loopFail(ctx, sp, st, err)
	}
	result := map[string]any{"items": len(items)}
	if len(items) > limit {
		// AWF runs the first max_iterations items; reel does too, and
		// says how many it left out.
		result["skipped_items"] = len(items) - limit
		r.display(fmt.Sprintf("%s  %s: %d items, max_iterations %d: the last %d are skipped", r.indent(), sp.path, len(items), limit, len(items)-limit))
		items = items[:limit]
	}
	it := loopRun{r: r, st: st, sp: sp}
	for i, item := range items {
		isc := scope{prefix: sp.path, iteration: i, loop: &loopState{item: item, index: i, length: len(items), parent: sc.loop}}
		if !it.iteration(ctx, isc) {
			break
		}
	}
	return it.end(ctx, result)
}

func (r *run) execWhile(ctx context.Context, sc scope, st *workflow.State) outcome {
	sp := r.startStep(ctx, sc, st, transcript.KindWhile, "", nil)
	limit, err := r.maxIterations(sc, st)
	if err != nil {
		return r.loopFail(ctx, sp, st, err)
	}
	it := loopRun{r: r, st: st, sp: sp}
	result := map[string]any{}
	for i := 0; ; i++ {
		if i >= limit {
			// max_iterations is a guard: reaching it ends the loop
			// (successfully, as in AWF), and the result says so
			result["max_iterations_reached"] = true
			break
		}
		isc := scope{prefix: sp.path, iteration: i, loop: &loopState{index: i, length: -1, parent: sc.loop}}
		cont, err := st.While.True(r.exprEnv(isc))
		if err != nil {
			it.out = fail("while: %v", err)
			break
		}
		if !cont {
			break
		}
		if ctx.Err() != nil {
			it.out = cancelledOutcome(ctx)
			break
		}
		if !it.iteration(ctx, isc) {
			break
		}
	}
	return it.end(ctx, result)
}

// loopRun is one run of a loop state, iteration by iteration.
type loopRun struct {
	r     *run
	st    *workflow.State
	sp    *span
	out   outcome
	n     int
	broke bool
	exit  string
	// breakErrs are break_when evaluations that failed (ignored, as AWF
	// does, and reported in the result).
	breakErrs []string
}

// iteration runs one pass of the body and then break_when; it reports
// whether the loop goes on.
func (it *loopRun) iteration(ctx context.Context, isc scope) bool {
	r, st := it.r, it.st
	res := r.body(ctx, isc, st)
	it.n++
	it.out = res.out
	if res.out.end != nil || res.out.cancelled {
		return false
	}
	if res.exit != "" {
		it.exit = res.exit
		return false
	}
	if st.BreakWhen != nil {
		b, err := st.BreakWhen.True(r.exprEnv(isc))
		switch {
		case err != nil:
			it.breakErrs = append(it.breakErrs, err.Error())
			r.display(fmt.Sprintf("%s  %s: break_when ignored: %v", r.indent(), it.sp.path, err))
		case b:
			it.broke = true
			it.out = outcome{ok: true}
			return false
		}
	}
	return res.out.ok
}

// end records the loop's result: .states.LOOP.Output is "completed N
// iterations" as in AWF, .Data the details.
func (it *loopRun) end(ctx context.Context, result map[string]any) outcome {
	r, st, out := it.r, it.st, it.out
	if it.n == 0 && out.err == "" && !out.cancelled {
		out = outcome{ok: true}
	}
	result["iterations"] = it.n
	result["broke"] = it.broke
	if it.exit != "" {
		result["exit"] = it.exit
		out.next = it.exit
	}
	if len(it.breakErrs) > 0 {
		result["break_when_errors"] = it.breakErrs
	}
	output := ""
	if out.ok {
		output = fmt.Sprintf("completed %d iterations", it.n)
	}
	v := stateValue(out, output, "")
	v["Data"] = result
	r.setState(st.Name, v)
	if out.end != nil && out.end.status == "success" {
		it.sp.finish(ctx, outcome{ok: true}, result)
		return out
	}
	it.sp.finish(ctx, out, result)
	return out
}

func (r *run) execParallel(ctx context.Context, sc scope, st *workflow.State) outcome {
	sp := r.startStep(ctx, sc, st, transcript.KindParallel, "", nil)
	bsc := scope{prefix: sp.path, iteration: sc.iteration, loop: sc.loop}
	// A branch's own on_success, on_failure and transitions are not
	// followed (the block decides what comes next), as in AWF.
	pctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)

	n := len(st.Parallel)
	limit := st.MaxConcurrent
	if limit <= 0 || limit > n {
		limit = n
	}
	sem := make(chan struct{}, limit)
	results := make([]outcome, n)
	started := make([]bool, n)
	var wg sync.WaitGroup
	var stopMsg string
	var stopOnce sync.Once
	stop := func(why string) {
		stopOnce.Do(func() {
			stopMsg = why
			cancel(fmt.Errorf("%s", why))
		})
	}
	for i, name := range st.Parallel {
		select {
		case sem <- struct{}{}:
		case <-pctx.Done():
		}
		if pctx.Err() != nil {
			break
		}
		started[i] = true
		wg.Add(1)
		go func(i int, child *workflow.State) {
			defer wg.Done()
			defer func() { <-sem }()
			o := r.exec(pctx, bsc, child)
			results[i] = o
			switch {
			case o.end != nil:
				stop(fmt.Sprintf("branch %s ended the run", child.Name))
			case st.Strategy == workflow.StrategyAllSucceed && !o.ok && !o.cancelled && !child.ContinueOnError:
				stop(fmt.Sprintf("branch %s failed", child.Name))
			case st.Strategy == workflow.StrategyAnySucceed && o.ok:
				stop(fmt.Sprintf("branch %s succeeded", child.Name))
			}
		}(i, r.wf.States[name])
	}
	wg.Wait()

	t := r.tally(st, results, started)
	result := map[string]any{"strategy": st.Strategy, "succeeded": nonNil(t.succeeded), "failed": nonNil(t.failed)}
	if len(t.cancelled) > 0 {
		result["cancelled"] = t.cancelled
	}
	if len(t.skipped) > 0 {
		result["skipped"] = t.skipped
	}
	if stopMsg != "" {
		result["stopped"] = stopMsg
	}
	out := t.outcome(ctx, st.Strategy)
	v := stateValue(out, "", "")
	v["Data"] = result
	r.setState(st.Name, v)
	sp.finish(ctx, out, result)
	return out
}

// branches is how a parallel block's branches ended, by name.
type branches struct {
	succeeded, failed, cancelled, skipped []string
	firstErr                              string  // the first failed branch's error
	end                                   *ending // a branch that ended the run
}

func (r *run) tally(st *workflow.State, results []outcome, started []bool) branches {
	var t branches
	for i, name := range st.Parallel {
		o := results[i]
		switch {
		case !started[i]:
			t.skipped = append(t.skipped, name)
		case o.end != nil && t.end == nil:
			t.end = o.end
			if o.ok {
				t.succeeded = append(t.succeeded, name)
			} else {
				t.failed = append(t.failed, name)
			}
		case o.cancelled:
			t.cancelled = append(t.cancelled, name)
		case o.ok || r.wf.States[name].ContinueOnError:
			t.succeeded = append(t.succeeded, name)
		default:
			t.failed = append(t.failed, name)
			if t.firstErr == "" {
				t.firstErr = fmt.Sprintf("%s: %s", name, o.err)
			}
		}
	}
	return t
}

// outcome is the block's outcome under its strategy.
func (t branches) outcome(ctx context.Context, strategy string) outcome {
	n := len(t.succeeded) + len(t.failed) + len(t.cancelled) + len(t.skipped)
	switch {
	case ctx.Err() != nil:
		return cancelledOutcome(ctx)
	case t.end != nil:
		return outcome{ok: t.end.status == "success", exitCode: t.end.exitCode, err: t.end.message, end: t.end}
	case strategy == workflow.StrategyAnySucceed:
		if len(t.succeeded) > 0 {
			return outcome{ok: true}
		}
		return fail("no branch succeeded (%s)", t.firstErr)
	case strategy == workflow.StrategyBestEffort:
		return outcome{ok: true}
	case len(t.failed) == 0:
		return outcome{ok: true}
	}
	return fail("%d of %d branches failed (%s)", len(t.failed), n, t.firstErr)
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
