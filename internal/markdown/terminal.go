package markdown

import (
	"bytes"
	"strconv"
	"strings"

	"github.com/charmbracelet/x/ansi"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"

	"github.com/reelhq/reel/internal/termtext"
)

// MinTermWidth is the narrowest layout Term makes: a narrower width is
// taken as this one.
const MinTermWidth = 10

// minContent is the fewest cells a nested block keeps for its text: past
// the nesting that leaves less, quotes and lists stop indenting.
const minContent = 4

// TermOptions says how Term lays Markdown out.
type TermOptions struct {
	// Width is the cells a line may take (at least MinTermWidth).
	Width int
	// NoColor leaves colours out (NO_COLOR): bold, italic, underline and
	// strikethrough stay, and what a colour said is said by a mark.
	NoColor bool
}

// Term renders Markdown, in reel's dialect, as text for a terminal: lines
// no wider than the width, styled with SGR sequences only.
//
// What it decides: a heading is bold with its level shown as its #
// marks; emphasis is italic, strong bold, strikethrough struck; code, in a
// span or a block, is in its own colour (between backticks without colour)
// and never highlighted, since a highlighter registers every language's
// lexer when reel starts (chroma cost every reel command about 40 ms);
// code blocks keep their lines, broken only where wider than the pane;
// lists show bullets or numbers and nest; a quote has a bar; a link shows
// its text then its URL once; an image is named, never fetched; a table's
// columns are aligned as the table says, and when the pane is too narrow
// the widest columns wrap their cells, then each row is shown as
// "header: value" lines; a <details> block is folded to its summary and
// the number of lines it hides, as a page shows it; other raw HTML is shown
// as written. The transcript is untrusted: every piece of its text loses
// its escape sequences and control characters (termtext.Strip), so no
// escape reaches the terminal but the renderer's own SGR, each line closing
// what it opened.
type Term struct {
	parser parser.Parser
	width  int
	pal    termPalette
}

// NewTerm makes a Term. It is safe for concurrent use.
func NewTerm(opts TermOptions) *Term {
	md := goldmark.New(goldmark.WithExtensions(Extensions()...))
	w := max(opts.Width, MinTermWidth)
	return &Term{parser: md.Parser(), width: w, pal: newTermPalette(opts.NoColor)}
}

// Render renders src.
func (t *Term) Render(src string) string {
	// Sequences go before parsing, whole: goldmark would cut one at a
	// bracket, leaving its tail as text. What a character reference spells
	// is cleaned again where the text is written.
	source := []byte(clean(src))
	doc := t.parser.Parse(text.NewReader(source))
	r := &termRender{src: source, pal: &t.pal}
	return strings.Join(r.blocks(doc, t.width), "\n")
}

// termPalette holds the SGR parameters of each construct; an empty one is
// plain.
type termPalette struct {
	noColor                                  bool
	heading, code, link, url, bar, rule, dim string
}

func newTermPalette(noColor bool) termPalette {
	if noColor {
		return termPalette{noColor: true, heading: "1", link: "4"}
	}
	return termPalette{heading: "1;36", code: "33", link: "4;34", url: "90", bar: "90", rule: "90", dim: "90"}
}

const sgrReset = "\x1b[0m"

// paint wraps s in the SGR of params; plain when params is empty.
func paint(params, s string) string {
	if params == "" || s == "" {
		return s
	}
	return "\x1b[" + params + "m" + s + sgrReset
}

// termRender renders one document.
type termRender struct {
	src []byte
	pal *termPalette
}

// blocks renders the block children of n, a blank line between them (none
// between the parts of a tight list's item).
func (r *termRender) blocks(n ast.Node, width int) []string {
	var out []string
	tight := false
	if li, ok := n.(*ast.ListItem); ok {
		if l, ok := li.Parent().(*ast.List); ok {
			tight = l.IsTight
		}
	}
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		var lines []string
		if h, summary, ok := detailsOpen(c, r.src); ok {
			lines, c = r.folded(summary, h, width)
		} else {
			lines = r.block(c, width)
		}
		if len(lines) == 0 {
			continue
		}
		if len(out) > 0 && !tight {
			out = append(out, "")
		}
		out = append(out, lines...)
	}
	return out
}

// block renders one block node in width cells.
func (r *termRender) block(n ast.Node, width int) []string {
	switch n := n.(type) {
	case *ast.Paragraph, *ast.TextBlock:
		return wrap(r.inlines(n, "", ""), width)
	case *ast.Heading:
		return wrap(r.inlines(n, r.pal.heading, strings.Repeat("#", n.Level)+" "), width)
	case *ast.ThematicBreak:
		return []string{paint(r.pal.rule, strings.Repeat("─", width))}
	case *ast.CodeBlock, *ast.FencedCodeBlock:
		return r.code(n, width)
	case *ast.Blockquote:
		return indent(r.blocks(n, inner(width, 2)), width, paint(r.pal.bar, "│ "), paint(r.pal.bar, "│ "))
	case *ast.List:
		return r.list(n, width)
	case *ast.HTMLBlock:
		return r.html(n, width)
	case *east.Table:
		return r.table(n, width)
	case *ast.Document, *ast.ListItem:
		return r.blocks(n, width)
	}
	// a block of an extension reel does not enable: its text, as text
	if n.HasChildren() {
		return r.blocks(n, width)
	}
	return nil
}

// code renders a code block's lines as they are, indented and in the code
// colour, tabs expanded; a line wider than the pane is broken.
func (r *termRender) code(n ast.Node, width int) []string {
	lines := n.Lines()
	var out []string
	for i := 0; i < lines.Len(); i++ {
		seg := lines.At(i)
		l := strings.TrimRight(clean(string(seg.Value(r.src))), "\n")
		// tabs stop every 4 columns of the code's own text, whatever
		// the indent it is shown at
		l = expandTabs(strings.TrimRight(l, " "))
		out = append(out, hardwrap(paint(r.pal.code, l), inner(width, 4))...)
	}
	return indent(out, width, "    ", "    ")
}

// list renders a list: bullets by depth, or numbers from the list's start
// right-aligned; an item's lines after its first are indented under its
// text.
func (r *termRender) list(l *ast.List, width int) []string {
	n := l.ChildCount()
	last := l.Start + n - 1
	numw := len(strconv.Itoa(max(last, l.Start)))
	bullet := "•"
	depth := 0
	for p := l.Parent(); p != nil; p = p.Parent() {
		if _, ok := p.(*ast.List); ok {
			depth++
		}
	}
	switch depth % 3 {
	case 1:
		bullet = "◦"
	case 2:
		bullet = "▪"
	}
	var out []string
	i := 0
	for c := l.FirstChild(); c != nil; c = c.NextSibling() {
		marker := bullet + " "
		if l.IsOrdered() {
			num := strconv.Itoa(l.Start + i)
			marker = strings.Repeat(" ", numw-len(num)) + num + string(l.Marker) + " "
		}
		pad := strings.Repeat(" ", ansi.StringWidth(marker))
		if i > 0 && !l.IsTight {
			out = append(out, "")
		}
		body := r.blocks(c, inner(width, len(pad)))
		if len(body) == 0 {
			body = []string{""}
		}
		out = append(out, indent(body, width, paint(r.pal.dim, marker), pad)...)
		i++
	}
	return out
}

// html shows a raw HTML block as written, in the dim colour.
func (r *termRender) html(n *ast.HTMLBlock, width int) []string {
	s := strings.TrimRight(expandTabs(clean(string(htmlText(n, r.src)))), "\n")
	var out []string
	for _, l := range strings.Split(s, "\n") {
		out = append(out, hardwrap(paint(r.pal.dim, l), width)...)
	}
	return out
}

// folded renders a <details> block (from its opening HTML block n to the
// sibling that closes it, or to the end of its parent) as its summary and
// the count of lines it folds; it returns the last node it took.
func (r *termRender) folded(summary string, n *ast.HTMLBlock, width int) ([]string, ast.Node) {
	raw := bytes.ToLower(htmlText(n, r.src))
	depth := bytes.Count(raw, []byte("<details")) - bytes.Count(raw, []byte("</details>"))
	lines := 0
	if depth <= 0 {
		// opened and closed in one block: what is between its first
		// and last lines
		lines = max(bytes.Count(bytes.TrimRight(raw, "\n"), []byte("\n"))-1, 0)
	}
	var last ast.Node = n
	for c := n.NextSibling(); c != nil && depth > 0; c = c.NextSibling() {
		last = c
		if h, ok := c.(*ast.HTMLBlock); ok {
			raw := bytes.ToLower(htmlText(h, r.src))
			depth += bytes.Count(raw, []byte("<details")) - bytes.Count(raw, []byte("</details>"))
			if depth <= 0 {
				break
			}
		}
		lines += sourceLines(c)
	}
	unit := "lines"
	if lines == 1 {
		unit = "line"
	}
	s := paint(r.pal.dim, "▸ ") + clean(summary) + paint(r.pal.dim, " ("+strconv.Itoa(lines)+" "+unit+" folded)")
	return wrap(s, width), last
}

// detailsOpen says whether n is an HTML block opening a <details>, and
// returns it and its summary ("details" when it has none).
func detailsOpen(n ast.Node, src []byte) (*ast.HTMLBlock, string, bool) {
	h, ok := n.(*ast.HTMLBlock)
	if !ok {
		return nil, "", false
	}
	t := bytes.TrimSpace(htmlText(h, src))
	if !bytes.HasPrefix(bytes.ToLower(t), []byte("<details")) {
		return nil, "", false
	}
	summary := "details"
	lower := bytes.ToLower(t)
	if i := bytes.Index(lower, []byte("<summary>")); i >= 0 {
		rest := t[i+len("<summary>"):]
		if j := bytes.Index(bytes.ToLower(rest), []byte("</summary>")); j >= 0 {
			if s := strings.TrimSpace(stripTags(string(rest[:j]))); s != "" {
				summary = s
			}
		}
	}
	return h, summary, true
}

// htmlText is an HTML block's source, its closing line included.
func htmlText(h *ast.HTMLBlock, src []byte) []byte {
	var b []byte
	lines := h.Lines()
	for i := 0; i < lines.Len(); i++ {
		seg := lines.At(i)
		b = append(b, seg.Value(src)...)
	}
	if h.HasClosure() {
		b = append(b, h.ClosureLine.Value(src)...)
	}
	return b
}

// sourceLines counts the source lines of a block and its descendants.
func sourceLines(n ast.Node) int {
	if n.Type() != ast.TypeBlock {
		return 0
	}
	if n.Lines().Len() > 0 {
		return n.Lines().Len()
	}
	total := 0
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		total += sourceLines(c)
	}
	return total
}

// stripTags drops what is between < and > in s.
func stripTags(s string) string {
	var b strings.Builder
	in := false
	for _, r := range s {
		switch {
		case r == '<':
			in = true
		case r == '>' && in:
			in = false
		case !in:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// inner is the width left to a block nested in width cells behind a
// prefix of p cells: never under minContent, the prefix cut instead (see
// indent).
func inner(width, p int) int {
	return max(width-p, minContent)
}

// indent prefixes lines with first (the first line) and rest (the others),
// both of one width, which is cut when it would leave the text fewer than
// minContent cells of width.
func indent(lines []string, width int, first, rest string) []string {
	pw := ansi.StringWidth(rest)
	if keep := width - minContent; pw > keep {
		keep = max(keep, 0)
		first, rest = ansi.Truncate(first, keep, ""), ansi.Truncate(rest, keep, "")
	}
	out := make([]string, len(lines))
	for i, l := range lines {
		p := rest
		if i == 0 {
			p = first
		}
		if l == "" {
			// no trailing blanks on an empty line
			p = strings.TrimRight(p, " ")
		}
		out[i] = p + l
	}
	return out
}

// clean makes a piece of the transcript safe for the terminal: escape
// sequences and control characters out (termtext.Strip), invalid UTF-8
// replaced.
func clean(s string) string {
	return strings.ToValidUTF8(termtext.Strip(s), "\uFFFD")
}

// expandTabs replaces each tab of s with the spaces to the next stop of
// 4 columns: a terminal moves a tab to its own stops, which the width
// count cannot know.
func expandTabs(s string) string {
	if !strings.Contains(s, "\t") {
		return s
	}
	var b strings.Builder
	col := 0
	for _, r := range s {
		switch r {
		case '\t':
			n := 4 - col%4
			b.WriteString(strings.Repeat(" ", n))
			col += n
		case '\n':
			b.WriteRune(r)
			col = 0
		default:
			b.WriteRune(r)
			col++
		}
	}
	return b.String()
}

// unescape resolves a Markdown text's backslash escapes and its entity and
// numeric character references, in one pass, as CommonMark reads them.
func unescape(v []byte) []byte {
	if bytes.IndexByte(v, '\\') < 0 && bytes.IndexByte(v, '&') < 0 {
		return v
	}
	out := make([]byte, 0, len(v))
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c == '\\' && i+1 < len(v) && util.IsPunct(v[i+1]) {
			out = append(out, v[i+1])
			i++
			continue
		}
		if c == '&' {
			if r, n := reference(v[i:]); n > 0 {
				out = append(out, r...)
				i += n - 1
				continue
			}
		}
		out = append(out, c)
	}
	return out
}

// reference reads the character reference that v starts with (&name;,
// &#123; or &#x7b;) and returns what it stands for and its length, or a
// length of 0.
func reference(v []byte) ([]byte, int) {
	end := bytes.IndexByte(v, ';')
	if end < 2 || end > 40 {
		return nil, 0
	}
	body := string(v[1:end])
	if body[0] == '#' {
		base, digits := 10, body[1:]
		if len(digits) > 0 && (digits[0] == 'x' || digits[0] == 'X') {
			base, digits = 16, digits[1:]
		}
		if len(digits) == 0 || base == 10 && len(digits) > 7 || base == 16 && len(digits) > 6 {
			return nil, 0
		}
		n, err := strconv.ParseUint(digits, base, 32)
		if err != nil {
			return nil, 0
		}
		r := rune(n)
		if r == 0 {
			r = '\uFFFD'
		}
		return []byte(string(util.ToValidRune(r))), end + 1
	}
	for _, c := range []byte(body) {
		if !util.IsAlphaNumeric(c) {
			return nil, 0
		}
	}
	if e, ok := util.LookUpHTML5EntityByName(body); ok {
		return e.Characters, end + 1
	}
	return nil, 0
}
