package plugin

import (
	"context"
	"encoding/json"
	"fmt"
	"net/mail"
	"net/url"
	"sort"
	"strings"

	"github.com/reelhq/reel/internal/plugin/pluginv1"
)

// Operation describes one operation a plugin offers.
type Operation struct {
	Plugin      string   `json:"plugin"`
	Name        string   `json:"name"`
	Description string   `json:"description,omitempty"`
	Inputs      []Input  `json:"inputs,omitempty"`
	Outputs     []Output `json:"outputs,omitempty"`
}

// Input describes an operation input. Type is string, integer, boolean,
// array or object ("" when the plugin declares none); Default is its
// default written as text; Validation is url, email or "".
type Input struct {
	Name        string `json:"name"`
	Type        string `json:"type,omitempty"`
	Required    bool   `json:"required,omitempty"`
	Default     string `json:"default,omitempty"`
	Description string `json:"description,omitempty"`
	Validation  string `json:"validation,omitempty"`
}

// Output describes a field of an operation's result.
type Output struct {
	Name        string `json:"name"`
	Type        string `json:"type,omitempty"`
	Description string `json:"description,omitempty"`
}

// QualifiedName is PLUGIN.OP, the name a workflow's operation: uses.
func (o Operation) QualifiedName() string { return o.Plugin + "." + o.Name }

// InputSchema is the operation's inputs as a JSON Schema object (AWF's
// mapping for MCP tools: the type as is, the default as a value of that
// type, url and email as formats uri and email). An array takes items of
// any type: OpenAI's function calling refuses an array schema without
// items, and codex hands the proxy's tools to OpenAI's models.
func (o Operation) InputSchema() map[string]any {
	props := map[string]any{}
	required := []string{}
	for _, in := range o.Inputs {
		p := map[string]any{}
		if in.Type != "" {
			p["type"] = in.Type
		}
		if in.Type == "array" {
			p["items"] = map[string]any{}
		}
		if in.Description != "" {
			p["description"] = in.Description
		}
		if in.Default != "" {
			if v, err := coerceInput(in, in.Default); err == nil {
				p["default"] = v
			}
		}
		switch in.Validation {
		case "url":
			p["format"] = "uri"
		case "email":
			p["format"] = "email"
		}
		props[in.Name] = p
		if in.Required {
			required = append(required, in.Name)
		}
	}
	return map[string]any{"type": "object", "properties": props, "required": required}
}

func operationOf(plugin string, s *pluginv1.OperationSchema) Operation {
	op := Operation{Plugin: plugin, Name: s.GetName(), Description: s.GetDescription()}
	for _, in := range s.GetInputs() {
		op.Inputs = append(op.Inputs, Input{Name: in.GetName(), Type: in.GetType(), Required: in.GetRequired(),
			Default: in.GetDefault(), Description: in.GetDescription(), Validation: in.GetValidation()})
	}
	for _, out := range s.GetOutputs() {
		op.Outputs = append(op.Outputs, Output{Name: out.GetName(), Type: out.GetType(), Description: out.GetDescription()})
	}
	return op
}

// OperationResult is what a plugin operation did, as its step records it.
type OperationResult struct {
	Plugin    string         `json:"plugin"`
	Operation string         `json:"operation"`
	Inputs    map[string]any `json:"inputs"`
	Success   bool           `json:"success"`
	// Output is the text the plugin answered (ExecuteResponse.output).
	Output string `json:"output,omitempty"`
	// Outputs are AWF's view of the result, which templates read as
	// .states.NAME.Response: the data the plugin answered, with its
	// output text under "output" unless the data has that key.
	Outputs map[string]any `json:"outputs"`
	Error   string         `json:"error,omitempty"`
}

// Text is the step output AWF gives a plugin operation (.states.NAME.Output):
// key=value lines, one per output, here in key order.
func (r *OperationResult) Text() string {
	keys := sortedKeys(r.Outputs)
	lines := make([]string, len(keys))
	for i, k := range keys {
		lines[i] = fmt.Sprintf("%s=%v", k, r.Outputs[k])
	}
	return strings.Join(lines, "\n")
}

// split cuts PLUGIN.REST.
func split(name string) (plugin, rest string, ok bool) {
	plugin, rest, ok = strings.Cut(name, ".")
	return plugin, rest, ok && plugin != "" && rest != ""
}

// ProvidesOperation reports whether name (PLUGIN.OP) is in the namespace
// of an installed plugin, enabled or not: the operation is then the
// plugin's to run or to refuse.
func (h *Host) ProvidesOperation(name string) bool {
	p, _, ok := split(name)
	_, installed := h.Lookup(p)
	return ok && installed
}

// Operations lists the operations of a plugin, with their schemas,
// starting it if need be.
func (h *Host) Operations(ctx context.Context, plugin string) ([]Operation, error) {
	p, err := h.proc(ctx, plugin)
	if err != nil {
		return nil, err
	}
	if len(p.opNames) == 0 && !p.in.Manifest.Has(CapOperations) {
		return nil, unknown("plugin %s offers no operations (its capabilities: %s)", plugin, strings.Join(p.in.Manifest.Capabilities, ", "))
	}
	out := make([]Operation, 0, len(p.opNames))
	for _, n := range p.opNames {
		out = append(out, operationOf(plugin, p.ops[n]))
	}
	return out, nil
}

// Operation describes the operation PLUGIN.OP.
func (h *Host) Operation(ctx context.Context, name string) (Operation, error) {
	plugin, op, ok := split(name)
	if !ok {
		return Operation{}, unknown("operation %q: want PLUGIN.OPERATION", name)
	}
	ops, err := h.Operations(ctx, plugin)
	if err != nil {
		return Operation{}, err
	}
	for _, o := range ops {
		if o.Name == op {
			return o, nil
		}
	}
	names := make([]string, len(ops))
	for i, o := range ops {
		names[i] = o.Name
	}
	return Operation{}, unknown("plugin %s has no operation %q (it has: %s)", plugin, op, strings.Join(names, ", "))
}

// Operate runs the operation PLUGIN.OP with inputs, checked against its
// schema first. The error is the host's (the plugin is missing, disabled,
// failed to start, crashed, or ctx ended); a failure the plugin reports
// is a result with Success false and its Error.
func (h *Host) Operate(ctx context.Context, name string, inputs map[string]any) (*OperationResult, error) {
	op, err := h.Operation(ctx, name)
	if err != nil {
		return nil, err
	}
	p, err := h.proc(ctx, op.Plugin)
	if err != nil {
		return nil, err
	}
	in, err := CheckInputs(op, inputs)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	req := &pluginv1.ExecuteRequest{Operation: op.Name, Inputs: make(map[string][]byte, len(in))}
	for k, v := range in {
		b, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("%s: input %s: %v", name, k, err)
		}
		req.Inputs[k] = b
	}
	res := &OperationResult{Plugin: op.Plugin, Operation: name, Inputs: in, Outputs: map[string]any{}}
	resp, err := p.svc.operation.Execute(ctx, req)
	if err != nil {
		return res, fmt.Errorf("%s: %w", name, p.rpcError(ctx, err))
	}
	res.Success, res.Output, res.Error = resp.GetSuccess(), resp.GetOutput(), resp.GetError()
	if res.Output != "" {
		res.Outputs["output"] = res.Output
	}
	for k, raw := range resp.GetData() {
		var v any
		if json.Unmarshal(raw, &v) != nil {
			v = string(raw)
		}
		res.Outputs[k] = v
	}
	if !res.Success && res.Error == "" {
		res.Error = "operation failed"
	}
	return res, nil
}

// InputError lists the inputs that do not fit an operation's schema.
type InputError struct{ Problems []string }

func (e *InputError) Error() string { return "inputs: " + strings.Join(e.Problems, "; ") }

// CheckInputs checks inputs against the operation's declared inputs and
// returns them as the plugin is to get them: a value a template rendered
// as text becomes the integer, boolean, list or object the schema
// declares, and a number or boolean given for a string input becomes its
// text. A required input that is missing (or an empty string) and a value
// that cannot be read as its type are errors; undeclared inputs pass as
// they are. An operation that declares no inputs takes anything.
func CheckInputs(op Operation, inputs map[string]any) (map[string]any, error) {
	out := make(map[string]any, len(inputs))
	for k, v := range inputs {
		out[k] = v
	}
	var probs []string
	decl := append([]Input(nil), op.Inputs...)
	sort.Slice(decl, func(i, j int) bool { return decl[i].Name < decl[j].Name })
	for _, in := range decl {
		v, ok := out[in.Name]
		if !ok || v == nil || v == "" {
			if in.Required {
				probs = append(probs, fmt.Sprintf("%s is required (%s)", in.Name, orType(in)))
			}
			continue
		}
		c, err := coerceInput(in, v)
		if err != nil {
			probs = append(probs, fmt.Sprintf("%s: %v", in.Name, err))
			continue
		}
		out[in.Name] = c
	}
	if len(probs) > 0 {
		return nil, &InputError{Problems: probs}
	}
	return out, nil
}

func orType(in Input) string {
	s := in.Type
	if s == "" {
		s = "any type"
	}
	if in.Description != "" {
		s += ": " + in.Description
	}
	return s
}

func coerceInput(in Input, v any) (any, error) {
	var out any
	switch in.Type {
	case "":
		return v, nil
	case "string":
		switch x := v.(type) {
		case string:
			out = x
		case bool, int, int64, uint64, float64:
			out = fmt.Sprint(x)
		default:
			return nil, fmt.Errorf("want a string, got %s", describe(v))
		}
	case "integer":
		n, err := toInteger(v)
		if err != nil {
			return nil, err
		}
		out = n
	case "boolean":
		b, err := toBoolean(v)
		if err != nil {
			return nil, err
		}
		out = b
	case "array", "object":
		if s, ok := v.(string); ok {
			var x any
			if json.Unmarshal([]byte(s), &x) != nil {
				return nil, fmt.Errorf("want %s, got %s", article(in.Type), describe(v))
			}
			v = x
		}
		_, isList := v.([]any)
		_, isMap := v.(map[string]any)
		if (in.Type == "array" && !isList) || (in.Type == "object" && !isMap) {
			return nil, fmt.Errorf("want %s, got %s", article(in.Type), describe(v))
		}
		out = v
	default:
		return nil, fmt.Errorf("the plugin declares an unknown type %q", in.Type)
	}
	if s, ok := out.(string); ok {
		if err := checkRule(in.Validation, s); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func article(typ string) string {
	if typ == "array" {
		return "a list (array)"
	}
	return "a mapping (object)"
}

// checkRule applies an input's validation rule (url or email).
func checkRule(rule, s string) error {
	switch rule {
	case "url":
		u, err := url.ParseRequestURI(s)
		if err != nil || u.Scheme == "" {
			return fmt.Errorf("%q is not a URL", s)
		}
	case "email":
		if _, err := mail.ParseAddress(s); err != nil {
			return fmt.Errorf("%q is not an email address", s)
		}
	}
	return nil
}
