package engine

import (
	"fmt"
	"maps"
	"os"
	"strconv"
	"time"

	"github.com/reelhq/reel/internal/awfhome"
	"github.com/reelhq/reel/internal/workflow"
)

// data is what every template of a state in scope sc renders against: the
// namespaces of package workflow (inputs, states, workflow, env, context,
// awf, and loop inside a loop body). It is the one place that decides what
// a template sees; a feature that needs more (an error hook's .error, a
// conversation's .turn) adds its key to the map this returns.
//
// Only states that have run appear under states, so a reference to one that
// has not fails the template with a message naming it. Parsed JSON (step
// output, loop items, array inputs) prints as JSON.
func (r *run) data(sc scope) map[string]any { return r.namespaces(sc, true) }

// exprEnv is data for expressions (when, while, break_when, transitions,
// outputs): the same namespaces with the values unwrapped, so that
// expr-lang compares numbers as numbers.
func (r *run) exprEnv(sc scope) map[string]any { return r.namespaces(sc, false) }

func (r *run) namespaces(sc scope, tmpl bool) map[string]any {
	r.mu.Lock()
	// A snapshot of the states is shared by every data() until the next
	// setState: a template runs on it while parallel branches go on, and
	// a plan (which sets no state) renders thousands of them.
	snap := &r.esnap
	src := r.states
	if tmpl {
		snap, src = &r.tsnap, r.tstates
	}
	if *snap == nil {
		*snap = make(map[string]any, len(src))
		for k, v := range src {
			(*snap)[k] = v
		}
	}
	states := *snap
	var inputs map[string]any
	if tmpl {
		if r.tinputs == nil {
			r.tinputs = make(map[string]any, len(r.inputs))
			for k, v := range r.inputs {
				r.tinputs[k] = workflow.TemplateValue(v)
			}
		}
		inputs = r.tinputs
	} else {
		if r.einputs == nil {
			r.einputs = make(map[string]any, len(r.inputs))
			for k, v := range r.inputs {
				r.einputs[k] = exprInput(v)
			}
		}
		inputs = r.einputs
	}
	r.mu.Unlock()
	m := map[string]any{
		workflow.NSInputs: inputs,
		workflow.NSStates: states,
		workflow.NSWorkflow: map[string]any{
			"ID":           r.id,
			"Name":         r.wf.Name,
			"CurrentState": sc.state,
			"StartedAt":    r.started,
			"Duration":     time.Since(r.started).Round(time.Millisecond).String(),
		},
		workflow.NSEnv:     r.env,
		workflow.NSContext: r.context,
		workflow.NSAWF:     r.awf,
	}
	if sc.loop != nil {
		m[workflow.NSLoop] = loopView(sc.loop, tmpl)
	}
	return m
}

// exprInput is an input as an expression sees it. A text value reads as
// AWF's expressions read every input: "true"/"True"/"TRUE" and the false
// forms as booleans, integers and decimals as numbers, so that an input
// declared without a type compares as AWF compares it (inputs.count > 3
// with --input count=5). Typed inputs already hold their values.
func exprInput(v any) any {
	s, ok := v.(string)
	if !ok {
		return v
	}
	switch s {
	case "true", "True", "TRUE":
		return true
	case "false", "False", "FALSE":
		return false
	}
	if i, err := strconv.ParseInt(s, 10, 64); err == nil {
		return i
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		return f
	}
	return v
}

// templateState is the template view of a state's result: its JSON values
// print as JSON.
func templateState(v map[string]any) map[string]any {
	out := maps.Clone(v)
	for _, k := range []string{"JSON", "Response", "Data"} {
		if x, ok := out[k]; ok && x != nil {
			out[k] = workflow.TemplateValue(x)
		}
	}
	return out
}

// loopView is a loop's variables as templates (tmpl) or expressions see
// them: a template prints the item as AWF does (objects and arrays as
// JSON); an expression compares the raw item.
func loopView(l *loopState, tmpl bool) map[string]any {
	if l.vars != nil {
		return maps.Clone(l.vars)
	}
	item := l.item
	if tmpl {
		item = workflow.LoopItem(item)
	}
	var parent any
	if l.parent != nil {
		parent = loopView(l.parent, tmpl)
	}
	return map[string]any{
		"Item":   item,
		"Index":  l.index,
		"Index1": l.index + 1,
		"First":  l.index == 0,
		"Last":   l.length >= 0 && l.index == l.length-1,
		"Length": l.length,
		"Parent": parent,
	}
}

// loopState is one iteration of a loop: its item (nil in a while loop),
// index, length (-1 in a while loop) and the enclosing loop's iteration.
type loopState struct {
	item   any
	index  int
	length int
	parent *loopState
	// vars, when set, are the loop variables as given (a dry run's
	// placeholders, --mock loop.X values) in place of the computed ones.
	vars map[string]any
}

// contextNamespaces returns the .context namespace (the working
// directory, the user, the host) and the .awf one (AWF's directories,
// and the name of the pack wf belongs to).
func (e *Engine) contextNamespaces(env map[string]any, wf *workflow.Workflow) (ctx map[string]any, awf map[string]string) {
	getenv := func(k string) string { s, _ := env[k].(string); return s }
	// $USER as AWF reads it: empty when unset (.context.User is the
	// environment's word, not the account's)
	name := getenv("USER")
	host, _ := os.Hostname()
	pack := ""
	if wf.Pack != nil {
		pack = wf.Pack.Name
	}
	return map[string]any{"WorkingDir": e.workDir(), "User": name, "Hostname": host},
		awfhome.FromEnv(getenv).Namespace(pack)
}

// resolveInputs gives every declared input its value: the one given (on
// the command line, or by a calling workflow), else the project
// configuration's, else the declared default. A required input must be
// given (or configured) and not empty, as in AWF, even when it declares a
// default. An optional input without any value is nil: it renders as the
// empty string and compares equal to nothing. Values are converted to the
// input's type and checked against its validation rules; every problem is
// reported at once. Values for inputs wf does not declare are ignored,
// as AWF ignores them (callers say so: see Workflow.Undeclared).
func resolveInputs(wf *workflow.Workflow, given map[string]string, config map[string]any) (map[string]any, error) {
	out := map[string]any{}
	var probs []string
	for _, in := range wf.Inputs {
		var v any
		var ok bool
		if s, g := given[in.Name]; g {
			v, ok = s, true
		} else if c, g := config[in.Name]; g && c != nil {
			v, ok = c, true
		} else if in.Default != nil && !in.Required {
			v, ok = *in.Default, true
		}
		switch {
		case !ok && in.Required:
			probs = append(probs, fmt.Sprintf("input %q is required", in.Name))
			continue
		case !ok:
			out[in.Name] = nil
			continue
		case in.Required && v == "":
			probs = append(probs, fmt.Sprintf("input %q is required but empty", in.Name))
			continue
		}
		val, err := workflow.ParseInput(in, v)
		if err != nil {
			probs = append(probs, fmt.Sprintf("input %q: %v", in.Name, err))
			continue
		}
		out[in.Name] = val
	}
	if len(probs) > 0 {
		return nil, &InputError{Problems: probs}
	}
	return out, nil
}
