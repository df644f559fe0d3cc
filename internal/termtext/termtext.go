// Package termtext makes text recorded from a terminal (tool output, command
// output, stderr, and any other string of a transcript) safe to show: on a
// terminal or in Markdown with its escape sequences removed, in a page with
// its colours kept as styled spans.
//
// What it decides: a transcript is untrusted input, and an escape sequence
// written back to a terminal can move the cursor, rewrite the title, set
// the clipboard or hide text, so text views strip every sequence (CSI, OSC,
// DCS, APC, …; the parser is charmbracelet/x/ansi's) and replace what
// control characters remain with U+FFFD, keeping newlines and tabs; a
// carriage return ends a line. Pages render colours, bold and underline with
// buildkite/terminal-to-html (the renderer of Buildkite's build logs, which
// also replays carriage returns and cursor moves as a terminal would), and
// its output goes through a bluemonday allow-list: spans with its classes,
// links to http and https, nothing else (it can write <img> for iTerm's
// inline images, which would make the page fetch).
package termtext

import (
	"html/template"
	"regexp"
	"strings"

	terminal "github.com/buildkite/terminal-to-html/v3"
	"github.com/charmbracelet/x/ansi"
	"github.com/microcosm-cc/bluemonday"
)

// HasControls reports whether s holds an escape sequence or a control
// character other than newline and tab.
func HasControls(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 && c != '\n' && c != '\t' || c == 0x7f {
			return true
		}
		// C1 controls (U+0080–U+009F) are 0xC2 0x80–0x9F in UTF-8
		if s[i] == 0xc2 && i+1 < len(s) && s[i+1] >= 0x80 && s[i+1] < 0xa0 {
			return true
		}
	}
	return false
}

// Strip removes escape sequences from s and replaces the control
// characters left (other than newline and tab) with U+FFFD; "\r\n" becomes
// "\n" and a lone "\r" a line break.
func Strip(s string) string {
	if !HasControls(s) {
		return s
	}
	s = ansi.Strip(s)
	s = strings.ReplaceAll(s, "\r\n", "\n")
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\r':
			return '\n'
		case r < 0x20 && r != '\n' && r != '\t' || r == 0x7f || r >= 0x80 && r < 0xa0:
			return '\uFFFD'
		}
		return r
	}, s)
}

// Renderer writes terminal text as HTML. It is safe for concurrent use.
type Renderer struct{ policy *bluemonday.Policy }

// NewRenderer makes a Renderer.
func NewRenderer() *Renderer {
	p := bluemonday.NewPolicy()
	p.AllowAttrs("class").Matching(regexp.MustCompile(`^term-[a-z0-9]+( term-[a-z0-9]+)*$`)).OnElements("span")
	p.AllowAttrs("href").OnElements("a")
	p.AllowURLSchemes("http", "https")
	p.RequireParseableURLs(true)
	p.RequireNoFollowOnLinks(true)
	p.RequireNoReferrerOnLinks(true)
	p.AddTargetBlankToFullyQualifiedLinks(true)
	return &Renderer{policy: p}
}

// HTML renders s, whose colours become spans of the term-* classes that
// Stylesheet styles. Text without controls is only escaped.
func (r *Renderer) HTML(s string) template.HTML {
	if !HasControls(s) {
		return template.HTML(template.HTMLEscapeString(s))
	}
	return template.HTML(r.policy.Sanitize(terminal.Render([]byte(s))))
}
