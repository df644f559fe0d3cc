package engine

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/reelhq/reel/transcript/secrets"
)

// The terminal display: one line per run and step start and end (their
// lines are made in record.go's emit path from the masked events), the
// lines steps print (outputWriter), and the notes the run adds.

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " …"
	}
	return s
}

func (r *run) indent() string { return strings.Repeat("  ", r.depth) }

func fmtDuration(d time.Duration) string {
	switch {
	case d < time.Second:
		return fmt.Sprintf("%dms", d.Milliseconds())
	case d < time.Minute:
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
	return d.Round(time.Second).String()
}

// display writes one line of the human-readable display that no event
// holds. The display is masked like the transcript: a user who asks for
// masking expects no secret on the terminal or in a captured log either.
func (r *run) display(line string) {
	r.show(r.e.mask(line))
}

// show writes one display line that is masked already.
func (r *run) show(line string) {
	w := r.e.Display
	if w == nil || r.planning {
		return
	}
	r.e.displayMu.Lock()
	defer r.e.displayMu.Unlock()
	fmt.Fprintln(w, line)
}

// StepOutput is how the display shows what a step prints (AWF's run
// --output modes).
type StepOutput int

const (
	// StreamOutput shows each line as the step prints it.
	StreamOutput StepOutput = iota
	// BufferOutput shows a step's lines together once it ends (its
	// stdout, then its stderr), so parallel branches do not interleave.
	BufferOutput
	// HideOutput shows none of them: only steps starting and ending.
	HideOutput
)

// showLines writes lines, masked already, to the display as one block, so
// that no other step's line lands between them.
func (r *run) showLines(lines []string) {
	w := r.e.Display
	if w == nil || r.planning || len(lines) == 0 {
		return
	}
	var b strings.Builder
	for _, l := range lines {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	r.e.displayMu.Lock()
	defer r.e.displayMu.Unlock()
	io.WriteString(w, b.String())
}

// outputWriter streams a step's output to the display line by line, each
// line prefixed with the step's path, so parallel steps stay readable.
// Its owner calls flush once the step's output has ended.
type outputWriter struct {
	r      *run
	prefix string
	// lines masks what is shown: each line, the lines of a private key
	// block, the pieces of a long line (nil: no masking).
	lines *secrets.LineMasker
	buf   []byte
	// held are the lines a BufferOutput display shows at flush.
	held []string
	// live shows every line at once whatever StepOutput says.
	live bool
	// scanned is how much of buf is known to hold no safe cut, so that a
	// process printing a long line byte by byte is not rescanned each time.
	scanned int
}

func (r *run) newOutputWriter(path string) *outputWriter {
	return r.outputWriterWith(r.e.mask(r.indent() + "  " + path + " │ "))
}

// outputWriterWith returns an outputWriter whose lines start with prefix,
// masked already (a step's stdout and stderr share one).
func (r *run) outputWriterWith(prefix string) *outputWriter {
	w := &outputWriter{r: r, prefix: prefix}
	if m := r.e.masks(); m != nil {
		w.lines = m.Lines()
	}
	return w
}

// show displays one masked line of output now, or at flush when
// buffering.
func (w *outputWriter) show(masked string) {
	line := w.prefix + masked
	if w.r.e.StepOutput == BufferOutput && !w.live {
		w.held = append(w.held, line)
		return
	}
	w.r.show(line)
}

func (w *outputWriter) Write(p []byte) (int, error) {
	if w.r.e.Display == nil || (w.r.e.StepOutput == HideOutput && !w.live) {
		return len(p), nil
	}
	// Only p can hold a newline: what was held has none. Searching just p
	// keeps a long line written byte by byte linear.
	from := len(w.buf)
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexByte(w.buf[from:], '\n')
		if i < 0 {
			break
		}
		i += from
		w.show(w.lines.MaskLine(strings.TrimRight(string(w.buf[:i]), "\r")))
		w.buf = w.buf[i+1:]
		from, w.scanned = 0, 0
	}
	if len(w.buf) > longLine {
		w.flushLong()
	}
	return len(p), nil
}

// A line without its newline is shown once it is longer than longLine, so
// a process printing a progress bar without newlines cannot grow the
// buffer. Masking works on whole strings, so a masking display cuts such a
// line only where no credential shape can straddle the cut, holding at most
// maxHeldLine bytes while it finds one; past that, LineMasker.Force cuts
// it and carries what it masked across the cut.
const (
	longLine    = 4096
	maxHeldLine = 64 << 10
)

func (w *outputWriter) flushLong() {
	if w.r.e.Masker == nil {
		w.flushLine()
		return
	}
	i := secrets.SafeCut(w.buf, w.scanned)
	if i > 0 {
		w.show(w.lines.MaskLine(string(w.buf[:i])))
		w.buf = w.buf[:copy(w.buf, w.buf[i:])]
	}
	for len(w.buf) > maxHeldLine {
		// Force keeps what may begin a secret and masks a token cut
		// open to its end.
		s, n := w.lines.Force(w.buf)
		w.show(s)
		w.buf = w.buf[:copy(w.buf, w.buf[n:])]
	}
	// i was the last cut: none is left in buf
	w.scanned = len(w.buf)
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'
}

// flush shows what is left once the step's output has ended: the last
// line if it had no newline, and every line a BufferOutput display held.
func (w *outputWriter) flush() {
	w.flushLine()
	w.r.showLines(w.held)
	w.held = nil
}

// flushLine shows the line held so far, newline or not.
func (w *outputWriter) flushLine() {
	if len(w.buf) > 0 && w.r.e.Display != nil {
		w.show(w.lines.MaskLine(string(w.buf)))
	}
	w.buf = w.buf[:0]
	w.scanned = 0
}
