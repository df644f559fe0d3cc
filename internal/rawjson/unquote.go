package rawjson

import (
	"fmt"
	"unicode/utf16"
	"unicode/utf8"
)

// A StringError reports a malformed JSON string: Offset is the index in the
// input of the offending byte (or its length for an unterminated string).
type StringError struct {
	Offset int
	Reason string
}

func (e *StringError) Error() string { return fmt.Sprintf("offset %d: %s", e.Offset, e.Reason) }

// Unwrap makes a StringError match ErrSyntax.
func (e *StringError) Unwrap() error { return ErrSyntax }

// Unquote decodes the JSON string whose opening quote is data[i] exactly as
// encoding/json decodes it into a Go string: escapes are resolved, \uXXXX
// surrogate pairs are combined, and lone surrogates and invalid UTF-8 become
// U+FFFD. It returns the string and the index just after its closing quote.
// Raw control characters, unknown escapes, malformed \u escapes and a
// missing closing quote give a *StringError.
func Unquote(data []byte, i int) (s string, end int, err error) {
	if i >= len(data) || data[i] != '"' {
		return "", i, &StringError{i, "want a string"}
	}
	i++
	// Most strings have no escapes: find the quote and copy once.
	for j := i; j < len(data); j++ {
		b := data[j]
		if b == '"' {
			if utf8.Valid(data[i:j]) {
				return string(data[i:j]), j + 1, nil
			}
			break
		}
		if b == '\\' || b < 0x20 {
			break
		}
	}
	out := make([]byte, 0, 32)
	for i < len(data) {
		b := data[i]
		switch {
		case b == '"':
			return string(out), i + 1, nil
		case b < 0x20:
			return "", i, &StringError{i, "control character in string"}
		case b == '\\':
			var ok bool
			out, i, ok = appendEscape(out, data, i)
			if !ok {
				switch {
				case i+1 >= len(data):
					return "", i, &StringError{i, "unterminated escape"}
				case data[i+1] == 'u':
					return "", i, &StringError{i, "invalid \\u escape"}
				}
				return "", i, &StringError{i, fmt.Sprintf("invalid escape \\%c", data[i+1])}
			}
		case b < utf8.RuneSelf:
			out = append(out, b)
			i++
		default:
			r, size := utf8.DecodeRune(data[i:])
			if r == utf8.RuneError && size == 1 {
				out = utf8.AppendRune(out, utf8.RuneError)
			} else {
				out = append(out, data[i:i+size]...)
			}
			i += size
		}
	}
	return "", i, &StringError{i, "unterminated string"}
}

// appendEscape decodes the escape starting at d[i] == '\\' onto out and
// returns the index just after it, as encoding/json decodes it: \uXXXX
// surrogate pairs are combined, a lone surrogate becomes U+FFFD. ok is
// false, and i unchanged, for an escape encoding/json refuses: cut short, an
// unknown letter, a malformed \u.
func appendEscape(out, d []byte, i int) ([]byte, int, bool) {
	if i+1 >= len(d) {
		return out, i, false
	}
	if b, ok := Unescape(d[i+1]); ok {
		return append(out, b), i + 2, true
	}
	if d[i+1] == 'u' {
		r, ok := hex4(d, i+2)
		if !ok {
			return out, i, false
		}
		j := i + 6
		if utf16.IsSurrogate(r) {
			if r2, ok := hex4(d, j+2); ok && d[j] == '\\' && d[j+1] == 'u' {
				if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
					return utf8.AppendRune(out, dec), j + 6, true
				}
			}
			r = utf8.RuneError
		}
		return utf8.AppendRune(out, r), j, true
	}
	return out, i, false
}

// unescapes maps the letter of each one-letter JSON escape to the byte it
// stands for.
var unescapes = [256]byte{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}

// Unescape returns the byte the one-letter JSON escape \c stands for; ok is
// false for \u and anything that is not an escape.
func Unescape(c byte) (b byte, ok bool) {
	b = unescapes[c]
	return b, b != 0
}

// hex4 decodes the four hex digits at d[i:].
func hex4(d []byte, i int) (rune, bool) {
	if i+4 > len(d) {
		return 0, false
	}
	var r rune
	for _, b := range d[i : i+4] {
		switch {
		case '0' <= b && b <= '9':
			b -= '0'
		case 'a' <= b && b <= 'f':
			b = b - 'a' + 10
		case 'A' <= b && b <= 'F':
			b = b - 'A' + 10
		default:
			return 0, false
		}
		r = r*16 + rune(b)
	}
	return r, true
}
