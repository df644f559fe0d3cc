package webview

import (
	"encoding/json"
	"fmt"
	"regexp"

	"github.com/reelhq/reel/internal/rawjson"
	"github.com/reelhq/reel/transcript"
	"github.com/reelhq/reel/transcript/secrets"
)

// Redacted replaces what a --redact expression matches.
const Redacted = "[REDACTED]"

// Redactor removes secrets from what a page shows: the transcript Masker's
// secrets (secret-looking environment values, known key shapes) and the
// matches of user-given regular expressions, in every string of every
// event, before anything is rendered.
type Redactor struct {
	masker *secrets.Masker
	res    []*regexp.Regexp
}

// NewRedactor builds a redactor; masker may be nil. Each pattern is a Go
// regular expression.
func NewRedactor(masker *secrets.Masker, patterns []string) (*Redactor, error) {
	r := &Redactor{masker: masker}
	for _, p := range patterns {
		re, err := regexp.Compile(p)
		if err != nil {
			return nil, fmt.Errorf("--redact %q: %w", p, err)
		}
		r.res = append(r.res, re)
	}
	return r, nil
}

// String returns s with every secret replaced.
func (r *Redactor) String(s string) string {
	if r.masker != nil {
		s = r.masker.MaskString(s)
	}
	for _, re := range r.res {
		s = re.ReplaceAllLiteralString(s, Redacted)
	}
	return s
}

// Event redacts, in place, every string of the event a page can show: the
// path, names, texts, commands, errors, and every string inside its
// free-form values (tool inputs and outputs, results), walked once where
// they lie. Identifiers (run and call ids), types and timestamps are not
// text and are left as they are, so that the page still links and pairs.
func (r *Redactor) Event(ev *transcript.ExchangeEvent) {
	// The masker first sees the event whole: the stream blocks of a
	// message are one reply's deltas, masked together, which a walk string
	// by string cannot do.
	r.masker.MaskEvent(ev)
	ev.Path = r.String(ev.Path)
	switch p := ev.Payload.(type) {
	case *transcript.StepPayload:
		if p == nil {
			return
		}
		c := *p
		c.Name, c.Command, c.Error = r.String(c.Name), r.String(c.Command), r.String(c.Error)
		c.Input, c.Result = r.value(c.Input), r.value(c.Result)
		ev.Payload = &c
	case *transcript.MessagePayload:
		if p == nil {
			return
		}
		c := *p
		c.Blocks = r.blocks(p.Blocks)
		ev.Payload = &c
	case []transcript.ContentBlock:
		ev.Payload = r.blocks(p)
	case *transcript.ToolPayload:
		if p == nil {
			return
		}
		c := *p
		c.Name, c.Error = r.String(c.Name), r.String(c.Error)
		c.Input, c.Output = r.value(c.Input), r.value(c.Output)
		ev.Payload = &c
	default:
		ev.Payload = r.value(p)
	}
}

func (r *Redactor) blocks(bs []transcript.ContentBlock) []transcript.ContentBlock {
	out := make([]transcript.ContentBlock, len(bs))
	for i, b := range bs {
		b.Text, b.Thinking, b.ToolName = r.String(b.Text), r.String(b.Thinking), r.String(b.ToolName)
		b.Command, b.Chunk = r.String(b.Command), r.String(b.Chunk)
		b.ToolInput, b.ToolContent = r.value(b.ToolInput), r.value(b.ToolContent)
		if b.Raw != nil {
			b.Raw = r.json(nil, b.Raw)
		}
		out[i] = b
	}
	return out
}

// value redacts a free-form value: as read from a file it is raw JSON,
// walked in place; anything else is a string or is written out first.
func (r *Redactor) value(v any) any {
	switch x := v.(type) {
	case nil:
		return nil
	case json.RawMessage:
		return json.RawMessage(r.json(nil, x))
	case string:
		return r.String(x)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	return json.RawMessage(r.json(nil, b))
}

// json appends v with every string value redacted; keys, numbers and
// literals are copied as they are, and a string is rewritten only when
// redaction changed it. What does not walk is kept as one redacted string.
func (r *Redactor) json(dst, v []byte) []byte {
	i := rawjson.SkipSpace(v, 0)
	if i == len(v) {
		return append(dst, v...)
	}
	start := len(dst)
	var err error
	switch v[i] {
	case '"':
		s, ok := rawjson.String(v[i:])
		if !ok {
			err = rawjson.ErrSyntax
			break
		}
		if red := r.String(s); red != s {
			return appendJSONString(dst, red)
		}
		return append(dst, v[i:]...)
	case '{':
		dst = append(dst, '{')
		n := 0
		err = rawjson.Each(v, func(k, val []byte) bool {
			if n > 0 {
				dst = append(dst, ',')
			}
			n++
			dst = append(append(append(dst, '"'), k...), '"', ':')
			dst = r.json(dst, val)
			return true
		})
		dst = append(dst, '}')
	case '[':
		dst = append(dst, '[')
		n := 0
		err = rawjson.EachElem(v, func(val []byte) {
			if n > 0 {
				dst = append(dst, ',')
			}
			n++
			dst = r.json(dst, val)
		})
		dst = append(dst, ']')
	default:
		return append(dst, v[i:]...)
	}
	if err != nil {
		return appendJSONString(dst[:start], r.String(string(v)))
	}
	return dst
}

func appendJSONString(dst []byte, s string) []byte {
	b, _ := json.Marshal(s)
	return append(dst, b...)
}
