package engine

import (
	"github.com/reelhq/reel/transcript"
	"github.com/reelhq/reel/transcript/secrets"
)

// masker is how the engine masks: *secrets.Masker, which a test wraps to
// count its calls. Each event, display line and audit field is scanned
// once: an event is masked once in the one emit path (record.go) and the
// transcript, the audit trail and the display take its masked fields; what
// is not an event (a span's path, an output line) is masked once where it
// is made.
type masker interface {
	transcript.Masker
	MaskString(s string) string
	Lines() *secrets.LineMasker
}

// masks returns the engine's masker, nil when masking is off: Masker
// widened with the lines of the multi-line secrets in the steps'
// environment (secrets.Masker.WithLinesOf), which the display, showing
// output a line at a time, and a step error quoting one line would
// otherwise give away. The recorders get no masker of their own: what
// they are handed is masked already.
func (e *Engine) masks() masker {
	if e.Masker == nil {
		return nil
	}
	e.masksOnce.Do(func() {
		if e.masksBy == nil {
			e.masksBy = e.Masker.WithLinesOf(e.environ())
		}
	})
	return e.masksBy
}

// mask masks s, a display line or a value shown in a plan, that no event
// holds.
func (e *Engine) mask(s string) string {
	m := e.masks()
	if m == nil {
		return s
	}
	return m.MaskString(s)
}

// maskEvent masks ev in place (see transcript.Masker).
func (e *Engine) maskEvent(ev *transcript.ExchangeEvent) {
	if m := e.masks(); m != nil {
		m.MaskEvent(ev)
	}
}
