package modeltest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// geminiAPI is Gemini's generateContent and streamGenerateContent
// (gemini-cli): a stream is SSE (alt=sse), one GenerateContentResponse per
// event.
type geminiAPI struct{}

type geminiPart struct {
	Text         string `json:"text"`
	Thought      bool   `json:"thought"`
	FunctionCall *struct {
		ID   string          `json:"id"`
		Name string          `json:"name"`
		Args json.RawMessage `json:"args"`
	} `json:"functionCall"`
	FunctionResponse *struct {
		ID       string          `json:"id"`
		Name     string          `json:"name"`
		Response json.RawMessage `json:"response"`
	} `json:"functionResponse"`
}

type geminiContent struct {
	Role  string       `json:"role"`
	Parts []geminiPart `json:"parts"`
}

func (geminiAPI) decode(req *Request) error {
	var body struct {
		Contents          []geminiContent `json:"contents"`
		SystemInstruction *geminiContent  `json:"systemInstruction"`
		SystemSnake       *geminiContent  `json:"system_instruction"`
		Tools             []struct {
			FunctionDeclarations []struct {
				Name string `json:"name"`
			} `json:"functionDeclarations"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(req.Body, &body); err != nil {
		return fmt.Errorf("generateContent request: %w", err)
	}
	for _, sys := range []*geminiContent{body.SystemInstruction, body.SystemSnake} {
		if sys != nil {
			req.System = partsText(sys.Parts)
		}
	}
	for _, t := range body.Tools {
		for _, f := range t.FunctionDeclarations {
			req.Tools = append(req.Tools, f.Name)
		}
	}
	for _, c := range body.Contents {
		role := c.Role
		if role == "model" {
			role = "assistant"
		}
		msg := Message{Role: role, Text: partsText(c.Parts)}
		for _, p := range c.Parts {
			if f := p.FunctionCall; f != nil {
				msg.ToolCalls = append(msg.ToolCalls, ToolCall{ID: f.ID, Name: f.Name, Input: f.Args})
			}
			if f := p.FunctionResponse; f != nil {
				r := ToolResult{CallID: f.ID, Name: f.Name}
				var o struct {
					Output json.RawMessage `json:"output"`
					Error  json.RawMessage `json:"error"`
				}
				json.Unmarshal(f.Response, &o)
				switch {
				case len(o.Error) > 0:
					r.Output, r.IsError = textOrJSON(o.Error), true
				case len(o.Output) > 0:
					r.Output = textOrJSON(o.Output)
				default:
					r.Output = string(f.Response)
				}
				msg.ToolResults = append(msg.ToolResults, r)
			}
		}
		req.Messages = append(req.Messages, msg)
	}
	return nil
}

func partsText(parts []geminiPart) string {
	var t []string
	for _, p := range parts {
		if p.Text != "" && !p.Thought {
			t = append(t, p.Text)
		}
	}
	return strings.Join(t, "\n")
}

func textOrJSON(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

func (geminiAPI) write(w http.ResponseWriter, req *Request, r Reply) {
	var parts []map[string]any
	if r.Text != "" {
		parts = append(parts, map[string]any{"text": r.Text})
	}
	for _, c := range r.ToolCalls {
		parts = append(parts, map[string]any{"functionCall": map[string]any{"id": c.ID, "name": c.Name, "args": inputObject(c.Input)}})
	}
	resp := map[string]any{
		"candidates": []any{map[string]any{
			"content": map[string]any{"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0,
		}},
		"usageMetadata": map[string]any{
			"promptTokenCount": r.Usage.InputTokens, "candidatesTokenCount": r.Usage.OutputTokens,
			"cachedContentTokenCount": r.Usage.CacheReadTokens,
			"totalTokenCount":         r.Usage.InputTokens + r.Usage.OutputTokens,
		},
		"modelVersion": req.Model,
		"responseId":   fmt.Sprintf("scripted-%d", req.Turn+1),
	}
	if !req.Stream {
		writeJSON(w, resp)
		return
	}
	newSSE(w).event("", resp)
}
