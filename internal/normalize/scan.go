package normalize

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"time"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// The parsers read provider lines with the small scanner below instead of
// encoding/json: most bytes of a recording sit in fields reel never reads
// (encrypted reasoning, tool output it keeps verbatim), and skipping a string
// is a memchr while decoding it is a full validation pass plus a copy. Values
// come back as sub-slices of the line; nothing here keeps a reference to the
// caller's buffer.

var errSyntax = errors.New("malformed JSON")

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func skipWS(d []byte, i int) int {
	for i < len(d) && isSpace(d[i]) {
		i++
	}
	return i
}

// skipString returns the index after the string starting at d[i] == '"'.
func skipString(d []byte, i int) (int, error) {
	i++
	for {
		// Quotes are close together in escaped JSON: a short look by hand
		// first, then memchr for long runs (base64, long text).
		j := i
		for j < len(d) && j < i+16 && d[j] != '"' {
			j++
		}
		if j == len(d) {
			return 0, errSyntax
		}
		if d[j] != '"' {
			k := bytes.IndexByte(d[j:], '"')
			if k < 0 {
				return 0, errSyntax
			}
			j += k
		}
		// Count the backslashes before the quote: an odd number escapes it.
		k := j - 1
		for k >= i && d[k] == '\\' {
			k--
		}
		if (j-1-k)%2 == 0 {
			return j + 1, nil
		}
		i = j + 1
	}
}

// skipValue returns the index after the JSON value starting at d[i].
func skipValue(d []byte, i int) (int, error) {
	i = skipWS(d, i)
	if i >= len(d) {
		return 0, errSyntax
	}
	switch c := d[i]; {
	case c == '"':
		return skipString(d, i)
	case c == '{' || c == '[':
		depth := 0
		for i < len(d) {
			switch d[i] {
			case '"':
				j, err := skipString(d, i)
				if err != nil {
					return 0, err
				}
				i = j
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1, nil
				}
			}
			i++
		}
		return 0, errSyntax
	default:
		start := i
		for i < len(d) {
			c := d[i]
			if c == ',' || c == '}' || c == ']' || isSpace(c) {
				break
			}
			i++
		}
		if i == start {
			return 0, errSyntax
		}
		return i, nil
	}
}

// eachField calls fn for every member of the object d. A duplicated key is
// reported each time, so assigning in fn makes the last one win, as with
// encoding/json. On malformed input it returns errSyntax after reporting the
// members it could read.
func eachField(d []byte, fn func(key, val []byte)) error {
	_, err := members(d, func(key, d []byte, vs int) (int, error) {
		ve, err := skipValue(d, vs)
		if err != nil {
			return 0, err
		}
		fn(key, d[vs:ve])
		return ve, nil
	})
	return err
}

// members walks the object at the start of d, handing fn each key and the
// offset of its value in d; fn returns the offset just past the value, so it
// can parse a value in place instead of having it skipped first. members
// returns the offset just past the object.
func members(d []byte, fn func(key, d []byte, vs int) (int, error)) (int, error) {
	i := skipWS(d, 0)
	if i >= len(d) || d[i] != '{' {
		return 0, errSyntax
	}
	i = skipWS(d, i+1)
	if i < len(d) && d[i] == '}' {
		return i + 1, nil
	}
	for {
		i = skipWS(d, i)
		if i >= len(d) || d[i] != '"' {
			return 0, errSyntax
		}
		ke, err := skipString(d, i)
		if err != nil {
			return 0, err
		}
		key := d[i+1 : ke-1]
		i = skipWS(d, ke)
		if i >= len(d) || d[i] != ':' {
			return 0, errSyntax
		}
		vs := skipWS(d, i+1)
		if vs >= len(d) {
			return 0, errSyntax
		}
		ve, err := fn(key, d, vs)
		if err != nil {
			return 0, err
		}
		i = skipWS(d, ve)
		if i >= len(d) {
			return 0, errSyntax
		}
		if d[i] == '}' {
			return i + 1, nil
		}
		if d[i] != ',' {
			return 0, errSyntax
		}
		i++
	}
}

// eachElem calls fn for every element of the array d; a non-array is an
// empty list.
func eachElem(d []byte, fn func(val []byte)) error {
	i := skipWS(d, 0)
	if i >= len(d) || d[i] != '[' {
		return nil
	}
	i = skipWS(d, i+1)
	if i < len(d) && d[i] == ']' {
		return nil
	}
	for {
		vs := skipWS(d, i)
		ve, err := skipValue(d, vs)
		if err != nil {
			return err
		}
		fn(d[vs:ve])
		i = skipWS(d, ve)
		if i >= len(d) {
			return errSyntax
		}
		if d[i] == ']' {
			return nil
		}
		if d[i] != ',' {
			return errSyntax
		}
		i++
	}
}

// field returns the value of key in object d (the last one when repeated).
func field(d []byte, key string) []byte {
	var v []byte
	_ = eachField(d, func(k, val []byte) {
		if string(k) == key {
			v = val
		}
	})
	return v
}

func isNull(v []byte) bool { return len(v) == 0 || string(v) == "null" }

// str decodes a JSON string value; anything else gives "". Raw control bytes
// (NUL among them) are kept, invalid UTF-8 becomes U+FFFD.
func str(v []byte) string {
	if len(v) < 2 || v[0] != '"' {
		return ""
	}
	b := v[1 : len(v)-1]
	if bytes.IndexByte(b, '\\') < 0 {
		if utf8.Valid(b) {
			return string(b)
		}
		return string(appendValidUTF8(nil, b))
	}
	return unescape(b)
}

// unescape decodes the body of a JSON string. The result is built in a
// fresh buffer that is never touched again, so it becomes the string without
// a second copy of the (often large) text.
func unescape(b []byte) string {
	out := appendUnescaped(make([]byte, 0, len(b)), b)
	return unsafe.String(unsafe.SliceData(out), len(out))
}

// appendUnescaped appends the decoded body of a JSON string to out.
func appendUnescaped(out, b []byte) []byte {
	valid := utf8.Valid(b)
	for len(b) > 0 {
		// Copy the run up to the next escape in one go. Escapes are dense
		// in tool output (JSON inside JSON), so look a few bytes ahead by
		// hand before paying for a call.
		k := 0
		for k < len(b) && k < 16 && b[k] != '\\' {
			k++
		}
		if k == 16 {
			if j := bytes.IndexByte(b[k:], '\\'); j < 0 {
				k = len(b)
			} else {
				k += j
			}
		}
		if run := b[:k]; valid || utf8.Valid(run) {
			out = append(out, run...)
		} else {
			out = appendValidUTF8(out, run)
		}
		b = b[k:]
		if len(b) == 0 {
			break
		}
		if len(b) == 1 {
			out = append(out, '\\')
			break
		}
		n := 2
		switch e := b[1]; e {
		case '"', '\\', '/':
			out = append(out, e)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, ok := hex4(b, 2)
			if !ok {
				out = append(out, `\u`...)
				break
			}
			n = 6
			if utf16.IsSurrogate(r) {
				if len(b) >= 12 && b[6] == '\\' && b[7] == 'u' {
					if r2, ok := hex4(b, 8); ok {
						if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
							out = utf8.AppendRune(out, dec)
							n = 12
							break
						}
					}
				}
				r = utf8.RuneError
			}
			out = utf8.AppendRune(out, r)
		default:
			out = append(out, '\\', e)
		}
		b = b[n:]
	}
	return out
}

// appendValidUTF8 appends b with each invalid byte replaced by U+FFFD, as
// encoding/json does.
func appendValidUTF8(dst, b []byte) []byte {
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		if r == utf8.RuneError && n == 1 {
			dst = append(dst, "\uFFFD"...)
		} else {
			dst = append(dst, b[:n]...)
		}
		b = b[n:]
	}
	return dst
}

func hex4(b []byte, i int) (rune, bool) {
	if i+4 > len(b) {
		return 0, false
	}
	n, err := strconv.ParseUint(string(b[i:i+4]), 16, 32)
	if err != nil {
		return 0, false
	}
	return rune(n), true
}

// num decodes a JSON number (integral part of a float); anything else is 0.
func num(v []byte) int64 {
	if len(v) == 0 {
		return 0
	}
	if n, err := strconv.ParseInt(string(v), 10, 64); err == nil {
		return n
	}
	if f, err := strconv.ParseFloat(string(v), 64); err == nil {
		return int64(f)
	}
	return 0
}

func float(v []byte) (float64, bool) {
	f, err := strconv.ParseFloat(string(v), 64)
	return f, err == nil
}

func boolean(v []byte) bool { return string(v) == "true" }

// raw copies a JSON value for a transcript field. A value that is not valid
// JSON (a raw control byte inside a string, say) is kept as its text so the
// strict transcript writer never refuses it.
func raw(v []byte) any {
	if isNull(v) {
		return nil
	}
	if v[0] == '"' {
		return str(v)
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

func timestamp(v []byte) time.Time {
	s := str(v)
	if s == "" {
		if n := num(v); n > 0 {
			return time.Unix(n, 0).UTC()
		}
		return time.Time{}
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}
	}
	return t
}
