package tui

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"charm.land/bubbles/v2/viewport"
	tea "charm.land/bubbletea/v2"

	"github.com/reelhq/reel/internal/normalize"
	"github.com/reelhq/reel/internal/safefile"
	"github.com/reelhq/reel/internal/textview"
	"github.com/reelhq/reel/transcript"
)

// SessionDir is a directory of an agent CLI's session files.
type SessionDir struct {
	// Agent names the CLI ("Claude Code").
	Agent string
	// Dir is searched recursively (hidden directories left out).
	Dir string
	// Format is the normalizer that reads its files.
	Format normalize.Format
	// Match says which file names are sessions.
	Match func(name string) bool
}

// DefaultSessionDirs are the session directories of Claude Code
// (~/.claude/projects), Codex (~/.codex/sessions) and Gemini CLI
// (~/.gemini/tmp), under the home directory.
func DefaultSessionDirs() []SessionDir {
	home, err := os.UserHomeDir()
	if err != nil {
		return nil
	}
	return []SessionDir{
		{Agent: "Claude Code", Dir: filepath.Join(home, ".claude", "projects"), Format: normalize.ClaudeSessionLog,
			Match: func(n string) bool { return strings.HasSuffix(n, ".jsonl") }},
		{Agent: "Codex", Dir: filepath.Join(home, ".codex", "sessions"), Format: normalize.CodexRollout,
			Match: func(n string) bool { return strings.HasPrefix(n, "rollout-") && strings.HasSuffix(n, ".jsonl") }},
		{Agent: "Gemini CLI", Dir: filepath.Join(home, ".gemini", "tmp"), Format: normalize.GeminiSession,
			Match: func(n string) bool { return strings.HasPrefix(n, "session-") && strings.HasSuffix(n, ".json") }},
	}
}

// session is one session file found.
type session struct {
	path    string
	dir     *SessionDir
	modTime time.Time
	size    int64
}

// tail is the session being followed, and what the last read of it
// found.
type tail struct {
	path   string
	format normalize.Format
	size   int64
	mod    time.Time
	lines  []string
	err    error
}

// logsTab is External logs: a live tail of the agent CLIs' session files,
// normalized into transcript events by the same importers reel import
// uses, the newest session followed until one is picked, and any of them
// imported into the storage with one key.
type logsTab struct {
	env      *env
	sessions []session
	cur      cursor
	pinned   string // a session the user picked; "" follows the newest
	t        *tail
	pane     viewport.Model
	paused   bool
	ticks    int
	scanned  bool
	imported map[string]string // session path → run id
}

type sessionsMsg []session

type importedMsg struct {
	path, id string
	err      error
}

const maxTailLines = 5000

func newLogsTab(e *env) *logsTab {
	return &logsTab{env: e, pane: viewport.New(), imported: map[string]string{}}
}

func (t *logsTab) typing() bool { return false }

func (t *logsTab) help() string {
	h := "↑↓ session · enter follow it · a newest · space pause · pgup/pgdn scroll"
	if t.env.cfg.Import != nil {
		h += " · i import · c conversation"
	}
	return h
}

// scan lists the session files, newest first.
func (t *logsTab) scan() tea.Cmd {
	dirs := t.env.cfg.Sessions
	return func() tea.Msg {
		var out []session
		for i := range dirs {
			d := &dirs[i]
			filepath.WalkDir(d.Dir, func(path string, de fs.DirEntry, err error) error {
				if err != nil {
					return nil
				}
				if de.IsDir() {
					if path != d.Dir && strings.HasPrefix(de.Name(), ".") {
						return filepath.SkipDir
					}
					return nil
				}
				if !de.Type().IsRegular() || !d.Match(de.Name()) {
					return nil
				}
				if info, err := de.Info(); err == nil {
					out = append(out, session{path: path, dir: d, modTime: info.ModTime(), size: info.Size()})
				}
				return nil
			})
		}
		slices.SortStableFunc(out, func(a, b session) int { return b.modTime.Compare(a.modTime) })
		return sessionsMsg(out)
	}
}

func (t *logsTab) update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case tickMsg:
		t.ticks++
		var cmd tea.Cmd
		if t.ticks%4 == 1 {
			cmd = t.scan()
		}
		if !t.paused {
			t.read()
		}
		return cmd
	case sessionsMsg:
		sel := ""
		if t.cur.pos < len(t.sessions) {
			sel = t.sessions[t.cur.pos].path
		}
		t.sessions = msg
		t.scanned = true
		for i, s := range t.sessions {
			if s.path == sel {
				t.cur.pos = i
			}
		}
		t.follow()
		return nil
	case importedMsg:
		if msg.err != nil {
			return func() tea.Msg { return popupMsg{title: "Import failed", body: msg.err.Error()} }
		}
		t.imported[msg.path] = msg.id
		return func() tea.Msg { return noteMsg("imported as run " + msg.id + " (c shows its conversation)") }
	case tea.KeyPressMsg:
		s := msg.String()
		if t.cur.key(s, len(t.sessions), 5) && (s == "up" || s == "down" || s == "k" || s == "j") {
			return nil
		}
		switch s {
		case "enter":
			if t.cur.pos < len(t.sessions) {
				t.pinned = t.sessions[t.cur.pos].path
				t.follow()
			}
		case "a":
			t.pinned = ""
			t.follow()
		case "space", " ":
			t.paused = !t.paused
			if !t.paused {
				t.read()
			}
		case "pgdown":
			t.pane.PageDown()
		case "pgup":
			t.pane.PageUp()
		case "G", "end":
			t.pane.GotoBottom()
		case "i":
			return t.importSession()
		case "c":
			if t.t != nil {
				if id := t.imported[t.t.path]; id != "" {
					return func() tea.Msg { return showConvoMsg{id: id} }
				}
				return func() tea.Msg { return noteMsg("import the session first (i)") }
			}
		}
	}
	return nil
}

// following is the session followed: the one pinned, else the newest.
func (t *logsTab) following() *session {
	for i := range t.sessions {
		if t.pinned == "" || t.sessions[i].path == t.pinned {
			return &t.sessions[i]
		}
	}
	return nil
}

// follow switches the tail to the session followed, when it changed.
func (t *logsTab) follow() {
	s := t.following()
	if s == nil || t.t != nil && t.t.path == s.path {
		return
	}
	t.t = &tail{path: s.path, format: s.dir.Format}
	t.pane.SetContent("")
	t.read()
}

// liveReason is what the normalizer is told when it is closed on a live
// file: its answers to tool calls still open say it, and are left out.
const liveReason = "the session goes on"

// tailWindow is how much of the end of a session file the tail reads.
const tailWindow = 4 << 20

// read shows the session's events when its file changed: the last
// tailWindow bytes, whole lines only, through a fresh normalizer closed at
// the end, so that the last message shows at once (the normalizer holds a
// message until it knows it ended). Tool calls still waiting for their
// result are left open, not answered with the normalizer's "no result".
func (t *logsTab) read() {
	tl := t.t
	if tl == nil {
		return
	}
	st, err := os.Stat(tl.path)
	if err != nil {
		tl.err = err
		return
	}
	if st.Size() == tl.size && st.ModTime().Equal(tl.mod) {
		return
	}
	tl.size, tl.mod, tl.err = st.Size(), st.ModTime(), nil
	f, err := safefile.Open(tl.path)
	if err != nil {
		tl.err = err
		return
	}
	defer f.Close()
	from := max(0, st.Size()-tailWindow)
	data := make([]byte, st.Size()-from)
	n, err := f.ReadAt(data, from)
	if err != nil && err != io.EOF {
		tl.err = err
		return
	}
	data = data[:n]
	if tl.format != normalize.GeminiSession {
		if from > 0 {
			// start at a whole line
			if i := bytes.IndexByte(data, '\n'); i >= 0 {
				data = data[i+1:]
			}
		}
		// a line still being written is shown once its newline is there
		data = data[:bytes.LastIndexByte(data, '\n')+1]
	}
	var lines []string
	p, err := normalize.NewParser(tl.format, func(ev transcript.ExchangeEvent) error {
		if tp := ev.Tool(); ev.Type == transcript.ToolResult && tp != nil && strings.HasSuffix(tp.Error, liveReason) {
			return nil
		}
		lines = append(lines, sessionLine(&ev))
		return nil
	})
	if err != nil {
		tl.err = err
		return
	}
	p.Write(data)
	p.Close(liveReason)
	if len(lines) > maxTailLines {
		lines = lines[len(lines)-maxTailLines:]
	}
	tl.lines = lines
	atBottom := t.pane.AtBottom() || t.pane.TotalLineCount() == 0
	t.pane.SetContent(strings.Join(lines, "\n"))
	if atBottom {
		t.pane.GotoBottom()
	}
}

// sessionLine is one event of a session, as AWF's tail shows them:
// [time] Who: what.
func sessionLine(ev *transcript.ExchangeEvent) string {
	ts := "--:--:--"
	if !ev.Timestamp.IsZero() {
		ts = ev.Timestamp.Local().Format("15:04:05")
	}
	who := string(ev.Type)
	switch ev.Type {
	case transcript.MessageUser:
		who = "User"
	case transcript.MessageAssistant:
		who = "Assistant"
	case transcript.ToolCall:
		if tp := ev.Tool(); tp != nil {
			in, _ := json.Marshal(tp.Input)
			return fmt.Sprintf("[%s] Tool: %s %s", ts, tp.Name, oneLine(string(in)))
		}
	case transcript.ToolResult:
		who = "Output"
		if tp := ev.Tool(); tp != nil {
			return fmt.Sprintf("[%s] %s: %s", ts, who, toolOutput(tp))
		}
	}
	return fmt.Sprintf("[%s] %s: %s", ts, who, textview.Summary(ev))
}

func toolOutput(tp *transcript.ToolPayload) string {
	if tp.Error != "" {
		return "error: " + oneLine(tp.Error)
	}
	switch o := tp.Output.(type) {
	case string:
		return oneLine(o)
	case nil:
		return tp.Name
	}
	return oneLine(fmt.Sprint(tp.Output))
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 160 {
		s = string(r[:159]) + "…"
	}
	return s
}

// importSession imports the selected session into the storage, as reel
// import does.
func (t *logsTab) importSession() tea.Cmd {
	imp := t.env.cfg.Import
	if imp == nil || t.cur.pos >= len(t.sessions) {
		return nil
	}
	path, ctx := t.sessions[t.cur.pos].path, t.env.ctx
	return func() tea.Msg {
		id, err := imp(ctx, path)
		return importedMsg{path: path, id: id, err: err}
	}
}

func (t *logsTab) view(w, h int) string {
	st := t.env.st
	if !t.scanned {
		return "looking for sessions…"
	}
	if len(t.sessions) == 0 {
		var b strings.Builder
		b.WriteString(st.title.Render("External logs") + "\n\nNo agent session file found. Looked in:\n")
		for _, d := range t.env.cfg.Sessions {
			fmt.Fprintf(&b, "  %s  (%s)\n", d.Dir, d.Agent)
		}
		b.WriteString("\nStart a Claude Code, Codex or Gemini CLI session: it shows here within a second, followed as it is written.")
		return b.String()
	}
	listH := min(len(t.sessions), 4)
	var b strings.Builder
	from, to := t.cur.window(len(t.sessions), listH)
	for i := from; i < to; i++ {
		s := t.sessions[i]
		mark := " "
		if t.t != nil && t.t.path == s.path {
			mark = "▶"
		}
		if i == t.cur.pos {
			mark = "›" + mark
		} else {
			mark = " " + mark
		}
		imp := ""
		if id := t.imported[s.path]; id != "" {
			imp = " imported " + short(id)
		}
		line := fit(fmt.Sprintf("%s %-11s %s %s%s", mark, s.dir.Agent, s.modTime.Local().Format("01-02 15:04:05"), rel(s.dir.Dir, s.path), imp), w)
		if i == t.cur.pos {
			line = st.sel.Render(line)
		}
		b.WriteString(line + "\n")
	}
	state := "following the newest session"
	if t.pinned != "" {
		state = "following the picked session (a: the newest)"
	}
	if t.paused {
		state = "PAUSED (space resumes)"
	}
	if t.t != nil && t.t.err != nil {
		state += " · " + t.t.err.Error()
	}
	b.WriteString(st.dim.Render(fit("── "+state+" "+strings.Repeat("─", w), w)) + "\n")
	sizePane(&t.pane, w, h-listH-1)
	b.WriteString(t.pane.View())
	return b.String()
}

func rel(dir, path string) string {
	if r, err := filepath.Rel(dir, path); err == nil {
		return r
	}
	return path
}
