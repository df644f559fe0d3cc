package plugin

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
)

func sortedKeys[K cmp.Ordered, V any](m map[K]V) []K { return slices.Sorted(maps.Keys(m)) }

// toInteger reads v as an integer: a Go integer, a whole float (JSON and
// YAML numbers) or the text of one (a value a template rendered).
func toInteger(v any) (int64, error) {
	switch x := v.(type) {
	case int:
		return int64(x), nil
	case int64:
		return x, nil
	case int32:
		return int64(x), nil
	case uint64:
		if x > math.MaxInt64 {
			return 0, fmt.Errorf("%d is out of range", x)
		}
		return int64(x), nil
	case float64:
		if x != math.Trunc(x) || math.IsInf(x, 0) || x > math.MaxInt64 || x < math.MinInt64 {
			return 0, fmt.Errorf("want an integer, got %v", x)
		}
		return int64(x), nil
	case string:
		n, err := strconv.ParseInt(strings.TrimSpace(x), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("want an integer, got %q", x)
		}
		return n, nil
	}
	return 0, fmt.Errorf("want an integer, got %s", describe(v))
}

// toBoolean reads v as a boolean, or the text true or false.
func toBoolean(v any) (bool, error) {
	switch x := v.(type) {
	case bool:
		return x, nil
	case string:
		switch strings.ToLower(strings.TrimSpace(x)) {
		case "true":
			return true, nil
		case "false":
			return false, nil
		}
		return false, fmt.Errorf("want true or false, got %q", x)
	}
	return false, fmt.Errorf("want true or false, got %s", describe(v))
}

// describe names a value's kind for an error message.
func describe(v any) string {
	switch x := v.(type) {
	case nil:
		return "nothing"
	case string:
		return strconv.Quote(x)
	case bool:
		return "a boolean"
	case int, int64, int32, uint64, float64:
		return "a number"
	case []any:
		return "a list"
	case map[string]any:
		return "a mapping"
	}
	return fmt.Sprintf("%T", v)
}
