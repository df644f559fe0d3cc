package tui

import (
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
)

// tab is one of the five screens.
type tab interface {
	// update handles a key when the tab is shown, and every other
	// message (ticks, the results of its commands) whether shown or not.
	update(msg tea.Msg) tea.Cmd
	// view draws the tab in w×h cells.
	view(w, h int) string
	// help is the key line shown under the tab.
	help() string
	// typing says a text field has the keys: the global ones (1-5, q)
	// are typed into it.
	typing() bool
}

// canceller is a tab showing a run that Ctrl-C may cancel.
type canceller interface {
	// cancelTarget is the run shown, when it is running ("" otherwise).
	cancelTarget() (id, workflow string)
}

// Model is the TUI: the tabs, the overlays and the key routing.
type Model struct {
	env           *env
	width, height int
	active        int

	workflows *workflowsTab
	monitor   *monitorTab
	history   *historyTab
	convo     *convoTab
	logs      *logsTab

	// confirm, when set, is a yes/no question that has the keys.
	confirm *confirmation
	// popup, when set, is a message shown over the tab until a key.
	popup *popupMsg
	// note is a one-line message in the status bar, until the next key.
	note string
}

type confirmation struct {
	question string
	yes      func() tea.Cmd
}

// popupMsg asks the model to show a message over the tab.
type popupMsg struct{ title, body string }

// noteMsg asks the model to show a line in the status bar.
type noteMsg string

// switchTabMsg asks the model to show a tab.
type switchTabMsg int

// confirmMsg asks the model to ask a yes/no question.
type confirmMsg confirmation

type tickMsg time.Time

func (m *Model) tabs() [numTabs]tab {
	return [numTabs]tab{m.workflows, m.monitor, m.history, m.convo, m.logs}
}

func (m *Model) tick() tea.Cmd {
	return tea.Tick(m.env.cfg.Tick, func(t time.Time) tea.Msg { return tickMsg(t) })
}

// Init starts the tick and the first loads.
func (m *Model) Init() tea.Cmd {
	return tea.Batch(m.tick(), m.workflows.load(), m.history.reload())
}

// Update routes a message.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		return m, nil
	case tickMsg:
		var cmds []tea.Cmd
		for _, t := range m.tabs() {
			cmds = append(cmds, t.update(msg))
		}
		return m, tea.Batch(append(cmds, m.tick())...)
	case popupMsg:
		m.popup = &msg
		return m, nil
	case noteMsg:
		m.note = string(msg)
		return m, nil
	case switchTabMsg:
		m.active = int(msg)
		return m, nil
	case confirmMsg:
		c := confirmation(msg)
		m.confirm = &c
		return m, nil
	case tea.InterruptMsg:
		// SIGINT with no terminal in raw mode: as Ctrl-C.
		return m, m.quit()
	case tea.KeyPressMsg:
		return m, m.key(msg)
	}
	// Results of commands: every tab looks at them.
	var cmds []tea.Cmd
	for _, t := range m.tabs() {
		cmds = append(cmds, t.update(msg))
	}
	return m, tea.Batch(cmds...)
}

func (m *Model) key(k tea.KeyPressMsg) tea.Cmd {
	m.note = ""
	if m.confirm != nil {
		c := m.confirm
		switch k.String() {
		case "y", "Y", "enter":
			m.confirm = nil
			return c.yes()
		case "n", "N", "esc", "q", "ctrl+c":
			m.confirm = nil
		}
		return nil
	}
	if m.popup != nil {
		m.popup = nil
		if k.String() == "ctrl+c" {
			return m.quit()
		}
		return nil
	}
	t := m.tabs()[m.active]
	s := k.String()
	if s == "ctrl+c" {
		if c, ok := t.(canceller); ok {
			if id, wf := c.cancelTarget(); id != "" {
				return func() tea.Msg {
					return confirmMsg{question: fmt.Sprintf("Cancel run %s of %s? (y/n)", short(id), wf), yes: func() tea.Cmd { return m.cancelRun(id) }}
				}
			}
		}
		return m.quit()
	}
	if !t.typing() {
		switch s {
		case "q":
			return m.quit()
		case "1", "2", "3", "4", "5", "ctrl+1", "ctrl+2", "ctrl+3", "ctrl+4", "ctrl+5":
			m.active = int(s[len(s)-1] - '1')
			return nil
		case "tab":
			m.active = (m.active + 1) % numTabs
			return nil
		case "shift+tab":
			m.active = (m.active + numTabs - 1) % numTabs
			return nil
		}
	}
	return t.update(k)
}

// quit ends the program, asking first when runs started here are still
// going: quitting cancels them.
func (m *Model) quit() tea.Cmd {
	n := 0
	for _, r := range m.env.cfg.Launcher.Runs() {
		if r.Report() == nil {
			n++
		}
	}
	if n == 0 {
		return tea.Quit
	}
	m.confirm = &confirmation{
		question: fmt.Sprintf("%d run(s) started here are still going: quitting cancels them (reel resume continues them). Quit? (y/n)", n),
		yes:      func() tea.Cmd { return tea.Quit },
	}
	return nil
}

// View draws the screen.
func (m *Model) View() tea.View {
	v := tea.NewView(m.render())
	v.AltScreen = true
	v.WindowTitle = "reel tui"
	return v
}

func (m *Model) render() string {
	w, h := m.width, m.height
	if w < 20 || h < 5 {
		return "reel tui: the terminal is too small"
	}
	st := m.env.st
	var bar []string
	for i, name := range tabNames {
		label := fmt.Sprintf("%d %s", i+1, name)
		if i == m.active {
			bar = append(bar, st.tabOn.Render(label))
		} else {
			bar = append(bar, st.tab.Render(label))
		}
	}
	top := fit(strings.Join(bar, ""), w)
	if ansiWidth(strings.Join(bar, "")) > w {
		// narrow: the numbers and the active tab's name only
		var short []string
		for i, name := range tabNames {
			if i == m.active {
				short = append(short, st.tabOn.Render(fmt.Sprintf("%d %s", i+1, name)))
			} else {
				short = append(short, st.tab.Render(fmt.Sprint(i+1)))
			}
		}
		top = strings.Join(short, "")
	}
	t := m.tabs()[m.active]
	body := t.view(w, h-2)
	status := st.dim.Render(t.help() + " · 1-5 tabs · q quit")
	if m.note != "" {
		status = m.note
	}
	if m.confirm != nil {
		status = st.warn.Render(m.confirm.question)
	}
	screen := top + "\n" + clip(body, w, h-2) + "\n" + fit(status, w)
	if m.popup != nil {
		screen = m.overlay(screen, w, h)
	}
	return screen
}

// overlay draws the popup in the middle of the screen.
func (m *Model) overlay(screen string, w, h int) string {
	st := m.env.st
	bw := min(w-4, 76)
	body := wrap(m.popup.body, bw-4)
	lines := strings.Split(body, "\n")
	if max := h - 6; len(lines) > max {
		lines = append(lines[:max-1], "…")
	}
	box := st.box.Width(bw).Render(st.title.Render(m.popup.title) + "\n\n" + strings.Join(lines, "\n") + "\n\n" + st.dim.Render("any key closes"))
	bg := strings.Split(screen, "\n")
	fg := strings.Split(box, "\n")
	y := max(1, (h-len(fg))/2)
	x := max(0, (w-lipgloss.Width(box))/2)
	for i, l := range fg {
		if y+i < len(bg) {
			bg[y+i] = strings.Repeat(" ", x) + l
		}
	}
	return strings.Join(bg, "\n")
}

// short is a run id's first 8 characters, as the lists show it.
func short(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}
