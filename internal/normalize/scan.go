package normalize

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/reelhq/reel/internal/rawjson"
)

// The parsers read provider lines with internal/rawjson instead of
// encoding/json: most bytes of a recording sit in fields reel never reads
// (encrypted reasoning, tool output it keeps verbatim), and skipping a string
// is a memchr while decoding it is a full validation pass plus a copy. Values
// come back as sub-slices of the line; the helpers below turn the few that
// are kept into transcript values and never keep a reference to the line.

// eachField calls fn for every member of the object d. A duplicated key is
// reported each time, so assigning in fn makes the last one win, as with
// encoding/json. On malformed input it returns rawjson.ErrSyntax after
// reporting the members it could read.
func eachField(d []byte, fn func(key, val []byte)) error {
	return rawjson.Each(d, func(k, v []byte) bool {
		fn(k, v)
		return true
	})
}

// skipValue returns the index just past the JSON value at or after d[i].
func skipValue(d []byte, i int) (int, error) {
	return rawjson.Skip(d, rawjson.SkipSpace(d, i))
}

// field returns the value of key in object d, nil when absent.
func field(d []byte, key string) []byte {
	v, _, _ := rawjson.Field(d, key)
	return v
}

func isNull(v []byte) bool { return len(v) == 0 || string(v) == "null" }

func float(v []byte) (float64, bool) {
	f, err := strconv.ParseFloat(string(v), 64)
	return f, err == nil
}

// raw copies a JSON value for a transcript field. A value that is not valid
// JSON (a raw control byte inside a string, say) is kept as its text so the
// strict transcript writer never refuses it.
func raw(v []byte) any {
	if isNull(v) {
		return nil
	}
	if v[0] == '"' {
		return rawjson.Str(v)
	}
	if !json.Valid(v) {
		return string(bytes.ToValidUTF8(v, []byte("\uFFFD")))
	}
	return json.RawMessage(bytes.Clone(v))
}

// jsonText turns JSON handed over as text (tool arguments) into a JSON value
// when it parses, else keeps the text; "" is absent.
func jsonText(s string) any {
	if s == "" {
		return nil
	}
	b := []byte(s)
	if json.Valid(b) {
		return json.RawMessage(b)
	}
	return s
}
