package tui

import (
	"fmt"
	"slices"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/reelhq/reel/internal/index"
	"github.com/reelhq/reel/internal/runstatus"
)

// monitorTab is Monitoring: every run of the storage that is running,
// whoever started it (here, reel run in another terminal, the HTTP API),
// plus the runs started here and those seen running since the TUI opened,
// each followed from its transcript.
type monitorTab struct {
	env   *env
	runs  []monRun
	sel   int
	views map[string]*runView
	polls int
	err   error
}

// monRun is one run of the strip.
type monRun struct {
	id, workflow string
	started      time.Time
	status       string
}

type liveMsg struct {
	runs []index.Run
	err  error
}

func newMonitorTab(e *env) *monitorTab {
	return &monitorTab{env: e, views: map[string]*runView{}}
}

func (t *monitorTab) stop() {
	for _, v := range t.views {
		v.stop()
	}
}

func (t *monitorTab) typing() bool { return false }

func (t *monitorTab) help() string {
	if v := t.current(); v != nil {
		return "n/p run · " + v.help()
	}
	return "start a run from Workflows (1), reel run or the HTTP API: it shows here"
}

func (t *monitorTab) current() *runView {
	if t.sel < len(t.runs) {
		return t.views[t.runs[t.sel].id]
	}
	return nil
}

func (t *monitorTab) cancelTarget() (string, string) {
	if v := t.current(); v != nil && v.live() {
		r := t.runs[t.sel]
		return r.id, r.workflow
	}
	return "", ""
}

// poll asks the index which top-level runs are running.
func (t *monitorTab) poll() tea.Cmd {
	ix, ctx := t.env.ix, t.env.ctx
	return func() tea.Msg {
		if err := ix.Sync(ctx); err != nil {
			return liveMsg{err: err}
		}
		p, err := ix.List(ctx, index.Filter{Status: runstatus.Running, Limit: 200})
		if err != nil {
			return liveMsg{err: err}
		}
		return liveMsg{runs: p.Runs}
	}
}

// watch shows the run id, adding it to the strip.
func (t *monitorTab) watch(id, workflow string) {
	for i, r := range t.runs {
		if r.id == id {
			t.sel = i
			return
		}
	}
	t.runs = append([]monRun{{id: id, workflow: workflow, started: time.Now(), status: runstatus.Running}}, t.runs...)
	t.views[id] = newRunView(t.env, id)
	t.sel = 0
}

func (t *monitorTab) update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case tickMsg:
		var cmds []tea.Cmd
		if t.polls%4 == 0 {
			cmds = append(cmds, t.poll())
		}
		t.polls++
		for i := range t.runs {
			v := t.views[t.runs[i].id]
			cmds = append(cmds, v.tick())
			if v.tree != nil {
				t.runs[i].status = v.tree.Root.Status
			}
		}
		return tea.Batch(cmds...)
	case liveMsg:
		t.err = msg.err
		for _, r := range msg.runs {
			if r.ParentRunID != "" {
				continue // shown in its parent's tree
			}
			if _, ok := t.views[r.RunID]; ok {
				continue
			}
			keep := t.current()
			t.runs = append(t.runs, monRun{id: r.RunID, workflow: r.Workflow, started: r.Started, status: r.Status})
			t.views[r.RunID] = newRunView(t.env, r.RunID)
			slices.SortStableFunc(t.runs, func(a, b monRun) int { return b.started.Compare(a.started) })
			for i, x := range t.runs {
				if keep != nil && t.views[x.id] == keep {
					t.sel = i
				}
			}
		}
		return nil
	case launchedMsg:
		if msg.id == "" {
			return nil
		}
		t.watch(msg.id, msg.workflow)
		return func() tea.Msg { return switchTabMsg(TabMonitoring) }
	case tea.KeyPressMsg:
		switch msg.String() {
		case "n", "right":
			if t.sel < len(t.runs)-1 {
				t.sel++
			}
			return nil
		case "p", "left":
			if t.sel > 0 {
				t.sel--
			}
			return nil
		case "x":
			// forget an ended run
			if v := t.current(); v != nil && !v.live() {
				v.stop()
				delete(t.views, t.runs[t.sel].id)
				t.runs = slices.Delete(t.runs, t.sel, t.sel+1)
				t.sel = max(0, min(t.sel, len(t.runs)-1))
			}
			return nil
		case "c":
			if t.sel < len(t.runs) {
				id := t.runs[t.sel].id
				return func() tea.Msg { return showConvoMsg{id: id} }
			}
		}
		if v := t.current(); v != nil {
			return v.update(msg)
		}
		return nil
	}
	// results of the views' commands
	var cmds []tea.Cmd
	for _, v := range t.views {
		cmds = append(cmds, v.update(msg))
	}
	return tea.Batch(cmds...)
}

func (t *monitorTab) view(w, h int) string {
	st := t.env.st
	if len(t.runs) == 0 {
		s := "No run is going.\n\nStart one from the Workflows tab (1), with reel run in another terminal, or through reel serve's API: it shows here as it starts."
		if t.err != nil {
			s += "\n\n" + st.err.Render(t.err.Error())
		}
		return wrap(s, w)
	}
	stripH := min(len(t.runs), 3)
	var b strings.Builder
	from := max(0, min(t.sel-stripH/2, len(t.runs)-stripH))
	for i := from; i < from+stripH; i++ {
		r := t.runs[i]
		mark := " "
		if i == t.sel {
			mark = "›"
		}
		line := fit(fmt.Sprintf("%s%s %-10s %s  %s  %s", mark, icon(r.status), r.status, short(r.id), r.workflow, r.started.Local().Format("15:04:05")), w-8)
		if len(t.runs) > stripH && i == from+stripH-1 {
			line += st.dim.Render(fmt.Sprintf(" %d/%d", t.sel+1, len(t.runs)))
		}
		if i == t.sel {
			line = st.sel.Render(line)
		} else {
			line = st.status(r.status, line)
		}
		b.WriteString(line + "\n")
	}
	b.WriteString(st.dim.Render(strings.Repeat("─", w)) + "\n")
	if v := t.current(); v != nil {
		b.WriteString(v.view(w, h-stripH-1))
	}
	return b.String()
}
