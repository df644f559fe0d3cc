package normalize

import (
	"cmp"
	"fmt"
	"strings"
	"time"

	"github.com/reelhq/reel/internal/rawjson"
	"github.com/reelhq/reel/transcript"
)

// codexEvents handles the event payloads shared by a rollout's event_msg
// lines and the older exec {id, msg} envelope.
type codexEvents struct {
	st *state
	// direct: the events are the only record (old exec output). Otherwise
	// (rollouts) they duplicate response items and only stand in when the
	// file has none.
	direct  bool
	pending []pendingEvent
	// drop: the file has response items, so the duplicate texts are not
	// even decoded.
	drop bool
	// itemUser and eventUser pair a user turn's two records: the text of
	// the last response_item user message no user_message event has
	// matched yet, and of the last user_message event emitted because no
	// response item had it. Codex writes the item and then the event; a
	// rollout whose user turns are only events (the IDE extension's, in
	// some versions) still has its turns.
	itemUser, eventUser string
	// tokens adds up the session's running totals across restarts.
	tokens runningTotal
}

// event handles one event payload and returns the length of its object; it
// does nothing when the object is malformed.
func (e *codexEvents) event(v []byte, ts time.Time) (int, error) {
	ev, end, err := parseCodexObject(v)
	if err != nil {
		return 0, err
	}
	s := e.st
	switch ev.Type {
	case "user_message":
		if e.drop {
			e.userEvent(rawjson.Str(ev.Message), ts)
		} else {
			e.conversation(&ev, ts)
		}
	case "agent_message", "agent_reasoning", "agent_reasoning_raw_content":
		if !e.drop {
			e.conversation(&ev, ts)
		}
	case "exec_command_begin", "exec_command_end", "mcp_tool_call_begin", "mcp_tool_call_end",
		"patch_apply_begin", "patch_apply_end":
		if e.direct {
			e.tool(&ev, ts)
		} else if ev.Type == "exec_command_end" {
			// the response items record the call; the event, written when
			// the command ended, says how long it ran
			s.ran(ev.CallID, ts, rustDuration(field(v, "duration")))
		}
	case "token_count":
		e.tokenCount(v, &ev)
	case "task_started":
		if e.direct {
			s.res.Agent.Turns++
		}
	case "task_complete":
		s.flush()
		if m := rawjson.Str(ev.LastAgentMessage); e.direct && m != "" {
			s.finalText = m
		}
	case "error", "stream_error":
		s.fail(cmp.Or(rawjson.Str(ev.Message), errMessage(ev.Error)))
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

// conversation handles the events that repeat the conversation's texts:
// at once when they are the only record, else held until the file shows
// it has no response items (finish).
func (e *codexEvents) conversation(ev *codexObject, ts time.Time) {
	s := e.st
	var f func()
	switch ev.Type {
	case "agent_message":
		message := rawjson.Str(ev.Message)
		f = func() { s.text(message, ts) }
	case "agent_reasoning", "agent_reasoning_raw_content":
		text := rawjson.Str(ev.Text)
		f = func() { s.thinking(text, ts) }
	case "user_message":
		message := rawjson.Str(ev.Message)
		if !e.direct {
			e.pending = append(e.pending, pendingEvent{user: message, ts: ts})
			return
		}
		f = func() {
			if s.res.Prompt == "" {
				s.res.Prompt = codexRequest(message)
			}
			s.user([]string{message}, ts, true)
		}
	}
	if e.direct {
		f()
	} else {
		e.pending = append(e.pending, pendingEvent{f: f})
	}
}

// pendingEvent is a conversation event of a rollout held until the file
// shows whether response items record it too: a user turn's text, or the
// function that emits an agent text.
type pendingEvent struct {
	f    func()
	user string
	ts   time.Time
}

// replay emits the held events of a rollout that has no response items.
func (e *codexEvents) replay() {
	for _, p := range e.pending {
		if p.f != nil {
			p.f()
		} else {
			e.userEvent(p.user, p.ts)
		}
	}
	e.pending = nil
}

// itemsStart drops the held events when the first response item shows
// the file has them, but for user turns: those no item has recorded
// before are turns only the events hold.
func (e *codexEvents) itemsStart() {
	for _, p := range e.pending {
		if p.f == nil {
			e.userEvent(p.user, p.ts)
		}
	}
	e.pending = nil
	e.drop = true
}

// userEvent emits a user_message event's turn unless the response item
// just before it recorded the same text.
func (e *codexEvents) userEvent(text string, ts time.Time) {
	t := strings.TrimSpace(text)
	if t == "" {
		return
	}
	if t == e.itemUser {
		e.itemUser = ""
		return
	}
	e.eventUser = t
	s := e.st
	prompt := isCodexPrompt(text)
	if prompt && s.res.Prompt == "" {
		s.res.Prompt = codexRequest(text)
	}
	s.user([]string{text}, ts, prompt)
}

// userItem reports whether a response_item user message is new, keeping
// its text to pair with the event that follows it; false when it repeats
// the turn an event already gave.
func (e *codexEvents) userItem(texts []string) bool {
	t := strings.TrimSpace(strings.Join(texts, "\n"))
	if t != "" && t == e.eventUser {
		e.eventUser = ""
		return false
	}
	e.itemUser = t
	return true
}

// tokenCount keeps a token_count report. Reported totals are the session's
// running total, which starts again from zero when Codex starts a new
// conversation in the file (usage.go).
func (e *codexEvents) tokenCount(v []byte, ev *codexObject) {
	var u transcript.Usage
	if ev.InputTokens != nil {
		u = readCodexUsage(v)
	} else {
		tot := field(ev.Info, "total_token_usage")
		if tot == nil {
			return
		}
		u = readCodexUsage(tot)
	}
	if u.TotalTokens == 0 {
		u.TotalTokens = u.InputTokens + u.OutputTokens
	}
	e.tokens.report(u)
	e.st.setUsage(e.tokens.total())
}

// tool handles the begin and end events of commands, MCP calls and
// patches, the old exec stream's only record of its tools.
func (e *codexEvents) tool(ev *codexObject, ts time.Time) {
	s := e.st
	switch ev.Type {
	case "exec_command_begin":
		cmd := argv(ev.Command)
		s.command(cmd, ts)
		s.call(ev.CallID, "shell", map[string]any{"command": cmd}, ts)
	case "exec_command_end":
		s.flush()
		out := ev.AggregatedOutput
		if out == nil {
			out = ev.Stdout
		}
		s.result(ev.CallID, "shell", map[string]any{"output": rawjson.Str(out), "exit_code": raw(ev.ExitCode)}, exitMsg(ev.ExitCode, ""), ts)
	case "mcp_tool_call_begin":
		name := rawjson.Str(field(ev.Invocation, "tool"))
		if srv := rawjson.Str(field(ev.Invocation, "server")); srv != "" {
			name = srv + "." + name
		}
		s.toolUse(ev.CallID, name, raw(field(ev.Invocation, "arguments")), ts)
	case "mcp_tool_call_end":
		s.flush()
		s.result(ev.CallID, "", raw(ev.Result), errMessage(field(ev.Result, "Err")), ts)
	case "patch_apply_begin":
		s.toolUse(ev.CallID, "apply_patch", map[string]any{"changes": raw(ev.Changes)}, ts)
	case "patch_apply_end":
		s.flush()
		errMsg := ""
		if string(ev.Success) == "false" {
			errMsg = "patch failed"
		}
		s.result(ev.CallID, "apply_patch", map[string]any{"stdout": rawjson.Str(ev.Stdout)}, errMsg, ts)
	}
}

// rustDuration reads a duration as Codex writes it, {"secs": 1, "nanos":
// 500000000}; 0 for anything else.
func rustDuration(v []byte) time.Duration {
	secs, nanos := rawjson.Int(field(v, "secs")), rawjson.Int(field(v, "nanos"))
	if secs < 0 || nanos < 0 || secs >= int64(maxRan/time.Second) {
		return 0
	}
	return time.Duration(secs)*time.Second + time.Duration(nanos)
}

// exitMsg is a command's error: its exit code when not zero, else
// otherwise (which may be "").
func exitMsg(exitCode []byte, otherwise string) string {
	if code := rawjson.Int(exitCode); code != 0 {
		return fmt.Sprintf("exit code %d", code)
	}
	return otherwise
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
