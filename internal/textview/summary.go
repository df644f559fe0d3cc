package textview

import (
	"fmt"
	"strings"
	"unicode"

	"github.com/reelhq/reel/transcript"
)

// Summary says what one event holds in one line of at most 100 runes:
// a step's name, kind, attempt, command, child run and error; a message's
// text and the kinds of its other blocks; a tool's name, call id and
// fidelity. Control characters are replaced, so that the line is safe on a
// terminal. reel tail and reel tui's event lists show it.
func Summary(ev *transcript.ExchangeEvent) string {
	var s string
	switch {
	case ev.Step() != nil:
		sp := ev.Step()
		s = sp.Name + " (" + sp.Kind + ")"
		if sp.Attempt > 1 {
			s += fmt.Sprintf(" attempt %d", sp.Attempt)
		}
		if sp.Command != "" {
			s += " $ " + sp.Command
		}
		if ev.ChildRunID != "" {
			s += " child " + ev.ChildRunID
		}
		if sp.Error != "" {
			s += " error: " + sp.Error
		}
	case ev.Message() != nil:
		for _, b := range ev.Message().Blocks {
			switch b.Type {
			case transcript.BlockText:
				s += b.Text + " "
			case transcript.BlockThinking:
				s += "[thinking] "
			case transcript.BlockToolUse:
				s += "[tool_use " + b.ToolName + "] "
			case transcript.BlockCommand:
				s += "$ " + b.Command + " "
			default:
				s += "[" + string(b.Type) + "] "
			}
		}
	case ev.Tool() != nil:
		tp := ev.Tool()
		s = tp.Name + " " + tp.CallID + " " + string(tp.Fidelity)
		if tp.Error != "" {
			s += " error: " + tp.Error
		}
	}
	s = strings.Join(strings.Fields(s), " ")
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return '\uFFFD'
		}
		return r
	}, s)
	if r := []rune(s); len(r) > 100 {
		s = string(r[:99]) + "…"
	}
	return s
}
