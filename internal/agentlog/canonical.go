package agentlog

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/reelhq/reel/internal/rawjson"

	"golang.org/x/text/unicode/norm"
)

// IDPrefix starts every content id.
const IDPrefix = "sha256:"

// Canonical returns the canonical form of the JSON value raw, the bytes
// Shadow hashes: object keys NFC-normalised and sorted by their UTF-8 bytes,
// no whitespace, strings NFC-normalised and written as literal UTF-8 with
// the short escapes \b \t \n \f \r and lowercase \u00xx for the other
// control characters, integers as written, other numbers in their shortest
// round-trip decimal form without exponent (1.0 → 1, -0 → 0).
//
// The escape rule follows Shadow's Rust code rather than its SPEC prose
// (\u00XX everywhere): the published fixtures were hashed by the code.
func Canonical(raw []byte) ([]byte, error) {
	c := canonicalizer{data: raw}
	c.skipSpace()
	out, err := c.value(make([]byte, 0, len(raw)), 0)
	if err != nil {
		return nil, fmt.Errorf("canonical json: %w", err)
	}
	c.skipSpace()
	if c.pos != len(c.data) {
		return nil, fmt.Errorf("canonical json: trailing data at offset %d", c.pos)
	}
	return out, nil
}

// ContentID returns "sha256:" + hex(sha256(Canonical(payload))).
func ContentID(payload []byte) (string, error) {
	c, err := Canonical(payload)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(c)
	return IDPrefix + hex.EncodeToString(sum[:]), nil
}

// ValidID reports whether id has the shape sha256:<64 lowercase hex>.
func ValidID(id string) bool {
	h, ok := strings.CutPrefix(id, IDPrefix)
	if !ok || len(h) != 64 {
		return false
	}
	for i := 0; i < len(h); i++ {
		c := h[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// appendNumber mirrors serde_json: a literal that fits i64 or u64 stays an
// integer, everything else is an f64 printed by Rust's Display, which is
// the shortest round-trip digits in plain notation.
func appendNumber(dst []byte, lit string) ([]byte, error) {
	if !strings.ContainsAny(lit, ".eE") {
		if i, err := strconv.ParseInt(lit, 10, 64); err == nil {
			return strconv.AppendInt(dst, i, 10), nil
		}
		if u, err := strconv.ParseUint(lit, 10, 64); err == nil {
			return strconv.AppendUint(dst, u, 10), nil
		}
	}
	f, err := strconv.ParseFloat(lit, 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return dst, fmt.Errorf("canonical json: number %s is out of range", lit)
	}
	if f == 0 {
		return append(dst, '0'), nil
	}
	return strconv.AppendFloat(dst, f, 'f', -1, 64), nil
}

func appendCanonicalString(dst []byte, s string) []byte {
	return appendEscaped(dst, nfc(s))
}

// nfc normalises s, skipping the copy for the common case of text that is
// already in NFC (all ASCII is).
func nfc(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			if norm.NFC.IsNormalString(s) {
				return s
			}
			return norm.NFC.String(s)
		}
	}
	return s
}

const hexDigits = "0123456789abcdef"

func appendEscaped(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		dst = append(dst, s[start:i]...)
		switch c {
		case '"', '\\':
			dst = append(dst, '\\', c)
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		case '\b':
			dst = append(dst, '\\', 'b')
		case '\f':
			dst = append(dst, '\\', 'f')
		default:
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
		}
		start = i + 1
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// maxDepth bounds nesting as encoding/json does, so hostile input cannot
// exhaust the stack.
const maxDepth = 10000

// canonicalizer parses JSON straight into its canonical form, without
// building an intermediate value. Strings decode as encoding/json decodes
// them (invalid UTF-8 and lone surrogates become U+FFFD); a key repeated in
// one object keeps its last value, as serde_json does.
type canonicalizer struct {
	data []byte
	pos  int
}

func (c *canonicalizer) skipSpace() {
	for c.pos < len(c.data) {
		switch c.data[c.pos] {
		case ' ', '\t', '\n', '\r':
			c.pos++
		default:
			return
		}
	}
}

func (c *canonicalizer) errorf(format string, args ...any) error {
	return fmt.Errorf("offset %d: "+format, append([]any{c.pos}, args...)...)
}

type member struct {
	norm, raw  string
	start, end int // the canonical value in the object's buffer
	order      int
}

func (c *canonicalizer) value(dst []byte, depth int) ([]byte, error) {
	if c.pos >= len(c.data) {
		return dst, c.errorf("unexpected end of input")
	}
	switch ch := c.data[c.pos]; {
	case ch == '{':
		if depth >= maxDepth {
			return dst, c.errorf("nesting deeper than %d", maxDepth)
		}
		return c.object(dst, depth+1)
	case ch == '[':
		if depth >= maxDepth {
			return dst, c.errorf("nesting deeper than %d", maxDepth)
		}
		c.pos++
		dst = append(dst, '[')
		c.skipSpace()
		if c.pos < len(c.data) && c.data[c.pos] == ']' {
			c.pos++
			return append(dst, ']'), nil
		}
		for first := true; ; first = false {
			if !first {
				dst = append(dst, ',')
			}
			c.skipSpace()
			var err error
			if dst, err = c.value(dst, depth+1); err != nil {
				return dst, err
			}
			c.skipSpace()
			if c.pos >= len(c.data) {
				return dst, c.errorf("unterminated array")
			}
			switch c.data[c.pos] {
			case ',':
				c.pos++
			case ']':
				c.pos++
				return append(dst, ']'), nil
			default:
				return dst, c.errorf("want , or ] in array, got %q", c.data[c.pos])
			}
		}
	case ch == '"':
		s, err := c.str()
		if err != nil {
			return dst, err
		}
		return appendCanonicalString(dst, s), nil
	case ch == '-' || ('0' <= ch && ch <= '9'):
		lit, err := c.number()
		if err != nil {
			return dst, err
		}
		return appendNumber(dst, lit)
	case ch == 't':
		return c.literal(dst, "true")
	case ch == 'f':
		return c.literal(dst, "false")
	case ch == 'n':
		return c.literal(dst, "null")
	}
	return dst, c.errorf("unexpected %q", c.data[c.pos])
}

func (c *canonicalizer) literal(dst []byte, word string) ([]byte, error) {
	if len(c.data)-c.pos < len(word) || string(c.data[c.pos:c.pos+len(word)]) != word {
		return dst, c.errorf("invalid literal")
	}
	c.pos += len(word)
	return append(dst, word...), nil
}

func (c *canonicalizer) object(dst []byte, depth int) ([]byte, error) {
	c.pos++ // {
	var members []member
	var buf []byte
	c.skipSpace()
	if c.pos < len(c.data) && c.data[c.pos] == '}' {
		c.pos++
		return append(dst, '{', '}'), nil
	}
	for {
		c.skipSpace()
		if c.pos >= len(c.data) || c.data[c.pos] != '"' {
			return dst, c.errorf("want an object key")
		}
		key, err := c.str()
		if err != nil {
			return dst, err
		}
		c.skipSpace()
		if c.pos >= len(c.data) || c.data[c.pos] != ':' {
			return dst, c.errorf("want : after an object key")
		}
		c.pos++
		c.skipSpace()
		start := len(buf)
		if buf, err = c.value(buf, depth); err != nil {
			return dst, err
		}
		members = append(members, member{norm: nfc(key), raw: key, start: start, end: len(buf), order: len(members)})
		c.skipSpace()
		if c.pos >= len(c.data) {
			return dst, c.errorf("unterminated object")
		}
		if c.data[c.pos] == ',' {
			c.pos++
			continue
		}
		if c.data[c.pos] != '}' {
			return dst, c.errorf("want , or } in object, got %q", c.data[c.pos])
		}
		c.pos++
		break
	}
	// Sort by normalised key, then raw key (keys equal after NFC are both
	// kept, as Shadow keeps them), then position, so the last of a repeated
	// raw key is the one kept.
	sort.Slice(members, func(i, j int) bool {
		a, b := &members[i], &members[j]
		if a.norm != b.norm {
			return a.norm < b.norm
		}
		if a.raw != b.raw {
			return a.raw < b.raw
		}
		return a.order < b.order
	})
	dst = append(dst, '{')
	wrote := false
	for i := range members {
		m := &members[i]
		if i+1 < len(members) && members[i+1].raw == m.raw {
			continue // a later duplicate wins
		}
		if wrote {
			dst = append(dst, ',')
		}
		wrote = true
		dst = appendEscaped(dst, m.norm)
		dst = append(dst, ':')
		dst = append(dst, buf[m.start:m.end]...)
	}
	return append(dst, '}'), nil
}

// number scans a JSON number and returns its literal.
func (c *canonicalizer) number() (string, error) {
	start := c.pos
	d := c.data
	i := c.pos
	if i < len(d) && d[i] == '-' {
		i++
	}
	switch {
	case i < len(d) && d[i] == '0':
		i++
	case i < len(d) && '1' <= d[i] && d[i] <= '9':
		for i < len(d) && '0' <= d[i] && d[i] <= '9' {
			i++
		}
	default:
		return "", c.errorf("invalid number")
	}
	if i < len(d) && d[i] == '.' {
		i++
		if i >= len(d) || d[i] < '0' || d[i] > '9' {
			return "", c.errorf("invalid number")
		}
		for i < len(d) && '0' <= d[i] && d[i] <= '9' {
			i++
		}
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		if i >= len(d) || d[i] < '0' || d[i] > '9' {
			return "", c.errorf("invalid number")
		}
		for i < len(d) && '0' <= d[i] && d[i] <= '9' {
			i++
		}
	}
	c.pos = i
	return string(d[start:i]), nil
}

// str decodes the JSON string at the current position the way
// encoding/json does.
func (c *canonicalizer) str() (string, error) {
	s, end, err := rawjson.Unquote(c.data, c.pos)
	c.pos = end
	if se, ok := err.(*rawjson.StringError); ok {
		return "", c.errorf("%s", se.Reason)
	}
	return s, err
}
