package agentlog

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// randValue builds a random JSON value: nested objects and arrays, strings
// with control characters and non-ASCII text, integers and fractions.
func randValue(r *rand.Rand, depth int) any {
	switch k := r.Intn(7); {
	case depth > 3 || k == 0:
		return []any{nil, true, false}[r.Intn(3)]
	case k == 1:
		return float64(r.Int63n(1<<40) - 1<<39)
	case k == 2:
		return r.NormFloat64() * 1e3
	case k == 3:
		var b strings.Builder
		runes := []rune("ab\n\t\x01\x1f\"\\éü→🙂 ")
		for n := r.Intn(12); n > 0; n-- {
			b.WriteRune(runes[r.Intn(len(runes))])
		}
		return b.String()
	case k == 4:
		a := make([]any, r.Intn(4))
		for i := range a {
			a[i] = randValue(r, depth+1)
		}
		return a
	default:
		m := map[string]any{}
		for n := r.Intn(5); n > 0; n-- {
			m[fmt.Sprintf("k%c%d", 'a'+r.Intn(26), r.Intn(100))] = randValue(r, depth+1)
		}
		return m
	}
}

// TestCanonicalProperties: the id ignores layout and key order, canonical
// bytes are valid JSON of the same value, and canonicalising is idempotent.
func TestCanonicalProperties(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	for i := 0; i < 2000; i++ {
		v := randValue(r, 0)
		compact, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		indented, _ := json.MarshalIndent(v, "", "   ")
		id1, err1 := ContentID(compact)
		id2, err2 := ContentID(indented)
		if err1 != nil || err2 != nil || id1 != id2 {
			t.Fatalf("layout changed the id of %s: %s %s (%v %v)", compact, id1, id2, err1, err2)
		}
		c, err := Canonical(compact)
		if err != nil {
			t.Fatal(err)
		}
		if !json.Valid(c) || bytes.ContainsAny(c, "\n\r") {
			t.Fatalf("canonical form of %s is not one JSON line: %s", compact, c)
		}
		var a, b any
		json.Unmarshal(compact, &a)
		json.Unmarshal(c, &b)
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("canonical form changed the value:\n%s\n%s", compact, c)
		}
		again, err := Canonical(c)
		if err != nil || !bytes.Equal(again, c) {
			t.Fatalf("not idempotent: %s → %s", c, again)
		}
	}
}

// referenceCanonical is the straightforward canonicaliser: decode into Go
// values with encoding/json, then write them sorted. Canonical must agree
// with it on every valid input.
func referenceCanonical(raw []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return appendReference(nil, v)
}

func appendReference(dst []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return append(dst, "null"...), nil
	case bool:
		if x {
			return append(dst, "true"...), nil
		}
		return append(dst, "false"...), nil
	case json.Number:
		return appendNumber(dst, string(x))
	case string:
		return appendEscaped(dst, nfc(x)), nil
	case []any:
		dst = append(dst, '[')
		for i, e := range x {
			if i > 0 {
				dst = append(dst, ',')
			}
			var err error
			if dst, err = appendReference(dst, e); err != nil {
				return dst, err
			}
		}
		return append(dst, ']'), nil
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool {
			if a, b := nfc(keys[i]), nfc(keys[j]); a != b {
				return a < b
			}
			return keys[i] < keys[j]
		})
		dst = append(dst, '{')
		for i, k := range keys {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendEscaped(dst, nfc(k))
			dst = append(dst, ':')
			var err error
			if dst, err = appendReference(dst, x[k]); err != nil {
				return dst, err
			}
		}
		return append(dst, '}'), nil
	}
	return dst, fmt.Errorf("unexpected %T", v)
}

// FuzzCanonical checks the streaming canonicaliser against the reference on
// whatever JSON the fuzzer finds, and that it never accepts invalid JSON.
func FuzzCanonical(f *testing.F) {
	for _, s := range []string{`{"hello":"world"}`, `{"b":[1.0,-0,1e20,"\u00e9\ud83d\ude00\ud800x"],"a":{"a":1,"a":2}}`,
		`"e\u0301\n\u0001\"\\"`, "[\"\xff\xfe\", 18446744073709551616, -9223372036854775809]", `{"é":1,"é":2}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		got, err := Canonical(in)
		if !json.Valid(in) {
			if err == nil {
				t.Fatalf("accepted invalid JSON %q as %q", in, got)
			}
			return
		}
		want, werr := referenceCanonical(in)
		if (err == nil) != (werr == nil) {
			t.Fatalf("%q: streaming err %v, reference err %v", in, err, werr)
		}
		if err == nil && !bytes.Equal(got, want) {
			t.Fatalf("%q:\nstreaming %q\nreference %q", in, got, want)
		}
	})
}
