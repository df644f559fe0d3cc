package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/reelhq/reel/internal/exitcode"
	"github.com/reelhq/reel/internal/workflow"
)

// A single-step run (reel run --step NAME) runs one state alone, with its
// children when it is a block, at the path it has in the workflow, and
// follows no transition after it. Mocks stand in for what it reads from
// other states ("states.build.Output=…", any field of a state's result) and
// from its loop ("loop.Item=…", "loop.Index=2"); the run.started input
// records both.

// checkMocks refuses mocks that name nothing the step could read.
func checkMocks(wf *workflow.Workflow, mocks map[string]string) error {
	for _, k := range slices.Sorted(maps.Keys(mocks)) {
		parts := strings.Split(k, ".")
		switch {
		case len(parts) == 3 && parts[0] == "states":
			if _, ok := wf.States[parts[1]]; !ok {
				return fmt.Errorf("--mock %s: no state %q in workflow %s%s", k, parts[1], wf.Name, suggestState(wf, parts[1]))
			}
		case len(parts) == 2 && parts[0] == "loop":
		default:
			return fmt.Errorf("--mock %s: want states.STATE.FIELD=value or loop.FIELD=value", k)
		}
	}
	return nil
}

// suggestState is ` (did you mean "x"?)` for the state name closest to
// name, or "".
func suggestState(wf *workflow.Workflow, name string) string {
	return workflow.DidYouMean(name, wf.Order)
}

// ParentPath is the dot path of the block a state runs inside ("" for a
// top-level state): the loop or parallel block listing it, and so on up.
func ParentPath(wf *workflow.Workflow, name string) string {
	var parts []string
	seen := map[string]bool{name: true}
	for cur := name; ; {
		parent := ""
		for _, n := range wf.Order {
			s := wf.States[n]
			if slices.Contains(s.Body, cur) || slices.Contains(s.Parallel, cur) {
				parent = n
				break
			}
		}
		if parent == "" || seen[parent] {
			break
		}
		seen[parent] = true
		parts = append([]string{parent}, parts...)
		cur = parent
	}
	return strings.Join(parts, ".")
}

// single runs the --step state.
func (r *run) single(ctx context.Context) ending {
	st := r.wf.States[r.step]
	sc := scope{prefix: ParentPath(r.wf, st.Name)}
	var loopVars map[string]any
	for _, k := range slices.Sorted(maps.Keys(r.mocks)) {
		v := r.mocks[k]
		parts := strings.Split(k, ".")
		if parts[0] == "loop" {
			if loopVars == nil {
				loopVars = map[string]any{}
			}
			loopVars[parts[1]] = mockValue(parts[1], v)
			if parts[1] == "Index" {
				sc.iteration, _ = strconv.Atoi(v)
			}
			continue
		}
		r.mu.Lock()
		s := maps.Clone(r.states[parts[1]])
		r.mu.Unlock()
		if s == nil {
			s = stateValue(outcome{ok: true}, "", "")
		}
		s[parts[2]] = mockValue(parts[2], v)
		if parts[2] == "Output" {
			if js := parseJSON(v); js != nil {
				s["JSON"], s["Response"] = js, js
			}
		}
		if _, set := r.mocks["states."+parts[1]+".Status"]; !set {
			s["Status"] = workflow.StatusCompleted
		}
		r.setState(parts[1], s)
	}
	if loopVars != nil {
		sc.loop = &loopState{vars: loopVars}
	}
	out := r.exec(ctx, sc, st)
	switch {
	case out.end != nil:
		return *out.end
	case out.cancelled || ctx.Err() != nil:
		return cancelledEnding(ctx)
	case out.ok:
		return ending{status: "success", exitCode: exitcode.OK}
	}
	return failed(fmt.Sprintf("state %q failed: %s", st.Name, out.err))
}

// mockValue types a mocked value the way the engine's own values are
// typed: counts as numbers, flags as booleans, JSON fields parsed.
func mockValue(field, v string) any {
	switch field {
	case "ExitCode", "Index", "Index1", "Length":
		if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil {
			return n
		}
	case "TokensUsed":
		if n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil {
			return n
		}
	case "First", "Last":
		if b, err := strconv.ParseBool(strings.TrimSpace(v)); err == nil {
			return b
		}
	case "JSON", "Data", "Response", "Item":
		var x any
		if json.Unmarshal([]byte(v), &x) == nil {
			return x
		}
	}
	return v
}
