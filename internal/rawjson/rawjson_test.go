package rawjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"
)

func TestLookup(t *testing.T) {
	line := []byte(`{"seq":3,"run_id":"r","type":"tool.result","path":"a.b","payload":{"name":"Read","call_id":"x\"y","input":{"path":"m.go","n":[1,{"k":"}"}]},"output":"pa\\\"ck\u00e9","blocks":[{"t":1},{"t":"two"}]}}`)
	cases := []struct {
		path string
		want string
		ok   bool
	}{
		{"type", `"tool.result"`, true},
		{"seq", `3`, true},
		{"payload.name", `"Read"`, true},
		{"payload.call_id", `"x\"y"`, true},
		{"payload.input.n.1.k", `"}"`, true},
		{"payload.blocks.1.t", `"two"`, true},
		{"payload.blocks.2.t", ``, false},
		{"payload.blocks.x", ``, false},
		{"payload.missing", ``, false},
		{"type.inner", ``, false},
		{"payload.input", `{"path":"m.go","n":[1,{"k":"}"}]}`, true},
	}
	for _, c := range cases {
		got, ok, err := Lookup(line, strings.Split(c.path, "."))
		if err != nil {
			t.Fatalf("%s: %v", c.path, err)
		}
		if ok != c.ok || string(got) != c.want {
			t.Errorf("Lookup(%s) = %q, %v; want %q, %v", c.path, got, ok, c.want, c.ok)
		}
	}
	out, _, _ := Lookup(line, []string{"payload", "output"})
	if got := string(AppendText(nil, out)); got != `pa\"cké` {
		t.Errorf("AppendText = %q", got)
	}
	if s, ok := String([]byte(`"a\u0000b"`)); !ok || s != "a\x00b" {
		t.Errorf("String = %q, %v", s, ok)
	}
}

func TestFinder(t *testing.T) {
	f := NewFinder("type")
	for in, want := range map[string]string{
		`{"seq":1,"type":"tool.call","payload":{"type":"x"}}`: "tool.call",
		`{"payload":{"type":"x"},"type":"tool.call"}`:         "tool.call",
		`{"a":"\"type\":\"no","type":"yes"}`:                  "yes",
		`{"a":"x","type" : "spaced"}`:                         "spaced",
		`{"type":"esc\u0061ped"}`:                             "escaped",
		`{"atype":"no","type":"yes"}`:                         "yes",
		`{"list":["{"],"type":"after"}`:                       "after",
	} {
		v, ok, err := f.String([]byte(in))
		if err != nil || !ok || string(v) != want {
			t.Errorf("Finder.String(%s) = %q, %v, %v; want %q", in, v, ok, err, want)
		}
	}
	if _, ok, _ := f.String([]byte(`{"payload":{"type":"x"}}`)); ok {
		t.Error("nested type found at top level")
	}
}

func TestMalformed(t *testing.T) {
	for _, in := range []string{
		`{"seq":1,"type`,
		`{"seq":1,"run_id":"abc`,
		`{"seq":1 "type":"x"}`,
		`{"a":{"b":[}],"type":"x"}`,
		`{"a":tru,"type":"x"}`,
		`{"a":"x\\"`,
	} {
		if _, ok, err := Field([]byte(in), "type"); ok || !errors.Is(err, ErrSyntax) {
			t.Errorf("Field(%q) = ok %v, err %v; want ErrSyntax", in, ok, err)
		}
	}
	if _, ok, err := Field([]byte(`[1,2]`), "type"); ok || err != nil {
		t.Errorf("non-object: ok %v err %v", ok, err)
	}
}

// reference finds path with encoding/json's tokenizer, taking the first of
// duplicated keys as Lookup does.
func reference(data []byte, path []string) (json.RawMessage, bool) {
	cur := json.RawMessage(data)
	for _, key := range path {
		dec := json.NewDecoder(bytes.NewReader(cur))
		tok, err := dec.Token()
		if err != nil {
			return nil, false
		}
		found := false
		switch tok {
		case json.Delim('{'):
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, false
				}
				var v json.RawMessage
				if err := dec.Decode(&v); err != nil {
					return nil, false
				}
				if kt.(string) == key && !found {
					cur, found = v, true
				}
			}
		case json.Delim('['):
			n, aerr := strconv.Atoi(key)
			for k := 0; dec.More(); k++ {
				var v json.RawMessage
				if err := dec.Decode(&v); err != nil {
					return nil, false
				}
				if aerr == nil && k == n {
					cur, found = v, true
				}
			}
		default:
			return nil, false
		}
		if !found {
			return nil, false
		}
	}
	return cur, true
}

func FuzzLookup(f *testing.F) {
	f.Add([]byte(`{"type":"tool.result","payload":{"name":"Read"}}`), "payload.name")
	f.Add([]byte(`{"a":[1,{"b":"\"}"}],"b":null}`), "a.1.b")
	f.Add([]byte(`{"a\u0062":true}`), "ab")
	f.Add([]byte(`{"a":"\xff\x00"}`), "a")
	f.Add([]byte(`{"a":{"a":{"a":[[[["x"]]]]}}}`), "a.a.a.0.0")
	f.Fuzz(func(t *testing.T, data []byte, path string) {
		keys := strings.Split(path, ".")
		val, ok, err := Lookup(data, keys)
		_ = AppendText(nil, val)
		_ = Each(data, func(k, v []byte) bool { return len(v) > 0 })
		fv, fok, ferr := NewFinder(path).String(data)
		if ferr == nil && json.Valid(data) {
			want, wok := reference(data, []string{path})
			var ws string
			if wok {
				w := bytes.TrimSpace(want)
				wok = len(w) > 0 && w[0] == '"' && json.Unmarshal(w, &ws) == nil
			}
			if fok != wok || fok && string(fv) != ws {
				t.Fatalf("%q Finder(%q) = %q, %v; reference %q, %v", data, path, fv, fok, ws, wok)
			}
		}
		if !json.Valid(data) {
			return
		}
		// On valid JSON the scanner must agree with encoding/json.
		if err != nil {
			t.Fatalf("valid JSON %q: Lookup(%q) error %v", data, path, err)
		}
		want, wok := reference(data, keys)
		if ok != wok {
			t.Fatalf("%q Lookup(%q): ok %v, reference %v", data, path, ok, wok)
		}
		if !ok {
			return
		}
		var a, b any
		if json.Unmarshal(val, &a) != nil || json.Unmarshal(want, &b) != nil {
			t.Fatalf("%q Lookup(%q) = %q, reference %q: not valid JSON", data, path, val, want)
		}
		ga, _ := json.Marshal(a)
		gb, _ := json.Marshal(b)
		if !bytes.Equal(ga, gb) {
			t.Fatalf("%q Lookup(%q) = %s, reference %s", data, path, ga, gb)
		}
		if s, sok := String(val); sok {
			var w string
			if json.Unmarshal(val, &w) != nil || w != s {
				t.Fatalf("String(%q) = %q, encoding/json %q", val, s, w)
			}
		}
	})
}

func TestEach(t *testing.T) {
	var keys []string
	err := Each([]byte(` {"a":1, "b\"c" : [1,{"x":"}"}] ,"d":"e"} `), func(k, v []byte) bool {
		keys = append(keys, string(k)+"="+string(v))
		return true
	})
	if err != nil || strings.Join(keys, " ") != `a=1 b\"c=[1,{"x":"}"}] d="e"` {
		t.Errorf("Each: %q %v", keys, err)
	}
	n := 0
	Each([]byte(`{"a":1,"b":2}`), func(k, v []byte) bool { n++; return false })
	if n != 1 {
		t.Errorf("Each did not stop: %d", n)
	}
	for _, bad := range []string{``, `[]`, `{"a":1`, `{"a" 1}`, `{"a":1 "b":2}`, `{a:1}`} {
		if err := Each([]byte(bad), func(k, v []byte) bool { return true }); err == nil {
			t.Errorf("Each(%q): no error", bad)
		}
	}
}

func TestMembersAndEachElem(t *testing.T) {
	var got []string
	end, err := Members([]byte(` {"a" : [1, "]"], "b":{"c":"}"},"a":null} tail`), func(k, d []byte, vs int) (int, error) {
		ve, err := Skip(d, vs)
		got = append(got, string(k)+"="+string(d[vs:ve]))
		return ve, err
	})
	if err != nil || end != 41 || strings.Join(got, " ") != `a=[1, "]"] b={"c":"}"} a=null` {
		t.Errorf("Members = %q, %d, %v", got, end, err)
	}
	for _, bad := range []string{``, `[]`, `{"a":1`, `{"a" 1}`, `{"a":1 "b":2}`, `{a:1}`, `{"a":}`} {
		if _, err := Members([]byte(bad), func(k, d []byte, vs int) (int, error) { return Skip(d, vs) }); err == nil {
			t.Errorf("Members(%q): no error", bad)
		}
	}
	var elems []string
	if err := EachElem([]byte(`[ 1 ,{"x":[2]}, "a,b" ]`), func(v []byte) { elems = append(elems, string(v)) }); err != nil ||
		strings.Join(elems, "|") != `1|{"x":[2]}|"a,b"` {
		t.Errorf("EachElem = %q, %v", elems, err)
	}
	for _, none := range []string{`null`, `{}`, `"[1]"`, `[]`, ``} {
		n := 0
		if err := EachElem([]byte(none), func([]byte) { n++ }); err != nil || n != 0 {
			t.Errorf("EachElem(%q): %d elements, %v", none, n, err)
		}
	}
	if err := EachElem([]byte(`[1,2`), func([]byte) {}); !errors.Is(err, ErrSyntax) {
		t.Errorf("EachElem of a cut array: %v", err)
	}
}

func TestStr(t *testing.T) {
	for in, want := range map[string]string{
		`"plain"`:                  "plain",
		`"a\u0000b\n\"\\\/"`:       "a\x00b\n\"\\/",
		`"\ud83d\ude00 \ud800 x"`:  "\U0001F600 \uFFFD x",
		"\"raw\x01ctl\"":           "raw\x01ctl",
		"\"bad\xffutf8\"":          "bad\uFFFDutf8",
		`"bad \q escape \u12 end"`: `bad \q escape \u12 end`,
		`42`:                       "",
		`"`:                        "",
	} {
		if got := Str([]byte(in)); got != want {
			t.Errorf("Str(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzStr checks the lenient decoder against encoding/json on every string
// encoding/json accepts, and that it never fails on anything else.
func FuzzStr(f *testing.F) {
	for _, s := range []string{`"plain"`, `"a\u2192b\n\"q\"\\"`, `"\ud83d\ude00\ud800x\udc00"`, "\"\xff\xfe\"", `"\u00"`, "\"\x00\""} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		in = bytes.TrimSpace(in)
		got := Str(in)
		var want string
		if json.Unmarshal(in, &want) == nil && len(in) > 0 && in[0] == '"' && got != want {
			t.Fatalf("Str(%q) = %q, encoding/json %q", in, got, want)
		}
	})
}
