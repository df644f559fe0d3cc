package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/reelhq/reel/internal/runstatus"
)

// Colour, in every command: only when the output is a terminal, never with
// NO_COLOR set (https://no-color.org) or --no-color given.

// noColorFlag is the root's persistent flag.
const noColorFlag = "no-color"

// useColor reports whether cmd may colour what it writes to w.
func useColor(cmd *cobra.Command, w io.Writer) bool {
	if os.Getenv("NO_COLOR") != "" {
		return false
	}
	if f := cmd.Flag(noColorFlag); f != nil && f.Value.String() == "true" {
		return false
	}
	return isTerminal(w)
}

// colorFlag reads a --color flag's value: auto colours what cmd writes to
// w as useColor says, always and never say it.
func colorFlag(cmd *cobra.Command, w io.Writer, value string) (bool, error) {
	switch value {
	case "auto":
		return useColor(cmd, w), nil
	case "always":
		return true, nil
	case "never":
		return false, nil
	}
	return false, fmt.Errorf("--color %q: want auto, always or never", value)
}

// termWidth is the width of the terminal w writes to, or 0 when w is not a
// terminal (tables are then not cut). $COLUMNS wins, as shells set it.
func termWidth(w io.Writer) int {
	if n := envInt("COLUMNS"); n > 0 {
		return n
	}
	f, ok := w.(*os.File)
	if !ok {
		return 0
	}
	width, _, err := term.GetSize(int(f.Fd()))
	if err != nil {
		return 0
	}
	return width
}

func envInt(name string) int {
	var n int
	if _, err := fmt.Sscan(os.Getenv(name), &n); err != nil {
		return 0
	}
	return n
}

// palette colours words; its zero value leaves them plain.
type palette struct{ on bool }

func (p palette) wrap(code, s string) string {
	if !p.on || s == "" {
		return s
	}
	return "\x1b[" + code + "m" + s + "\x1b[0m"
}

func (p palette) bold(s string) string { return p.wrap("1", s) }
func (p palette) dim(s string) string  { return p.wrap("2", s) }

// status colours a run or step status.
func (p palette) status(s string) string {
	switch s {
	case runstatus.Success:
		return p.wrap("32", s)
	case runstatus.Failure:
		return p.wrap("31", s)
	case runstatus.Cancelled, runstatus.Interrupted:
		return p.wrap("33", s)
	case runstatus.Running:
		return p.wrap("36", s)
	}
	return s
}

// table writes rows in aligned columns, two spaces apart, the first row a
// header. When width > 0 it fits them into width columns: the column
// flexible names (its index, usually the widest free text) is cut, with
// "…", first; a row that still does not fit is cut at the edge. colour
// styles a cell after it is measured.
//
// Before any cut, a narrow table shortens its id columns (ids) to their
// first 8 characters, as the web pages show them, and after the flexible
// column has shrunk, drops the columns named in drop, in order; a column
// in neither (the status, the cost) is kept whole.
type table struct {
	rows     [][]string
	flexible int
	ids      []int
	drop     []int
	colour   func(row, col int, cell string) string
}

// shortID is how many characters of an id a narrow table keeps.
const shortID = 8

// fit shortens, then drops, columns until the rows fit width.
func (t *table) fit(width int) {
	total := func() int {
		sum := 0
		for i := range t.rows[0] {
			w := 0
			for _, r := range t.rows {
				if i < len(r) {
					w = max(w, utf8.RuneCountInString(r[i]))
				}
			}
			sum += w
		}
		return sum + 2*(len(t.rows[0])-1)
	}
	if total() <= width {
		return
	}
	for _, c := range t.ids {
		for ri, r := range t.rows {
			if ri > 0 && c < len(r) && utf8.RuneCountInString(r[c]) > shortID {
				r[c] = string([]rune(r[c])[:shortID])
			}
		}
	}
	if t.flexible >= 0 && t.flexible < len(t.rows[0]) {
		// the flexible column may shrink to 12 before a column goes
		flex := 0
		for _, r := range t.rows {
			if t.flexible < len(r) {
				flex = max(flex, utf8.RuneCountInString(r[t.flexible]))
			}
		}
		if total()-(flex-min(flex, 12)) <= width {
			return
		}
	}
	for _, c := range t.drop {
		if total() <= width {
			return
		}
		for i, r := range t.rows {
			if c < len(r) {
				t.rows[i] = append(r[:c:c], r[c+1:]...)
			}
		}
		// later indexes move left
		for j := range t.drop {
			if t.drop[j] > c {
				t.drop[j]--
			}
		}
		if t.flexible > c {
			t.flexible--
		}
	}
}

func (t *table) add(cells ...string) { t.rows = append(t.rows, cells) }

func (t *table) write(w io.Writer, width int) error {
	if len(t.rows) == 0 {
		return nil
	}
	if width > 0 {
		t.fit(width)
	}
	cols := 0
	for _, r := range t.rows {
		cols = max(cols, len(r))
	}
	widths := make([]int, cols)
	for _, r := range t.rows {
		for i, c := range r {
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	if width > 0 && t.flexible >= 0 && t.flexible < cols {
		total := 2 * (cols - 1)
		for _, w := range widths {
			total += w
		}
		if over := total - width; over > 0 {
			widths[t.flexible] = max(widths[t.flexible]-over, min(widths[t.flexible], 8))
		}
	}
	var b strings.Builder
	for ri, r := range t.rows {
		b.Reset()
		used := 0
		for i, c := range r {
			cell := cut(c, widths[i])
			if width > 0 && used+utf8.RuneCountInString(cell) > width {
				// the row still does not fit: cut it at the edge
				cell = cut(cell, max(width-used, 0))
			}
			pad := widths[i] - utf8.RuneCountInString(cell)
			used += utf8.RuneCountInString(cell)
			if t.colour != nil {
				cell = t.colour(ri, i, cell)
			}
			b.WriteString(cell)
			if i == len(r)-1 || width > 0 && used+pad+2 >= width {
				break
			}
			b.WriteString(strings.Repeat(" ", pad+2))
			used += pad + 2
		}
		if _, err := fmt.Fprintln(w, strings.TrimRight(b.String(), " ")); err != nil {
			return err
		}
	}
	return nil
}

// cut shortens s to n runes, ending in "…" when it had to.
func cut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	if n <= 1 {
		return string([]rune(s)[:max(n, 0)])
	}
	return string([]rune(s)[:n-1]) + "…"
}

// lineCutter cuts every line written through it to width runes, ending a
// cut line in "…". Commands whose tables have more fixed columns than a
// narrow terminal holds (stats, tools, events) write through one on a
// terminal, so that a row stays one line instead of wrapping into the
// next. Flush writes a last line without its newline.
type lineCutter struct {
	w     io.Writer
	width int
	line  []byte
	err   error
}

// fitTo returns w itself when width is 0 (not a terminal), else a
// lineCutter; flush must be called when done.
func fitTo(w io.Writer, width int) (out io.Writer, flush func() error) {
	if width <= 0 {
		return w, func() error { return nil }
	}
	c := &lineCutter{w: w, width: width}
	return c, c.flush
}

func (c *lineCutter) Write(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			c.line = append(c.line, p...)
			break
		}
		c.line = append(c.line, p[:i]...)
		p = p[i+1:]
		if c.err = c.emit(true); c.err != nil {
			return 0, c.err
		}
	}
	return n, nil
}

func (c *lineCutter) emit(newline bool) error {
	s := cut(string(c.line), c.width)
	c.line = c.line[:0]
	if newline {
		s += "\n"
	}
	_, err := io.WriteString(c.w, s)
	return err
}

func (c *lineCutter) flush() error {
	if c.err != nil || len(c.line) == 0 {
		return c.err
	}
	return c.emit(false)
}
