package normalize

import (
	"cmp"
	"fmt"
	"time"

	"github.com/reelhq/reel/internal/rawjson"
	"github.com/reelhq/reel/transcript"
)

// codexExec reads `codex exec --json`: thread/turn/item events (0.44+), the
// earlier item_type spelling, and the older {id, msg} envelope whose msg
// payloads are the same events a rollout's event_msg lines carry.
type codexExec struct {
	st  *state
	ev  *codexEvents
	cmd map[string]bool // item ids whose command block is already in a message
	// thread is the current thread id; totals hold the last running total
	// turn.completed reported per thread, in order of first report.
	thread  string
	totals  map[string]*runningTotal
	threads []string
	// Item ids restart with each process (item_0, item_1, …), so a
	// recording of a run and its resume holds the same id twice: ids an
	// earlier process used are renamed id~N in process N (ids maps them
	// for the current process).
	procs int
	ids   map[string]string
}

func newCodexExec(p *Parser) {
	c := &codexExec{st: p.st, cmd: map[string]bool{}, totals: map[string]*runningTotal{}}
	c.ev = &codexEvents{st: p.st, direct: true}
	p.st.res.Agent.Provider = "codex"
	p.line = c.line
	p.finish = c.finish
}

// finish sets the usage: turn.completed reports the thread's running total
// (a resumed thread's includes its earlier turns), so the last report of
// each thread counts and threads add up. Streams in the older {id, msg}
// form report through token_count instead, handled by codexEvents.
func (c *codexExec) finish() {
	if len(c.threads) == 0 {
		return
	}
	var u transcript.Usage
	for _, id := range c.threads {
		u.Add(c.totals[id].total())
	}
	c.st.setUsage(u)
	last := c.totals[c.threads[len(c.threads)-1]].last
	c.st.res.SessionTotal = &last
}

// codexLine is the fields of a `codex exec --json` line, in either
// envelope.
type codexLine struct {
	Type, ThreadID                   string
	Item, Usage, Error, Msg, Message []byte
}

var codexLineFields = rawjson.NewBinder[codexLine]()

func (c *codexExec) line(v []byte) error {
	var l codexLine
	if _, err := codexLineFields.Bind(v, &l); err != nil {
		return err
	}
	s := c.st
	if l.Type == "" && l.Msg != nil {
		_, err := c.ev.event(l.Msg, time.Time{})
		return err
	}
	switch l.Type {
	case "thread.started":
		s.res.Agent.SessionID = l.ThreadID
		c.thread = l.ThreadID
		c.procs++
		c.ids = map[string]string{}
	case "turn.started":
		s.res.Agent.Turns++
	case "turn.completed":
		s.flush()
		u := readCodexUsage(l.Usage)
		if u.TotalTokens == 0 {
			u.TotalTokens = u.InputTokens + u.OutputTokens
		}
		if _, seen := c.totals[c.thread]; !seen {
			c.threads = append(c.threads, c.thread)
			c.totals[c.thread] = &runningTotal{}
		}
		c.totals[c.thread].report(u)
	case "turn.failed":
		s.flush()
		s.fail(errMessage(l.Error))
	case "error":
		s.flush()
		s.fail(cmp.Or(rawjson.Str(l.Message), errMessage(l.Error)))
	case "item.started", "item.updated", "item.completed":
		c.item(l.Type, l.Item)
	default:
		s.skip(SkipUnknownEvent)
	}
	return nil
}

// errMessage reads {message} or a plain string.
func errMessage(v []byte) string {
	if len(v) > 0 && v[0] == '"' {
		return rawjson.Str(v)
	}
	return rawjson.Str(field(v, "message"))
}

func (c *codexExec) item(ev string, v []byte) {
	it, _, _ := parseCodexObject(v)
	s := c.st
	it.ID = c.itemID(it.ID)
	completed := ev == "item.completed"
	switch it.Type {
	case "agent_message", "assistant_message":
		if completed {
			c.message(&it)
		}
	case "reasoning", "plan":
		if completed {
			s.thinking(rawjson.Str(it.Text), time.Time{})
		}
	case "command_execution":
		c.command(ev, &it)
	case "file_change":
		c.tool(ev, it.ID, "file_change", map[string]any{"changes": raw(it.Changes)},
			map[string]any{"status": it.Status}, failedMsg(it.Status, "file change failed"))
	case "mcp_tool_call":
		name := it.Tool
		if it.Server != "" {
			name = it.Server + "." + it.Tool
		}
		errMsg := cmp.Or(errMessage(it.Error), failedMsg(it.Status, "tool call failed"))
		c.tool(ev, it.ID, name, raw(it.Arguments), raw(it.Result), errMsg)
	case "web_search":
		c.tool(ev, it.ID, "web_search", map[string]any{"query": it.Query, "action": raw(it.Action)},
			raw(it.Results), failedMsg(it.Status, "web search failed"))
	case "todo_list":
		c.tool(ev, it.ID, "todo_list", raw(it.Items), raw(it.Items), "")
	case "collab_tool_call":
		c.tool(ev, it.ID, it.Tool, map[string]any{"prompt": it.Prompt, "receiver_thread_ids": raw(it.ReceiverThreadIDs)},
			raw(it.AgentsStates), failedMsg(it.Status, "collab tool call failed"))
	case "error":
		if completed {
			s.warn(rawjson.Str(it.Message))
		}
	default:
		if completed {
			s.skip(SkipUnknownItem)
		}
	}
}

// message adds a completed agent message's text. Items carry no response
// boundary; a second text after a text (commentary, then the final answer)
// starts a new message rather than gluing the two together.
func (c *codexExec) message(it *codexObject) {
	s := c.st
	text := rawjson.Str(it.Text)
	for _, b := range s.blocks {
		if b.Type == transcript.BlockText {
			s.flush()
			break
		}
	}
	s.text(text, time.Time{})
	if it.Phase == "final_answer" {
		s.finalText = text
	}
}

// command maps a command_execution item: its command block and tool.call
// when first seen, its tool.result when completed.
func (c *codexExec) command(ev string, it *codexObject) {
	s := c.st
	if (ev == "item.started" || ev == "item.completed") && !c.cmd[it.ID] {
		c.cmd[it.ID] = true
		command := rawjson.Str(it.Command)
		s.command(command, time.Time{})
		s.call(it.ID, "shell", map[string]any{"command": command}, time.Time{})
	}
	if ev == "item.completed" {
		s.flush()
		out := map[string]any{"output": rawjson.Str(it.AggregatedOutput), "exit_code": raw(it.ExitCode)}
		s.result(it.ID, "shell", out, exitMsg(it.ExitCode, failedMsg(it.Status, "command failed")), time.Time{})
	}
}

// itemID is the id an item gets in the transcript: its own, unless an
// earlier process of the recording used it.
func (c *codexExec) itemID(id string) string {
	if id == "" || c.procs < 2 {
		return id
	}
	if m, ok := c.ids[id]; ok {
		return m
	}
	m := id
	if _, used := c.st.tools[id]; used || c.cmd[id] {
		m = fmt.Sprintf("%s~%d", id, c.procs)
	}
	c.ids[id] = m
	return m
}

func failedMsg(status, msg string) string {
	if status == "failed" {
		return msg
	}
	return ""
}

// tool maps a tool-like item: its tool_use block and tool.call when first
// seen, its tool.result when completed.
func (c *codexExec) tool(ev, id, name string, input, output any, errMsg string) {
	s := c.st
	if ev == "item.started" || ev == "item.completed" {
		s.toolUse(id, name, input, time.Time{})
	}
	if ev == "item.completed" {
		s.flush()
		s.result(id, name, output, errMsg, time.Time{})
	}
}
