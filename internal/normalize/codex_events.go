package normalize

import (
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
	pending []func()
	// drop: the file has response items, so the duplicate texts are not
	// even decoded.
	drop bool
	// tokens adds up the session's running totals across restarts.
	tokens runningTotal
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
		// Reported totals are the session's running total, which starts
		// again from zero when Codex starts a new conversation in the
		// file (usage.go).
		if !flatUsage {
			tot := field(info, "total_token_usage")
			if tot == nil {
				break
			}
			u = codexUsage(tot)
		}
		if u.TotalTokens == 0 {
			u.TotalTokens = u.InputTokens + u.OutputTokens
		}
		e.tokens.report(u)
		s.setUsage(e.tokens.total())
	case "agent_message":
		later(func() { s.text(message, ts) })
	case "agent_reasoning", "agent_reasoning_raw_content":
		later(func() { s.thinking(text, ts) })
	case "user_message":
		later(func() {
			if s.res.Prompt == "" {
				s.res.Prompt = codexRequest(message)
			}
			s.user([]string{message}, ts, true)
		})
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
