package webview

import (
	"encoding/json"
	"fmt"
	"regexp"

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

// Event redacts every string of the event in place: it is written out,
// decoded as plain JSON, each string value redacted, and decoded back, so
// free-form values (tool inputs, results) are covered like the rest.
func (r *Redactor) Event(ev *transcript.ExchangeEvent) {
	// The masker first sees the event whole: the stream blocks of a
	// message are one reply's deltas, masked together, which the walk
	// string by string below cannot do.
	r.masker.MaskEvent(ev)
	line, err := transcript.AppendEvent(nil, ev)
	if err != nil {
		// An event the strict encoder refuses (an unknown type read from
		// a newer file): redact its known strings and keep it.
		ev.Path = r.String(ev.Path)
		return
	}
	var v any
	if json.Unmarshal(line, &v) != nil {
		return
	}
	v = r.walk(v)
	b, err := json.Marshal(v)
	if err != nil {
		return
	}
	if out, err := transcript.DecodeEvent(b); err == nil {
		*ev = out
	}
}

func (r *Redactor) walk(v any) any {
	switch x := v.(type) {
	case string:
		return r.String(x)
	case []any:
		for i := range x {
			x[i] = r.walk(x[i])
		}
	case map[string]any:
		for k, e := range x {
			x[k] = r.walk(e)
		}
	}
	return v
}
