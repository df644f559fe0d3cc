package markdown

import (
	"sort"
	"strings"

	"github.com/charmbracelet/x/ansi"
	east "github.com/yuin/goldmark/extension/ast"
)

// minColumn is the narrowest a table's column is made before the table is
// shown row by row instead.
const minColumn = 3

// table renders a GFM table: columns aligned as its delimiter row says,
// the header bold over a rule, " │ " between cells. When its natural width
// does not fit, the widest columns are narrowed and their cells wrap; when
// not even minColumn cells a column fit, each row is shown as
// "header: value" lines.
func (r *termRender) table(t *east.Table, width int) []string {
	var rows [][]string
	var aligns []east.Alignment
	ncol := 0
	for row := t.FirstChild(); row != nil; row = row.NextSibling() {
		base := ""
		if _, ok := row.(*east.TableHeader); ok {
			base = "1"
		}
		var cells []string
		for c := row.FirstChild(); c != nil; c = c.NextSibling() {
			cells = append(cells, strings.ReplaceAll(r.inlines(c, base, ""), "\n", " "))
			if cell, ok := c.(*east.TableCell); ok && len(aligns) < len(cells) {
				aligns = append(aligns, cell.Alignment)
			}
		}
		ncol = max(ncol, len(cells))
		rows = append(rows, cells)
	}
	if ncol == 0 {
		return nil
	}
	for len(aligns) < ncol {
		aligns = append(aligns, east.AlignNone)
	}
	avail := width - 3*(ncol-1)
	if avail < ncol*minColumn {
		return r.tableByRow(rows, width)
	}
	widths := make([]int, ncol)
	for _, cells := range rows {
		for i, c := range cells {
			widths[i] = max(widths[i], ansi.StringWidth(c), 1)
		}
	}
	widths = share(widths, avail)

	sep := paint(r.pal.rule, " │ ")
	var out []string
	for ri, cells := range rows {
		cols := make([][]string, ncol)
		height := 1
		for i := range ncol {
			if i < len(cells) {
				cols[i] = wrap(cells[i], widths[i])
			}
			height = max(height, len(cols[i]))
		}
		for l := range height {
			parts := make([]string, ncol)
			for i := range ncol {
				s := ""
				if l < len(cols[i]) {
					s = cols[i][l]
				}
				parts[i] = align(s, widths[i], aligns[i])
			}
			out = append(out, strings.TrimRight(strings.Join(parts, sep), " "))
		}
		if _, ok := t.FirstChild().(*east.TableHeader); ok && ri == 0 {
			rule := make([]string, ncol)
			for i, w := range widths {
				rule[i] = strings.Repeat("─", w)
			}
			out = append(out, paint(r.pal.rule, strings.Join(rule, "─┼─")))
		}
	}
	return out
}

// share narrows natural column widths to fit avail cells in all: each
// column, narrowest first, gets what it needs up to an equal share of what
// is left.
func share(natural []int, avail int) []int {
	total := 0
	for _, w := range natural {
		total += w
	}
	if total <= avail {
		return natural
	}
	order := make([]int, len(natural))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return natural[order[a]] < natural[order[b]] })
	out := make([]int, len(natural))
	left := avail
	for k, i := range order {
		fair := left / (len(order) - k)
		out[i] = min(natural[i], fair)
		left -= out[i]
	}
	return out
}

// align pads a styled cell line to w cells as its column is aligned.
func align(s string, w int, a east.Alignment) string {
	gap := w - ansi.StringWidth(s)
	if gap <= 0 {
		return s
	}
	switch a {
	case east.AlignRight:
		return strings.Repeat(" ", gap) + s
	case east.AlignCenter:
		return strings.Repeat(" ", gap/2) + s + strings.Repeat(" ", gap-gap/2)
	}
	return s + strings.Repeat(" ", gap)
}

// tableByRow shows a table too wide for the pane row by row, each cell as
// "header: value", a blank line between rows.
func (r *termRender) tableByRow(rows [][]string, width int) []string {
	head := rows[0]
	if len(rows) == 1 {
		return wrap(strings.Join(head, " · "), width)
	}
	var out []string
	for _, cells := range rows[1:] {
		if len(out) > 0 {
			out = append(out, "")
		}
		for i, c := range cells {
			label := ""
			if i < len(head) && head[i] != "" {
				label = head[i] + ": "
			}
			out = append(out, wrap(label+c, width)...)
		}
	}
	return out
}
