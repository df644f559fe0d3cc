package tui

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"charm.land/bubbles/v2/viewport"
	tea "charm.land/bubbletea/v2"

	"github.com/reelhq/reel/internal/markdown"
	"github.com/reelhq/reel/internal/textview"
)

// convoTab is Conversations: a run's exchange as replay renders it in
// Markdown (turn markers, prompts, replies, tool calls, command steps),
// laid out for the pane by markdown.Term; thinking and tool results folded
// until asked for. A live run is rendered again as it grows.
type convoTab struct {
	env    *env
	id     string
	pinned bool // chosen by the user, else the latest run
	pane   viewport.Model

	thinking, tools bool // unfolded

	gen      int
	size     int64 // of the transcript when last rendered
	width    int
	rendered bool
	err      error
	ticks    int
}

// showConvoMsg asks for a run's conversation.
type showConvoMsg struct{ id string }

type convoMsg struct {
	gen  int
	text string
	size int64
	err  error
}

func newConvoTab(e *env) *convoTab {
	vp := viewport.New()
	return &convoTab{env: e, pane: vp}
}

func (t *convoTab) typing() bool { return false }

func (t *convoTab) help() string {
	return "↑↓/j/k pgup/pgdn home/end scroll · t thinking · o tool results · l latest run"
}

func (t *convoTab) update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case showConvoMsg:
		t.id, t.pinned = msg.id, true
		t.rendered = false
		t.size = -1
		return tea.Batch(t.render(true), func() tea.Msg { return switchTabMsg(TabConversations) })
	case tickMsg:
		t.ticks++
		if !t.pinned && t.ticks%8 == 1 {
			// the latest run until one is chosen
			if r, err := t.env.store.Latest(); err == nil && runID(r.Path) != t.id {
				t.id = runID(r.Path)
				t.size = -1
				t.rendered = false
			}
		}
		if t.id != "" && t.width > 0 && t.ticks%4 == 0 {
			return t.render(false)
		}
		return nil
	case convoMsg:
		if msg.gen != t.gen {
			return nil
		}
		t.err = msg.err
		if msg.err != nil {
			return nil
		}
		atBottom := t.pane.AtBottom() && t.rendered
		t.pane.SetContent(msg.text)
		t.size = msg.size
		if atBottom {
			t.pane.GotoBottom()
		}
		t.rendered = true
		return nil
	case tea.KeyPressMsg:
		switch msg.String() {
		case "t":
			t.thinking = !t.thinking
			return t.render(true)
		case "o":
			t.tools = !t.tools
			return t.render(true)
		case "l":
			t.pinned = false
			t.ticks = 0
			return nil
		case "home", "g":
			t.pane.GotoTop()
		case "end", "G":
			t.pane.GotoBottom()
		default:
			var cmd tea.Cmd
			t.pane, cmd = t.pane.Update(msg)
			return cmd
		}
	}
	return nil
}

// render renders the run's conversation again when forced or when its
// transcript grew.
func (t *convoTab) render(force bool) tea.Cmd {
	if t.id == "" || t.width == 0 {
		return nil
	}
	run, err := t.env.open(t.id)
	if err != nil {
		t.err = err
		return nil
	}
	st, err := os.Stat(run.Path)
	if err != nil || (!force && st.Size() == t.size) {
		return nil
	}
	t.gen++
	gen, width, ctx := t.gen, t.width, t.env.ctx
	opts := textview.Options{Format: textview.Markdown, Thinking: t.thinking}
	if !t.tools {
		opts.MaxLines = 3
	}
	term := markdown.NewTerm(markdown.TermOptions{Width: width - 1, NoColor: t.env.st.noColor})
	size := st.Size()
	return func() tea.Msg {
		var md bytes.Buffer
		if _, err := textview.Replay(ctx, &md, run, opts); err != nil {
			return convoMsg{gen: gen, err: err}
		}
		return convoMsg{gen: gen, text: term.Render(md.String()), size: size}
	}
}

func (t *convoTab) view(w, h int) string {
	st := t.env.st
	if t.width != w {
		t.width = w
		t.size = -1 // laid out again for the width at the next tick
	}
	if t.id == "" {
		return "No run yet. Open one from Monitoring or History with c; the latest run shows here."
	}
	fold := "thinking folded"
	if t.thinking {
		fold = "thinking shown"
	}
	if t.tools {
		fold += " · tool results whole"
	} else {
		fold += " · tool results cut to 3 lines"
	}
	head := fmt.Sprintf("run %s · %s", short(t.id), fold)
	if t.err != nil {
		return st.title.Render(fit(head, w)) + "\n" + st.err.Render(t.err.Error())
	}
	if !t.rendered {
		return st.title.Render(fit(head, w)) + "\nrendering…"
	}
	sizePane(&t.pane, w, h-1)
	return st.title.Render(fit(fmt.Sprintf("%s · %d%%", head, int(t.pane.ScrollPercent()*100)), w)) + "\n" + t.pane.View()
}

// runID is the run id a transcript's file name says.
func runID(path string) string {
	return strings.TrimSuffix(filepath.Base(path), ".jsonl")
}
