package modeltest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// responsesAPI is OpenAI's Responses API (codex): SSE with
// response.created, output items and response.completed.
type responsesAPI struct{}

func (responsesAPI) decode(req *Request) error {
	var body struct {
		Model        string `json:"model"`
		Instructions string `json:"instructions"`
		Stream       bool   `json:"stream"`
		Tools        []struct {
			Type string `json:"type"`
			Name string `json:"name"`
			// Tools are a namespace's own (codex offers an MCP server's
			// tools as namespace mcp__<server>).
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
		} `json:"tools"`
		Input json.RawMessage `json:"input"`
	}
	if err := json.Unmarshal(req.Body, &body); err != nil {
		return fmt.Errorf("responses request: %w", err)
	}
	req.Model, req.System, req.Stream = body.Model, body.Instructions, body.Stream
	req.toolKinds = map[string]string{}
	for _, t := range body.Tools {
		name := t.Name
		if name == "" {
			name = t.Type // local_shell, web_search: typed tools without a name
		}
		req.Tools = append(req.Tools, name)
		req.toolKinds[name] = t.Type
		for _, c := range t.Tools {
			// A namespaced tool is scripted by its qualified name,
			// <namespace>__<tool>, as the client reports it.
			q := name + "__" + c.Name
			req.Tools = append(req.Tools, q)
			if req.namespaced == nil {
				req.namespaced = map[string][2]string{}
			}
			req.namespaced[q] = [2]string{name, c.Name}
		}
	}
	var s string
	if json.Unmarshal(body.Input, &s) == nil {
		req.Messages = append(req.Messages, Message{Role: "user", Text: s})
		return nil
	}
	var items []struct {
		Type      string          `json:"type"`
		Role      string          `json:"role"`
		Content   json.RawMessage `json:"content"`
		CallID    string          `json:"call_id"`
		Name      string          `json:"name"`
		Arguments string          `json:"arguments"`
		Input     string          `json:"input"`
		Output    json.RawMessage `json:"output"`
	}
	if err := json.Unmarshal(body.Input, &items); err != nil {
		return fmt.Errorf("responses request input: %w", err)
	}
	for _, it := range items {
		switch it.Type {
		case "message", "":
			req.Messages = append(req.Messages, Message{Role: it.Role, Text: textOf(it.Content)})
		case "function_call":
			req.Messages = append(req.Messages, Message{Role: "assistant",
				ToolCalls: []ToolCall{{ID: it.CallID, Name: it.Name, Input: json.RawMessage(orEmptyObject(it.Arguments))}}})
		case "custom_tool_call":
			req.Messages = append(req.Messages, Message{Role: "assistant",
				ToolCalls: []ToolCall{{ID: it.CallID, Name: it.Name, Input: it.Input}}})
		case "function_call_output", "custom_tool_call_output":
			out := textOf(it.Output)
			if out == "" {
				// codex sends {"content": …, "success": …} objects in
				// some versions.
				var o struct {
					Content json.RawMessage `json:"content"`
				}
				if json.Unmarshal(it.Output, &o) == nil {
					out = textOf(o.Content)
				}
			}
			req.Messages = append(req.Messages, Message{Role: "tool",
				ToolResults: []ToolResult{{CallID: it.CallID, Output: out}}})
		}
	}
	return nil
}

func orEmptyObject(s string) string {
	if strings.TrimSpace(s) == "" {
		return "{}"
	}
	return s
}

func (responsesAPI) write(w http.ResponseWriter, req *Request, r Reply) {
	respID := fmt.Sprintf("resp_scripted_%d", req.Turn+1)
	var items []map[string]any
	if r.Text != "" {
		items = append(items, map[string]any{
			"type": "message", "id": fmt.Sprintf("msg_scripted_%d", req.Turn+1), "role": "assistant", "status": "completed",
			"content": []any{map[string]any{"type": "output_text", "text": r.Text, "annotations": []any{}}},
		})
	}
	for i, c := range r.ToolCalls {
		item := map[string]any{"id": fmt.Sprintf("fc_scripted_%d_%d", req.Turn+1, i), "call_id": c.ID, "name": c.Name, "status": "completed"}
		if ns, ok := req.namespaced[c.Name]; ok {
			item["namespace"], item["name"] = ns[0], ns[1]
		}
		if req.toolKinds[c.Name] == "custom" {
			item["type"], item["input"] = "custom_tool_call", inputJSON(c.Input)
		} else {
			item["type"], item["arguments"] = "function_call", inputJSON(c.Input)
		}
		items = append(items, item)
	}
	usage := map[string]any{
		"input_tokens": r.Usage.InputTokens, "input_tokens_details": map[string]any{"cached_tokens": r.Usage.CacheReadTokens},
		"output_tokens": r.Usage.OutputTokens, "output_tokens_details": map[string]any{"reasoning_tokens": 0},
		"total_tokens": r.Usage.InputTokens + r.Usage.OutputTokens,
	}
	resp := func(status string, output []map[string]any, usage any) map[string]any {
		return map[string]any{"id": respID, "object": "response", "created_at": time.Now().Unix(),
			"status": status, "model": req.Model, "output": output, "usage": usage}
	}
	if !req.Stream {
		writeJSON(w, resp("completed", items, usage))
		return
	}
	s := newSSE(w)
	s.event("response.created", map[string]any{"type": "response.created", "response": resp("in_progress", []map[string]any{}, nil)})
	for i, it := range items {
		s.event("response.output_item.added", map[string]any{"type": "response.output_item.added", "output_index": i, "item": it})
		if it["type"] == "message" {
			s.event("response.output_text.delta", map[string]any{"type": "response.output_text.delta",
				"item_id": it["id"], "output_index": i, "content_index": 0, "delta": r.Text})
		}
		s.event("response.output_item.done", map[string]any{"type": "response.output_item.done", "output_index": i, "item": it})
	}
	s.event("response.completed", map[string]any{"type": "response.completed", "response": resp("completed", items, usage)})
}

// chatAPI is OpenAI's Chat Completions API: SSE chunks ending in
// data: [DONE], or one chat.completion when stream is false.
type chatAPI struct{}

func (chatAPI) decode(req *Request) error {
	var body struct {
		Model    string `json:"model"`
		Stream   bool   `json:"stream"`
		Messages []struct {
			Role       string          `json:"role"`
			Content    json.RawMessage `json:"content"`
			ToolCallID string          `json:"tool_call_id"`
			Name       string          `json:"name"`
			ToolCalls  []struct {
				ID       string `json:"id"`
				Type     string `json:"type"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
				Custom struct {
					Name  string `json:"name"`
					Input string `json:"input"`
				} `json:"custom"`
			} `json:"tool_calls"`
		} `json:"messages"`
		Tools []struct {
			Type     string `json:"type"`
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
			Custom struct {
				Name string `json:"name"`
			} `json:"custom"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(req.Body, &body); err != nil {
		return fmt.Errorf("chat completions request: %w", err)
	}
	req.Model, req.Stream = body.Model, body.Stream
	req.toolKinds = map[string]string{}
	for _, t := range body.Tools {
		name := t.Function.Name
		if t.Type == "custom" {
			name = t.Custom.Name
		}
		req.Tools = append(req.Tools, name)
		req.toolKinds[name] = t.Type
	}
	var system []string
	for _, m := range body.Messages {
		switch m.Role {
		case "system", "developer":
			system = append(system, textOf(m.Content))
		case "tool":
			req.Messages = append(req.Messages, Message{Role: "tool",
				ToolResults: []ToolResult{{CallID: m.ToolCallID, Name: m.Name, Output: textOf(m.Content)}}})
		default:
			msg := Message{Role: m.Role, Text: textOf(m.Content)}
			for _, c := range m.ToolCalls {
				if c.Type == "custom" {
					msg.ToolCalls = append(msg.ToolCalls, ToolCall{ID: c.ID, Name: c.Custom.Name, Input: c.Custom.Input})
					continue
				}
				msg.ToolCalls = append(msg.ToolCalls, ToolCall{ID: c.ID, Name: c.Function.Name, Input: json.RawMessage(orEmptyObject(c.Function.Arguments))})
			}
			req.Messages = append(req.Messages, msg)
		}
	}
	req.System = strings.Join(system, "\n")
	return nil
}

func (chatAPI) write(w http.ResponseWriter, req *Request, r Reply) {
	id := fmt.Sprintf("chatcmpl-scripted-%d", req.Turn+1)
	finish := "stop"
	if len(r.ToolCalls) > 0 {
		finish = "tool_calls"
	}
	var calls []map[string]any
	for i, c := range r.ToolCalls {
		if req.toolKinds[c.Name] == "custom" {
			calls = append(calls, map[string]any{"index": i, "id": c.ID, "type": "custom",
				"custom": map[string]any{"name": c.Name, "input": inputJSON(c.Input)}})
			continue
		}
		calls = append(calls, map[string]any{"index": i, "id": c.ID, "type": "function",
			"function": map[string]any{"name": c.Name, "arguments": inputJSON(c.Input)}})
	}
	usage := map[string]any{"prompt_tokens": r.Usage.InputTokens, "completion_tokens": r.Usage.OutputTokens,
		"total_tokens":          r.Usage.InputTokens + r.Usage.OutputTokens,
		"prompt_tokens_details": map[string]any{"cached_tokens": r.Usage.CacheReadTokens}}
	chunk := func(choices []any, usage any) map[string]any {
		c := map[string]any{"id": id, "object": "chat.completion.chunk", "created": time.Now().Unix(), "model": req.Model, "choices": choices}
		if usage != nil {
			c["usage"] = usage
		}
		return c
	}
	if !req.Stream {
		msg := map[string]any{"role": "assistant", "content": r.Text}
		if len(calls) > 0 {
			msg["tool_calls"] = calls
		}
		writeJSON(w, map[string]any{"id": id, "object": "chat.completion", "created": time.Now().Unix(), "model": req.Model,
			"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}}, "usage": usage})
		return
	}
	s := newSSE(w)
	s.event("", chunk([]any{map[string]any{"index": 0, "delta": map[string]any{"role": "assistant", "content": ""}, "finish_reason": nil}}, nil))
	if r.Text != "" {
		s.event("", chunk([]any{map[string]any{"index": 0, "delta": map[string]any{"content": r.Text}, "finish_reason": nil}}, nil))
	}
	if len(calls) > 0 {
		s.event("", chunk([]any{map[string]any{"index": 0, "delta": map[string]any{"tool_calls": calls}, "finish_reason": nil}}, nil))
	}
	s.event("", chunk([]any{map[string]any{"index": 0, "delta": map[string]any{}, "finish_reason": finish}}, nil))
	s.event("", chunk([]any{}, usage))
	s.raw("data: [DONE]\n\n")
}
