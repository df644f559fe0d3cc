package workflow

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// OperationSpec describes a built-in operation's inputs.
type OperationSpec struct {
	Required []string
	Optional []string
}

// Operations are the built-in operations, by name (AWF's http, github and
// notify providers).
var Operations = map[string]OperationSpec{
	"http.request":         {Required: []string{"url"}, Optional: []string{"method", "headers", "body", "timeout", "retryable_status_codes"}},
	"github.get_issue":     {Required: []string{"number"}, Optional: []string{"repo", "fields"}},
	"github.get_pr":        {Required: []string{"number"}, Optional: []string{"repo", "fields"}},
	"github.create_issue":  {Required: []string{"title"}, Optional: []string{"body", "repo", "labels", "assignees"}},
	"github.create_pr":     {Required: []string{"title", "head", "base"}, Optional: []string{"body", "repo", "draft"}},
	"github.add_labels":    {Required: []string{"number", "labels"}, Optional: []string{"repo"}},
	"github.add_comment":   {Required: []string{"number", "body"}, Optional: []string{"repo"}},
	"github.list_comments": {Required: []string{"number"}, Optional: []string{"repo", "limit"}},
	"github.batch":         {Required: []string{"operations"}, Optional: []string{"strategy", "concurrency"}},
	"notify.send":          {Required: []string{"message"}, Optional: []string{"backend", "title", "priority", "webhook_url"}},
}

// builtinNamespaces are the operation name prefixes reel provides. A name
// outside them may be a plugin operation in AWF, which AWF's validate
// accepts and its run refuses ("operation not found"); reel does the same.
var builtinNamespaces = []string{"http.", "github.", "notify."}

// Enumerated operation inputs, checked when written literally.
var (
	NotifyBackends   = []string{"desktop", "webhook"}
	NotifyPriorities = []string{"low", "default", "high"}
	BatchStrategies  = []string{"all_succeed", "any_succeed", "best_effort"}
)

// checkOperation checks the operation of an operation state and its
// inputs. (operation: on a step loads with a warning, see state.go.)
func (l *loader) checkOperation(k *yaml.Node, s *State) {
	if s.Type == TypeStep {
		return
	}
	if s.Operation == "" {
		l.errf(k, "operation state %q is missing operation", s.Name)
		return
	}
	spec, ok := Operations[s.Operation]
	if !ok {
		if slices.ContainsFunc(builtinNamespaces, func(ns string) bool { return strings.HasPrefix(s.Operation, ns) }) {
			names := slices.Sorted(maps.Keys(Operations))
			l.errf(k, "operation state %q: unknown operation %q (built-in: %s)%s", s.Name, s.Operation, strings.Join(names, ", "), didYouMean(s.Operation, names))
		}
		return
	}
	what := fmt.Sprintf("operation %q of state %q", s.Operation, s.Name)
	l.checkOpInputs(k, what, s.Operation, spec, s.Inputs)
	switch s.Operation {
	case "notify.send":
		backend := literal(s.Inputs["backend"])
		if backend != "" && !slices.Contains(NotifyBackends, backend) {
			l.errf(k, "%s: backend %q is not one of %s%s", what, backend, strings.Join(NotifyBackends, ", "), didYouMean(backend, NotifyBackends))
		}
		if backend == "webhook" && s.Inputs["webhook_url"] == nil {
			l.errf(k, "%s: the webhook backend needs inputs.webhook_url", what)
		}
		if p := literal(s.Inputs["priority"]); p != "" && !slices.Contains(NotifyPriorities, p) {
			l.errf(k, "%s: priority %q is not one of %s", what, p, strings.Join(NotifyPriorities, ", "))
		}
	case "github.batch":
		if st := literal(s.Inputs["strategy"]); st != "" && !slices.Contains(BatchStrategies, st) {
			l.errf(k, "%s: strategy %q is not one of %s%s", what, st, strings.Join(BatchStrategies, ", "), didYouMean(st, BatchStrategies))
		}
		ops, isList := s.Inputs["operations"].([]any)
		if s.Inputs["operations"] != nil && !isList {
			if _, tmpl := s.Inputs["operations"].(*Template); !tmpl {
				l.errf(k, "%s: operations must be a list of operations", what)
			}
		}
		for i, op := range ops {
			l.checkBatchEntry(k, fmt.Sprintf("%s: operations[%d]", what, i), op)
		}
	}
}

// checkBatchEntry checks one github.batch entry: {name, inputs: {...}} as
// AWF runs it, or the inputs inline beside name as AWF's docs write it.
func (l *loader) checkBatchEntry(k *yaml.Node, what string, op any) {
	m, ok := op.(map[string]any)
	if !ok {
		l.errf(k, "%s must be a mapping with a name", what)
		return
	}
	name := literal(m["name"])
	spec, known := Operations[name]
	switch {
	case m["name"] == nil:
		l.errf(k, "%s has no name", what)
		return
	case name == "github.batch":
		l.errf(k, "%s: a batch cannot contain a batch", what)
		return
	case !known || !strings.HasPrefix(name, "github."):
		if _, tmpl := m["name"].(*Template); !tmpl || name != "" {
			var gh []string
			for n := range Operations {
				if strings.HasPrefix(n, "github.") && n != "github.batch" {
					gh = append(gh, n)
				}
			}
			slices.Sort(gh)
			l.errf(k, "%s: name %q is not a github operation (one of %s)%s", what, name, strings.Join(gh, ", "), didYouMean(name, gh))
		}
		return
	}
	inputs := map[string]any{}
	nested, hasNested := m["inputs"]
	for key, v := range m {
		if key != "name" && key != "inputs" {
			inputs[key] = v
		}
	}
	if hasNested {
		nm, ok := nested.(map[string]any)
		if !ok {
			l.errf(k, "%s: inputs must be a mapping", what)
			return
		}
		if len(inputs) > 0 {
			l.errf(k, "%s gives inputs both under inputs and beside name; use one form", what)
			return
		}
		inputs = nm
	}
	l.checkOpInputs(k, what+" ("+name+")", name, spec, inputs)
}

func (l *loader) checkOpInputs(k *yaml.Node, what, op string, spec OperationSpec, inputs map[string]any) {
	for _, r := range spec.Required {
		if _, ok := inputs[r]; !ok {
			l.errf(k, "%s needs inputs.%s", what, r)
		}
	}
	known := append(append([]string{}, spec.Required...), spec.Optional...)
	for _, key := range slices.Sorted(maps.Keys(inputs)) {
		if !slices.Contains(known, key) {
			l.errf(k, "%s: unknown input %q (inputs of %s: %s)%s", what, key, op, strings.Join(known, ", "), didYouMean(key, known))
		}
	}
}

// literal returns v as text when it is a literal string (a template
// without {{ }}) or scalar, else "".
func literal(v any) string {
	switch v := v.(type) {
	case *Template:
		if v != nil && v.tmpl == nil {
			return v.Source
		}
		return ""
	case nil, map[string]any, []any:
		return ""
	}
	return fmt.Sprint(v)
}
