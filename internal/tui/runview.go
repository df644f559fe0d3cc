package tui

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"charm.land/bubbles/v2/viewport"
	tea "charm.land/bubbletea/v2"

	"github.com/reelhq/reel/internal/exectree"
	"github.com/reelhq/reel/internal/runs"
	"github.com/reelhq/reel/internal/runstatus"
	"github.com/reelhq/reel/internal/textview"
	"github.com/reelhq/reel/transcript"
)

// runView shows one run: its execution tree (loop iterations, parallel
// branches, sub-workflows, retries), tokens and cost, and the selected
// step's output and agent exchange; or the run's event stream. A live run
// is followed from its transcript as it grows. Monitoring and History show
// runs through it alike.
type runView struct {
	env  *env
	id   string
	path string

	tree *exectree.Tree
	rows []treeRow
	cur  cursor
	err  error

	feed   *feed
	cancel context.CancelFunc

	gen       int // of the last build asked for
	built     int // feed lines the last build saw
	seen      int // feed lines the event pane shows
	building  bool
	lastBuild time.Time
	done      bool // the run ended and the last build saw it

	pane       viewport.Model
	paneKey    string // what the pane shows: the selected row's key, or "events"
	paneGen    int
	events     bool // the pane shows the event stream
	autoScroll bool
	userMoved  bool
}

// treeRow is one line of the tree: a node, its depth and the run it
// belongs to (a sub-workflow's steps belong to the child run).
type treeRow struct {
	node   *exectree.Node
	prefix string
	runID  string
}

func (r treeRow) key() string {
	n := r.node
	return fmt.Sprintf("%s|%s|%s|%d|%d|%s", r.runID, n.Kind, n.Path, n.Iteration, n.Attempt, n.Start.Format(time.RFC3339Nano))
}

// feed is the followed run's event stream, filled by the follower
// goroutine and drawn by the update loop.
type feed struct {
	mu    sync.Mutex
	lines []string
	n     int // lines received, for the pane to notice
	done  bool
	err   error
}

const maxFeedLines = 5000

func (f *feed) add(line string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.lines = append(f.lines, line)
	if len(f.lines) > maxFeedLines {
		f.lines = append(f.lines[:0:0], f.lines[len(f.lines)-maxFeedLines/2:]...)
	}
	f.n++
}

func (f *feed) snapshot() (lines []string, n int, done bool, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.lines...), f.n, f.done, f.err
}

// treeMsg is a rebuilt tree.
type treeMsg struct {
	view *runView
	gen  int
	tree *exectree.Tree
	err  error
	// final: the follower had seen the run end when the build started
	final bool
}

// paneMsg is the rendered exchange of a step.
type paneMsg struct {
	view *runView
	gen  int
	key  string
	text string
}

func newRunView(e *env, id string) *runView {
	v := &runView{env: e, id: id, autoScroll: true, feed: &feed{}}
	v.pane = viewport.New()
	v.pane.SoftWrap = true
	ctx, cancel := context.WithCancel(e.ctx)
	v.cancel = cancel
	run, err := e.open(id)
	if err != nil {
		v.err = err
		v.done = true
		return v
	}
	v.path = run.Path
	go v.follow(ctx, run)
	return v
}

// follow reads the run's events as they are written, with the follower
// reel serve streams from, until run.completed or stop.
func (v *runView) follow(ctx context.Context, run *runs.Run) {
	defer func() {
		if p := recover(); p != nil {
			v.feed.mu.Lock()
			v.feed.err = fmt.Errorf("following the run failed: %v", p)
			v.feed.mu.Unlock()
		}
	}()
	var err error
	for rec, ferr := range run.Follow(ctx, 0) {
		if ferr != nil {
			err = ferr
			break
		}
		if ev := rec.Event(); ev != nil {
			v.feed.add(eventLine(ev))
		}
	}
	v.feed.mu.Lock()
	v.feed.done = true
	if err != nil && !errors.Is(err, context.Canceled) {
		v.feed.err = err
	}
	v.feed.mu.Unlock()
}

// eventLine is one event of the stream: time, type, where, what.
func eventLine(ev *transcript.ExchangeEvent) string {
	p := ev.Path
	if ev.Iteration != 0 {
		p = fmt.Sprintf("%s[%d]", p, ev.Iteration)
	}
	return fmt.Sprintf("%s %-14s %-12s %s", ev.Timestamp.Local().Format("15:04:05"), ev.Type, p, textview.Summary(ev))
}

func (v *runView) stop() {
	if v.cancel != nil {
		v.cancel()
	}
}

// live says the run is still being written, as far as the view knows.
func (v *runView) live() bool {
	return v.tree == nil || v.tree.Root.Status == runstatus.Running
}

// tick rebuilds the tree when the run moved (at most every 400 ms, and
// every second while it runs, for its sub-workflows' files) and refreshes
// the event pane.
func (v *runView) tick() tea.Cmd {
	if v.path == "" {
		return nil
	}
	_, n, _, _ := v.feed.snapshot()
	var cmd tea.Cmd
	since := time.Since(v.lastBuild)
	switch {
	case v.building || v.done:
	case v.tree == nil:
		cmd = v.build(n)
	case n != v.built && since > 400*time.Millisecond, since > time.Second:
		cmd = v.build(n)
	}
	if v.events && n != v.seen {
		v.fillEvents()
	}
	return cmd
}

func (v *runView) build(n int) tea.Cmd {
	v.gen++
	v.building = true
	v.built = n
	_, _, fdone, _ := v.feed.snapshot()
	gen, path, prices := v.gen, v.path, v.env.cfg.Prices
	return func() tea.Msg {
		t, err := exectree.Build(runs.Open(path, runs.Options{}), exectree.Options{Prices: prices})
		return treeMsg{view: v, gen: gen, tree: t, err: err, final: fdone}
	}
}

// update handles the view's messages; keys come only when it is shown.
func (v *runView) update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case treeMsg:
		if msg.view != v || msg.gen != v.gen {
			return nil
		}
		v.building = false
		v.lastBuild = time.Now()
		if msg.err != nil {
			v.err = msg.err
			return nil
		}
		v.err = nil
		v.setTree(msg.tree)
		if msg.final && !v.live() {
			v.done = true
		}
		return v.refreshPane()
	case paneMsg:
		if msg.view != v || msg.gen != v.paneGen {
			return nil
		}
		atBottom := v.pane.AtBottom()
		sameStep := msg.key == v.paneKey
		v.paneKey = msg.key
		v.pane.SetContent(msg.text)
		if v.autoScroll && (atBottom || !sameStep) && v.live() || v.autoScroll && !sameStep && v.selectedFailed() {
			v.pane.GotoBottom()
		} else if !sameStep {
			v.pane.GotoTop()
		}
		return nil
	case tea.KeyPressMsg:
		return v.key(msg)
	}
	return nil
}

func (v *runView) key(k tea.KeyPressMsg) tea.Cmd {
	s := k.String()
	switch s {
	case "up", "down", "home", "end":
		before := v.cur.pos
		v.cur.key(s, len(v.rows), 10)
		if v.cur.pos != before {
			v.userMoved = true
			return v.refreshPane()
		}
		return nil
	case "j":
		v.pane.ScrollDown(1)
	case "k":
		v.pane.ScrollUp(1)
	case "pgdown", "ctrl+f", " ":
		v.pane.PageDown()
	case "pgup", "ctrl+b":
		v.pane.PageUp()
	case "G":
		v.pane.GotoBottom()
	case "a":
		v.autoScroll = !v.autoScroll
		if v.autoScroll {
			v.pane.GotoBottom()
		}
	case "e":
		v.events = !v.events
		v.paneKey = ""
		return v.refreshPane()
	case "f":
		// back to the failed step (or the running one)
		v.userMoved = false
		v.autoSelect()
		return v.refreshPane()
	}
	return nil
}

// setTree takes a rebuilt tree, keeping the selection on the same
// execution, or, until the user moves, on the step that failed, else the
// one running.
func (v *runView) setTree(t *exectree.Tree) {
	var key string
	if v.cur.pos < len(v.rows) {
		key = v.rows[v.cur.pos].key()
	}
	v.tree = t
	v.rows = flatten(t)
	if !v.userMoved {
		v.autoSelect()
		return
	}
	for i, r := range v.rows {
		if r.key() == key {
			v.cur.pos = i
			return
		}
	}
}

// autoSelect selects the deepest execution that failed, else the last one
// running, else the last step.
func (v *runView) autoSelect() {
	failed, running := -1, -1
	for i, r := range v.rows {
		switch r.node.Status {
		case runstatus.Failure:
			if r.node.Superseded == "" && (failed < 0 || strings.HasPrefix(r.prefix, v.rows[failed].prefix) || i > failed && len(r.node.Children) == 0 && failed >= 0 && len(v.rows[failed].node.Children) > 0) {
				failed = i
			}
		case runstatus.Running:
			running = i
		}
	}
	switch {
	case failed >= 0:
		v.cur.pos = failed
	case running >= 0:
		v.cur.pos = running
	case len(v.rows) > 1:
		v.cur.pos = len(v.rows) - 1
	}
}

func (v *runView) selectedFailed() bool {
	return v.cur.pos < len(v.rows) && v.rows[v.cur.pos].node.Status == runstatus.Failure
}

// flatten lays the tree out as rows, AWF's way: ├─ and └─ branches.
func flatten(t *exectree.Tree) []treeRow {
	rows := []treeRow{{node: t.Root, runID: t.Root.RunID}}
	var walk func(n *exectree.Node, prefix, runID string)
	walk = func(n *exectree.Node, prefix, runID string) {
		for i, c := range n.Children {
			branch, next := "├─ ", "│  "
			if i == len(n.Children)-1 {
				branch, next = "└─ ", "   "
			}
			id := runID
			if c.Kind == transcript.KindWorkflow && c.RunID != "" {
				id = c.RunID
			}
			rows = append(rows, treeRow{node: c, prefix: prefix + branch, runID: id})
			walk(c, prefix+next, id)
		}
	}
	walk(t.Root, "", t.Root.RunID)
	return rows
}

// refreshPane renders what the pane shows for the selection, off the
// update loop.
func (v *runView) refreshPane() tea.Cmd {
	if v.events {
		v.fillEvents()
		return nil
	}
	if v.cur.pos >= len(v.rows) {
		return nil
	}
	v.paneGen++
	row := v.rows[v.cur.pos]
	gen, key, e := v.paneGen, row.key(), v.env
	head := nodeHeader(row.node)
	isRoot := v.cur.pos == 0
	warnings := v.tree.Warnings
	return func() tea.Msg {
		var b bytes.Buffer
		b.WriteString(head)
		if isRoot {
			for _, w := range warnings {
				b.WriteString("warning: " + w + "\n")
			}
			b.WriteString("\n(select a step for its output and exchange; e shows the event stream)\n")
			return paneMsg{view: v, gen: gen, key: key, text: b.String()}
		}
		run, err := e.open(row.runID)
		if err == nil {
			b.WriteString("\n")
			step := row.node.Path
			_, err = textview.Replay(e.ctx, &b, run, textview.Options{Format: textview.Text, Step: step, Color: !e.st.noColor, MaxLines: 400})
		}
		var nse *textview.NoStepError
		if errors.As(err, &nse) {
			b.WriteString("(nothing recorded for this step yet)\n")
		} else if err != nil {
			b.WriteString("error: " + err.Error() + "\n")
		}
		return paneMsg{view: v, gen: gen, key: key, text: b.String()}
	}
}

// fillEvents shows the event stream in the pane.
func (v *runView) fillEvents() {
	lines, n, done, err := v.feed.snapshot()
	v.seen = n
	if done && err != nil {
		lines = append(lines, "follow ended: "+err.Error())
	}
	atBottom := v.pane.AtBottom()
	v.pane.SetContent(strings.Join(lines, "\n"))
	v.paneKey = "events"
	if v.autoScroll && (atBottom || v.live()) {
		v.pane.GotoBottom()
	}
}

// nodeHeader says what an execution is: status, time, tokens, cost, model,
// exit code and error.
func nodeHeader(n *exectree.Node) string {
	var b strings.Builder
	name := n.Name
	if name == "" {
		name = n.Path
	}
	fmt.Fprintf(&b, "%s %s  %s  %s", icon(n.Status), name, n.Kind, n.Status)
	if n.Attempt > 1 {
		fmt.Fprintf(&b, "  attempt %d", n.Attempt)
	}
	if n.Duration > 0 {
		fmt.Fprintf(&b, "  %s", exectree.FormatDuration(time.Duration(n.Duration)))
	}
	b.WriteString("\n")
	var facts []string
	if n.RunID != "" {
		facts = append(facts, "run "+n.RunID)
	}
	if n.Usage.TotalTokens > 0 {
		facts = append(facts, exectree.FormatUsage(n.Usage))
	}
	if c := n.Cost(); c.Known {
		facts = append(facts, c.String())
	}
	if n.Provider != "" {
		facts = append(facts, n.Provider+"/"+n.Model)
	}
	if n.ExitCode != nil {
		facts = append(facts, fmt.Sprintf("exit %d", *n.ExitCode))
	}
	if n.Tools > 0 {
		facts = append(facts, fmt.Sprintf("%d tool call(s)", n.Tools))
	}
	if n.Superseded != "" {
		facts = append(facts, "superseded by a "+n.Superseded)
	}
	if len(facts) > 0 {
		b.WriteString(strings.Join(facts, " · ") + "\n")
	}
	if n.Error != "" {
		b.WriteString("error: " + n.Error + "\n")
	}
	return b.String()
}

// rowLabel is a tree row: branches, icon, name, time and tokens.
func rowLabel(r treeRow) string {
	n := r.node
	name := n.Name
	if n.Kind == exectree.KindIteration {
		name = n.Name
	} else if name == "" {
		name = n.Path
	}
	s := r.prefix + icon(n.Status) + " " + name
	if n.Attempt > 1 {
		s += fmt.Sprintf(" #%d", n.Attempt)
	}
	if n.Duration > 0 {
		s += " (" + exectree.FormatDuration(time.Duration(n.Duration)) + ")"
	}
	if n.Kind == transcript.KindAgent && n.Usage.TotalTokens > 0 {
		s += " " + tokens(n.Usage.TotalTokens)
	}
	return s
}

// header is the run's line: workflow, id, status, time, tokens, cost.
func (v *runView) header() string {
	if v.tree == nil {
		return "run " + v.id
	}
	n := v.tree.Root
	s := fmt.Sprintf("%s %s  run %s  %s", icon(n.Status), n.Name, short(v.id), n.Status)
	d := time.Duration(n.Duration)
	if n.Status == runstatus.Running && !n.Start.IsZero() {
		d = time.Since(n.Start)
	}
	s += "  " + exectree.FormatDuration(d)
	if n.Usage.TotalTokens > 0 {
		s += "  " + tokens(n.Usage.TotalTokens)
	}
	if c := n.Cost(); c.Known {
		s += "  " + c.String()
	}
	return s
}

func (v *runView) view(w, h int) string {
	st := v.env.st
	if v.tree == nil {
		if v.err != nil {
			return st.err.Render(v.err.Error())
		}
		return "reading run " + v.id + "…"
	}
	head := st.status(v.tree.Root.Status, fit(v.header(), w))
	mode := "step"
	if v.events {
		mode = "events"
	}
	flags := []string{mode}
	if v.autoScroll {
		flags = append(flags, "auto-scroll")
	}
	if v.err != nil {
		flags = append(flags, "error: "+v.err.Error())
	}
	h--
	lw := min(max(28, w*2/5), 56)
	rw := w - lw - 1
	var left strings.Builder
	from, to := v.cur.window(len(v.rows), h)
	for i := from; i < to; i++ {
		mark := " "
		if i == v.cur.pos {
			mark = "›"
		}
		line := fit(mark+rowLabel(v.rows[i]), lw)
		if i == v.cur.pos {
			line = st.sel.Render(line)
		} else {
			line = st.status(v.rows[i].node.Status, line)
		}
		left.WriteString(line + "\n")
	}
	sizePane(&v.pane, rw, h-1)
	right := st.dim.Render(fit("["+strings.Join(flags, " · ")+"]", rw)) + "\n" + v.pane.View()
	return head + "\n" + columns(left.String(), right, lw, rw, h, st.dim.Render("│"))
}

func (v *runView) help() string {
	return "↑↓ step · j/k pgup/pgdn scroll · e events · a auto-scroll · f failed · c conversation · ctrl+c cancel"
}

// tokens says a token count briefly: 950 tok, 7.0k tok, 1.2M tok.
func tokens(n int64) string {
	switch {
	case n >= 1_000_000:
		return fmt.Sprintf("%.1fM tok", float64(n)/1e6)
	case n >= 1000:
		return fmt.Sprintf("%.1fk tok", float64(n)/1e3)
	}
	return fmt.Sprintf("%d tok", n)
}
