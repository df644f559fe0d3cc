package normalize

import (
	"bytes"

	"github.com/reelhq/reel/internal/rawjson"
)

// Detect sniffs the first kilobytes of a recording and names its format.
// It reads whole lines where it can and falls back to substring checks for
// a line cut by the end of head.
func Detect(head []byte) (Format, bool) {
	lines := bytes.Split(head, []byte("\n"))
	seen := 0
	for _, line := range lines {
		t := bytes.TrimSpace(line)
		if len(t) == 0 || t[0] == '#' {
			continue
		}
		if bytes.HasPrefix(t, []byte("event:")) || t[0] == ':' {
			continue
		}
		if bytes.HasPrefix(t, []byte("data:")) {
			t = bytes.TrimSpace(t[len("data:"):])
			if len(t) == 0 {
				continue
			}
		}
		if string(t) == "{" || string(t) == "[" {
			return detectDocument(head)
		}
		if t[0] != '{' {
			continue // noise line (Copilot prints some)
		}
		if f, ok := detectLine(t); ok {
			return f, true
		}
		seen++
		if seen >= 20 {
			break
		}
	}
	return "", false
}

func detectLine(t []byte) (Format, bool) {
	var typ, subtype, object string
	keys := map[string]bool{}
	_ = eachField(t, func(k, val []byte) {
		keys[string(k)] = true
		switch string(k) {
		case "type":
			typ = rawjson.Str(val)
		case "subtype":
			subtype = rawjson.Str(val)
		case "object":
			object = rawjson.Str(val)
		}
	})
	switch {
	case object == "chat.completion.chunk" || object == "chat.completion":
		return OpenAIChatStream, true
	case typ == "message_start" || typ == "content_block_start" || typ == "content_block_delta" || typ == "message_delta":
		return AnthropicSSE, true
	case typ == "session_meta" || typ == "response_item" || typ == "event_msg" || typ == "turn_context":
		return CodexRollout, true
	case typ == "thread.started" || typ == "turn.started" || typ == "turn.completed" || typ == "turn.failed" ||
		bytes.HasPrefix([]byte(typ), []byte("item.")):
		return CodexExecJSON, true
	case typ == "" && keys["msg"] && keys["id"]:
		return CodexExecJSON, true
	case bytes.HasPrefix([]byte(typ), []byte("assistant.")) || bytes.HasPrefix([]byte(typ), []byte("session.")) ||
		bytes.HasPrefix([]byte(typ), []byte("tool.execution")) || typ == "user.message":
		return CopilotJSON, true
	case typ == "file-history-snapshot" || typ == "summary" || keys["parentUuid"] || keys["isSidechain"] || keys["sessionId"] && (typ == "user" || typ == "assistant"):
		return ClaudeSessionLog, true
	case typ == "system" && subtype != "" || keys["parent_tool_use_id"] || typ == "result" && keys["total_cost_usd"] || typ == "rate_limit_event" || typ == "stream_event":
		return ClaudeStreamJSON, true
	case typ == "" && keys["role"] && (keys["message_id"] || keys["tool_call_id"] || keys["tool_calls"] || keys["reasoning_content"] || keys["injected"]):
		return VibeStreaming, true
	case keys["sessionID"] && keys["part"] || typ == "step_start" || typ == "step_finish" || typ == "done" && keys["rejected"]:
		return OpencodeJSON, true
	case typ == "init" && keys["session_id"] || typ == "tool_use" && keys["tool_id"] || typ == "tool_result" && keys["tool_id"] ||
		typ == "message" && keys["role"] || typ == "result" && keys["stats"]:
		return GeminiStreamJSON, true
	case typ == "user" || typ == "assistant":
		return ClaudeStreamJSON, true
	}
	// A line cut by the end of head: look for telltale substrings.
	compact := squeeze(t)
	for _, c := range []struct {
		sub string
		f   Format
	}{
		{`"object":"chat.completion`, OpenAIChatStream},
		{`"type":"message_start"`, AnthropicSSE},
		{`"type":"session_meta"`, CodexRollout},
		{`"type":"response_item"`, CodexRollout},
		{`"type":"thread.started"`, CodexExecJSON},
		{`"parentUuid"`, ClaudeSessionLog},
		{`"type":"system","subtype":"init"`, ClaudeStreamJSON},
		{`{"role":"system","content":`, VibeStreaming},
		{`"type":"step_start","timestamp":`, OpencodeJSON},
	} {
		if bytes.Contains(compact, []byte(c.sub)) {
			return c.f, true
		}
	}
	return "", false
}

func detectDocument(head []byte) (Format, bool) {
	c := squeeze(head)
	switch {
	case bytes.Contains(c, []byte(`"object":"chat.completion`)):
		return OpenAIChatStream, true
	case bytes.HasPrefix(c, []byte(`[{"role":`)):
		return VibeStreaming, true // vibe --output json: the messages as one array
	case bytes.Contains(c, []byte(`"type":"gemini"`)) || bytes.Contains(c, []byte(`"projectHash"`)) ||
		bytes.Contains(c, []byte(`"toolCalls"`)) || bytes.Contains(c, []byte(`"messages":[`)):
		return GeminiSession, true
	}
	return "", false
}

// squeeze drops whitespace outside strings so pretty-printed JSON can be
// matched against compact patterns.
func squeeze(b []byte) []byte {
	out := make([]byte, 0, len(b))
	in, esc := false, false
	for _, c := range b {
		if in {
			out = append(out, c)
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				in = false
			}
			continue
		}
		if c == ' ' || c == '\t' || c == '\n' || c == '\r' {
			continue
		}
		if c == '"' {
			in = true
		}
		out = append(out, c)
	}
	return out
}
