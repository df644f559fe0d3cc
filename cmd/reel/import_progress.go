package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/reelhq/reel/internal/importer"
)

// tally counts what an import did, by outcome.
type tally struct {
	new, updated, unchanged, failed int
}

func (t *tally) count(r importer.Run) {
	switch {
	case r.Error != "":
		t.failed++
	case r.Outcome == importer.Unchanged:
		t.unchanged++
	case r.Outcome == importer.Updated:
		t.updated++
	default:
		t.new++
	}
}

func (t tally) String() string {
	return fmt.Sprintf("%d new, %d updated, %d unchanged, %d failed", t.new, t.updated, t.unchanged, t.failed)
}

// progress draws a one-line bar on a terminal while a directory is
// imported, once it has taken more than a second; elsewhere it draws
// nothing. It is the importer's Progress.
type progress struct {
	w     io.Writer
	tty   bool
	total int
	start time.Time
	drawn bool
	t     tally
}

func (p *progress) Begin(total int) {
	*p = progress{w: p.w, total: total, start: time.Now()}
	if f, ok := p.w.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			p.tty = true
		}
	}
}

func (p *progress) Imported(n int, r *importer.Run) {
	if r != nil {
		p.t.count(*r)
	}
	if !p.tty || p.total == 0 || time.Since(p.start) < time.Second {
		return
	}
	const width = 30
	filled := width * n / p.total
	fmt.Fprintf(p.w, "\r\033[Kimporting [%s%s] %d/%d  %s", strings.Repeat("=", filled), strings.Repeat(" ", width-filled), n, p.total, p.t)
	p.drawn = true
}

func (p *progress) End() {
	if p.drawn {
		fmt.Fprint(p.w, "\r\033[K")
	}
}
