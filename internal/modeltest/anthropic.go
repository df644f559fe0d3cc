package modeltest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// anthropicAPI is Anthropic's Messages API (Claude Code, opencode's
// anthropic provider): SSE with message_start, content blocks and
// message_delta, or one JSON message when stream is false.
type anthropicAPI struct{}

func (anthropicAPI) decode(req *Request) error {
	var body struct {
		Model    string          `json:"model"`
		System   json.RawMessage `json:"system"`
		Stream   bool            `json:"stream"`
		Tools    []struct{ Name string }
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(req.Body, &body); err != nil {
		return fmt.Errorf("messages request: %w", err)
	}
	req.Model, req.System, req.Stream = body.Model, textOf(body.System), body.Stream
	for _, t := range body.Tools {
		req.Tools = append(req.Tools, t.Name)
	}
	for _, m := range body.Messages {
		msg := Message{Role: m.Role}
		var blocks []struct {
			Type      string          `json:"type"`
			Text      string          `json:"text"`
			ID        string          `json:"id"`
			Name      string          `json:"name"`
			Input     json.RawMessage `json:"input"`
			ToolUseID string          `json:"tool_use_id"`
			Content   json.RawMessage `json:"content"`
			IsError   bool            `json:"is_error"`
		}
		if json.Unmarshal(m.Content, &blocks) != nil {
			msg.Text = textOf(m.Content)
			req.Messages = append(req.Messages, msg)
			continue
		}
		var texts []string
		for _, b := range blocks {
			switch b.Type {
			case "text":
				texts = append(texts, b.Text)
			case "tool_use":
				msg.ToolCalls = append(msg.ToolCalls, ToolCall{ID: b.ID, Name: b.Name, Input: b.Input})
			case "tool_result":
				msg.ToolResults = append(msg.ToolResults, ToolResult{CallID: b.ToolUseID, Output: textOf(b.Content), IsError: b.IsError})
			}
		}
		msg.Text = strings.Join(texts, "\n")
		req.Messages = append(req.Messages, msg)
	}
	return nil
}

func (anthropicAPI) write(w http.ResponseWriter, req *Request, r Reply) {
	stop := "end_turn"
	if len(r.ToolCalls) > 0 {
		stop = "tool_use"
	}
	type block = map[string]any
	var content []block
	if r.Text != "" {
		content = append(content, block{"type": "text", "text": r.Text})
	}
	for _, c := range r.ToolCalls {
		content = append(content, block{"type": "tool_use", "id": c.ID, "name": c.Name, "input": inputObject(c.Input)})
	}
	usage := map[string]any{
		"input_tokens": r.Usage.InputTokens, "output_tokens": r.Usage.OutputTokens,
		"cache_read_input_tokens": r.Usage.CacheReadTokens, "cache_creation_input_tokens": 0,
	}
	id := fmt.Sprintf("msg_scripted_%d", req.Turn+1)
	if !req.Stream {
		writeJSON(w, map[string]any{
			"id": id, "type": "message", "role": "assistant", "model": req.Model,
			"content": content, "stop_reason": stop, "stop_sequence": nil, "usage": usage,
		})
		return
	}
	s := newSSE(w)
	s.event("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": id, "type": "message", "role": "assistant", "model": req.Model, "content": []any{},
		"stop_reason": nil, "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": r.Usage.InputTokens, "output_tokens": 1,
			"cache_read_input_tokens": r.Usage.CacheReadTokens, "cache_creation_input_tokens": 0},
	}})
	for i, b := range content {
		start := block{"type": b["type"]}
		var delta block
		switch b["type"] {
		case "text":
			start["text"] = ""
			delta = block{"type": "text_delta", "text": b["text"]}
		case "tool_use":
			start["id"], start["name"], start["input"] = b["id"], b["name"], block{}
			delta = block{"type": "input_json_delta", "partial_json": string(b["input"].(json.RawMessage))}
		}
		s.event("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": start})
		s.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": delta})
		s.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
	}
	s.event("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": usage})
	s.event("message_stop", map[string]any{"type": "message_stop"})
}
