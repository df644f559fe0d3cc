package workflow

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

var inputFields = []string{"name", "type", "required", "default", "validation", "description"}
var validationFields = []string{"pattern", "enum", "min", "max", "file_exists", "file_extension"}

func (l *loader) inputs(n *yaml.Node) []Input {
	if isNull(n) {
		return nil
	}
	var out []Input
	seen := map[string]bool{}
	l.list(n, "inputs", "input", func(c *yaml.Node, fs []field) {
		in := Input{Type: InputString, Pos: pos(c)}
		var def *yaml.Node
		for _, f := range fs {
			switch f.key.Value {
			case "name":
				in.Name, _ = l.str(f.val, "input name")
			case "type":
				if s, ok := l.str(f.val, "input type"); ok {
					if l.oneOf(f.val, "input type", s, InputTypes) {
						in.Type = s
					}
				}
			case "required":
				in.Required, _ = l.boolv(f.val, "required")
			case "default":
				def = f.val
			case "validation":
				in.Validation = l.inputValidation(f.val)
			case "description":
				in.Description, _ = l.str(f.val, "description")
			default:
				if contains(validationFields, f.key.Value) {
					// AWF reads validation rules only under validation:
					// and skips them here; so does reel, but says so.
					l.warnf(f.key, "input %q: %q is ignored here; validation rules go under validation:", in.Name, f.key.Value)
					continue
				}
				l.unknownField(f.key, "an input", inputFields, "")
			}
		}
		if in.Name == "" {
			l.errf(c, "input is missing its name")
		} else if seen[in.Name] {
			l.errf(c, "duplicate input %q", in.Name)
		}
		seen[in.Name] = true
		if def != nil {
			in.Default = l.inputDefault(def, in)
		}
		if in.Default != nil {
			if in.Required {
				l.warnf(def, "input %q is required, so its default is never used (AWF asks for the value all the same)", in.Name)
			}
			if _, err := ParseInput(in, *in.Default); err != nil {
				l.errf(def, "default of input %q: %v", in.Name, err)
			}
		}
		out = append(out, in)
	})
	return out
}

// inputDefault reads a default: a scalar, or for an array input a list
// (kept as its JSON).
func (l *loader) inputDefault(n *yaml.Node, in Input) *string {
	switch {
	case isNull(n):
		return nil
	case n.Kind == yaml.ScalarNode:
		v := n.Value
		return &v
	case n.Kind == yaml.SequenceNode && in.Type == InputArray:
		b, err := json.Marshal(l.value(n, "default", false))
		if err != nil {
			l.errf(n, "default of input %q: %v", in.Name, err)
			return nil
		}
		v := string(b)
		return &v
	}
	l.errf(n, "default must be a scalar%s, got %s", map[bool]string{true: " or a list", false: ""}[in.Type == InputArray], kindName(n))
	return nil
}

func (l *loader) inputValidation(n *yaml.Node) *InputValidation {
	fs, ok := l.mapping(n, "validation")
	if !ok {
		return nil
	}
	v := &InputValidation{}
	for _, f := range fs {
		switch f.key.Value {
		case "pattern":
			if s, ok := l.str(f.val, "pattern"); ok {
				if _, err := regexp.Compile(s); err != nil {
					l.errf(f.val, "pattern: %v", err)
				} else {
					v.Pattern = s
				}
			}
		case "enum":
			v.Enum = l.scalarList(f.val, "enum")
		case "file_extension":
			v.FileExtension = l.scalarList(f.val, "file_extension")
		case "min":
			if x, ok := l.floatv(f.val, "min"); ok {
				v.Min = &x
			}
		case "max":
			if x, ok := l.floatv(f.val, "max"); ok {
				v.Max = &x
			}
		case "file_exists":
			v.FileExists, _ = l.boolv(f.val, "file_exists")
		default:
			l.unknownField(f.key, "validation", validationFields, "")
		}
	}
	if v.Min != nil && v.Max != nil && *v.Min > *v.Max {
		l.errf(n, "validation: min %v is above max %v", *v.Min, *v.Max)
	}
	return v
}

// scalarList reads a list of scalars as their text.
func (l *loader) scalarList(n *yaml.Node, what string) []string {
	if n.Kind != yaml.SequenceNode {
		l.errf(n, "%s must be a list, got %s", what, kindName(n))
		return nil
	}
	var out []string
	for _, c := range n.Content {
		c = deref(c)
		if c.Kind != yaml.ScalarNode || isNull(c) {
			l.errf(c, "%s entries must be scalars", what)
			continue
		}
		out = append(out, c.Value)
	}
	return out
}

var outputFields = []string{"name", "from", "description"}

func (l *loader) outputs(n *yaml.Node) []Output {
	if isNull(n) {
		return nil
	}
	var out []Output
	l.list(n, "outputs", "output", func(c *yaml.Node, fs []field) {
		o := Output{Pos: pos(c)}
		for _, f := range fs {
			switch f.key.Value {
			case "name":
				o.Name, _ = l.str(f.val, "output name")
			case "from":
				o.From = l.expr(f.val, "output from", false)
			case "description":
				l.str(f.val, "description")
			default:
				l.unknownField(f.key, "an output", outputFields, "")
			}
		}
		if o.Name == "" {
			l.errf(c, "output is missing its name")
		}
		if o.From == nil {
			l.errf(c, "output %q is missing \"from\"", o.Name)
		}
		out = append(out, o)
	})
	return out
}

// Undeclared returns the names among given that wf declares no input for,
// sorted. AWF ignores such values (an --input, a call_workflow input);
// reel ignores them too, and says so.
func (wf *Workflow) Undeclared(given map[string]string) []string {
	var out []string
	for name := range given {
		if !slices.ContainsFunc(wf.Inputs, func(in Input) bool { return in.Name == name }) {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// CheckInputValue reports whether value is acceptable for in.
func CheckInputValue(in Input, value string) error {
	_, err := ParseInput(in, value)
	return err
}

// ParseInput converts an input value to its type and checks it against the
// input's validation rules, as AWF does: integer (42), number (3.14),
// boolean (true/false, yes/no, 1/0, any case), array (a JSON array, or
// comma-separated values) and string. v is the text given on the command
// line, or a value from the project configuration (a number, a boolean,
// a list). The rules apply as in AWF: pattern, enum, file_exists and
// file_extension to strings; min and max to integers and numbers.
func ParseInput(in Input, v any) (any, error) {
	s, isText := v.(string)
	if !isText {
		switch x := v.(type) {
		case nil:
			s = ""
		case []any:
			if in.Type != InputArray {
				return nil, fmt.Errorf("a list is not a %s", in.Type)
			}
			return x, nil
		case bool:
			s = strconv.FormatBool(x)
		case float64:
			s = strconv.FormatFloat(x, 'f', -1, 64)
		default:
			s = fmt.Sprint(x)
		}
	}
	var val any = s
	switch in.Type {
	case InputInteger:
		n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
		if err != nil {
			f, ferr := strconv.ParseFloat(strings.TrimSpace(s), 64)
			if ferr != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
				return nil, fmt.Errorf("%q is not an integer", s)
			}
			n = int64(f)
		}
		val = n
	case InputNumber:
		f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, fmt.Errorf("%q is not a number", s)
		}
		val = f
	case InputBoolean:
		switch strings.ToLower(strings.TrimSpace(s)) {
		case "true", "yes", "1":
			val = true
		case "false", "no", "0":
			val = false
		default:
			return nil, fmt.Errorf("%q is not a boolean (true/false, yes/no, 1/0)", s)
		}
	case InputArray:
		a, err := ParseList(s)
		if err != nil {
			return nil, err
		}
		val = a
	}
	if err := checkRules(in.Validation, in.Type, s, val); err != nil {
		return nil, err
	}
	return val, nil
}

// ParseList reads a list given as text: a JSON array, or else
// comma-separated values (each trimmed), which is how AWF reads a
// for_each's items. An empty text is an empty list.
func ParseList(s string) ([]any, error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return []any{}, nil
	}
	var a []any
	if err := json.Unmarshal([]byte(t), &a); err == nil {
		return a, nil
	} else if strings.HasPrefix(t, "[") {
		return nil, fmt.Errorf("%q is not a JSON array: %v", truncate(t, 60), err)
	}
	parts := strings.Split(s, ",")
	out := make([]any, len(parts))
	for i, p := range parts {
		out[i] = strings.TrimSpace(p)
	}
	return out, nil
}

func checkRules(v *InputValidation, typ, text string, val any) error {
	if v == nil {
		return nil
	}
	if typ == InputString {
		if v.Pattern != "" {
			re, err := regexp.Compile(v.Pattern)
			if err != nil {
				return fmt.Errorf("pattern %q: %w", v.Pattern, err)
			}
			if !re.MatchString(text) {
				return fmt.Errorf("%q does not match pattern %q", text, v.Pattern)
			}
		}
		if len(v.Enum) > 0 && !contains(v.Enum, text) {
			return fmt.Errorf("%q is not one of %s%s", text, strings.Join(v.Enum, ", "), didYouMean(text, v.Enum))
		}
		if v.FileExists {
			if text == "" {
				return fmt.Errorf("file path is empty")
			}
			if _, err := os.Stat(text); err != nil {
				return fmt.Errorf("file %q does not exist", text)
			}
		}
		if len(v.FileExtension) > 0 && text != "" {
			ext := filepath.Ext(text)
			ok := false
			for _, e := range v.FileExtension {
				ok = ok || strings.EqualFold(e, ext)
			}
			if !ok {
				return fmt.Errorf("%q does not have one of the extensions %s", text, strings.Join(v.FileExtension, ", "))
			}
		}
	}
	var num float64
	switch x := val.(type) {
	case int64:
		num = float64(x)
	case float64:
		num = x
	default:
		return nil
	}
	if v.Min != nil && num < *v.Min {
		return fmt.Errorf("%s is below the minimum %v", text, *v.Min)
	}
	if v.Max != nil && num > *v.Max {
		return fmt.Errorf("%s is above the maximum %v", text, *v.Max)
	}
	return nil
}
