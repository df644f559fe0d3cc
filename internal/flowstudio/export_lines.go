package flowstudio

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/reelhq/reel/transcript"
)

// The lines of a step's transcript: the documented form, and the reel_*
// keys that carry what it cannot hold.

type msgLine struct {
	Timestamp  string                    `json:"timestamp"`
	Role       string                    `json:"role"`
	Content    string                    `json:"content"`
	ReelBlocks []transcript.ContentBlock `json:"reel_blocks,omitempty"`
	ReelSeq    *int                      `json:"reel_seq,omitempty"`
}

type toolLine struct {
	Timestamp     string `json:"timestamp"`
	Role          string `json:"role"`
	ToolName      string `json:"tool_name"`
	ToolInput     any    `json:"tool_input"`
	ToolOutput    any    `json:"tool_output,omitempty"`
	CallID        string `json:"call_id"`
	CallTimestamp string `json:"call_timestamp"`
	Error         string `json:"error,omitempty"`
	ReelOutput    any    `json:"reel_output,omitempty"`
	// InputWrapped says the input was not an object and tool_input holds
	// it as {"input": value}.
	InputWrapped bool `json:"reel_input_wrapped,omitempty"`
	ReelSeq      *int `json:"reel_seq,omitempty"`
	ReelCallSeq  *int `json:"reel_call_seq,omitempty"`
	// A tool.result that repeats its input: the same as the call's
	// (ResultInputSame) or its own (ResultInput).
	ResultInputSame bool `json:"reel_result_input_same,omitempty"`
	ResultInput     any  `json:"reel_result_input,omitempty"`
	// Fidelity is the call's when it is not agent_emitted (a tool the
	// router served); ResultFidelity the result's when it differs.
	Fidelity       transcript.Fidelity `json:"reel_fidelity,omitempty"`
	ResultFidelity transcript.Fidelity `json:"reel_result_fidelity,omitempty"`
}

// add turns one exchange event into documented transcript lines.
func (s *stepExec) add(e *transcript.ExchangeEvent) error {
	ts := fsTime(e.Timestamp)
	seq := s.seq
	s.seq++
	switch e.Type {
	case transcript.MessageUser:
		mp := e.Message()
		if mp == nil {
			return fmt.Errorf("export flow studio: event %d: message.user without a message payload", e.Seq)
		}
		standard := len(mp.Blocks) >= 1 && len(mp.Blocks) <= 2
		for _, b := range mp.Blocks {
			if b.Type != transcript.BlockText || b.Fidelity != transcript.FidelityRouter {
				standard = false
			}
		}
		if standard && len(mp.Blocks) == 2 && mp.Blocks[1].Text == "" {
			standard = false
		}
		if len(mp.Blocks) == 2 && mp.Blocks[1].Type == transcript.BlockText {
			s.lines = append(s.lines, msgLine{Timestamp: ts, Role: "system", Content: mp.Blocks[1].Text, ReelSeq: &seq})
		}
		l := msgLine{Timestamp: ts, Role: "user", Content: blocksText(mp.Blocks[:min(1, len(mp.Blocks))]), ReelSeq: &seq}
		if !standard {
			l.ReelBlocks = mp.Blocks
		}
		s.lines = append(s.lines, l)
	case transcript.MessageAssistant:
		mp := e.Message()
		if mp == nil {
			return fmt.Errorf("export flow studio: event %d: message.assistant without a message payload", e.Seq)
		}
		l := msgLine{Timestamp: ts, Role: "assistant", Content: blocksText(mp.Blocks), ReelSeq: &seq}
		if !(len(mp.Blocks) == 1 && mp.Blocks[0].Type == transcript.BlockText && mp.Blocks[0].Fidelity == transcript.FidelityAgentEmitted) {
			l.ReelBlocks = mp.Blocks
		}
		s.lines = append(s.lines, l)
	case transcript.ToolCall:
		tp := e.Tool()
		if tp == nil {
			return fmt.Errorf("export flow studio: event %d: tool.call without a tool payload", e.Seq)
		}
		s.calls[tp.CallID] = e
		s.callSeq[tp.CallID] = seq
	case transcript.ToolResult:
		tp := e.Tool()
		if tp == nil {
			return fmt.Errorf("export flow studio: event %d: tool.result without a tool payload", e.Seq)
		}
		l := toolLine{Timestamp: ts, Role: "tool", ToolName: tp.Name, CallID: tp.CallID, CallTimestamp: ts, Error: tp.Error, ToolInput: map[string]any{},
			ReelSeq: &seq}
		if c, ok := s.calls[tp.CallID]; ok {
			delete(s.calls, tp.CallID)
			cs := s.callSeq[tp.CallID]
			l.ReelCallSeq = &cs
			l.CallTimestamp = fsTime(c.Timestamp)
			if in := c.Tool().Input; !isNull(in) {
				l.ToolInput, l.InputWrapped = objectInput(in)
			}
			if !isNull(tp.Input) {
				a, _ := json.Marshal(tp.Input)
				b, _ := json.Marshal(c.Tool().Input)
				if bytes.Equal(a, b) {
					l.ResultInputSame = true
				} else {
					l.ResultInput = tp.Input
				}
			}
			if f := c.Tool().Fidelity; f != transcript.FidelityAgentEmitted {
				l.Fidelity = f
			}
		} else if !isNull(tp.Input) {
			l.ResultInput = tp.Input
		}
		if callF := cmp.Or(l.Fidelity, transcript.FidelityAgentEmitted); tp.Fidelity != callF {
			l.ResultFidelity = tp.Fidelity
		}
		if !isNull(tp.Output) {
			if str, ok := asString(tp.Output); ok {
				l.ToolOutput = str
			} else {
				raw, err := json.Marshal(tp.Output)
				if err != nil {
					return fmt.Errorf("export flow studio: event %d: tool output: %w", e.Seq, err)
				}
				l.ToolOutput = string(raw)
				l.ReelOutput = json.RawMessage(raw)
			}
		}
		s.lines = append(s.lines, l)
	}
	return nil
}

// objectInput returns in as the documented form's tool_input object,
// wrapping a value that is not an object as {"input": value}.
func objectInput(in any) (any, bool) {
	raw, err := json.Marshal(in)
	if err == nil {
		raw = bytes.TrimSpace(raw)
		if len(raw) > 0 && raw[0] == '{' {
			return in, false
		}
	}
	return map[string]any{"input": in}, true
}

func isNull(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case json.RawMessage:
		return len(x) == 0 || string(x) == "null"
	}
	return false
}

func asString(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case json.RawMessage:
		return str(x)
	}
	return "", false
}

func blocksText(blocks []transcript.ContentBlock) string {
	var b strings.Builder
	for _, bl := range blocks {
		switch bl.Type {
		case transcript.BlockText:
			b.WriteString(bl.Text)
		case transcript.BlockCommand:
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
			b.WriteString("$ " + bl.Command)
		}
	}
	return b.String()
}
