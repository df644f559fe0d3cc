// Package webview renders reel's HTML views of runs: the run page (summary,
// execution tree, timeline, conversation with sub-workflows inline), the
// run list, search results and the comparison of two runs. reel serve
// serves them; reel replay --format html writes the run page as one
// self-contained file. Both use the same templates, so the shared file
// shows exactly what the server does.
//
// What it decides: every value from a transcript is escaped by
// html/template (a transcript is untrusted input), except the Markdown of
// replies, thinking and prompts and the colours of terminal output, which
// internal/markdown and internal/termtext render and sanitize; the assets (one style
// sheet, one script, no framework) are embedded and either served or
// inlined, never fetched from elsewhere; thinking, tool inputs and outputs
// and long command output are folded; an agent's tool_use and tool_result
// blocks that repeat a tool.call/tool.result pair are left out of its
// messages; base64 images are drawn (up to 4 MB) or named with their size,
// never printed; JSON inputs are laid out as key/value lists; Edit,
// MultiEdit and Write inputs are shown as line diffs; a tool call and its
// result are one card (the result nested, folded); what an agent CLI wrote
// as a user turn without the user typing it is shown as what it is
// (internal/promptkind).
package webview

import (
	"embed"
	"fmt"
	"html/template"
	"io"
	"strings"
	"time"

	"github.com/reelhq/reel/internal/exectree"
	"github.com/reelhq/reel/internal/markdown"
	"github.com/reelhq/reel/internal/pricing"
	"github.com/reelhq/reel/internal/query"
	"github.com/reelhq/reel/internal/termtext"
	"github.com/reelhq/reel/internal/textview"
	"github.com/reelhq/reel/transcript"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed assets/style.css
var styleCSS string

//go:embed assets/app.js
var appJS string

// Assets are the files the pages load from /assets/ when served.
//
//go:embed assets
var Assets embed.FS

// Views holds the parsed templates.
type Views struct {
	pages map[string]*template.Template
}

var funcs = template.FuncMap{
	"pair": func(a any, b bool) map[string]any { return map[string]any{"A": a, "B": b} },
	"short": func(id string) string {
		if len(id) > 8 {
			return id[:8]
		}
		return id
	},
	"runHref": func(id string, standalone bool) string {
		if standalone {
			return "#run-" + id
		}
		return "/runs/" + id
	},
	"iso": func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return t.UTC().Format(time.RFC3339Nano)
	},
	"when": func(t time.Time) string {
		if t.IsZero() {
			return "—"
		}
		return t.UTC().Format("2006-01-02 15:04:05 UTC")
	},
	"clock": func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return t.UTC().Format("15:04:05.000")
	},
	"dur": func(d time.Duration) string { return exectree.FormatDuration(d) },
	"ms":  func(ms int64) string { return exectree.FormatDuration(time.Duration(ms) * time.Millisecond) },
	"tokens": func(u transcript.Usage) string {
		if u.TotalTokens == 0 && u.InputTokens == 0 && u.OutputTokens == 0 {
			return "—"
		}
		return count(u.TotalTokens)
	},
	"tokensLong": fmtTokens,
	// cost shows a cost as every reader does (pricing.Total.String).
	"cost": func(c any) string {
		switch x := c.(type) {
		case pricing.Total:
			return x.String()
		case *pricing.Total:
			if x != nil {
				return x.String()
			}
		}
		return "—"
	},
	"join":       strings.Join,
	"oneLine":    oneLine,
	"hasPrefix":  strings.HasPrefix,
	"trimPrefix": strings.TrimPrefix,
	"indent":     func(depth int) string { return fmt.Sprintf("%.1f", 0.4+float64(depth)*1.1) },
	"pct":        func(f float64) string { return fmt.Sprintf("%.3f%%", f) },
	"foldClass": func(label string) string {
		switch {
		case label == "thinking":
			return "fold-thinking"
		case strings.HasPrefix(label, "tool") || label == "input" || label == "output":
			return "fold-tool"
		}
		return "fold-other"
	},
	"diffClass": func(op byte) string {
		switch op {
		case '-':
			return "del"
		case '+':
			return "add"
		case '@':
			return "sep"
		}
		return "ctx"
	},
	"diffMark": func(op byte) string {
		if op == '@' {
			return " "
		}
		return string(op)
	},
	"diffMarkOf": func(s query.StepDiff) string {
		switch {
		case s.A == nil:
			return "+"
		case s.B == nil:
			return "-"
		case len(s.Changed) > 0:
			return "~"
		}
		return "="
	},
}

// New parses the templates.
func New() (*Views, error) {
	v := &Views{pages: map[string]*template.Template{}}
	md, term := markdown.New(), termtext.NewRenderer()
	fm := template.FuncMap{
		// Markdown of replies, thinking and prompts, sanitized
		"md": md.HTML,
		// terminal output, its colours kept, sanitized
		"term": term.HTML,
	}
	for k, f := range funcs {
		fm[k] = f
	}
	for _, name := range []string{"run", "list", "search", "diff", "error", "workflows"} {
		t, err := template.New(name).Funcs(fm).ParseFS(templateFS, "templates/layout.html", "templates/"+name+".html")
		if err != nil {
			return nil, fmt.Errorf("parse %s templates: %w", name, err)
		}
		v.pages[name] = t
	}
	return v, nil
}

// Page is what a view is rendered from.
type Page struct {
	// Name selects the view: run, list, search, diff or error.
	Name  string
	Title string
	// Standalone inlines the style sheet and the script and turns run
	// links into anchors, for a file that opens from disk.
	Standalone bool
	// Live, on a run page of a run that has not ended, names where the
	// page gets new events and its refreshed overview.
	Live *Live
	// Query fills the search box.
	Query string
	// Compare links a run page to the comparison with the previous run.
	Compare string
	// Workflows shows the start page in the navigation.
	Workflows bool
	// Actions are the buttons of a run page that act on the run.
	Actions *Actions
	Data    any

	CSS template.CSS
	JS  template.JS
}

// Actions are the forms that cancel or resume a run; an empty one is not
// offered.
type Actions struct {
	Cancel, Resume string
}

// Live names the live update endpoints of a run page.
type Live struct {
	Events   string // Server-Sent Events of rendered events
	Overview string // the tree and timeline, rendered
	From     uint64 // the first seq the page does not hold
}

// Render writes a whole page.
func (v *Views) Render(w io.Writer, p *Page) error {
	t := v.pages[p.Name]
	if t == nil {
		return fmt.Errorf("no view %q", p.Name)
	}
	if p.Standalone {
		p.CSS, p.JS = template.CSS(styleCSS), template.JS(appJS)
	}
	return t.ExecuteTemplate(w, "layout", p)
}

// RenderOverview writes a run page's tree and timeline alone, for a live
// page to replace its own.
func (v *Views) RenderOverview(w io.Writer, p *Page) error {
	return v.pages["run"].ExecuteTemplate(w, "overview", p)
}

// RenderEvent writes one event as the run page shows it.
func (v *Views) RenderEvent(w io.Writer, e *Event, standalone bool) error {
	return v.pages["run"].ExecuteTemplate(w, "event", map[string]any{"A": e, "B": standalone})
}

// LiveEvent turns one event of a run being followed into its page form.
// start is the run's start (for playback offsets). Tool calls get their
// own events, so an agent's tool_use blocks are shown as a note.
func LiveEvent(ev *transcript.ExchangeEvent, start time.Time, redact *Redactor) Event {
	// A compaction's figures are in its step's result, which comes later.
	l := &loader{opts: RunOptions{Redact: redact}, start: start, anchors: map[string]string{}, compacted: textview.Compacted(transcript.Compaction{}, false)}
	if redact != nil {
		redact.Event(ev)
	}
	return l.event(ev, "", func(string) bool { return true })
}

// oneLine is s on one line, escapes stripped, cut at 160 characters: a
// failed run's error (often a whole JSON body) in the run list, whose run
// page shows it in full.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(termtext.Strip(s)), " ")
	if r := []rune(s); len(r) > 160 {
		return string(r[:159]) + "…"
	}
	return s
}
