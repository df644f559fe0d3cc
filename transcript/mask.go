package transcript

import (
	"bytes"
	"encoding/json"
	"regexp"
	"sort"
	"strings"
)

// Masked replaces every secret the Masker finds.
const Masked = "[MASKED]"

// Masker replaces secrets in events before they are written: the values of
// environment variables whose names look secret (*_KEY, *_TOKEN, *_SECRET,
// *PASSWORD*) and well-known credential shapes (sk-…, ghp_…, AKIA…, bearer
// tokens). Masking is opt-in; a Recorder applies it when Options.Masker is
// set.
type Masker struct {
	values   []string // longest first, so a value containing another wins
	replacer *strings.Replacer
}

// Patterns of credentials that are recognisable without knowing the
// environment. They stop at characters that cannot be part of a token, so a
// match never crosses JSON syntax.
var secretShapes = regexp.MustCompile(
	`sk-(?:ant-|proj-)?[A-Za-z0-9_\-]{16,}` +
		`|gh[pousr]_[A-Za-z0-9]{20,}` +
		`|github_pat_[A-Za-z0-9_]{20,}` +
		`|(?:AKIA|ASIA)[0-9A-Z]{16}` +
		`|xox[abprs]-[A-Za-z0-9\-]{10,}` +
		`|(?i:bearer)\s+[A-Za-z0-9_\-\.=:/+]{12,}`)

// shapePrefixes are the literal starts of every secretShapes alternative
// except bearer, which is matched case-insensitively.
var shapePrefixes = [...]string{"sk-", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "AKIA", "ASIA", "xox"}

// mayHoldShape reports whether s could contain a match of secretShapes.
// Most text holds none of the prefixes, and checking them is hundreds of
// times faster than running the expression.
func mayHoldShape(s string) bool {
	for _, p := range shapePrefixes {
		if strings.Contains(s, p) {
			return true
		}
	}
	for i := 0; i+6 <= len(s); i++ {
		if s[i]|0x20 == 'b' && strings.EqualFold(s[i:i+6], "bearer") {
			return true
		}
	}
	return false
}

// NewMasker builds a masker from an environment in os.Environ form. Values
// shorter than 6 bytes are ignored: masking "1" or "true" everywhere would
// destroy the record without protecting anything.
func NewMasker(environ []string) *Masker {
	seen := map[string]bool{}
	var values []string
	for _, kv := range environ {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || len(value) < 6 || !secretName(name) || seen[value] {
			continue
		}
		seen[value] = true
		values = append(values, value)
	}
	sort.Slice(values, func(i, j int) bool { return len(values[i]) > len(values[j]) })
	m := &Masker{values: values}
	if len(values) > 0 {
		pairs := make([]string, 0, 2*len(values))
		for _, v := range values {
			pairs = append(pairs, v, Masked)
		}
		m.replacer = strings.NewReplacer(pairs...)
	}
	return m
}

func secretName(name string) bool {
	n := strings.ToUpper(name)
	return strings.HasSuffix(n, "_KEY") || strings.HasSuffix(n, "_TOKEN") ||
		strings.HasSuffix(n, "_SECRET") || strings.Contains(n, "PASSWORD") ||
		n == "KEY" || n == "TOKEN" || n == "SECRET"
}

// MaskString returns s with every secret replaced.
func (m *Masker) MaskString(s string) string {
	if m == nil || s == "" {
		return s
	}
	if m.replacer != nil {
		s = m.replacer.Replace(s)
	}
	if !mayHoldShape(s) {
		return s
	}
	return secretShapes.ReplaceAllStringFunc(s, func(match string) string {
		if len(match) > 6 && strings.EqualFold(match[:6], "bearer") {
			return match[:6] + " " + Masked
		}
		return Masked
	})
}

// MaskEvent masks every string of e's payload in place. Payload structs are
// copied first, so the caller's values are not modified.
func (m *Masker) MaskEvent(e *ExchangeEvent) {
	if m == nil {
		return
	}
	switch p := e.Payload.(type) {
	case *StepPayload:
		if p == nil {
			return
		}
		c := *p
		c.Name = m.MaskString(c.Name)
		c.Command = m.MaskString(c.Command)
		c.Error = m.MaskString(c.Error)
		c.Input = m.maskValue(c.Input)
		c.Result = m.maskValue(c.Result)
		e.Payload = &c
	case *MessagePayload:
		if p == nil {
			return
		}
		c := *p
		c.Blocks = m.maskBlocks(p.Blocks)
		e.Payload = &c
	case *ToolPayload:
		if p == nil {
			return
		}
		c := *p
		c.Input = m.maskValue(c.Input)
		c.Output = m.maskValue(c.Output)
		c.Error = m.MaskString(c.Error)
		e.Payload = &c
	case []ContentBlock:
		e.Payload = m.maskBlocks(p)
	case json.RawMessage:
		e.Payload = m.maskValue(p)
	}
}

func (m *Masker) maskBlocks(in []ContentBlock) []ContentBlock {
	out := make([]ContentBlock, len(in))
	for i, b := range in {
		b.Text = m.MaskString(b.Text)
		b.Thinking = m.MaskString(b.Thinking)
		b.Command = m.MaskString(b.Command)
		b.Chunk = m.MaskString(b.Chunk)
		b.ToolInput = m.maskValue(b.ToolInput)
		b.ToolContent = m.maskValue(b.ToolContent)
		out[i] = b
	}
	return out
}

// maskValue masks a free-form value. Go values and raw JSON are both walked
// as decoded JSON, so a secret is found however it was escaped and the
// replacement can never break the JSON around it.
func (m *Masker) maskValue(v any) any {
	switch x := v.(type) {
	case nil:
		return nil
	case string:
		return m.MaskString(x)
	case json.RawMessage:
		dec := json.NewDecoder(bytes.NewReader(x))
		dec.UseNumber()
		var decoded any
		if err := dec.Decode(&decoded); err != nil {
			return x
		}
		return m.walk(decoded)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	return m.maskValue(json.RawMessage(b))
}

func (m *Masker) walk(v any) any {
	switch x := v.(type) {
	case string:
		return m.MaskString(x)
	case []any:
		for i := range x {
			x[i] = m.walk(x[i])
		}
		return x
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, val := range x {
			out[m.MaskString(k)] = m.walk(val)
		}
		return out
	}
	return v
}
