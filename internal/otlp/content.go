package otlp

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode/utf8"

	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"

	"github.com/reelhq/reel/transcript"
)

// text makes s valid UTF-8 the way the transcript encoder does (each
// invalid byte becomes U+FFFD): OTLP strings must be valid UTF-8, and a
// live event must give the attribute its copy read back from the file
// gives.
func text(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			b.WriteString("\uFFFD")
		} else {
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// canonical decodes a free-form payload value (a Go value from a live
// event, or json.RawMessage read from a file) into plain JSON values, so
// both render to the same text.
func canonical(v any) (any, bool) {
	var raw []byte
	switch x := v.(type) {
	case nil:
		return nil, false
	case string:
		return text(x), true
	case []byte:
		return text(string(x)), true
	case json.RawMessage:
		raw = x
	default:
		b, err := json.Marshal(v)
		if err != nil {
			return nil, false
		}
		raw = b
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var out any
	if err := dec.Decode(&out); err != nil || out == nil {
		return nil, false
	}
	if s, ok := out.(string); ok {
		return text(s), true
	}
	return out, true
}

// valueText is a payload value as an attribute: a string as itself,
// anything else as compact JSON with sorted keys; "" for nothing.
func valueText(v any) string {
	c, ok := canonical(v)
	if !ok {
		return ""
	}
	if s, ok := c.(string); ok {
		return s
	}
	return string(encodeJSON(c))
}

// encodeJSON writes v compactly without HTML escaping.
func encodeJSON(v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil
	}
	return bytes.TrimRight(buf.Bytes(), "\n")
}

// part is one message part of the GenAI conventions' message schemas.
type part struct {
	Type string `json:"type"`
	// Content is required of text and reasoning parts, even when empty.
	Content   *string `json:"content,omitempty"`
	ID        string  `json:"id,omitempty"`
	Name      string  `json:"name,omitempty"`
	Arguments any     `json:"arguments,omitempty"`
	// Response is required of tool_call_response parts, even when null.
	Response *any `json:"response,omitempty"`
}

func textPart(typ, s string) part {
	s = text(s)
	return part{Type: typ, Content: &s}
}

// message is a chat message of gen_ai.input.messages or
// gen_ai.output.messages.
type message struct {
	Role         string `json:"role"`
	Parts        []part `json:"parts"`
	FinishReason string `json:"finish_reason,omitempty"`
}

// appendMessages records an agent step's exchange: the messages up to its
// last user message as gen_ai.input.messages (the history of the last
// turn), the assistant messages after it as gen_ai.output.messages, and
// the system prompt reel composed (the second router block of the first
// user message, docs/decisions.md §5) as gen_ai.system_instructions.
func appendMessages(a []attribute.KeyValue, msgs []*transcript.MessagePayload) []attribute.KeyValue {
	lastUser := -1
	for i, m := range msgs {
		if m.Role == "user" {
			lastUser = i
		}
	}
	var system []part
	var in, out []message
	for i, m := range msgs {
		blocks := m.Blocks
		if i == 0 && m.Role == "user" && len(blocks) == 2 && isRouterText(blocks[0]) && isRouterText(blocks[1]) {
			system = []part{textPart("text", blocks[1].Text)}
			blocks = blocks[:1]
		}
		msg := message{Role: text(m.Role), Parts: parts(blocks)}
		if i <= lastUser {
			in = append(in, msg)
			continue
		}
		msg.FinishReason = "stop"
		for _, p := range msg.Parts {
			if p.Type == "tool_call" {
				// The model stopped to have a tool run.
				msg.FinishReason = "tool_call"
			}
		}
		out = append(out, msg)
	}
	if len(system) > 0 {
		a = append(a, semconv.GenAISystemInstructionsKey.String(string(encodeJSON(system))))
	}
	if len(in) > 0 {
		a = append(a, semconv.GenAIInputMessagesKey.String(string(encodeJSON(in))))
	}
	if len(out) > 0 {
		a = append(a, semconv.GenAIOutputMessagesKey.String(string(encodeJSON(out))))
	}
	return a
}

func isRouterText(b transcript.ContentBlock) bool {
	return b.Type == transcript.BlockText && b.Fidelity == transcript.FidelityRouter
}

// parts maps transcript blocks to message parts: text and thinking
// (reasoning) as content, tool_use as tool_call, tool_result as
// tool_call_response, a command the agent ran and a raw stream chunk as
// parts of their own type.
func parts(blocks []transcript.ContentBlock) []part {
	out := make([]part, 0, len(blocks))
	for _, b := range blocks {
		switch b.Type {
		case transcript.BlockText:
			out = append(out, textPart("text", b.Text))
		case transcript.BlockThinking:
			out = append(out, textPart("reasoning", b.Thinking))
		case transcript.BlockToolUse:
			args, _ := canonical(b.ToolInput)
			out = append(out, part{Type: "tool_call", ID: text(b.ToolID), Name: text(b.ToolName), Arguments: args})
		case transcript.BlockToolResult:
			res, _ := canonical(b.ToolContent)
			out = append(out, part{Type: "tool_call_response", ID: text(b.ToolID), Response: &res})
		case transcript.BlockCommand:
			out = append(out, textPart("command", b.Command))
		case transcript.BlockStream:
			out = append(out, textPart("stream", b.Chunk))
		default:
			out = append(out, part{Type: text(string(b.Type))})
		}
	}
	return out
}
