package rawjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"
)

func TestUnquote(t *testing.T) {
	cases := []struct {
		in, want string
		end      int
		errAt    int // offset of the error, or -1
	}{
		{`"plain" tail`, "plain", 7, -1},
		{`"a\u2192b\n\"q\"\\\/"`, "a\u2192b\n\"q\"\\/", 21, -1},
		{`"\ud83d\ude00"`, "\U0001F600", 14, -1},
		{`"\ud800x"`, "\uFFFDx", 9, -1},
		{`"\ud800\u0041"`, "\uFFFDA", 14, -1},
		{"\"\xff\xfe\"", "\uFFFD\uFFFD", 4, -1},
		{"\"a\x01\"", "", 0, 2},
		{`"\x"`, "", 0, 1},
		{`"\u00"`, "", 0, 1},
		{`"abc`, "", 0, 4},
		{`"ab\`, "", 0, 3},
		{`x`, "", 0, 0},
	}
	for _, c := range cases {
		s, end, err := Unquote([]byte(c.in), 0)
		if c.errAt >= 0 {
			var se *StringError
			if !errors.As(err, &se) || se.Offset != c.errAt || !errors.Is(err, ErrSyntax) {
				t.Errorf("Unquote(%q) error %v, want a StringError at %d", c.in, err, c.errAt)
			}
			continue
		}
		if err != nil || s != c.want || end != c.end {
			t.Errorf("Unquote(%q) = %q, %d, %v; want %q, %d", c.in, s, end, err, c.want, c.end)
		}
	}
}

// FuzzUnquote checks Unquote against encoding/json: a string Unquote
// accepts decodes the same with encoding/json, and a string encoding/json
// accepts is accepted whole by Unquote.
func FuzzUnquote(f *testing.F) {
	for _, s := range []string{`"plain"`, `"a\u2192b\n\"q\"\\"`, `"\ud83d\ude00\ud800x\udc00"`, "\"\xff\xfe\"", `"\u00"`, `"a"b"`, "\"\x01\"", `"\uD834\uDD1E\uDFFF"`, `"x" `} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		got, end, err := Unquote(in, 0)
		if err == nil {
			var want string
			if jerr := json.Unmarshal(in[:end], &want); jerr != nil || got != want {
				t.Fatalf("%q: Unquote %q, encoding/json %q, %v", in[:end], got, want, jerr)
			}
		}
		var want string
		if json.Unmarshal(in, &want) == nil && bytes.HasPrefix(in, []byte(`"`)) {
			if err != nil || got != want || len(bytes.TrimRight(in[end:], " \t\r\n")) != 0 {
				t.Fatalf("%q: encoding/json %q, Unquote %q, end %d, %v", in, want, got, end, err)
			}
		}
	})
}
