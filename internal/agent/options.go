package agent

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Options come from YAML (ints, floats, strings, lists) or JSON (float64,
// json.Number); these accessors accept each natural spelling and name the
// option in their errors.

func optString(opts map[string]any, key string) (string, error) {
	v, ok := opts[key]
	if !ok || v == nil {
		return "", nil
	}
	switch s := v.(type) {
	case string:
		return s, nil
	case fmt.Stringer:
		return s.String(), nil
	}
	return "", fmt.Errorf("options.%s: want a string, got %T", key, v)
}

func optInt(opts map[string]any, key string) (int64, bool, error) {
	v, ok := opts[key]
	if !ok || v == nil {
		return 0, false, nil
	}
	switch n := v.(type) {
	case int:
		return int64(n), true, nil
	case int64:
		return n, true, nil
	case int32:
		return int64(n), true, nil
	case uint64:
		if n <= math.MaxInt64 {
			return int64(n), true, nil
		}
	case float64:
		if n == math.Trunc(n) && math.Abs(n) < 1<<53 {
			return int64(n), true, nil
		}
	case json.Number:
		if i, err := n.Int64(); err == nil {
			return i, true, nil
		}
	case string:
		if i, err := strconv.ParseInt(strings.TrimSpace(n), 10, 64); err == nil {
			return i, true, nil
		}
	}
	return 0, false, fmt.Errorf("options.%s: want an integer, got %v (%T)", key, v, v)
}

func optFloat(opts map[string]any, key string) (float64, bool, error) {
	v, ok := opts[key]
	if !ok || v == nil {
		return 0, false, nil
	}
	switch n := v.(type) {
	case float64:
		return n, true, nil
	case float32:
		return float64(n), true, nil
	case int:
		return float64(n), true, nil
	case int64:
		return float64(n), true, nil
	case json.Number:
		if f, err := n.Float64(); err == nil {
			return f, true, nil
		}
	case string:
		if f, err := strconv.ParseFloat(strings.TrimSpace(n), 64); err == nil {
			return f, true, nil
		}
	}
	return 0, false, fmt.Errorf("options.%s: want a number, got %v (%T)", key, v, v)
}

// optStrings accepts a list of strings, or one string for a one-element
// list.
func optStrings(opts map[string]any, key string) ([]string, bool, error) {
	v, ok := opts[key]
	if !ok || v == nil {
		return nil, false, nil
	}
	switch l := v.(type) {
	case string:
		return []string{l}, true, nil
	case []string:
		return l, true, nil
	case []any:
		out := make([]string, 0, len(l))
		for i, e := range l {
			s, ok := e.(string)
			if !ok {
				return nil, false, fmt.Errorf("options.%s[%d]: want a string, got %T", key, i, e)
			}
			out = append(out, s)
		}
		return out, true, nil
	}
	return nil, false, fmt.Errorf("options.%s: want a list of strings, got %T", key, v)
}

// lookupEnv returns the last value of name in env, as the kernel's getenv
// would after a later assignment overrode an earlier one.
func lookupEnv(env []string, name string) (string, bool) {
	for i := len(env) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(env[i], "="); ok && k == name {
			return v, true
		}
	}
	return "", false
}
