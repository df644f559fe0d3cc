package agentlog

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/reelhq/reel/transcript"
)

// The exchange records: requests, responses and tool invocations.

func (im *importer) chatRequest(st *openStep, rec *Record, meta *recordMeta, ts time.Time) error {
	var p chatRequest
	if err := json.Unmarshal(rec.Payload, &p); err != nil {
		return fmt.Errorf("chat_request payload: %w", err)
	}
	if p.Model != "" {
		st.model = p.Model
	}
	added := newMessages(p.Messages)
	// The tool_use blocks of the previous response whose calls the trace
	// did not record: their pairs come now, answered by what this request
	// sends back.
	im.openUses(st, ts)
	im.answerCalls(st, added, ts)
	var blocks []transcript.ContentBlock
	if meta.Reel != nil && len(meta.Reel.Blocks) > 0 {
		blocks, _ = exactBlocks(meta.Reel.Blocks)
	}
	if blocks == nil {
		blocks = requestBlocks(p.Messages, added)
	}
	mp := &transcript.MessagePayload{Role: "user", Blocks: blocks}
	im.emit(ts, transcript.MessageUser, st.key.path, st.key.iteration, mp)
	return im.derive(requestPayload(mp))
}

// newMessages returns the messages a request adds to the conversation: the
// ones after its last assistant message (Shadow records each request whole,
// history included).
func newMessages(msgs []message) []message {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == "assistant" {
			return msgs[i+1:]
		}
	}
	return msgs
}

// requestBlocks renders a request as message.user blocks: the new user
// text as blocks[0] and the system prompt as blocks[1] (docs/decisions.md §5), or,
// for a request that only sends tool results back, those results as
// tool_result blocks.
func requestBlocks(all, added []message) []transcript.ContentBlock {
	var system string
	haveSystem := false
	for _, m := range all {
		if m.Role == "system" && !haveSystem {
			system, haveSystem = contentText(m.Content), true
		}
	}
	var texts []string
	var results []transcript.ContentBlock
	for _, m := range added {
		switch m.Role {
		case "user":
			if t := contentText(m.Content); t != "" {
				texts = append(texts, t)
			}
			for _, r := range toolResultParts(m.Content) {
				results = append(results, transcript.ContentBlock{Type: transcript.BlockToolResult, Fidelity: transcript.FidelityRouter,
					ToolID: r.id, ToolContent: r.output})
			}
		case "tool":
			results = append(results, transcript.ContentBlock{Type: transcript.BlockToolResult, Fidelity: transcript.FidelityRouter,
				ToolID: m.ToolCallID, ToolContent: rawOrNil(m.Content)})
		}
	}
	if len(texts) == 0 && len(results) > 0 {
		return results
	}
	if len(texts) == 0 {
		// Nothing new (a retried request): the last user text.
		for i := len(all) - 1; i >= 0; i-- {
			if all[i].Role == "user" {
				texts = []string{contentText(all[i].Content)}
				break
			}
		}
	}
	blocks := []transcript.ContentBlock{{Type: transcript.BlockText, Fidelity: transcript.FidelityRouter, Text: strings.Join(texts, "\n")}}
	if system != "" {
		blocks = append(blocks, transcript.ContentBlock{Type: transcript.BlockText, Fidelity: transcript.FidelityRouter, Text: system})
	}
	return append(blocks, results...)
}

// contentText flattens a message's content: a string, or a list of parts
// whose text parts are joined.
func contentText(raw json.RawMessage) string {
	if s, ok := jsonString(raw); ok {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		if len(raw) == 0 || string(raw) == "null" {
			return ""
		}
		return string(raw)
	}
	var b strings.Builder
	for _, p := range parts {
		if p.Type == "" || p.Type == "text" {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

type toolAnswer struct {
	id      string
	output  any
	isError bool
}

// toolResultParts reads Anthropic-style tool_result parts of a user
// message's content.
func toolResultParts(raw json.RawMessage) []toolAnswer {
	var parts []struct {
		Type      string          `json:"type"`
		ToolUseID string          `json:"tool_use_id"`
		Content   json.RawMessage `json:"content"`
		IsError   bool            `json:"is_error"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return nil
	}
	var out []toolAnswer
	for _, p := range parts {
		if p.Type == "tool_result" && p.ToolUseID != "" {
			out = append(out, toolAnswer{id: p.ToolUseID, output: rawOrNil(p.Content), isError: p.IsError})
		}
	}
	return out
}

// answerCalls closes the synthesized calls the request answers: OpenAI's
// role "tool" messages and Anthropic's tool_result parts.
func (im *importer) answerCalls(st *openStep, added []message, ts time.Time) {
	var answers []toolAnswer
	for _, m := range added {
		switch m.Role {
		case "tool":
			if m.ToolCallID != "" {
				answers = append(answers, toolAnswer{id: m.ToolCallID, output: rawOrNil(m.Content)})
			}
		case "user":
			answers = append(answers, toolResultParts(m.Content)...)
		}
	}
	for _, a := range answers {
		for i, c := range st.calls {
			if c.id != a.id || !st.extras.isSyntheticCall(c.id) {
				continue
			}
			st.calls = append(st.calls[:i], st.calls[i+1:]...)
			tp := &transcript.ToolPayload{Name: c.name, CallID: c.id, Output: a.output, Fidelity: transcript.FidelityAgentEmitted}
			if a.isError {
				tp.Error = "tool error"
				if s, ok := a.output.(json.RawMessage); ok {
					if t := contentText(s); t != "" {
						tp.Error = t
					}
				}
			}
			im.emit(ts, transcript.ToolResult, st.key.path, st.key.iteration, tp)
			st.extras.synthetic(false, c.id)
			break
		}
	}
}

func (e *Extras) isSyntheticCall(id string) bool {
	if e.Trace == nil {
		return false
	}
	for _, s := range e.Trace.SyntheticCalls {
		if s == id {
			return true
		}
	}
	return false
}

// openUses writes the tool.call of every tool_use block whose tool_call
// the trace did not record: each tool invocation is one pair, whichever
// records the trace kept of it.
func (im *importer) openUses(st *openStep, ts time.Time) {
	for _, u := range st.uses {
		im.emit(ts, transcript.ToolCall, st.key.path, st.key.iteration, &transcript.ToolPayload{
			Name: u.name, CallID: u.id, Input: u.input, Fidelity: transcript.FidelityAgentEmitted,
		})
		st.extras.synthetic(true, u.id)
		st.calls = append(st.calls, openCall{id: u.id, name: u.name})
	}
	st.uses = nil
}

func (im *importer) chatResponse(st *openStep, rec *Record, meta *recordMeta, ts time.Time) error {
	var p chatResponse
	if err := json.Unmarshal(rec.Payload, &p); err != nil {
		return fmt.Errorf("chat_response payload: %w", err)
	}
	if p.Model != "" {
		st.model = p.Model
	}
	if p.Usage != nil {
		st.usage.Add(p.Usage.toReel())
	}
	st.latency += int64(p.LatencyMS)
	if meta.Reel != nil && meta.Reel.Synthetic {
		return nil
	}
	im.openUses(st, ts)
	st.turns++
	var blocks []transcript.ContentBlock
	if meta.Reel != nil && len(meta.Reel.Blocks) > 0 {
		blocks, _ = exactBlocks(meta.Reel.Blocks)
	}
	if blocks == nil {
		blocks = make([]transcript.ContentBlock, 0, len(p.Content))
		for _, b := range p.Content {
			switch b.Type {
			case "text":
				blocks = append(blocks, transcript.ContentBlock{Type: transcript.BlockText, Fidelity: transcript.FidelityAgentEmitted, Text: b.Text})
			case "thinking":
				t := b.Text
				if t == "" {
					t = b.Thinking
				}
				blocks = append(blocks, transcript.ContentBlock{Type: transcript.BlockThinking, Fidelity: transcript.FidelityAgentEmitted, Thinking: t})
			case "tool_use":
				blocks = append(blocks, transcript.ContentBlock{Type: transcript.BlockToolUse, Fidelity: transcript.FidelityAgentEmitted,
					ToolName: b.Name, ToolID: b.ID, ToolInput: rawOrNil(b.Input)})
			default:
				im.warn("record %s: content block type %q kept as text", rec.ID, b.Type)
				raw, _ := json.Marshal(b)
				blocks = append(blocks, transcript.ContentBlock{Type: transcript.BlockText, Fidelity: transcript.FidelityAgentEmitted, Text: string(raw)})
			}
		}
	}
	var text strings.Builder
	for _, b := range blocks {
		switch b.Type {
		case transcript.BlockText:
			text.WriteString(b.Text)
		case transcript.BlockToolUse:
			if b.ToolID != "" && !st.hasCall(b.ToolID) {
				st.uses = append(st.uses, openCall{id: b.ToolID, name: b.ToolName, input: b.ToolInput})
			}
		}
	}
	if text.Len() > 0 {
		st.output = text.String()
	}
	mp := &transcript.MessagePayload{Role: "assistant", Blocks: blocks}
	im.emit(ts, transcript.MessageAssistant, st.key.path, st.key.iteration, mp)
	return im.derive(responsePayload(mp))
}

func (st *openStep) hasCall(id string) bool {
	for _, c := range st.calls {
		if c.id == id {
			return true
		}
	}
	return false
}

func (im *importer) toolCall(st *openStep, rec *Record, meta *recordMeta, ts time.Time) error {
	var p toolCall
	if err := json.Unmarshal(rec.Payload, &p); err != nil {
		return fmt.Errorf("tool_call payload: %w", err)
	}
	id := p.ToolCallID
	if id == "" {
		im.nextCall++
		id = fmt.Sprintf("agentlog-call-%d", im.nextCall)
	}
	// The call the response's tool_use announced is recorded after all.
	for i, u := range st.uses {
		if u.id == id {
			st.uses = append(st.uses[:i], st.uses[i+1:]...)
			break
		}
	}
	for i, c := range st.calls {
		if c.id == id {
			im.closeCall(st, i, ts, "the call id was reused")
			break
		}
	}
	st.calls = append(st.calls, openCall{id: id, name: p.ToolName})
	input := rawOrNil(p.Arguments)
	if meta.Reel != nil && meta.Reel.InputWrapped {
		var w struct {
			Input json.RawMessage `json:"input"`
		}
		if json.Unmarshal(p.Arguments, &w) == nil {
			input = rawOrNil(w.Input)
		}
	}
	tp := &transcript.ToolPayload{Name: p.ToolName, CallID: id, Input: input, Fidelity: transcript.FidelityAgentEmitted}
	im.emit(ts, transcript.ToolCall, st.key.path, st.key.iteration, tp)
	return im.derive(toolCallPayload(tp))
}

func (im *importer) toolResult(st *openStep, rec *Record, meta *recordMeta, ts time.Time) error {
	var p toolResult
	if err := json.Unmarshal(rec.Payload, &p); err != nil {
		return fmt.Errorf("tool_result payload: %w", err)
	}
	idx := -1
	for i, c := range st.calls {
		if c.id == p.ToolCallID || p.ToolCallID == "" {
			idx = i
			break
		}
	}
	var call openCall
	if idx < 0 {
		// A result without its call: write the call so the pair balances.
		id := p.ToolCallID
		if id == "" {
			im.nextCall++
			id = fmt.Sprintf("agentlog-call-%d", im.nextCall)
		}
		call = openCall{id: id, name: "unknown"}
		for i, u := range st.uses {
			if u.id == id {
				call = u
				st.uses = append(st.uses[:i], st.uses[i+1:]...)
				break
			}
		}
		if call.name == "unknown" {
			im.warn("record %s: tool_result for %q has no tool_call; a call was added", rec.ID, id)
		}
		im.emit(ts, transcript.ToolCall, st.key.path, st.key.iteration, &transcript.ToolPayload{
			Name: call.name, CallID: id, Input: call.input, Fidelity: transcript.FidelityAgentEmitted,
		})
		st.extras.synthetic(true, id)
	} else {
		call = st.calls[idx]
		st.calls = append(st.calls[:idx], st.calls[idx+1:]...)
	}
	tp := &transcript.ToolPayload{Name: call.name, CallID: call.id, Output: rawOrNil(p.Output), Fidelity: transcript.FidelityAgentEmitted}
	if p.IsError {
		tp.Error = "tool error"
		if s, ok := jsonString(p.Output); ok && s != "" {
			tp.Error = s
		}
	}
	if r := meta.Reel; r != nil {
		if r.ToolError != "" {
			tp.Error = r.ToolError
		}
		if r.OutputNull {
			tp.Output = nil
		}
	}
	st.latency += int64(p.LatencyMS)
	im.emit(ts, transcript.ToolResult, st.key.path, st.key.iteration, tp)
	return im.derive(toolResultPayload(tp))
}

// closeCall answers an open call that got no result, so pairs balance.
func (im *importer) closeCall(st *openStep, i int, ts time.Time, reason string) {
	c := st.calls[i]
	st.calls = append(st.calls[:i], st.calls[i+1:]...)
	im.emit(ts, transcript.ToolResult, st.key.path, st.key.iteration, &transcript.ToolPayload{
		Name: c.name, CallID: c.id, Error: "no result: " + reason, Fidelity: transcript.FidelityAgentEmitted,
	})
	st.extras.synthetic(false, c.id)
}

// exactBlocks decodes the blocks reel kept in meta, refusing any the strict
// transcript writer would.
func exactBlocks(raw json.RawMessage) ([]transcript.ContentBlock, bool) {
	var blocks []transcript.ContentBlock
	if err := json.Unmarshal(raw, &blocks); err != nil {
		return nil, false
	}
	for _, b := range blocks {
		if !b.Type.Known() || !b.Fidelity.Known() {
			return nil, false
		}
	}
	return blocks, true
}
