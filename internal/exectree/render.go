package exectree

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/reelhq/reel/internal/runstatus"

	"github.com/reelhq/reel/transcript"
)

// Render writes the tree as indented text, one execution per line. The
// warnings are left to the caller (they belong on stderr).
func Render(w io.Writer, t *Tree) error {
	var sb strings.Builder
	sb.WriteString(label(t.Root, true))
	sb.WriteByte('\n')
	var walk func(n *Node, prefix string)
	walk = func(n *Node, prefix string) {
		for i, c := range n.Children {
			branch, next := "├── ", "│   "
			if i == len(n.Children)-1 {
				branch, next = "└── ", "    "
			}
			sb.WriteString(prefix)
			sb.WriteString(branch)
			sb.WriteString(label(c, false))
			sb.WriteByte('\n')
			walk(c, prefix+next)
		}
	}
	walk(t.Root, "")
	_, err := io.WriteString(w, sb.String())
	return err
}

func label(n *Node, top bool) string {
	var parts []string
	switch {
	case top || n.Kind == transcript.KindWorkflow && n.RunID != "":
		name := n.Name
		if name == "" {
			name = "(unnamed)"
		}
		parts = append(parts, name, "run "+n.RunID)
		if n.Attempts > 1 {
			parts = append(parts, fmt.Sprintf("%d attempts", n.Attempts))
		}
	case n.Kind == KindIteration:
		parts = append(parts, n.Name)
	default:
		name := n.Name
		if name == "" {
			name = n.Path
		}
		parts = append(parts, name, n.Kind)
		if n.Attempt > 1 {
			parts = append(parts, fmt.Sprintf("attempt %d", n.Attempt))
		}
		if n.RunAttempt > 1 {
			parts = append(parts, fmt.Sprintf("(resumed, run attempt %d)", n.RunAttempt))
		}
	}
	parts = append(parts, n.Status)
	// What no longer counts among the run's steps says what stands in
	// its place.
	switch n.Superseded {
	case runstatus.SupersededByResume:
		parts = append(parts, "(re-run after resume)")
	case runstatus.SupersededByRetry:
		parts = append(parts, "(retried)")
	}
	switch {
	case n.Untimed:
		parts = append(parts, "—")
	case n.Duration > 0 || n.Status != StatusInterrupted && n.Status != StatusRunning:
		parts = append(parts, FormatDuration(time.Duration(n.Duration)))
	}
	if n.ExitCode != nil && (n.Kind == transcript.KindCommand || *n.ExitCode != 0) {
		parts = append(parts, fmt.Sprintf("exit %d", *n.ExitCode))
	}
	if u := n.Usage; u.InputTokens != 0 || u.OutputTokens != 0 {
		parts = append(parts, FormatUsage(u))
	}
	// The run always says what it cost, "—" when nothing is known; an
	// execution inside it only when it has a cost to show.
	if c := n.Cost(); top || c.Known || c.Unpriced > 0 {
		parts = append(parts, c.String())
	}
	if n.Model != "" || n.Provider != "" {
		parts = append(parts, strings.Trim(n.Provider+"/"+n.Model, "/"))
	}
	if n.UserTurns > 1 {
		parts = append(parts, fmt.Sprintf("%d turns", n.UserTurns))
	}
	if n.Tools > 0 {
		t := fmt.Sprintf("%d tools", n.Tools)
		if n.Tools == 1 {
			t = "1 tool"
		}
		if n.Dangling > 0 {
			t += fmt.Sprintf(" (%d dangling)", n.Dangling)
		}
		parts = append(parts, t)
	}
	if n.Error != "" {
		parts = append(parts, "error: "+oneLine(n.Error, 80))
	}
	return strings.Join(parts, "  ")
}

// FormatDuration renders d rounded for reading: milliseconds under a
// minute, seconds above.
func FormatDuration(d time.Duration) string {
	if d >= time.Minute {
		return d.Round(time.Second).String()
	}
	return d.Round(time.Millisecond).String()
}

// FormatUsage renders token counts compactly.
func FormatUsage(u transcript.Usage) string {
	s := fmt.Sprintf("%d in / %d out", u.InputTokens, u.OutputTokens)
	var extra []string
	if c := u.CacheReadTokens + u.CacheWriteTokens; c != 0 {
		extra = append(extra, fmt.Sprintf("%d cache", c))
	}
	if u.ReasoningTokens != 0 {
		extra = append(extra, fmt.Sprintf("%d reasoning", u.ReasoningTokens))
	}
	if len(extra) > 0 {
		s += " (" + strings.Join(extra, ", ") + ")"
	}
	return s + " tokens"
}

func oneLine(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > max {
		return string(r[:max-1]) + "…"
	}
	return s
}
