// Package rawjson finds values inside raw JSON bytes without decoding them.
// It is the one JSON scanner of reel's internal packages: the reading
// commands' fast path (asking a transcript line for its "type" or its
// "payload.name" costs a scan over the bytes before that value, not a full
// decode of the line) and the provider normalizers (most bytes of a
// recording sit in fields reel never reads, and skipping a string is a
// memchr where decoding it is a validation pass and a copy). The public
// transcript package keeps its own decoder, since it depends on nothing.
//
// A reader that wants several members of one object declares them as a
// struct and has a Binder fill it, rather than switching over the keys.
//
// The scanner is tolerant rather than validating: it checks only the
// structure it walks through and reports ErrSyntax when that structure is
// broken. Values it returns are sub-slices of the input. Strings decode two
// ways: String and Unquote exactly as encoding/json does (and refuse what it
// refuses), Str leniently for provider output that must never be refused.
//
// It was kept over tidwall/gjson and go-json-experiment's jsontext after
// measuring the three on reel's work (compare_test.go; figures in
// docs/performance.md): gjson unescapes every string it walks past, which makes a walk
// over a provider recording several times slower, and jsontext validates
// and tokenizes what reel only needs to skip.
package rawjson

import (
	"bytes"
	"errors"
	"strconv"
	"unicode/utf8"
)

// ErrSyntax reports JSON the scanner could not walk.
var ErrSyntax = errors.New("malformed JSON")

// Field returns the value of key in the JSON object data (leading
// whitespace allowed). ok is false when the key is absent or data is not an
// object; err is set when the walk met broken JSON before finding the key.
// The first occurrence of a duplicated key wins.
func Field(data []byte, key string) (val []byte, ok bool, err error) {
	i, ok, err := fieldStart(data, key)
	if !ok || err != nil {
		return nil, ok, err
	}
	end, err := Skip(data, i)
	if err != nil {
		return nil, false, err
	}
	return data[i:end], true, nil
}

// fieldStart finds where key's value starts without walking over the value
// itself, so a lookup can descend into a large object without first
// finding its end.
func fieldStart(data []byte, key string) (int, bool, error) {
	i := skipWS(data, 0)
	if i >= len(data) || data[i] != '{' {
		return 0, false, nil
	}
	i++
	for {
		i = skipWS(data, i)
		if i >= len(data) {
			return 0, false, ErrSyntax
		}
		if data[i] == '}' {
			return 0, false, nil
		}
		if data[i] != '"' {
			return 0, false, ErrSyntax
		}
		kstart := i + 1
		kend, err := stringEnd(data, kstart)
		if err != nil {
			return 0, false, err
		}
		match := keyIs(data[kstart:kend], data[kstart-1:kend+1], key)
		i = skipWS(data, kend+1)
		if i >= len(data) || data[i] != ':' {
			return 0, false, ErrSyntax
		}
		i = skipWS(data, i+1)
		if match {
			if i >= len(data) {
				return 0, false, ErrSyntax
			}
			return i, true, nil
		}
		end, err := Skip(data, i)
		if err != nil {
			return 0, false, err
		}
		i = skipWS(data, end)
		if i >= len(data) {
			return 0, false, ErrSyntax
		}
		switch data[i] {
		case ',':
			i++
		case '}':
			return 0, false, nil
		default:
			return 0, false, ErrSyntax
		}
	}
}

// keyIs compares a raw object key with key as encoding/json would see it:
// escapes resolved and invalid UTF-8 replaced. The plain comparison
// decides the common case of an unescaped, valid key.
func keyIs(raw, quoted []byte, key string) bool {
	if string(raw) == key {
		return utf8.ValidString(key)
	}
	for _, c := range raw {
		if c == '\\' || c >= utf8.RuneSelf {
			s, ok := unquote(quoted)
			return ok && s == key
		}
	}
	return false
}

// Index returns element n (zero-based) of the JSON array data.
func Index(data []byte, n int) (val []byte, ok bool, err error) {
	i := skipWS(data, 0)
	if i >= len(data) || data[i] != '[' || n < 0 {
		return nil, false, nil
	}
	i = skipWS(data, i+1)
	if i < len(data) && data[i] == ']' {
		return nil, false, nil
	}
	for k := 0; ; k++ {
		i = skipWS(data, i)
		end, err := Skip(data, i)
		if err != nil {
			return nil, false, err
		}
		if k == n {
			return data[i:end], true, nil
		}
		i = skipWS(data, end)
		if i >= len(data) {
			return nil, false, ErrSyntax
		}
		switch data[i] {
		case ',':
			i++
		case ']':
			return nil, false, nil
		default:
			return nil, false, ErrSyntax
		}
	}
}

// Lookup follows path through nested objects and arrays: each element names
// an object key, or, when the value there is an array and the element is a
// decimal number, an array index.
func Lookup(data []byte, path []string) (val []byte, ok bool, err error) {
	cur := data
	for _, key := range path {
		i := skipWS(cur, 0)
		if i < len(cur) && cur[i] == '[' {
			n, aerr := strconv.Atoi(key)
			if aerr != nil {
				return nil, false, nil
			}
			cur, ok, err = Index(cur, n)
			if !ok || err != nil {
				return nil, ok, err
			}
			continue
		}
		start, ok, err := fieldStart(cur, key)
		if !ok || err != nil {
			return nil, ok, err
		}
		cur = cur[start:]
	}
	end, err := Skip(cur, skipWS(cur, 0))
	if err != nil {
		return nil, false, err
	}
	return trimWS(cur[:end]), true, nil
}

// Skip returns the index just past the JSON value starting at data[i].
func Skip(data []byte, i int) (int, error) {
	if i >= len(data) {
		return i, ErrSyntax
	}
	switch c := data[i]; c {
	case '"':
		end, err := stringEnd(data, i+1)
		return end + 1, err
	case '{', '[':
		return skipComposite(data, i)
	case 't':
		return literal(data, i, "true")
	case 'f':
		return literal(data, i, "false")
	case 'n':
		return literal(data, i, "null")
	default:
		if c == '-' || '0' <= c && c <= '9' {
			j := i + 1
			for j < len(data) && isNumberByte(data[j]) {
				j++
			}
			return j, nil
		}
		return i, ErrSyntax
	}
}

func isNumberByte(c byte) bool {
	return '0' <= c && c <= '9' || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-'
}

func literal(data []byte, i int, lit string) (int, error) {
	if len(data)-i < len(lit) || string(data[i:i+len(lit)]) != lit {
		return i, ErrSyntax
	}
	return i + len(lit), nil
}

// skipComposite skips an object or array by counting brackets outside
// strings. It checks nesting, not grammar: that is enough to find where the
// value ends in anything a JSON encoder wrote.
func skipComposite(data []byte, i int) (int, error) {
	var stack [64]byte
	deep := stack[:0]
	for i < len(data) {
		switch c := data[i]; c {
		case '"':
			end, err := stringEnd(data, i+1)
			if err != nil {
				return i, err
			}
			i = end + 1
			continue
		case '{', '[':
			deep = append(deep, c)
		case '}', ']':
			if len(deep) == 0 {
				return i, ErrSyntax
			}
			open := deep[len(deep)-1]
			if open == '{' && c != '}' || open == '[' && c != ']' {
				return i, ErrSyntax
			}
			deep = deep[:len(deep)-1]
			if len(deep) == 0 {
				return i + 1, nil
			}
		}
		i++
	}
	return i, ErrSyntax
}

// stringEnd returns the index of the closing quote of the string whose
// contents start at data[i].
func stringEnd(data []byte, i int) (int, error) {
	// Most strings in an envelope are short: a plain loop finds their end
	// before a call to IndexByte would have paid for itself.
	for k := i; k < len(data) && k < i+48; k++ {
		switch data[k] {
		case '"':
			return k, nil
		case '\\':
			goto long
		}
	}
long:
	for {
		j := bytes.IndexByte(data[i:], '"')
		if j < 0 {
			return len(data), ErrSyntax
		}
		end := i + j
		// A quote preceded by an odd number of backslashes is escaped.
		n := 0
		for k := end - 1; k >= i && data[k] == '\\'; k-- {
			n++
		}
		if n%2 == 0 {
			return end, nil
		}
		i = end + 1
	}
}

func skipWS(data []byte, i int) int {
	for i < len(data) {
		switch data[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

func trimWS(b []byte) []byte {
	b = b[skipWS(b, 0):]
	for len(b) > 0 {
		switch b[len(b)-1] {
		case ' ', '\t', '\n', '\r':
			b = b[:len(b)-1]
		default:
			return b
		}
	}
	return b
}

// SkipSpace returns the index of the first byte at or after i that is not
// JSON whitespace.
func SkipSpace(data []byte, i int) int { return skipWS(data, i) }
