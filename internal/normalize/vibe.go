package normalize

import (
	"strings"
	"time"

	"github.com/reelhq/reel/internal/rawjson"
)

// vibe reads Mistral Vibe's programmatic output: `vibe --prompt … --output
// streaming` prints each message of the agent loop as one JSON line, the
// way vibe's LLMMessage serializes ({role, content, reasoning_content,
// tool_calls, name, tool_call_id, message_id, injected, …}); `--output
// json` prints the same messages as one JSON array at the end, and a saved
// session's messages.jsonl holds them one per line too. The stream carries
// no token counts, model name or timestamps.
type vibe struct{ st *state }

func newVibe(p *Parser) {
	v := &vibe{st: p.st}
	p.st.res.Agent.Provider = "mistral_vibe"
	p.line = v.line
}

// Tags vibe wraps around a failed or cancelled tool call's answer.
const (
	vibeToolError    = "tool_error"
	vibeCancellation = "user_cancellation"
)

// vibeMessage is the fields of a saved message.
type vibeMessage struct {
	Role, Name, ToolCallID, SessionID    string
	Content, ReasoningContent, ToolCalls []byte
}

var vibeMessageFields = rawjson.NewBinder[vibeMessage]()

func (v *vibe) line(b []byte) error {
	var m vibeMessage
	if _, err := vibeMessageFields.Bind(b, &m); err != nil {
		return err
	}
	content := vibeContent(m.Content)
	s := v.st
	if m.SessionID != "" {
		s.res.Agent.SessionID = m.SessionID
	}
	var ts time.Time
	switch m.Role {
	case "system":
		// vibe's own system prompt (tool descriptions, project context):
		// the agent's configuration rather than a turn of the exchange.
		s.skip("system message")
	case "user":
		s.user([]string{content}, ts, true)
	case "assistant":
		s.flush()
		if reasoning := vibeContent(m.ReasoningContent); reasoning != "" {
			s.thinking(reasoning, ts)
		}
		s.text(content, ts)
		_ = rawjson.EachElem(m.ToolCalls, func(c []byte) {
			fn := field(c, "function")
			s.toolUse(rawjson.Str(field(c, "id")), rawjson.Str(field(fn, "name")), jsonText(rawjson.Str(field(fn, "arguments"))), ts)
		})
		s.res.Agent.Turns++
		s.flush()
	case "tool":
		s.flush()
		out, errMsg := vibeToolAnswer(content)
		if out == nil {
			s.result(m.ToolCallID, m.Name, nil, errMsg, ts)
		} else {
			s.result(m.ToolCallID, m.Name, *out, errMsg, ts)
		}
	default:
		s.skip(SkipUnknownEvent)
	}
	return nil
}

// vibeContent reads a message's content: a string, or (older saves) a list
// of {type, text} parts joined by newlines, as vibe itself joins them.
func vibeContent(v []byte) string {
	if len(v) > 0 && v[0] == '[' {
		var parts []string
		_ = rawjson.EachElem(v, func(e []byte) {
			if t := rawjson.Str(field(e, "text")); t != "" {
				parts = append(parts, t)
			}
		})
		return strings.Join(parts, "\n")
	}
	return rawjson.Str(v)
}

// vibeToolAnswer splits a tool message into its output or, when vibe
// wrapped it in <tool_error> or <user_cancellation>, the error text.
func vibeToolAnswer(content string) (*string, string) {
	t := strings.TrimSpace(content)
	for _, tag := range []string{vibeToolError, vibeCancellation} {
		open, end := "<"+tag+">", "</"+tag+">"
		if strings.HasPrefix(t, open) {
			msg := strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(t, open), end))
			if msg == "" {
				msg = tag
			}
			if tag == vibeCancellation {
				msg = "cancelled: " + msg
			}
			return nil, msg
		}
	}
	return &content, ""
}
