package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/reelhq/reel/internal/workflow"
	"github.com/reelhq/reel/transcript"
)

// loopVars builds the .loop variables of one iteration. Length is -1 for a
// while loop, whose length is not known in advance.
func loopVars(item any, i, length int, parent map[string]any) map[string]any {
	var p any
	if parent != nil {
		p = parent
	}
	return map[string]any{
		"Item":   item,
		"Index":  i,
		"Index1": i + 1,
		"First":  i == 0,
		"Last":   length >= 0 && i == length-1,
		"Length": length,
		"Parent": p,
	}
}

// body runs the body states of one iteration in order. It stops at the
// first failure that is not continue_on_error.
func (r *run) body(ctx context.Context, sc scope, st *workflow.State) outcome {
	for _, name := range st.Body {
		out := r.exec(ctx, sc, r.wf.States[name])
		if out.end != nil || out.cancelled {
			return out
		}
		if !out.ok && !r.wf.States[name].ContinueOnError {
			o := out
			o.err = fmt.Sprintf("%s: %s", name, out.err)
			return o
		}
	}
	return outcome{ok: true}
}

// items resolves a for_each's items: the YAML list, or the template's
// result read as a JSON array (falling back to one item per non-empty line).
func (r *run) items(sc scope, st *workflow.State) ([]any, error) {
	if st.ItemsLiteral != nil {
		return st.ItemsLiteral, nil
	}
	s, err := st.Items.Execute(r.data(sc))
	if err != nil {
		return nil, fmt.Errorf("items: %w", err)
	}
	s = strings.TrimSpace(s)
	if s == "" {
		return []any{}, nil
	}
	if strings.HasPrefix(s, "[") {
		var v []any
		if err := json.Unmarshal([]byte(s), &v); err != nil {
			return nil, fmt.Errorf("items %q is not a JSON array: %v", truncate(s, 80), err)
		}
		return v, nil
	}
	var out []any
	for _, line := range strings.Split(s, "\n") {
		if line = strings.TrimSpace(line); line != "" {
			out = append(out, line)
		}
	}
	return out, nil
}

func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}

func (r *run) execForEach(ctx context.Context, sc scope, st *workflow.State) outcome {
	sp := r.startStep(ctx, sc, st, transcript.KindForEach, "", 0)
	path := sp.path
	items, err := r.items(sc, st)
	if err == nil && len(items) > st.MaxIterations {
		err = fmt.Errorf("%d items exceed max_iterations (%d)", len(items), st.MaxIterations)
	}
	if err != nil {
		o := fail("%v", err)
		r.setState(st.Name, stateValue(o, "", ""))
		sp.finish(ctx, o, nil)
		return o
	}
	out := outcome{ok: true}
	n, broke := 0, false
	for i, item := range items {
		isc := scope{prefix: path, iteration: i, loop: loopVars(item, i, len(items), sc.loop)}
		var more bool
		out, more, broke = r.iteration(ctx, isc, st)
		n++
		if !more {
			break
		}
	}
	return r.endLoop(ctx, sp, st, out, map[string]any{"iterations": n, "items": len(items), "broke": broke})
}

// iteration runs one pass of a loop's body and then its break_when. more is
// false when the loop must stop there; broke says break_when stopped it.
func (r *run) iteration(ctx context.Context, isc scope, st *workflow.State) (out outcome, more, broke bool) {
	out = r.body(ctx, isc, st)
	if !out.ok || out.end != nil {
		return out, false, false
	}
	if st.BreakWhen != nil {
		b, err := st.BreakWhen.True(r.exprEnv(isc))
		if err != nil {
			return fail("break_when: %v", err), false, false
		}
		if b {
			return out, false, true
		}
	}
	return out, true, false
}

func (r *run) endLoop(ctx context.Context, sp *span, st *workflow.State, out outcome, result map[string]any) outcome {
	v := stateValue(out, "", "")
	v["Data"] = result
	r.setState(st.Name, v)
	if out.end != nil && out.end.status == "success" {
		sp.finish(ctx, outcome{ok: true}, result)
		return out
	}
	sp.finish(ctx, out, result)
	return out
}

func (r *run) execWhile(ctx context.Context, sc scope, st *workflow.State) outcome {
	sp := r.startStep(ctx, sc, st, transcript.KindWhile, "", 0)
	path := sp.path
	out := outcome{ok: true}
	n, broke, capped := 0, false, false
	for i := 0; ; i++ {
		if i >= st.MaxIterations {
			capped = true
			break
		}
		isc := scope{prefix: path, iteration: i, loop: loopVars(nil, i, -1, sc.loop)}
		cont, err := st.While.True(r.exprEnv(isc))
		if err != nil {
			out = fail("while: %v", err)
			break
		}
		if !cont {
			break
		}
		if ctx.Err() != nil {
			out = cancelledOutcome(ctx)
			break
		}
		var more bool
		out, more, broke = r.iteration(ctx, isc, st)
		n++
		if !more {
			break
		}
	}
	res := map[string]any{"iterations": n, "broke": broke}
	if capped {
		// max_iterations is a guard: reaching it stops the loop, and the
		// result says so
		res["max_iterations_reached"] = true
	}
	return r.endLoop(ctx, sp, st, out, res)
}

func (r *run) execParallel(ctx context.Context, sc scope, st *workflow.State) outcome {
	sp := r.startStep(ctx, sc, st, transcript.KindParallel, "", 0)
	bsc := scope{prefix: sp.path, iteration: sc.iteration, loop: sc.loop}
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

	var succeeded, failed, cancelled, skipped []string
	var firstErr string
	var end *ending
	for i, name := range st.Parallel {
		o := results[i]
		switch {
		case !started[i]:
			skipped = append(skipped, name)
		case o.end != nil && end == nil:
			end = o.end
			if o.ok {
				succeeded = append(succeeded, name)
			} else {
				failed = append(failed, name)
			}
		case o.cancelled:
			cancelled = append(cancelled, name)
		case o.ok || r.wf.States[name].ContinueOnError:
			succeeded = append(succeeded, name)
		default:
			failed = append(failed, name)
			if firstErr == "" {
				firstErr = fmt.Sprintf("%s: %s", name, o.err)
			}
		}
	}
	result := map[string]any{"strategy": st.Strategy, "succeeded": nonNil(succeeded), "failed": nonNil(failed)}
	if len(cancelled) > 0 {
		result["cancelled"] = cancelled
	}
	if len(skipped) > 0 {
		result["skipped"] = skipped
	}
	if stopMsg != "" {
		result["stopped"] = stopMsg
	}
	var out outcome
	switch {
	case ctx.Err() != nil:
		out = cancelledOutcome(ctx)
	case end != nil:
		out = outcome{ok: end.status == "success", exitCode: end.exitCode, err: end.message, end: end}
	case st.Strategy == workflow.StrategyAnySucceed:
		if len(succeeded) > 0 {
			out = outcome{ok: true}
		} else {
			out = fail("no branch succeeded (%s)", firstErr)
		}
	case st.Strategy == workflow.StrategyBestEffort:
		out = outcome{ok: true}
	default:
		if len(failed) == 0 {
			out = outcome{ok: true}
		} else {
			out = fail("%d of %d branches failed (%s)", len(failed), n, firstErr)
		}
	}
	v := stateValue(out, "", "")
	v["Data"] = result
	r.setState(st.Name, v)
	sp.finish(ctx, out, result)
	return out
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
