package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/reelhq/reel/internal/importstore"
)

// tally counts what an import did, by outcome.
type tally struct {
	new, updated, unchanged, failed int
}

func (t *tally) count(r importedRun) {
	switch {
	case r.Error != "":
		t.failed++
	case r.Outcome == importstore.Unchanged:
		t.unchanged++
	case r.Outcome == importstore.Updated:
		t.updated++
	default:
		t.new++
	}
}

func (t tally) String() string {
	return fmt.Sprintf("%d new, %d updated, %d unchanged, %d failed", t.new, t.updated, t.unchanged, t.failed)
}

// progress draws a one-line bar on a terminal once an import has taken more
// than a second; elsewhere it draws nothing.
type progress struct {
	w     io.Writer
	tty   bool
	total int
	start time.Time
	drawn bool
}

func newProgress(w io.Writer, total int) *progress {
	p := &progress{w: w, total: total, start: time.Now()}
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			p.tty = true
		}
	}
	return p
}

func (p *progress) set(n int, t tally) {
	if !p.tty || p.total == 0 || time.Since(p.start) < time.Second {
		return
	}
	const width = 30
	filled := width * n / p.total
	fmt.Fprintf(p.w, "\r\033[Kimporting [%s%s] %d/%d  %s", strings.Repeat("=", filled), strings.Repeat(" ", width-filled), n, p.total, t)
	p.drawn = true
}

func (p *progress) done() {
	if p.drawn {
		fmt.Fprint(p.w, "\r\033[K")
	}
}
