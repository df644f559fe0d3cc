package agent

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestExtractJSON(t *testing.T) {
	cases := []struct{ in, want string }{
		{`{"a": 1}`, `{"a": 1}`},
		{"  [1, 2]\n", `[1, 2]`},
		{`"just a string"`, `"just a string"`},
		{"```json\n{\"a\": [1, 2]}\n```", `{"a": [1, 2]}`},
		{"```json\n{\n  \"b\": 2,\n  \"a\": \"\\u00e9\"\n}\n```", "{\n  \"b\": 2,\n  \"a\": \"\\u00e9\"\n}"},
		{"Here you go:\n\n```\n{\"ok\": true}\n```\nAnything else?", `{"ok": true}`},
		{"```python\nprint(1)\n```\n```json\n{\"second\": 2}\n```", `{"second": 2}`},
		{"````json\n{\"fence\": \"```\"}\n````", "{\"fence\": \"```\"}"},
		{"```json\n{\"cut\": 1}", `{"cut": 1}`},
		{"The answer is {\"x\": {\"y\": 1}} as requested.", `{"x": {"y": 1}}`},
		{"List: [\"a\", \"b\"] done", `["a", "b"]`},
	}
	for _, c := range cases {
		got, err := ExtractJSON(c.in)
		if err != nil || string(got) != c.want {
			t.Errorf("ExtractJSON(%q) = %s, %v; want %s", c.in, got, err, c.want)
		}
	}
	for _, in := range []string{"", "   ", "no json here", "```json\n{broken\n```", "{\"a\": }", strings.Repeat("z", 500)} {
		_, err := ExtractJSON(in)
		if !errors.Is(err, ErrNotJSON) {
			t.Errorf("ExtractJSON(%.40q) err = %v, want ErrNotJSON", in, err)
		}
	}
	_, err := ExtractJSON(strings.Repeat("é", 300))
	if err == nil || !strings.Contains(err.Error(), "… (600 bytes)") {
		t.Errorf("long reply quote: %v", err)
	}
}

// Whatever the reply, ExtractJSON returns valid JSON or ErrNotJSON, and a
// reply that is JSON comes back as that same text, trimmed.
func FuzzExtractJSON(f *testing.F) {
	for _, s := range []string{`{"a":1}`, "```json\n[1]\n```", "text {\"x\":2} text", "```\n", "\x00\xff{", "[[[", `"\u0000"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		got, err := ExtractJSON(in)
		if err != nil {
			if !errors.Is(err, ErrNotJSON) {
				t.Fatalf("error %v does not match ErrNotJSON", err)
			}
			if json.Valid([]byte(strings.TrimSpace(in))) && strings.TrimSpace(in) != "" {
				t.Fatalf("valid JSON %q refused: %v", in, err)
			}
			return
		}
		if !json.Valid(got) {
			t.Fatalf("ExtractJSON(%q) = %q: not JSON", in, got)
		}
		if json.Valid([]byte(in)) && string(got) != strings.TrimSpace(in) {
			t.Fatalf("ExtractJSON(%q) = %q, want the reply trimmed", in, got)
		}
		if json.Valid([]byte(in)) {
			var a, b any
			if json.Unmarshal([]byte(in), &a) == nil && json.Unmarshal(got, &b) == nil {
				ja, _ := json.Marshal(a)
				jb, _ := json.Marshal(b)
				if string(ja) != string(jb) {
					t.Fatalf("ExtractJSON(%q) = %s, changed the value", in, got)
				}
			}
		}
	})
}

// StripFence reads a reply as AWF's output_format text does.
func TestStripFence(t *testing.T) {
	cases := []struct{ in, want string }{
		{"plain reply", "plain reply"},
		{"```bash\nls -l\n```", "ls -l"},
		{"  ```\r\nwindows\r\n```  \n", "windows"},
		{"```json\n{\"a\": 1}\n```\nAnything else?", `{"a": 1}`},
		{"```md\nuse ```go\nx\n``` here\n```", "use ```go\nx\n``` here"},
		{"Intro\n```sh\nls\n```", "Intro\n```sh\nls\n```"},
		{"```unclosed\nbody", "```unclosed\nbody"},
		{"```\n```", "```\n```"},
	}
	for _, c := range cases {
		if got := StripFence(c.in); got != c.want {
			t.Errorf("StripFence(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// Whatever the reply, StripFence returns a part of it, and a reply that
// does not open with a fence unchanged.
func FuzzStripFence(f *testing.F) {
	for _, s := range []string{"```\nx\n```", "```go\na\n```\nb", " ```\r\n```\r\n```", "text", "```"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		got := StripFence(in)
		if !strings.Contains(in, got) {
			t.Fatalf("StripFence(%q) = %q: not a part of the reply", in, got)
		}
		if !strings.HasPrefix(strings.TrimSpace(in), "```") && got != in {
			t.Fatalf("StripFence(%q) = %q: changed a reply without a fence", in, got)
		}
	})
}
