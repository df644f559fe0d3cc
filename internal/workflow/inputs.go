package workflow

import (
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

var inputFields = []string{"name", "type", "required", "default", "validation", "description"}
var validationFields = []string{"pattern", "enum", "min", "max", "file_exists"}

func (l *loader) inputs(n *yaml.Node) []Input {
	if isNull(n) {
		return nil
	}
	var out []Input
	seen := map[string]bool{}
	l.list(n, "inputs", "input", func(c *yaml.Node, fs []field) {
		in := Input{Type: "string", Pos: pos(c)}
		for _, f := range fs {
			switch f.key.Value {
			case "name":
				in.Name, _ = l.str(f.val, "input name")
			case "type":
				if s, ok := l.str(f.val, "input type"); ok {
					if l.oneOf(f.val, "input type", s, []string{"string", "integer", "boolean"}) {
						in.Type = s
					}
				}
			case "required":
				in.Required, _ = l.boolv(f.val, "required")
			case "default":
				if f.val.Kind != yaml.ScalarNode {
					l.errf(f.val, "default must be a scalar, got %s", kindName(f.val))
				} else if !isNull(f.val) {
					v := f.val.Value
					in.Default = &v
				}
			case "validation":
				in.Validation = l.inputValidation(f.val)
			case "description":
				in.Description, _ = l.str(f.val, "description")
			default:
				l.unknownField(f.key, "an input", inputFields, "")
			}
		}
		if in.Name == "" {
			l.errf(c, "input is missing its name")
		} else if seen[in.Name] {
			l.errf(c, "duplicate input %q", in.Name)
		}
		seen[in.Name] = true
		if in.Default != nil {
			if err := CheckInputValue(in, *in.Default); err != nil {
				l.errf(c, "default of input %q: %v", in.Name, err)
			}
		}
		out = append(out, in)
	})
	return out
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
			if f.val.Kind != yaml.SequenceNode {
				l.errf(f.val, "enum must be a list, got %s", kindName(f.val))
				continue
			}
			for _, c := range f.val.Content {
				c = deref(c)
				if c.Kind != yaml.ScalarNode {
					l.errf(c, "enum entries must be scalars")
					continue
				}
				v.Enum = append(v.Enum, c.Value)
			}
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
	return v
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

// CheckInputValue reports whether value is acceptable for in.
func CheckInputValue(in Input, value string) error {
	var num float64
	switch in.Type {
	case "integer":
		n, err := strconv.ParseInt(strings.TrimSpace(value), 10, 64)
		if err != nil {
			return fmt.Errorf("%q is not an integer", value)
		}
		num = float64(n)
	case "boolean":
		if _, err := strconv.ParseBool(strings.TrimSpace(value)); err != nil {
			return fmt.Errorf("%q is not a boolean", value)
		}
	}
	v := in.Validation
	if v == nil {
		return nil
	}
	if v.Pattern != "" {
		re, err := regexp.Compile(v.Pattern)
		if err != nil {
			return fmt.Errorf("pattern %q: %w", v.Pattern, err)
		}
		if !re.MatchString(value) {
			return fmt.Errorf("%q does not match pattern %q", value, v.Pattern)
		}
	}
	if len(v.Enum) > 0 && !contains(v.Enum, value) {
		return fmt.Errorf("%q is not one of %s", value, strings.Join(v.Enum, ", "))
	}
	if v.Min != nil || v.Max != nil {
		if in.Type != "integer" {
			num = float64(len([]rune(value)))
		}
		if v.Min != nil && num < *v.Min {
			return fmt.Errorf("%q is below the minimum %v", value, *v.Min)
		}
		if v.Max != nil && num > *v.Max {
			return fmt.Errorf("%q is above the maximum %v", value, *v.Max)
		}
	}
	if v.FileExists {
		if _, err := os.Stat(value); err != nil {
			return fmt.Errorf("file %q does not exist", value)
		}
	}
	return nil
}
