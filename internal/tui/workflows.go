package tui

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"

	"github.com/reelhq/reel/internal/catalog"
	"github.com/reelhq/reel/internal/engine"
	"github.com/reelhq/reel/internal/workflow"
)

// wfItem is one workflow of the list, loaded.
type wfItem struct {
	entry    catalog.Entry
	wf       *workflow.Workflow // nil when it does not load
	problems []string
	modTime  time.Time
}

func (it *wfItem) description() string {
	switch {
	case len(it.problems) > 0:
		return fmt.Sprintf("invalid: %d problem(s) (v shows them)", len(it.problems))
	case it.entry.ShadowedBy != "":
		return "shadowed by " + it.entry.ShadowedBy
	case it.wf != nil:
		return it.wf.Description
	}
	return ""
}

type workflowsTab struct {
	env    *env
	items  []*wfItem
	shown  []*wfItem // items the filter keeps, in the sort's order
	cur    cursor
	filter textinput.Model
	byName bool
	err    error
	loaded bool

	form *launchForm
}

type workflowsMsg struct {
	items []*wfItem
	err   error
}

func newWorkflowsTab(e *env) *workflowsTab {
	f := textinput.New()
	f.Prompt = "filter: "
	f.Placeholder = "name or description"
	return &workflowsTab{env: e, filter: f, byName: true}
}

// load lists and loads every workflow the engine can run here.
func (t *workflowsTab) load() tea.Cmd {
	e := t.env.cfg.Launcher.Engine()
	return func() tea.Msg {
		entries, _, err := e.Workflows()
		if err != nil {
			return workflowsMsg{err: err}
		}
		cat, opts := e.Catalog(), e.LoadOptions()
		items := make([]*wfItem, 0, len(entries))
		for _, en := range entries {
			it := &wfItem{entry: en}
			if st, err := os.Stat(en.File); err == nil {
				it.modTime = st.ModTime()
			}
			ref, err := cat.Find(en.File)
			if err == nil {
				it.wf, err = cat.Load(ref, opts)
			}
			it.problems = problemLines(err)
			items = append(items, it)
		}
		return workflowsMsg{items: items}
	}
}

// problemLines are the lines an error loading a workflow says.
func problemLines(err error) []string {
	var probs workflow.Problems
	switch {
	case err == nil:
		return nil
	case errors.As(err, &probs):
		out := make([]string, len(probs))
		for i, p := range probs {
			out[i] = p.String()
		}
		return out
	}
	return []string{err.Error()}
}

func (t *workflowsTab) refilter() {
	q := strings.ToLower(strings.TrimSpace(t.filter.Value()))
	t.shown = t.shown[:0]
	for _, it := range t.items {
		if q == "" || strings.Contains(strings.ToLower(it.entry.Name), q) || strings.Contains(strings.ToLower(it.description()), q) {
			t.shown = append(t.shown, it)
		}
	}
	if t.byName {
		slices.SortStableFunc(t.shown, func(a, b *wfItem) int { return cmp.Compare(a.entry.Name, b.entry.Name) })
	} else {
		slices.SortStableFunc(t.shown, func(a, b *wfItem) int { return b.modTime.Compare(a.modTime) })
	}
}

func (t *workflowsTab) selected() *wfItem {
	if t.cur.pos < len(t.shown) {
		return t.shown[t.cur.pos]
	}
	return nil
}

func (t *workflowsTab) typing() bool { return t.filter.Focused() || t.form != nil }

func (t *workflowsTab) help() string {
	switch {
	case t.form != nil:
		return "enter next/launch · tab/shift+tab field · esc cancel"
	case t.filter.Focused():
		return "type to filter · enter keep · esc clear"
	}
	return "↑↓ select · enter launch · f filter · ? details · v validate · s sort · r reload"
}

func (t *workflowsTab) update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case workflowsMsg:
		t.items, t.err, t.loaded = msg.items, msg.err, true
		t.refilter()
		return nil
	case launchedMsg:
		t.form = nil
		return nil
	case launchErrMsg:
		if t.form != nil {
			t.form.err, t.form.busy = msg.err, false
		}
		return nil
	case tea.KeyPressMsg:
		if t.form != nil {
			return t.form.update(msg)
		}
		if t.filter.Focused() {
			switch msg.String() {
			case "enter", "down", "up":
				t.filter.Blur()
				return nil
			case "esc":
				t.filter.Reset()
				t.filter.Blur()
				t.refilter()
				return nil
			}
			var cmd tea.Cmd
			t.filter, cmd = t.filter.Update(msg)
			t.refilter()
			t.cur = cursor{}
			return cmd
		}
		if t.cur.key(msg.String(), len(t.shown), 10) {
			return nil
		}
		switch msg.String() {
		case "f", "/":
			return t.filter.Focus()
		case "esc":
			if t.filter.Value() != "" {
				t.filter.Reset()
				t.refilter()
			}
		case "s":
			t.byName = !t.byName
			t.refilter()
		case "r":
			return t.load()
		case "?":
			if it := t.selected(); it != nil {
				return func() tea.Msg { return popupMsg{title: it.entry.Name, body: details(it)} }
			}
		case "v":
			if it := t.selected(); it != nil {
				return t.validate(it)
			}
		case "enter":
			it := t.selected()
			if it == nil {
				return nil
			}
			if it.wf == nil {
				return func() tea.Msg {
					return popupMsg{title: it.entry.Name + " is invalid", body: strings.Join(it.problems, "\n")}
				}
			}
			t.form = newLaunchForm(t.env, it)
			if len(it.wf.Inputs) == 0 {
				return t.form.submit()
			}
			return t.form.focus()
		}
	}
	return nil
}

// validate checks the workflow again, as reel validate does.
func (t *workflowsTab) validate(it *wfItem) tea.Cmd {
	e := t.env.cfg.Launcher.Engine()
	return func() tea.Msg {
		wf, err := e.LoadWorkflow(it.entry.File)
		if err != nil {
			return popupMsg{title: "✗ " + it.entry.Name + " is invalid", body: strings.Join(problemLines(err), "\n")}
		}
		body := fmt.Sprintf("%s: %d states, %d inputs", it.entry.File, len(wf.States), len(wf.Inputs))
		for _, w := range wf.Warnings {
			body += "\nwarning: " + w.String()
		}
		return popupMsg{title: "✓ " + it.entry.Name + " is valid", body: body}
	}
}

// details is what ? shows: the workflow's description, inputs and steps.
func details(it *wfItem) string {
	var b strings.Builder
	fmt.Fprintf(&b, "source: %s", it.entry.Scope)
	if it.entry.Version != "" {
		fmt.Fprintf(&b, " %s", it.entry.Version)
	}
	fmt.Fprintf(&b, "\nfile:   %s\n", it.entry.File)
	if it.wf == nil {
		b.WriteString("\n" + strings.Join(it.problems, "\n"))
		return b.String()
	}
	wf := it.wf
	if wf.Description != "" {
		fmt.Fprintf(&b, "\n%s\n", wf.Description)
	}
	if len(wf.Inputs) > 0 {
		b.WriteString("\ninputs:\n")
		for _, in := range wf.Inputs {
			fmt.Fprintf(&b, "  %s  %s\n", in.Name, inputKind(in))
		}
	}
	fmt.Fprintf(&b, "\nsteps (%d):", len(wf.Order))
	for _, name := range wf.Order {
		fmt.Fprintf(&b, "  %s (%s)", name, wf.States[name].Type)
	}
	return b.String()
}

// inputKind says an input's type, whether it is required and its default,
// as AWF's form labels them.
func inputKind(in workflow.Input) string {
	typ := cmp.Or(in.Type, "string")
	parts := []string{typ}
	if in.Required {
		parts = append(parts, "required")
	} else {
		parts = append(parts, "optional")
	}
	if in.Default != nil {
		parts = append(parts, "default: "+*in.Default)
	}
	s := "(" + strings.Join(parts, ", ") + ")"
	if in.Description != "" {
		s += " " + in.Description
	}
	return s
}

func (t *workflowsTab) view(w, h int) string {
	if t.form != nil {
		return t.form.view(w, h)
	}
	st := t.env.st
	var b strings.Builder
	head := fmt.Sprintf("%d workflows", len(t.shown))
	if len(t.shown) != len(t.items) {
		head = fmt.Sprintf("%d of %d workflows", len(t.shown), len(t.items))
	}
	if t.byName {
		head += " · by name"
	} else {
		head += " · newest first"
	}
	if t.filter.Focused() || t.filter.Value() != "" {
		t.filter.SetWidth(max(10, w-30))
		b.WriteString(t.filter.View() + "  " + st.dim.Render(head) + "\n")
	} else {
		b.WriteString(st.title.Render(head) + "\n")
	}
	switch {
	case t.err != nil:
		b.WriteString(st.err.Render(t.err.Error()))
		return b.String()
	case !t.loaded:
		b.WriteString("loading workflows…")
		return b.String()
	case len(t.items) == 0:
		b.WriteString("No workflows here: put one in .reel/workflows/ or .awf/workflows/, install a pack (reel workflow install), or add global ones to ~/.config/awf/workflows/.")
		return b.String()
	}
	listH := h - 1 - 4
	from, to := t.cur.window(len(t.shown), listH)
	nameW := min(32, w/3)
	for i := from; i < to; i++ {
		it := t.shown[i]
		mark := " "
		if len(it.problems) > 0 {
			mark = "✗"
		}
		if i == t.cur.pos {
			mark = "›" + mark
		} else {
			mark = " " + mark
		}
		scope := it.entry.Scope
		line := fmt.Sprintf("%s %s %s %s", mark, fit(it.entry.Name, nameW), fit(scope, 6), it.description())
		line = fit(line, w)
		if i == t.cur.pos {
			line = st.sel.Render(line)
		} else if len(it.problems) > 0 {
			line = st.err.Render(line)
		}
		b.WriteString(line + "\n")
	}
	for i := to - from; i < listH; i++ {
		b.WriteString("\n")
	}
	// The selection's inputs, a glance before launching.
	if it := t.selected(); it != nil && it.wf != nil {
		b.WriteString(st.dim.Render(strings.Repeat("─", w)) + "\n")
		var ins []string
		for _, in := range it.wf.Inputs {
			s := in.Name
			if in.Required {
				s += "*"
			}
			if in.Default != nil {
				s += "=" + *in.Default
			}
			ins = append(ins, s)
		}
		b.WriteString(fit(fmt.Sprintf("%s · %d steps · inputs: %s", it.entry.Name, len(it.wf.Order), cmp.Or(strings.Join(ins, " "), "none")), w) + "\n")
		b.WriteString(st.dim.Render(fit(it.entry.File, w)))
	}
	return b.String()
}

// launchForm collects a workflow's inputs, as AWF's form does: each with
// its type, whether it is required and its default; enums (and booleans)
// as numbered choices.
type launchForm struct {
	fieldSet
	env  *env
	item *wfItem
	err  error
	busy bool
}

type launchedMsg struct{ id, workflow string }
type launchErrMsg struct{ err error }

func newLaunchForm(e *env, it *wfItem) *launchForm {
	f := &launchForm{env: e, item: it}
	for _, in := range it.wf.Inputs {
		ti := textinput.New()
		ti.Prompt = "> "
		if in.Default != nil {
			ti.Placeholder = *in.Default + " (enter for the default)"
		} else if !in.Required {
			ti.Placeholder = "(optional)"
		}
		f.fields = append(f.fields, ti)
	}
	return f
}

// choices are an input's numbered options: its enum, or true and false.
func choices(in workflow.Input) []string {
	if in.Validation != nil && len(in.Validation.Enum) > 0 {
		return in.Validation.Enum
	}
	if in.Type == "boolean" {
		return []string{"true", "false"}
	}
	return nil
}

func (f *launchForm) update(k tea.KeyPressMsg) tea.Cmd {
	if f.busy {
		return nil
	}
	if k.String() == "esc" {
		return func() tea.Msg { return launchedMsg{} } // closes the form
	}
	cmd, submit := f.key(k)
	if submit {
		return f.submit()
	}
	f.err = nil
	return cmd
}

// values are the inputs given: a number picks an enum's choice; an empty
// field leaves the input to its default.
func (f *launchForm) values() map[string]string {
	vals := map[string]string{}
	for i, in := range f.item.wf.Inputs {
		v := strings.TrimSpace(f.fields[i].Value())
		if v == "" {
			continue
		}
		if ch := choices(in); len(ch) > 0 {
			var n int
			if _, err := fmt.Sscanf(v, "%d", &n); err == nil && fmt.Sprint(n) == v && n >= 1 && n <= len(ch) {
				v = ch[n-1]
			}
		}
		vals[in.Name] = v
	}
	return vals
}

// submit starts the run; the model switches to Monitoring once its
// run.started is recorded.
func (f *launchForm) submit() tea.Cmd {
	f.busy = true
	l, file, vals := f.env.cfg.Launcher, f.item.entry.File, f.values()
	ctx := f.env.ctx
	return func() tea.Msg {
		r, err := l.Start(ctx, file, vals)
		if err != nil {
			return launchErrMsg{err: err}
		}
		return launchedMsg{id: r.ID, workflow: r.Workflow}
	}
}

func (f *launchForm) view(w, h int) string {
	st := f.env.st
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n", st.title.Render("Workflow: "+f.item.entry.Name))
	if d := f.item.wf.Description; d != "" {
		b.WriteString(st.dim.Render(fit(d, w)) + "\n")
	}
	b.WriteString("\nInput Parameters:\n")
	for i, in := range f.item.wf.Inputs {
		label := fmt.Sprintf("  %s %s", in.Name, inputKind(in))
		if i == f.at {
			label = st.key.Render(label)
		}
		b.WriteString(fit(label, w) + "\n")
		if ch := choices(in); len(ch) > 0 && i == f.at {
			b.WriteString("  Available options:\n")
			for j, c := range ch {
				fmt.Fprintf(&b, "    %d) %s\n", j+1, c)
			}
			fmt.Fprintf(&b, "  Select (1-%d):\n", len(ch))
		}
		f.fields[i].SetWidth(max(10, w-6))
		b.WriteString("  " + f.fields[i].View() + "\n")
	}
	switch {
	case f.busy:
		b.WriteString("\nstarting…")
	case f.err != nil:
		b.WriteString("\n" + st.err.Render(inputProblems(f.err)))
	default:
		b.WriteString("\n" + st.dim.Render("enter on the last field launches"))
	}
	return b.String()
}

// inputProblems says why the engine refused the inputs, a problem a line.
func inputProblems(err error) string {
	var ie *engine.InputError
	if errors.As(err, &ie) {
		return "✗ " + strings.Join(ie.Problems, "\n✗ ")
	}
	return "✗ " + err.Error()
}
