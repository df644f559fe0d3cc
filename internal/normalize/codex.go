package normalize

import (
	"bytes"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
	"unsafe"

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
	totals  map[string]transcript.Usage
	threads []string
	// Item ids restart with each process (item_0, item_1, …), so a
	// recording of a run and its resume holds the same id twice: ids an
	// earlier process used are renamed id~N in process N (ids maps them
	// for the current process).
	procs int
	ids   map[string]string
}

func newCodexExec(p *Parser) {
	c := &codexExec{st: p.st, cmd: map[string]bool{}, totals: map[string]transcript.Usage{}}
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
		u.Add(c.totals[id])
	}
	c.st.setUsage(u)
	last := c.totals[c.threads[len(c.threads)-1]]
	c.st.res.SessionTotal = &last
}

func (c *codexExec) line(v []byte) error {
	var typ, threadID string
	var item, usage, errv, msg, message []byte
	err := eachField(v, func(k, val []byte) {
		switch string(k) {
		case "type":
			typ = rawjson.Str(val)
		case "thread_id":
			threadID = rawjson.Str(val)
		case "item":
			item = val
		case "usage":
			usage = val
		case "error":
			errv = val
		case "msg":
			msg = val
		case "message":
			message = val
		}
	})
	if err != nil {
		return err
	}
	s := c.st
	if typ == "" && msg != nil {
		_, err := c.ev.event(msg, time.Time{})
		return err
	}
	switch typ {
	case "thread.started":
		s.res.Agent.SessionID = threadID
		c.thread = threadID
		c.procs++
		c.ids = map[string]string{}
	case "turn.started":
		s.res.Agent.Turns++
	case "turn.completed":
		s.flush()
		u := codexUsage(usage)
		if u.TotalTokens == 0 {
			u.TotalTokens = u.InputTokens + u.OutputTokens
		}
		if _, seen := c.totals[c.thread]; !seen {
			c.threads = append(c.threads, c.thread)
		}
		c.totals[c.thread] = u
	case "turn.failed":
		s.flush()
		s.fail(errMessage(errv))
	case "error":
		s.flush()
		m := rawjson.Str(message)
		if m == "" {
			m = errMessage(errv)
		}
		s.fail(m)
	case "item.started", "item.updated", "item.completed":
		c.item(typ, item)
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

func codexUsage(v []byte) transcript.Usage {
	var u transcript.Usage
	_ = eachField(v, func(k, val []byte) {
		switch string(k) {
		case "input_tokens":
			u.InputTokens = num(val)
		case "cached_input_tokens":
			u.CacheReadTokens = num(val)
		case "cache_write_input_tokens":
			u.CacheWriteTokens = num(val)
		case "output_tokens":
			u.OutputTokens = num(val)
		case "reasoning_output_tokens":
			u.ReasoningTokens = num(val)
		case "total_tokens":
			u.TotalTokens = num(val)
		}
	})
	return u
}

type codexItem struct {
	id, typ, text, command, output, status, server, tool, query, message string
	exitCode                                                             []byte
	args, result, errv, changes, action, results, items, agents          []byte
	prompt, phase                                                        string
	receivers                                                            []byte
}

func (c *codexExec) item(ev string, v []byte) {
	var it codexItem
	_ = eachField(v, func(k, val []byte) {
		switch string(k) {
		case "id":
			it.id = rawjson.Str(val)
		case "type", "item_type":
			it.typ = rawjson.Str(val)
		case "text":
			it.text = rawjson.Str(val)
		case "command":
			it.command = rawjson.Str(val)
		case "aggregated_output":
			it.output = rawjson.Str(val)
		case "exit_code":
			it.exitCode = val
		case "status":
			it.status = rawjson.Str(val)
		case "server":
			it.server = rawjson.Str(val)
		case "tool":
			it.tool = rawjson.Str(val)
		case "arguments":
			it.args = val
		case "result":
			it.result = val
		case "error":
			it.errv = val
		case "changes":
			it.changes = val
		case "query":
			it.query = rawjson.Str(val)
		case "action":
			it.action = val
		case "results":
			it.results = val
		case "items":
			it.items = val
		case "message":
			it.message = rawjson.Str(val)
		case "prompt":
			it.prompt = rawjson.Str(val)
		case "phase":
			it.phase = rawjson.Str(val)
		case "receiver_thread_ids":
			it.receivers = val
		case "agents_states":
			it.agents = val
		}
	})
	s := c.st
	it.id = c.itemID(it.id)
	started, completed := ev == "item.started", ev == "item.completed"
	switch it.typ {
	case "agent_message", "assistant_message":
		if completed {
			// Items carry no response boundary; a second text after a
			// text (commentary, then the final answer) starts a new
			// message rather than gluing the two together.
			for _, b := range s.blocks {
				if b.Type == transcript.BlockText {
					s.flush()
					break
				}
			}
			s.text(it.text, time.Time{})
			if it.phase == "final_answer" {
				s.finalText = it.text
			}
		}
	case "reasoning":
		if completed {
			s.thinking(it.text, time.Time{})
		}
	case "plan":
		if completed {
			s.thinking(it.text, time.Time{})
		}
	case "command_execution":
		if started || completed {
			if !c.cmd[it.id] {
				c.cmd[it.id] = true
				s.command(it.command, time.Time{})
				s.call(it.id, "shell", map[string]any{"command": it.command}, time.Time{})
			}
		}
		if completed {
			s.flush()
			out := map[string]any{"output": it.output, "exit_code": raw(it.exitCode)}
			errMsg := ""
			if code := num(it.exitCode); code != 0 {
				errMsg = fmt.Sprintf("exit code %d", code)
			} else if it.status == "failed" {
				errMsg = "command failed"
			}
			s.result(it.id, "shell", out, errMsg, time.Time{})
		}
	case "file_change":
		c.tool(ev, it.id, "file_change", map[string]any{"changes": raw(it.changes)},
			map[string]any{"status": it.status}, failedMsg(it.status, "file change failed"))
	case "mcp_tool_call":
		name := it.tool
		if it.server != "" {
			name = it.server + "." + it.tool
		}
		errMsg := errMessage(it.errv)
		if errMsg == "" {
			errMsg = failedMsg(it.status, "tool call failed")
		}
		c.tool(ev, it.id, name, raw(it.args), raw(it.result), errMsg)
	case "web_search":
		c.tool(ev, it.id, "web_search", map[string]any{"query": it.query, "action": raw(it.action)},
			raw(it.results), failedMsg(it.status, "web search failed"))
	case "todo_list":
		c.tool(ev, it.id, "todo_list", raw(it.items), raw(it.items), "")
	case "collab_tool_call":
		c.tool(ev, it.id, it.tool, map[string]any{"prompt": it.prompt, "receiver_thread_ids": raw(it.receivers)},
			raw(it.agents), failedMsg(it.status, "collab tool call failed"))
	case "error":
		if completed {
			s.warn(it.message)
		}
	default:
		if completed {
			s.skip(SkipUnknownItem)
		}
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

// codexEvents handles the event payloads shared by a rollout's event_msg
// lines and the older exec {id, msg} envelope.
type codexEvents struct {
	st *state
	// direct: the events are the only record (old exec output). Otherwise
	// (rollouts) they duplicate response items and only stand in when the
	// file has none.
	direct  bool
	pending []func()
	// drop: the file has response items, so the duplicate texts are not
	// even decoded.
	drop bool
}

// event handles one event payload and returns the length of its object; it
// does nothing when the object is malformed.
func (e *codexEvents) event(v []byte, ts time.Time) (int, error) {
	s := e.st
	var typ, callID, lastMsg string
	var messageV, textV []byte
	var info, command, stdout, aggregated, exitCode, invocation, result, errv, changes, success []byte
	var u transcript.Usage
	flatUsage := false
	end, err := rawjson.Members(v, func(k, d []byte, vs int) (int, error) {
		ve, err := skipValue(d, vs)
		if err != nil {
			return 0, err
		}
		val := d[vs:ve]
		switch string(k) {
		case "type":
			typ = rawjson.Str(val)
		case "message":
			messageV = val
		case "text":
			textV = val
		case "call_id":
			callID = rawjson.Str(val)
		case "info":
			info = val
		case "command":
			command = val
		case "stdout":
			stdout = val
		case "aggregated_output":
			aggregated = val
		case "exit_code":
			exitCode = val
		case "invocation":
			invocation = val
		case "result":
			result = val
		case "error":
			errv = val
		case "changes":
			changes = val
		case "success":
			success = val
		case "last_agent_message":
			lastMsg = rawjson.Str(val)
		case "input_tokens":
			u.InputTokens, flatUsage = num(val), true
		case "cached_input_tokens":
			u.CacheReadTokens = num(val)
		case "output_tokens":
			u.OutputTokens = num(val)
		case "reasoning_output_tokens":
			u.ReasoningTokens = num(val)
		case "total_tokens":
			u.TotalTokens = num(val)
		}
		return ve, nil
	})
	if err != nil {
		return 0, err
	}
	switch typ {
	case "agent_message", "agent_reasoning", "agent_reasoning_raw_content", "user_message":
		if e.drop {
			return end, nil
		}
	}
	message, text := rawjson.Str(messageV), rawjson.Str(textV)
	later := func(f func()) {
		if e.direct {
			f()
		} else {
			e.pending = append(e.pending, f)
		}
	}
	switch typ {
	case "token_count":
		// Reported totals are cumulative for the session: the last wins.
		if flatUsage {
			s.setUsage(u)
		} else if tot := field(info, "total_token_usage"); tot != nil {
			s.setUsage(codexUsage(tot))
		}
	case "agent_message":
		later(func() { s.text(message, ts) })
	case "agent_reasoning", "agent_reasoning_raw_content":
		later(func() { s.thinking(text, ts) })
	case "user_message":
		later(func() { s.user([]string{message}, ts, true) })
	case "exec_command_begin":
		if e.direct {
			cmd := argv(command)
			s.command(cmd, ts)
			s.call(callID, "shell", map[string]any{"command": cmd}, ts)
		}
	case "exec_command_end":
		if e.direct {
			s.flush()
			out := aggregated
			if out == nil {
				out = stdout
			}
			errMsg := ""
			if code := num(exitCode); code != 0 {
				errMsg = fmt.Sprintf("exit code %d", code)
			}
			s.result(callID, "shell", map[string]any{"output": rawjson.Str(out), "exit_code": raw(exitCode)}, errMsg, ts)
		}
	case "mcp_tool_call_begin":
		if e.direct {
			name := rawjson.Str(field(invocation, "tool"))
			if srv := rawjson.Str(field(invocation, "server")); srv != "" {
				name = srv + "." + name
			}
			s.toolUse(callID, name, raw(field(invocation, "arguments")), ts)
		}
	case "mcp_tool_call_end":
		if e.direct {
			s.flush()
			s.result(callID, "", raw(result), errMessage(field(result, "Err")), ts)
		}
	case "patch_apply_begin":
		if e.direct {
			s.toolUse(callID, "apply_patch", map[string]any{"changes": raw(changes)}, ts)
		}
	case "patch_apply_end":
		if e.direct {
			s.flush()
			errMsg := ""
			if string(success) == "false" {
				errMsg = "patch failed"
			}
			s.result(callID, "apply_patch", map[string]any{"stdout": rawjson.Str(stdout)}, errMsg, ts)
		}
	case "task_started":
		if e.direct {
			s.res.Agent.Turns++
		}
	case "task_complete":
		s.flush()
		if e.direct && lastMsg != "" {
			s.finalText = lastMsg
		}
	case "error", "stream_error":
		if message == "" {
			message = errMessage(errv)
		}
		s.fail(message)
	case "turn_aborted":
		s.warn("turn aborted: " + rawjson.Str(field(v, "reason")))
	case "session_configured":
		s.res.Agent.SessionID = rawjson.Str(field(v, "session_id"))
		s.setModel(rawjson.Str(field(v, "model")))
		s.setCWD(rawjson.Str(field(v, "cwd")))
	case "agent_message_delta", "agent_reasoning_delta", "agent_reasoning_raw_content_delta",
		"agent_reasoning_section_break", "turn_diff", "background_event", "exec_command_output_delta",
		"plan_update", "get_history_entry_response", "shutdown_complete", "web_search_begin", "web_search_end",
		"entered_review_mode", "exited_review_mode", "list_custom_prompts_response":
		// Deltas and UI notifications duplicate content recorded elsewhere.
	default:
		s.skip(SkipUnknownEvent)
	}
	return end, nil
}

// argv renders a command given as an argv array (or a string) as one line.
func argv(v []byte) string {
	if len(v) > 0 && v[0] == '"' {
		return rawjson.Str(v)
	}
	var parts []string
	_ = rawjson.EachElem(v, func(e []byte) { parts = append(parts, shellQuote(rawjson.Str(e))) })
	return strings.Join(parts, " ")
}

func shellQuote(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\n'\"\\$`|&;<>()*?[]{}#~!") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// codexRollout reads a Codex session file. response_item lines are the
// model-visible history and the source of truth; event_msg lines repeat
// them for the UI and are used only when a file has no response items.
type codexRollout struct {
	st       *state
	scratch  []byte
	ev       *codexEvents
	sawItems bool
}

func newCodexRollout(p *Parser) {
	c := &codexRollout{st: p.st}
	c.ev = &codexEvents{st: p.st}
	p.st.res.Agent.Provider = "codex"
	p.line = c.line
	p.finish = c.finish
}

func (c *codexRollout) line(v []byte) error {
	var typ string
	var payload []byte
	var ts time.Time
	handled := false
	_, err := rawjson.Members(v, func(k, d []byte, vs int) (int, error) {
		if string(k) == "payload" && d[vs] == '{' && (typ == "response_item" || typ == "event_msg") {
			// Nearly all of a rollout's bytes are in these payloads: parse
			// them in place rather than skipping them first.
			var end int
			var err error
			if typ == "response_item" {
				end, err = c.item(d[vs:], ts)
			} else {
				end, err = c.ev.event(d[vs:], ts)
			}
			if err != nil {
				return 0, err
			}
			handled = true
			return vs + end, nil
		}
		ve, err := skipValue(d, vs)
		if err != nil {
			return 0, err
		}
		val := d[vs:ve]
		switch string(k) {
		case "type":
			typ = rawjson.Str(val)
		case "payload":
			payload = val
		case "timestamp":
			ts = timestamp(val)
		}
		return ve, nil
	})
	if err != nil {
		return err
	}
	s := c.st
	switch typ {
	case "session_meta":
		s.res.Agent.SessionID = rawjson.Str(field(payload, "id"))
		s.setCWD(rawjson.Str(field(payload, "cwd")))
	case "turn_context":
		s.flush()
		s.setCWD(rawjson.Str(field(payload, "cwd")))
		s.setModel(rawjson.Str(field(payload, "model")))
		s.res.Agent.Turns++
	case "response_item":
		if !handled {
			if _, err := c.item(payload, ts); err != nil {
				return err
			}
		}
	case "event_msg":
		if !handled {
			if _, err := c.ev.event(payload, ts); err != nil {
				return err
			}
		}
		if c.sawItems {
			c.ev.pending = nil
		}
	case "compacted":
	default:
		s.skip(SkipUnknownEvent)
	}
	return nil
}

func (c *codexRollout) finish() {
	for _, f := range c.ev.pending {
		f()
	}
	c.ev.pending = nil
}

// item handles a response item and returns the length of its object; it
// emits nothing when the object is malformed.
func (c *codexRollout) item(v []byte, ts time.Time) (int, error) {
	s := c.st
	var typ, role, name, args, callID, input, status string
	var content, summary, output, action []byte
	end, err := rawjson.Members(v, func(k, d []byte, vs int) (int, error) {
		ve, err := skipValue(d, vs)
		if err != nil {
			return 0, err
		}
		val := d[vs:ve]
		switch string(k) {
		case "type":
			typ = rawjson.Str(val)
		case "role":
			role = rawjson.Str(val)
		case "name":
			name = rawjson.Str(val)
		case "arguments":
			args = rawjson.Str(val)
		case "call_id":
			callID = rawjson.Str(val)
		case "input":
			input = rawjson.Str(val)
		case "status":
			status = rawjson.Str(val)
		case "content":
			content = val
		case "summary":
			summary = val
		case "output":
			output = val
		case "action":
			action = val
		}
		return ve, nil
	})
	if err != nil {
		return 0, err
	}
	if !c.sawItems {
		c.sawItems = true
		c.ev.pending = nil
		c.ev.drop = true
	}
	switch typ {
	case "message":
		var texts []string
		_ = rawjson.EachElem(content, func(b []byte) {
			if t := rawjson.Str(field(b, "text")); t != "" {
				texts = append(texts, t)
			}
		})
		switch role {
		case "assistant":
			for _, t := range texts {
				s.text(t, ts)
			}
		case "user":
			// The CLI injects its environment and instructions as user
			// messages; they are recorded but are not the prompt.
			prompt := len(texts) > 0 && !strings.HasPrefix(texts[0], "<environment_context>") &&
				!strings.HasPrefix(texts[0], "<user_instructions>")
			s.user(texts, ts, prompt)
		default:
			s.skip("system message")
		}
	case "reasoning":
		var parts []string
		_ = rawjson.EachElem(content, func(b []byte) {
			if t := rawjson.Str(field(b, "text")); t != "" {
				parts = append(parts, t)
			}
		})
		if len(parts) == 0 {
			_ = rawjson.EachElem(summary, func(b []byte) {
				if t := rawjson.Str(field(b, "text")); t != "" {
					parts = append(parts, t)
				}
			})
		}
		s.thinking(strings.Join(parts, "\n\n"), ts)
	case "function_call":
		in := jsonText(args)
		if name == "shell" || name == "container.exec" || name == "shell_command" || name == "exec_command" {
			cmd := args
			if c := field([]byte(args), "command"); c != nil {
				cmd = argv(c)
			}
			s.command(cmd, ts)
			s.call(callID, name, in, ts)
			return end, nil
		}
		s.toolUse(callID, name, in, ts)
	case "custom_tool_call":
		s.toolUse(callID, name, input, ts)
	case "local_shell_call":
		cmd := argv(field(action, "command"))
		s.command(cmd, ts)
		s.call(callID, "local_shell", raw(action), ts)
	case "web_search_call":
		id := s.toolUse("", "web_search", raw(action), ts)
		s.flush()
		s.result(id, "web_search", map[string]any{"status": status}, failedMsg(status, "web search failed"), ts)
	case "function_call_output", "custom_tool_call_output", "local_shell_call_output":
		s.flush()
		out, errMsg := codexToolOutput(output, &c.scratch)
		s.result(callID, "", out, errMsg, ts)
	default:
		s.skip(SkipUnknownItem)
	}
	return end, nil
}

// codexToolOutput reads a function_call_output. Shell calls hand back a JSON
// string {output, metadata: {exit_code, duration_seconds}}: it becomes
// {output, exit_code}, the shape of a command_execution result. Other
// outputs are kept as the text the model saw. scratch is reused between
// calls for the decoded outer text.
func codexToolOutput(v []byte, scratch *[]byte) (any, string) {
	if len(v) < 2 || v[0] != '"' {
		return raw(v), ""
	}
	if out, meta, ok := shellOutputRaw(v[1 : len(v)-1]); ok {
		return shellResult(out, field(meta, "exit_code"))
	}
	*scratch = rawjson.AppendUnescaped((*scratch)[:0], v[1:len(v)-1])
	b := *scratch
	inner, meta, ok := shellOutput(b)
	if !ok {
		return string(b), ""
	}
	return shellResult(rawjson.Str(inner), field(meta, "exit_code"))
}

func shellResult(output string, exitCode []byte) (any, string) {
	code := num(exitCode)
	res := map[string]any{"output": output, "exit_code": code}
	if code != 0 {
		return res, fmt.Sprintf("exit code %d", code)
	}
	return res, ""
}

// shellOutputRaw is the fast path of codexToolOutput: it reads the shell
// output straight out of the string literal's body b, decoding the two
// levels of escaping (JSON text inside a JSON string) in one pass. It
// reports ok = false for anything but the exact shape Codex writes, and the
// caller then decodes the ordinary way.
func shellOutputRaw(b []byte) (output string, meta []byte, ok bool) {
	const head, sep = `{\"output\":\"`, `\",\"metadata\":`
	if !bytes.HasPrefix(b, []byte(head)) {
		return "", nil, false
	}
	i := bytes.LastIndex(b, []byte(sep))
	if i < len(head) {
		return "", nil, false
	}
	tail := b[i+len(sep):]
	if bytes.IndexByte(tail, '\\') < 0 || len(tail) > 256 {
		return "", nil, false
	}
	m := rawjson.AppendUnescaped(make([]byte, 0, len(tail)), tail)
	end, err := skipValue(m, 0)
	if err != nil || string(bytes.TrimSpace(m[end:])) != "}" {
		return "", nil, false
	}
	body := b[len(head):i]
	if !utf8.Valid(body) {
		return "", nil, false
	}
	out := make([]byte, 0, len(body))
	for len(body) > 0 {
		k := bytes.IndexByte(body, '\\')
		if k < 0 {
			k = len(body)
		}
		out = append(out, body[:k]...)
		body = body[k:]
		if len(body) == 0 {
			break
		}
		// Level one escapes only a backslash or a quote; a quote here
		// would end the inner string, so only \\ may start an escape.
		if len(body) < 3 || body[1] != '\\' {
			return "", nil, false
		}
		switch c := body[2]; c {
		case 'n':
			out = append(out, '\n')
		case 't':
			out = append(out, '\t')
		case 'r':
			out = append(out, '\r')
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case '/':
			out = append(out, '/')
		case '\\':
			// \\\" is an inner quote, \\\\ an inner backslash.
			if len(body) < 4 || (body[3] != '"' && body[3] != '\\') {
				return "", nil, false
			}
			if body[3] == '\\' {
				out = append(out, '\\')
				body = body[4:]
				continue
			}
			out = append(out, '"')
			body = body[4:]
			continue
		default:
			return "", nil, false // \\u and anything unusual: the slow path
		}
		body = body[3:]
	}
	return unsafe.String(unsafe.SliceData(out), len(out)), m[:end], true
}

// shellOutput splits {"output":"…","metadata":{…}} into the output string
// literal and the metadata object. Codex writes exactly this shape, so the
// metadata is found from the end instead of scanning the output again;
// anything else goes through the general scanner.
func shellOutput(b []byte) (inner, meta []byte, ok bool) {
	const head, sep = `{"output":"`, `","metadata":`
	if bytes.HasPrefix(b, []byte(head)) && bytes.HasSuffix(b, []byte("}")) {
		if i := bytes.LastIndex(b, []byte(sep)); i >= len(head)-1 {
			k := i - 1
			for k >= 0 && b[k] == '\\' {
				k--
			}
			if (i-1-k)%2 == 0 { // the quote at i is not escaped
				m := b[i+len(sep):]
				if end, err := skipValue(m, 0); err == nil && len(bytes.TrimSpace(m[end:])) == 1 {
					return b[len(head)-1 : i+1], m[:end], true
				}
			}
		}
	}
	other := false
	err := eachField(b, func(k, val []byte) {
		switch string(k) {
		case "output":
			inner = val
		case "metadata":
			meta = val
		default:
			other = true
		}
	})
	if err != nil || other || inner == nil || meta == nil || inner[0] != '"' {
		return nil, nil, false
	}
	return inner, meta, true
}
