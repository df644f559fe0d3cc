package markdown

import (
	"strings"

	"github.com/charmbracelet/x/ansi"
	"github.com/yuin/goldmark/ast"
	east "github.com/yuin/goldmark/extension/ast"
)

// span is a piece of inline text and the SGR parameters it is shown with.
type span struct{ text, sgr string }

// inlines renders the inline children of n as one styled string, base the
// SGR parameters they start with, after lead; a line break inside it is
// "\n".
func (r *termRender) inlines(n ast.Node, base, lead string) string {
	var spans []span
	if lead != "" {
		spans = append(spans, span{lead, base})
	}
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		spans = r.inline(c, base, spans)
	}
	var b strings.Builder
	for i := 0; i < len(spans); {
		// adjacent spans of one style share their SGR
		j := i + 1
		for j < len(spans) && spans[j].sgr == spans[i].sgr {
			j++
		}
		var t strings.Builder
		for _, s := range spans[i:j] {
			t.WriteString(s.text)
		}
		b.WriteString(paint(spans[i].sgr, t.String()))
		i = j
	}
	return b.String()
}

// with adds SGR parameters to those of an enclosing span; a later colour
// wins.
func with(sgr, more string) string {
	switch {
	case more == "":
		return sgr
	case sgr == "":
		return more
	}
	return sgr + ";" + more
}

// inline appends the spans of the inline node n, shown with sgr.
func (r *termRender) inline(n ast.Node, sgr string, out []span) []span {
	switch n := n.(type) {
	case *ast.Text:
		v := n.Segment.Value(r.src)
		if !n.IsRaw() {
			v = unescape(v)
		}
		out = append(out, span{flat(string(v)), sgr})
		if n.HardLineBreak() || n.SoftLineBreak() && HardWraps {
			out = append(out, span{"\n", sgr})
		} else if n.SoftLineBreak() {
			out = append(out, span{" ", sgr})
		}
		return out
	case *ast.String:
		v := n.Value
		if !n.IsCode() && !n.IsRaw() {
			v = unescape(v)
		}
		return append(out, span{flat(string(v)), sgr})
	case *ast.CodeSpan:
		var b strings.Builder
		for c := n.FirstChild(); c != nil; c = c.NextSibling() {
			if t, ok := c.(*ast.Text); ok {
				b.Write(t.Segment.Value(r.src))
			}
		}
		code := strings.ReplaceAll(flat(b.String()), "\n", " ")
		if r.pal.noColor {
			return append(out, span{"`" + code + "`", sgr})
		}
		return append(out, span{code, with(sgr, r.pal.code)})
	case *ast.Emphasis:
		attr := "3"
		if n.Level >= 2 {
			attr = "1"
		}
		return r.children(n, with(sgr, attr), out)
	case *east.Strikethrough:
		return r.children(n, with(sgr, "9"), out)
	case *ast.Link:
		out = r.children(n, with(sgr, r.pal.link), out)
		url := flat(string(unescape(n.Destination)))
		if url != "" && url != plainText(n, r.src) {
			out = append(out, span{" (" + url + ")", with(sgr, r.pal.url)})
		}
		return out
	case *ast.AutoLink:
		return append(out, span{flat(string(n.Label(r.src))), with(sgr, r.pal.link)})
	case *ast.Image:
		// an image is named, never fetched: as the page shows it
		alt := plainText(n, r.src)
		url := flat(string(unescape(n.Destination)))
		if alt == "" {
			alt = url
		}
		out = append(out, span{"image: " + alt, with(sgr, r.pal.link)})
		if url != "" && url != alt {
			out = append(out, span{" (" + url + ")", with(sgr, r.pal.url)})
		}
		return out
	case *ast.RawHTML:
		var b strings.Builder
		for i := 0; i < n.Segments.Len(); i++ {
			seg := n.Segments.At(i)
			b.Write(seg.Value(r.src))
		}
		return append(out, span{strings.ReplaceAll(flat(b.String()), "\n", " "), with(sgr, r.pal.dim)})
	case *east.TaskCheckBox:
		box := "[ ] "
		if n.IsChecked {
			box = "[x] "
		}
		return append(out, span{box, sgr})
	}
	return r.children(n, sgr, out)
}

// children appends the spans of n's children.
func (r *termRender) children(n ast.Node, sgr string, out []span) []span {
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		out = r.inline(c, sgr, out)
	}
	return out
}

// plainText is the text of n's inline children without their styles.
func plainText(n ast.Node, src []byte) string {
	r := &termRender{src: src, pal: &termPalette{noColor: true}}
	var b strings.Builder
	for _, s := range r.children(n, "", nil) {
		b.WriteString(s.text)
	}
	return b.String()
}

// flat is inline text made safe (clean) with its tabs as spaces.
func flat(s string) string {
	return strings.ReplaceAll(clean(s), "\t", "    ")
}

// wrap breaks a styled string into lines of at most width cells, at
// spaces where it can, inside a word where it must.
func wrap(s string, width int) []string {
	if s == "" {
		return nil
	}
	return fit(closeLines(strings.Split(ansi.Wrap(s, width, ""), "\n")), width)
}

// hardwrap breaks a styled line into lines of exactly width cells but the
// last, keeping its spaces (code).
func hardwrap(s string, width int) []string {
	return fit(closeLines(strings.Split(ansi.Hardwrap(s, width, true), "\n")), width)
}

// fit makes sure of the width: a line still wider (a wrap's edge case) is
// broken, and a character wider than the width itself is cut.
func fit(lines []string, width int) []string {
	for i := 0; i < len(lines); i++ {
		if ansi.StringWidth(lines[i]) <= width {
			continue
		}
		parts := closeLines(strings.Split(ansi.Hardwrap(lines[i], width, true), "\n"))
		for j, p := range parts {
			if ansi.StringWidth(p) > width {
				parts[j] = ansi.Truncate(p, width, "")
			}
		}
		lines = append(lines[:i], append(parts, lines[i+1:]...)...)
		i += len(parts) - 1
	}
	return lines
}

// closeLines makes each line stand alone: a line ending inside a styled
// span is reset at its end, and the next line opens the span again, so
// that a pane that cuts or scrolls lines never bleeds a style. Every
// escape in the lines is the renderer's own SGR (the text was cleaned).
func closeLines(lines []string) []string {
	open := ""
	for i, l := range lines {
		next := open
		if j := strings.LastIndex(l, "\x1b["); j >= 0 {
			if k := strings.IndexByte(l[j:], 'm'); k >= 0 {
				if seq := l[j : j+k+1]; seq == sgrReset {
					next = ""
				} else {
					next = seq
				}
			}
		}
		if open != "" {
			l = open + l
		}
		if next != "" {
			l += sgrReset
		}
		lines[i] = l
		open = next
	}
	return lines
}
