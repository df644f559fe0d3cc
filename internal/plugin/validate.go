package plugin

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/reelhq/reel/internal/plugin/pluginv1"
	"github.com/reelhq/reel/internal/workflow"
)

// Severities of an Issue.
const (
	SeverityError   = "error"
	SeverityWarning = "warning"
	SeverityInfo    = "info"
)

// Issue is what a check found in a workflow: a validator plugin's finding,
// or a state naming a plugin operation or step type that cannot run.
type Issue struct {
	// Plugin is the plugin the issue comes from or concerns.
	Plugin   string `json:"plugin"`
	Severity string `json:"severity"`
	Message  string `json:"message"`
	// State and Field locate it in the workflow ("" for the workflow).
	State string       `json:"state,omitempty"`
	Field string       `json:"field,omitempty"`
	Pos   workflow.Pos `json:"-"`
}

// String is "state S: field F: message (plugin P)".
func (i Issue) String() string {
	var b strings.Builder
	if i.State != "" {
		fmt.Fprintf(&b, "state %s: ", i.State)
	}
	if i.Field != "" {
		fmt.Fprintf(&b, "%s: ", i.Field)
	}
	fmt.Fprintf(&b, "%s (plugin %s)", i.Message, i.Plugin)
	return b.String()
}

// Validators lists the enabled plugins that validate workflows.
func (h *Host) Validators() []string { return h.with(CapValidators) }

// Validate runs every enabled validator plugin on wf: ValidateWorkflow,
// then ValidateStep for each state, within timeout per plugin (AWF's
// --validator-timeout; DefaultValidatorTimeout when 0). A validator that
// cannot start, crashes or does not answer in time gives a warning, and
// the others still run. Issues are in plugin order, each plugin's
// duplicates (same message, state and field) dropped.
func (h *Host) Validate(ctx context.Context, wf *workflow.Workflow, timeout time.Duration) []Issue {
	names := h.Validators()
	if len(names) == 0 {
		return nil
	}
	if timeout <= 0 {
		timeout = DefaultValidatorTimeout
	}
	doc, err := json.Marshal(Definition(wf))
	if err != nil {
		return []Issue{{Plugin: names[0], Severity: SeverityError, Message: "encode the workflow for validators: " + err.Error()}}
	}
	results := make([][]Issue, len(names))
	var wg sync.WaitGroup
	for i, name := range names {
		wg.Go(func() { results[i] = h.validateWith(ctx, name, wf, doc, timeout) })
	}
	wg.Wait()
	var out []Issue
	seen := map[[3]string]bool{}
	for _, issues := range results {
		for _, is := range issues {
			k := [3]string{is.Message, is.State, is.Field}
			if seen[k] {
				continue
			}
			seen[k] = true
			out = append(out, is)
		}
	}
	return out
}

func (h *Host) validateWith(ctx context.Context, name string, wf *workflow.Workflow, doc []byte, timeout time.Duration) []Issue {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	skipped := func(err error) []Issue {
		return []Issue{{Plugin: name, Severity: SeverityWarning, Message: fmt.Sprintf("validator skipped: %v", err)}}
	}
	p, err := h.proc(ctx, name)
	if err != nil {
		return skipped(err)
	}
	var out []Issue
	add := func(state string, issues []*pluginv1.ValidationIssue) {
		for _, is := range issues {
			i := Issue{Plugin: name, Severity: severity(is.GetSeverity()), Message: is.GetMessage(), State: is.GetStep(), Field: is.GetField()}
			if i.State == "" {
				i.State = state
			}
			if st := wf.States[i.State]; st != nil {
				i.Pos = st.Pos
			}
			out = append(out, i)
		}
	}
	resp, err := p.svc.validator.ValidateWorkflow(ctx, &pluginv1.ValidateWorkflowRequest{WorkflowJson: doc})
	if err != nil {
		return append(out, skipped(p.rpcError(ctx, err))...)
	}
	add("", resp.GetIssues())
	for _, state := range wf.Order {
		resp, err := p.svc.validator.ValidateStep(ctx, &pluginv1.ValidateStepRequest{WorkflowJson: doc, StepName: state})
		if err != nil {
			return append(out, skipped(p.rpcError(ctx, err))...)
		}
		add(state, resp.GetIssues())
	}
	return out
}

// severity reads the protocol's severity; unspecified counts as an error,
// as in AWF.
func severity(s pluginv1.Severity) string {
	switch s {
	case pluginv1.Severity_SEVERITY_WARNING:
		return SeverityWarning
	case pluginv1.Severity_SEVERITY_INFO:
		return SeverityInfo
	}
	return SeverityError
}

// WorkflowDefinition is the workflow as validator plugins read it (the
// JSON of AWF's sdk.WorkflowDefinition).
type WorkflowDefinition struct {
	Name        string                    `json:"name"`
	Description string                    `json:"description,omitempty"`
	Version     string                    `json:"version,omitempty"`
	Author      string                    `json:"author,omitempty"`
	Tags        []string                  `json:"tags,omitempty"`
	Initial     string                    `json:"initial"`
	Steps       map[string]StepDefinition `json:"steps"`
}

// StepDefinition is a state as validator plugins read it. Type is AWF's:
// a command state is "command".
type StepDefinition struct {
	Type        string         `json:"type"`
	Description string         `json:"description,omitempty"`
	Command     string         `json:"command,omitempty"`
	Operation   string         `json:"operation,omitempty"`
	Timeout     int            `json:"timeout,omitempty"`
	OnSuccess   string         `json:"on_success,omitempty"`
	OnFailure   string         `json:"on_failure,omitempty"`
	Config      map[string]any `json:"config,omitempty"`
}

// Definition is wf as validator plugins get it. Templates are given as
// written.
func Definition(wf *workflow.Workflow) WorkflowDefinition {
	d := WorkflowDefinition{Name: wf.Name, Description: wf.Description, Version: wf.Version, Author: wf.Author, Tags: wf.Tags,
		Initial: wf.Initial, Steps: make(map[string]StepDefinition, len(wf.States))}
	for name, st := range wf.States {
		sd := StepDefinition{Type: st.Type, Description: st.Description, Operation: st.Operation, OnSuccess: st.OnSuccess, Config: st.Config}
		if st.Type == workflow.TypeStep {
			sd.Type = "command"
		}
		if st.Command != nil {
			sd.Command = st.Command.Source
		} else if st.ScriptFile != "" {
			sd.Command = st.ScriptFile
		}
		if st.Timeout > 0 {
			sd.Timeout = int((st.Timeout + time.Second - 1) / time.Second)
		}
		if st.OnFailure != nil && !st.OnFailure.Inline {
			sd.OnFailure = st.OnFailure.State
		}
		d.Steps[name] = sd
	}
	return d
}

// CheckWorkflow checks the states of wf that name a plugin's operation or
// step type against what the plugin offers: the plugin is installed and
// enabled, the operation or type exists, the operation's required inputs
// are given and its literal inputs fit their types. It starts the plugins
// concerned. What it finds are warnings: each makes its state fail when
// it runs (AWF's validate accepts them all, and a workflow may route that
// failure); reel validate --strict makes them problems.
func (h *Host) CheckWorkflow(ctx context.Context, wf *workflow.Workflow) []Issue {
	if h == nil {
		return nil
	}
	need := map[string]bool{}
	for _, st := range wf.States {
		if p, ok := h.pluginOf(st); ok {
			need[p] = true
		}
		for _, pt := range proxiedPlugins(st) {
			if _, installed := h.installed[pt.Plugin]; installed {
				need[pt.Plugin] = true
			}
		}
	}
	if len(need) == 0 {
		return h.checkProxies(ctx, wf, nil)
	}
	var startable []string
	var out []Issue
	for _, p := range slices.Sorted(maps.Keys(need)) {
		if h.Enabled(p) {
			startable = append(startable, p)
		}
	}
	failed := h.Start(ctx, startable...)
	for _, p := range slices.Sorted(maps.Keys(failed)) {
		out = append(out, Issue{Plugin: p, Severity: SeverityWarning, Message: failed[p].Error()})
	}
	for _, name := range wf.Order {
		st := wf.States[name]
		p, ok := h.pluginOf(st)
		if !ok || failed[p] != nil {
			continue
		}
		issue := func(field, format string, args ...any) {
			out = append(out, Issue{Plugin: p, Severity: SeverityWarning, Message: fmt.Sprintf(format, args...), State: name, Field: field, Pos: st.Pos})
		}
		in := h.installed[p]
		switch {
		case in.Problem != nil:
			issue("", "plugin %s cannot run: %v", p, in.Problem)
		case !h.Enabled(p):
			issue("", "plugin %s is disabled (reel plugin enable %s)", p, p)
		case st.Type == workflow.TypeOperation:
			op, err := h.Operation(ctx, st.Operation)
			if err != nil {
				issue("operation", "%v", err)
				continue
			}
			for _, in := range op.Inputs {
				v, given := st.Inputs[in.Name]
				switch {
				case !given || v == nil:
					if in.Required {
						issue("inputs", "%s: input %s is required (%s)", st.Operation, in.Name, orType(in))
					}
				case !hasTemplate(v):
					if _, err := coerceInput(in, literal(v)); err != nil {
						issue("inputs", "%s: input %s: %v", st.Operation, in.Name, err)
					}
				}
			}
		default:
			types, err := h.StepTypes(ctx, p)
			if err != nil {
				issue("type", "%v", err)
				continue
			}
			found := false
			var names []string
			for _, t := range types {
				names = append(names, t.QualifiedName())
				found = found || t.QualifiedName() == st.Type
			}
			if !found {
				issue("type", "plugin %s has no step type %q (it has: %s)", p, st.Type, strings.Join(names, ", "))
			}
		}
	}
	return dedupe(append(out, h.checkProxies(ctx, wf, failed)...))
}

// proxiedPlugins are the plugin operations a state's enabled mcp_proxy
// serves.
func proxiedPlugins(st *workflow.State) []workflow.PluginTools {
	if m := st.MCPProxy; m != nil && m.Enable {
		return m.PluginTools
	}
	return nil
}

// checkProxies checks the plugin operations the states' mcp_proxy blocks
// expose (AWF's USER.MCP_PROXY.UNKNOWN_PLUGIN and UNKNOWN_OPERATION, which
// are errors: the proxy cannot serve them): each plugin installed and
// enabled, each operation offered. A plugin in failed (it could not
// start) is reported already, as a warning.
func (h *Host) checkProxies(ctx context.Context, wf *workflow.Workflow, failed map[string]error) []Issue {
	var out []Issue
	for _, name := range wf.Order {
		st := wf.States[name]
		for _, pt := range proxiedPlugins(st) {
			issue := func(format string, args ...any) {
				out = append(out, Issue{Plugin: pt.Plugin, Severity: SeverityError, Message: fmt.Sprintf(format, args...),
					State: name, Field: "mcp_proxy.plugin_tools", Pos: pt.Pos})
			}
			in, installed := h.installed[pt.Plugin]
			switch {
			case !installed:
				issue("plugin %q is not installed (%s)", pt.Plugin, h.where())
				continue
			case in.Problem != nil:
				issue("plugin %s cannot run: %v", pt.Plugin, in.Problem)
				continue
			case !h.Enabled(pt.Plugin):
				issue("plugin %s is disabled (reel plugin enable %s)", pt.Plugin, pt.Plugin)
				continue
			case failed[pt.Plugin] != nil:
				continue
			}
			ops, err := h.Operations(ctx, pt.Plugin)
			if err != nil {
				issue("%v", err)
				continue
			}
			have := map[string]bool{}
			var names []string
			for _, op := range ops {
				have[op.Name] = true
				names = append(names, op.Name)
			}
			for _, op := range pt.Expose {
				if !have[op] {
					issue("plugin %s has no operation %q to expose (it has: %s)", pt.Plugin, op, strings.Join(names, ", "))
				}
			}
		}
	}
	return out
}

// pluginOf names the installed plugin a state's operation or type
// belongs to.
func (h *Host) pluginOf(st *workflow.State) (string, bool) {
	name := st.Type
	if st.Type == workflow.TypeOperation {
		name = st.Operation
	} else if slices.Contains(workflow.BuiltinTypes, st.Type) {
		return "", false
	}
	p, _, ok := split(name)
	if !ok {
		return "", false
	}
	_, installed := h.installed[p]
	return p, installed
}

// literal is a value without templates as the run will see it.
func literal(v any) any {
	switch x := v.(type) {
	case *workflow.Template:
		return x.Source
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, y := range x {
			out[k] = literal(y)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, y := range x {
			out[i] = literal(y)
		}
		return out
	}
	return v
}

// hasTemplate reports whether a value holds a template, known only when
// the state runs. (The loader makes every string a *Template; one without
// {{ is the literal it reads.)
func hasTemplate(v any) bool {
	switch x := v.(type) {
	case *workflow.Template:
		return strings.Contains(x.Source, "{{")
	case map[string]any:
		for _, y := range x {
			if hasTemplate(y) {
				return true
			}
		}
	case []any:
		for _, y := range x {
			if hasTemplate(y) {
				return true
			}
		}
	}
	return false
}

func dedupe(issues []Issue) []Issue {
	seen := map[Issue]bool{}
	var out []Issue
	for _, i := range issues {
		if !seen[i] {
			seen[i] = true
			out = append(out, i)
		}
	}
	return out
}
