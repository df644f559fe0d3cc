package tui

import (
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/reelhq/reel/internal/runstatus"
)

// styles are the looks of the screen. With NoColor every style is plain:
// what a colour says is said by an icon or a word too.
type styles struct {
	noColor                          bool
	tab, tabOn, title, dim, sel, err lipgloss.Style
	ok, fail, run, warn, key, match  lipgloss.Style
	box                              lipgloss.Style
}

func newStyles(noColor bool) styles {
	if noColor {
		plain := lipgloss.NewStyle()
		return styles{noColor: true, tab: plain.Padding(0, 1), tabOn: plain.Padding(0, 1).Reverse(true),
			title: plain.Bold(true), dim: plain, sel: plain.Reverse(true), err: plain, ok: plain, fail: plain,
			run: plain, warn: plain, key: plain, match: plain.Underline(true),
			box: plain.Border(lipgloss.NormalBorder()).Padding(0, 1)}
	}
	c := lipgloss.Color
	return styles{
		tab:   lipgloss.NewStyle().Padding(0, 1).Foreground(c("7")),
		tabOn: lipgloss.NewStyle().Padding(0, 1).Bold(true).Foreground(c("0")).Background(c("6")),
		title: lipgloss.NewStyle().Bold(true),
		dim:   lipgloss.NewStyle().Foreground(c("8")),
		sel:   lipgloss.NewStyle().Reverse(true),
		err:   lipgloss.NewStyle().Foreground(c("1")),
		ok:    lipgloss.NewStyle().Foreground(c("2")),
		fail:  lipgloss.NewStyle().Foreground(c("1")).Bold(true),
		run:   lipgloss.NewStyle().Foreground(c("3")),
		warn:  lipgloss.NewStyle().Foreground(c("3")),
		key:   lipgloss.NewStyle().Foreground(c("6")),
		match: lipgloss.NewStyle().Bold(true).Foreground(c("3")),
		box:   lipgloss.NewStyle().Border(lipgloss.RoundedBorder()).BorderForeground(c("6")).Padding(0, 1),
	}
}

// icon is a status's mark, as AWF's tree has them.
func icon(status string) string {
	switch status {
	case runstatus.Success:
		return "✓"
	case runstatus.Failure:
		return "✗"
	case runstatus.Cancelled:
		return "⊘"
	case runstatus.Running:
		return "▶"
	case runstatus.Interrupted:
		return "!"
	}
	return "⏳"
}

// status colours a status's icon and word.
func (s styles) status(status, text string) string {
	switch status {
	case runstatus.Success:
		return s.ok.Render(text)
	case runstatus.Failure:
		return s.fail.Render(text)
	case runstatus.Running:
		return s.run.Render(text)
	case runstatus.Cancelled, runstatus.Interrupted:
		return s.warn.Render(text)
	}
	return text
}

// fit cuts or pads s (plain text) to exactly w cells.
func fit(s string, w int) string {
	if w <= 0 {
		return ""
	}
	s = strings.ReplaceAll(s, "\n", " ")
	if ansi.StringWidth(s) > w {
		return ansi.Truncate(s, w, "…")
	}
	return s + strings.Repeat(" ", w-ansi.StringWidth(s))
}

// clip keeps the first h lines of s, each cut to w cells, and pads to h
// lines.
func clip(s string, w, h int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > h {
		lines = lines[:h]
	}
	for i, l := range lines {
		if ansi.StringWidth(l) > w {
			lines[i] = ansi.Truncate(l, w, "")
		}
	}
	for len(lines) < h {
		lines = append(lines, "")
	}
	return strings.Join(lines, "\n")
}
