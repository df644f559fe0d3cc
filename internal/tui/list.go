package tui

import (
	"strings"

	"charm.land/bubbles/v2/textinput"
	"charm.land/bubbles/v2/viewport"
	tea "charm.land/bubbletea/v2"

	"github.com/charmbracelet/x/ansi"
)

// cursor is a selection in a list of n rows shown h at a time: only the
// window is ever rendered, so a list's length costs nothing to draw.
type cursor struct {
	pos, top int
}

// move moves the selection by d rows in a list of n, keeping it within
// the window of h rows.
func (c *cursor) move(d, n int) {
	c.pos = max(0, min(n-1, c.pos+d))
}

// key moves the selection for a navigation key; it reports whether the key
// was one.
func (c *cursor) key(k string, n, h int) bool {
	switch k {
	case "up", "k":
		c.move(-1, n)
	case "down", "j":
		c.move(1, n)
	case "pgup", "ctrl+b":
		c.move(-max(1, h-1), n)
	case "pgdown", "ctrl+f", " ":
		c.move(max(1, h-1), n)
	case "home", "g":
		c.pos = 0
	case "end", "G":
		c.pos = max(0, n-1)
	default:
		return false
	}
	return true
}

// window returns the rows [from, to) to draw for h rows, scrolling the
// window so the selection is in it.
func (c *cursor) window(n, h int) (from, to int) {
	if n == 0 || h <= 0 {
		return 0, 0
	}
	c.pos = max(0, min(n-1, c.pos))
	if c.pos < c.top {
		c.top = c.pos
	}
	if c.pos >= c.top+h {
		c.top = c.pos - h + 1
	}
	c.top = max(0, min(c.top, n-h))
	return c.top, min(n, c.top+h)
}

// ansiWidth is the width of a styled string in cells.
func ansiWidth(s string) int { return ansi.StringWidth(s) }

// wrap wraps text at w cells, breaking long words.
func wrap(s string, w int) string {
	if w <= 0 {
		return s
	}
	return ansi.Wrap(s, w, "")
}

// columns lays out two blocks side by side, each cut or padded to its
// width, with a rule between.
func columns(left, right string, lw, rw, h int, rule string) string {
	l := strings.Split(clip(left, lw, h), "\n")
	r := strings.Split(clip(right, rw, h), "\n")
	var b strings.Builder
	for i := range h {
		b.WriteString(l[i])
		b.WriteString(strings.Repeat(" ", max(0, lw-ansiWidth(l[i]))))
		b.WriteString(rule)
		b.WriteString(r[i])
		if i < h-1 {
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// fieldSet is a form's text fields, one of them focused: Tab, Shift-Tab and
// the arrows move between them, Enter moves on until the last.
type fieldSet struct {
	fields []textinput.Model
	at     int
}

func (f *fieldSet) focus() tea.Cmd {
	for i := range f.fields {
		f.fields[i].Blur()
	}
	return f.fields[f.at].Focus()
}

// key handles a key: it moves between the fields, or reports submit for
// Enter on the last, or types into the focused field.
func (f *fieldSet) key(k tea.KeyPressMsg) (cmd tea.Cmd, submit bool) {
	switch k.String() {
	case "tab", "down":
		f.at = (f.at + 1) % len(f.fields)
		return f.focus(), false
	case "shift+tab", "up":
		f.at = (f.at + len(f.fields) - 1) % len(f.fields)
		return f.focus(), false
	case "enter":
		if f.at < len(f.fields)-1 {
			f.at++
			return f.focus(), false
		}
		return nil, true
	}
	f.fields[f.at], cmd = f.fields[f.at].Update(k)
	return cmd, false
}

// sizePane gives a pane its size for this frame. A pane at its bottom
// stays there (a tail keeps showing the newest lines as the window
// changes); any other keeps its place, within the new bounds.
func sizePane(p *viewport.Model, w, h int) {
	atBottom := p.AtBottom()
	p.SetWidth(w)
	p.SetHeight(h)
	if atBottom {
		p.GotoBottom()
	} else {
		p.SetYOffset(p.YOffset())
	}
}
