package tui

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"charm.land/bubbles/v2/textinput"
	"charm.land/bubbles/v2/viewport"
	tea "charm.land/bubbletea/v2"

	"github.com/reelhq/reel/internal/exectree"
	"github.com/reelhq/reel/internal/index"
	"github.com/reelhq/reel/internal/query"
)

// historyTab is History: the run index, newest first, with reel runs'
// filters, the index's full-text search, a run opened into the same view
// as Monitoring's, and two runs diffed side by side.
type historyTab struct {
	env *env

	filter  index.Filter
	runs    []index.Run
	total   int
	next    string
	loading bool
	err     error
	cur     cursor
	gen     int
	ticks   int

	form *filterForm

	search   textinput.Model
	hits     []index.Hit
	hitsFor  string
	hitCur   cursor
	inSearch bool

	marked string // run A of a diff
	open   *runView
	diff   *viewport.Model
	diffAB [2]string
	diffOf *query.Diff
	diffW  int // the width the diff was laid out for
}

type pageMsg struct {
	gen    int
	page   *index.Page
	append bool // the page after the list
	keep   bool // the first page again, the selection kept
	err    error
}

type hitsMsg struct {
	q    string
	page *index.SearchPage
	err  error
}

type diffMsg struct {
	a, b string
	diff *query.Diff
	err  error
}

// pageSize is how many runs one index query brings: a screen's worth many
// times over, so scrolling asks rarely, and few enough to open at once.
const pageSize = 200

func newHistoryTab(e *env) *historyTab {
	s := textinput.New()
	s.Prompt = "search: "
	s.Placeholder = `words, pre*, "a phrase", -exclude`
	return &historyTab{env: e, search: s}
}

func (t *historyTab) stop() {
	if t.open != nil {
		t.open.stop()
	}
}

// reload reads the first page of the runs the filter selects.
func (t *historyTab) reload() tea.Cmd {
	t.gen++
	return t.first(false)
}

// first reads the first page, with the index brought up to date.
func (t *historyTab) first(keep bool) tea.Cmd {
	t.loading = true
	gen, f, ix, ctx := t.gen, t.filter, t.env.ix, t.env.ctx
	f.Limit = pageSize
	return func() tea.Msg {
		if err := ix.Sync(ctx); err != nil {
			return pageMsg{gen: gen, err: err}
		}
		p, err := ix.List(ctx, f)
		return pageMsg{gen: gen, page: p, keep: keep, err: err}
	}
}

// refresh reads the first page again, keeping the selection.
func (t *historyTab) refresh() tea.Cmd { return t.first(true) }

// more reads the page after what the list holds.
func (t *historyTab) more() tea.Cmd {
	if t.loading || t.next == "" {
		return nil
	}
	t.loading = true
	gen, f, ix, ctx := t.gen, t.filter, t.env.ix, t.env.ctx
	f.Limit, f.After = pageSize, t.next
	return func() tea.Msg {
		p, err := ix.List(ctx, f)
		return pageMsg{gen: gen, page: p, append: true, err: err}
	}
}

func (t *historyTab) typing() bool { return t.form != nil || t.search.Focused() }

func (t *historyTab) help() string {
	switch {
	case t.form != nil:
		return "enter next/apply · tab field · esc cancel"
	case t.search.Focused():
		return "type a query · enter search · esc cancel"
	case t.open != nil:
		return "esc back · " + t.open.help()
	case t.diff != nil:
		return "esc back · j/k pgup/pgdn scroll"
	case t.inSearch:
		return "↑↓ hit · enter open run · / new search · esc back to runs"
	}
	return "↑↓ run · enter open · f filter · / search · m mark · d diff with mark · c conversation · r reload"
}

func (t *historyTab) cancelTarget() (string, string) {
	if t.open != nil && t.open.live() && t.open.tree != nil {
		return t.open.id, t.open.tree.Root.Name
	}
	return "", ""
}

func (t *historyTab) selected() *index.Run {
	if t.cur.pos < len(t.runs) {
		return &t.runs[t.cur.pos]
	}
	return nil
}

func (t *historyTab) update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case tickMsg:
		t.ticks++
		if t.open != nil {
			return t.open.tick()
		}
		if t.ticks%8 == 0 && !t.loading && t.cur.pos < pageSize-50 {
			// new runs and runs that moved, keeping the selection
			return t.refresh()
		}
		return nil
	case pageMsg:
		if msg.gen != t.gen {
			return nil
		}
		t.loading = false
		t.err = msg.err
		if msg.err != nil {
			return nil
		}
		switch {
		case msg.append:
			t.runs = append(t.runs, msg.page.Runs...)
		case msg.keep:
			// the selection stays on its run; at the top it stays at
			// the top, on the newest run
			var id string
			if r := t.selected(); r != nil && t.cur.pos > 0 {
				id = r.RunID
			}
			t.runs = msg.page.Runs
			for i, r := range t.runs {
				if r.RunID == id {
					t.cur.pos = i
				}
			}
		default:
			t.runs = msg.page.Runs
			t.cur = cursor{}
		}
		t.total, t.next = msg.page.Total, msg.page.Next
		return nil
	case hitsMsg:
		t.err = msg.err
		t.hitsFor = msg.q
		t.hits = nil
		if msg.page != nil {
			t.hits = msg.page.Hits
		}
		t.hitCur = cursor{}
		t.inSearch = true
		return nil
	case diffMsg:
		if msg.err != nil {
			return func() tea.Msg { return popupMsg{title: "Cannot compare the runs", body: msg.err.Error()} }
		}
		vp := viewport.New()
		t.diff, t.diffAB, t.diffOf = &vp, [2]string{msg.a, msg.b}, msg.diff
		t.diffW = 0
		return nil
	case tea.KeyPressMsg:
		return t.key(msg)
	}
	if t.open != nil {
		return t.open.update(msg)
	}
	return nil
}

// key handles a key press in the mode the tab is in: the filter form, the
// search field, an open run, a diff, the search hits or the list of runs.
func (t *historyTab) key(k tea.KeyPressMsg) tea.Cmd {
	s := k.String()
	switch {
	case t.form != nil:
		return t.form.update(t, k)
	case t.search.Focused():
		return t.searchKey(k, s)
	case t.open != nil:
		return t.openKey(k, s)
	case t.diff != nil:
		t.diffKey(s)
		return nil
	}
	switch s {
	case "/":
		t.search.SetValue("")
		return t.search.Focus()
	case "f":
		t.form = newFilterForm(t.filter)
		return t.form.focus()
	case "r":
		return t.reload()
	}
	if t.inSearch {
		t.hitsKey(s)
		return nil
	}
	return t.listKey(s)
}

// searchKey edits the search field; enter runs the search.
func (t *historyTab) searchKey(k tea.KeyPressMsg, s string) tea.Cmd {
	switch s {
	case "esc":
		t.search.Blur()
		return nil
	case "enter":
		t.search.Blur()
		return t.runSearch(t.search.Value())
	}
	var cmd tea.Cmd
	t.search, cmd = t.search.Update(k)
	return cmd
}

// openKey goes to the open run's view, but for esc (back to the list) and
// c (its conversation).
func (t *historyTab) openKey(k tea.KeyPressMsg, s string) tea.Cmd {
	switch s {
	case "esc":
		t.open.stop()
		t.open = nil
		return t.reload()
	case "c":
		id := t.open.id
		return func() tea.Msg { return showConvoMsg{id: id} }
	}
	return t.open.update(k)
}

// diffKey scrolls the diff of two runs, or closes it.
func (t *historyTab) diffKey(s string) {
	switch s {
	case "esc", "backspace":
		t.diff = nil
	case "j", "down":
		t.diff.ScrollDown(1)
	case "k", "up":
		t.diff.ScrollUp(1)
	case "pgdown", " ":
		t.diff.PageDown()
	case "pgup":
		t.diff.PageUp()
	}
}

// hitsKey moves through the search hits; enter opens a hit's run.
func (t *historyTab) hitsKey(s string) {
	switch s {
	case "esc":
		t.inSearch = false
	case "enter":
		if t.hitCur.pos < len(t.hits) {
			t.openRun(t.hits[t.hitCur.pos].RunID)
		}
	default:
		t.hitCur.key(s, len(t.hits), 10)
	}
}

// listKey moves through the runs, loading more near the end, and acts on
// the selected one: open, conversation, mark, diff with the marked one.
func (t *historyTab) listKey(s string) tea.Cmd {
	if t.cur.key(s, len(t.runs), 10) {
		if t.cur.pos > len(t.runs)-50 {
			return t.more()
		}
		return nil
	}
	r := t.selected()
	if r == nil {
		return nil
	}
	switch s {
	case "enter":
		t.openRun(r.RunID)
	case "c":
		id := r.RunID
		return func() tea.Msg { return showConvoMsg{id: id} }
	case "m":
		t.marked = r.RunID
		return func() tea.Msg {
			return noteMsg("marked run " + short(r.RunID) + ": select another and press d to diff")
		}
	case "d":
		if t.marked == "" || t.marked == r.RunID {
			return func() tea.Msg { return noteMsg("mark a run with m first, then select another and press d") }
		}
		return t.diffRuns(t.marked, r.RunID)
	case "esc":
		if t.filter != (index.Filter{}) {
			t.filter = index.Filter{}
			return t.reload()
		}
	}
	return nil
}

func (t *historyTab) openRun(id string) {
	if t.open != nil {
		t.open.stop()
	}
	t.open = newRunView(t.env, id)
}

func (t *historyTab) runSearch(q string) tea.Cmd {
	ix, ctx := t.env.ix, t.env.ctx
	return func() tea.Msg {
		p, err := ix.Search(ctx, q, index.SearchOptions{Limit: 200})
		return hitsMsg{q: q, page: p, err: err}
	}
}

// diffRuns compares two runs step by step (reel diff), shown side by side.
func (t *historyTab) diffRuns(a, b string) tea.Cmd {
	e := t.env
	return func() tea.Msg {
		var trees [2]*exectree.Tree
		for i, id := range []string{a, b} {
			run, err := e.open(id)
			if err != nil {
				return diffMsg{err: err}
			}
			if trees[i], err = exectree.Build(run, exectree.Options{Prices: e.cfg.Prices}); err != nil {
				return diffMsg{err: err}
			}
		}
		return diffMsg{a: a, b: b, diff: query.Compare(trees[0], trees[1])}
	}
}

// sideBySide lays a diff out in two columns, A left and B right, an
// execution a line, marked as reel diff marks them, with the first lines
// of the outputs that changed side by side under it.
func sideBySide(d *query.Diff, w int) string {
	col := max(20, (w-5)/2)
	var b strings.Builder
	row := func(mark, l, r string) {
		fmt.Fprintf(&b, "%s %s │ %s\n", fit(mark, 1), fit(l, col), fit(r, col))
	}
	row(" ", "A "+d.A.RunID, "B "+d.B.RunID)
	row(" ", runCell(d.A), runCell(d.B))
	b.WriteString(strings.Repeat("─", 2*col+5) + "\n")
	for _, s := range d.Steps {
		row(s.Mark(), sideCell(s.Label, s.A), sideCell(s.Label, s.B))
		if len(s.Changed) > 0 && s.A != nil && s.B != nil {
			row(" ", "  changed: "+strings.Join(s.Changed, ", "), "")
		}
		if s.A != nil && s.B != nil && slices.Contains(s.Changed, "output") {
			la, lb := outputLines(s.A.Output()), outputLines(s.B.Output())
			for i := range max(len(la), len(lb)) {
				var l, r string
				if i < len(la) {
					l = la[i]
				}
				if i < len(lb) {
					r = lb[i]
				}
				row(" ", "  │ "+l, "  │ "+r)
			}
		}
	}
	for _, w := range d.Warnings {
		fmt.Fprintf(&b, "warning: %s\n", w)
	}
	return b.String()
}

// outputLines are the first lines of a step's output, for the diff.
func outputLines(s string) []string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > 8 {
		lines = append(lines[:8], "…")
	}
	return lines
}

func runCell(s query.RunSide) string {
	out := fmt.Sprintf("%s %s %s %s %s", icon(s.Status), s.Workflow, s.Status, exectree.FormatDuration(time.Duration(s.DurationMS)*time.Millisecond), tokens(s.Usage.TotalTokens))
	if c := s.Cost(); c.Known {
		out += " " + c.String()
	}
	return out
}

func sideCell(label string, s *query.Side) string {
	if s == nil {
		return ""
	}
	out := fmt.Sprintf("%s %s %s", icon(s.Status), label, exectree.FormatDuration(time.Duration(s.DurationMS)*time.Millisecond))
	if n := s.Usage.InputTokens + s.Usage.OutputTokens; n > 0 {
		out += " " + tokens(n)
	}
	if s.ToolCalls > 0 {
		out += fmt.Sprintf(" %d tools", s.ToolCalls)
	}
	return out
}

func (t *historyTab) view(w, h int) string {
	st := t.env.st
	switch {
	case t.open != nil:
		return t.open.view(w, h)
	case t.diff != nil:
		if t.diffW != w {
			t.diffW = w
			t.diff.SetContent(sideBySide(t.diffOf, w))
		}
		sizePane(t.diff, w, h-1)
		return st.title.Render(fit(fmt.Sprintf("diff %s ↔ %s  (= same, ~ differs, - only in A, + only in B)", short(t.diffAB[0]), short(t.diffAB[1])), w)) + "\n" + t.diff.View()
	case t.form != nil:
		return t.form.view(st, w)
	}
	var b strings.Builder
	if t.search.Focused() {
		t.search.SetWidth(max(10, w-10))
		b.WriteString(t.search.View() + "\n")
	} else if t.inSearch {
		b.WriteString(st.title.Render(fit(fmt.Sprintf("%d hits for %q", len(t.hits), t.hitsFor), w)) + "\n")
	} else {
		head := fmt.Sprintf("%d runs", t.total)
		if f := describeFilter(t.filter); f != "" {
			head += " · " + f + " (esc clears)"
		}
		if t.marked != "" {
			head += " · marked " + short(t.marked)
		}
		b.WriteString(st.title.Render(fit(head, w)) + "\n")
	}
	if t.err != nil {
		b.WriteString(st.err.Render(t.err.Error()) + "\n")
	}
	listH := h - 2
	if t.inSearch {
		from, to := t.hitCur.window(len(t.hits), listH)
		for i := from; i < to; i++ {
			hit := t.hits[i]
			var snip strings.Builder
			for _, seg := range hit.Snippet {
				if seg.Match {
					snip.WriteString(st.match.Render(seg.Text))
				} else {
					snip.WriteString(seg.Text)
				}
			}
			sel := " "
			if i == t.hitCur.pos {
				sel = "›"
			}
			lead := sel + fmt.Sprintf("%s %-10s %-16s %s ", short(hit.RunID), fit(hit.Workflow, 10), fit(hit.Path, 16), hit.Time.Local().Format("01-02 15:04"))
			line := lead + strings.ReplaceAll(snip.String(), "\n", " ")
			if i == t.hitCur.pos {
				line = st.sel.Render(fit(lead, ansiWidth(lead))) + strings.ReplaceAll(snip.String(), "\n", " ")
			}
			b.WriteString(line + "\n")
		}
		if len(t.hits) == 0 {
			b.WriteString("no event matches\n")
		}
		return b.String()
	}
	b.WriteString(st.dim.Render(fit(fmt.Sprintf("  %-8s %-14s %-11s %-11s %8s %7s %8s", "ID", "WORKFLOW", "STATUS", "STARTED", "DURATION", "TOKENS", "COST"), w)) + "\n")
	if len(t.runs) == 0 && !t.loading {
		b.WriteString("no runs")
	}
	from, to := t.cur.window(len(t.runs), listH-1)
	for i := from; i < to; i++ {
		r := &t.runs[i]
		mark := " "
		if r.RunID == t.marked {
			mark = "*"
		}
		if i == t.cur.pos {
			mark = "›"
		}
		name := r.Workflow
		if r.ParentRunID != "" {
			name = "↳ " + name
		}
		started, dur := r.Started.Local().Format("01-02 15:04"), query.FormatMS(r.DurationMS)
		if r.Untimed {
			started, dur = "—", "—" // a recording without times
		}
		line := fit(fmt.Sprintf("%s %-8s %-14s %s %-9s %-11s %8s %7d %8s", mark, short(r.RunID), fit(name, 14), icon(r.Status), r.Status,
			started, dur, r.Tokens, r.Cost().String()), w)
		if i == t.cur.pos {
			line = st.sel.Render(line)
		} else {
			line = st.status(r.Status, line)
		}
		b.WriteString(line + "\n")
	}
	return b.String()
}
