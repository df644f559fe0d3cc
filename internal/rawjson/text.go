package rawjson

import (
	"bytes"
	"unicode/utf8"
	"unsafe"
)

// String returns the Go string held by the JSON string value val. ok is
// false when val is not a well-formed JSON string.
func String(val []byte) (s string, ok bool) {
	return unquote(trimWS(val))
}

// AppendText appends val to dst the way `jq -r` prints it: a string's
// contents unescaped, anything else as its JSON text.
func AppendText(dst, val []byte) []byte {
	val = trimWS(val)
	if len(val) >= 2 && val[0] == '"' && val[len(val)-1] == '"' {
		inner := val[1 : len(val)-1]
		if bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner) {
			return append(dst, inner...)
		}
		if s, ok := unquote(val); ok {
			return append(dst, s...)
		}
	}
	return append(dst, val...)
}

func unquote(val []byte) (string, bool) {
	if len(val) < 2 || val[0] != '"' || val[len(val)-1] != '"' {
		return "", false
	}
	inner := val[1 : len(val)-1]
	if bytes.IndexByte(inner, '\\') < 0 && bytes.IndexByte(inner, '"') < 0 && utf8.Valid(inner) {
		return string(inner), true
	}
	s, end, err := Unquote(val, 0)
	if err != nil || end != len(val) {
		return "", false
	}
	return s, true
}

// Str decodes the JSON string value v leniently, for provider output that
// must never be refused: raw control bytes (NUL among them) are kept,
// invalid UTF-8 and lone surrogates become U+FFFD, and a malformed escape is
// kept as written. Anything but a string gives "". The result never shares
// memory with v.
func Str(v []byte) string {
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
	// The buffer is never touched again, so it becomes the string without
	// a second copy of the (often large) text.
	out := AppendUnescaped(make([]byte, 0, len(b)), b)
	return unsafe.String(unsafe.SliceData(out), len(out))
}

// AppendUnescaped appends the decoded body b of a JSON string (the bytes
// between the quotes) to out, with Str's leniency.
func AppendUnescaped(out, b []byte) []byte {
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
		var n int
		var ok bool
		if out, n, ok = appendEscape(out, b, 0); !ok {
			// Kept as written: a lone backslash, or it and the next byte.
			n = min(2, len(b))
			out = append(out, b[:n]...)
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
