package normalize

import (
	"bytes"
	"sort"
	"strings"

	"github.com/reelhq/reel/internal/rawjson"
)

// anthropic reads Messages API streaming events: message_start,
// content_block_start/delta/stop (text, thinking, signature,
// input_json_delta), message_delta usage, message_stop, ping and error.
type anthropic struct {
	st     *state
	blocks map[int64]*anBlock
	usage  anUsage
	open   bool
}

type anBlock struct {
	typ, id, name string
	input         []byte
	sb            strings.Builder
	// A server tool's result block arrives whole in content_block_start.
	toolUseID string
	content   []byte
	isError   bool
}

func newAnthropic(p *Parser) {
	a := &anthropic{st: p.st, blocks: map[int64]*anBlock{}}
	p.st.res.Agent.Provider = "anthropic"
	p.sse = true
	p.line = a.line
	p.finish = a.end
}

// anEvent is the fields of a stream event that any of its kinds uses.
type anEvent struct {
	Type                                       string
	Index                                      int64
	Message, ContentBlock, Delta, Usage, Error []byte
}

var anEventFields = rawjson.NewBinder[anEvent]()

func (a *anthropic) line(v []byte) error {
	var e anEvent
	if _, err := anEventFields.Bind(v, &e); err != nil {
		return err
	}
	s := a.st
	switch e.Type {
	case "message_start":
		a.end()
		a.open = true
		s.setModel(rawjson.Str(field(e.Message, "model")))
		a.usage = anUsage{}
		a.usage.read(field(e.Message, "usage"))
	case "content_block_start":
		a.blocks[e.Index] = startBlock(e.ContentBlock)
	case "content_block_delta":
		a.delta(e.Index, e.Delta)
	case "content_block_stop":
		if b := a.blocks[e.Index]; b != nil {
			delete(a.blocks, e.Index)
			a.block(b)
		}
	case "message_delta":
		// The final usage: a field present here replaces message_start's.
		a.usage.read(e.Usage)
	case "message_stop":
		a.end()
	case "ping", "[DONE]":
	case "error":
		a.end()
		s.fail(errMessage(e.Error))
	default:
		s.skip(SkipUnknownEvent)
	}
	return nil
}

// contentBlock is the fields reel reads of a content block in the Messages
// API's vocabulary, which Claude Code's lines carry too: text, thinking,
// a tool's call, a tool's result. Input and Content stay raw and share the
// line's memory.
type contentBlock struct {
	Type, Text, Thinking, ID, Name, ToolUseID string
	Input, Content                            []byte
	IsError                                   bool
}

var contentBlockFields = rawjson.NewBinder[contentBlock]()

func parseContentBlock(v []byte) contentBlock {
	var b contentBlock
	_, _ = contentBlockFields.Bind(v, &b)
	return b
}

// startBlock reads a content_block_start's block; a server tool's result
// arrives whole in it. The block outlives the line, so what stays raw is
// copied.
func startBlock(v []byte) *anBlock {
	c := parseContentBlock(v)
	b := &anBlock{typ: c.Type, id: c.ID, name: c.Name, input: bytes.Clone(c.Input),
		toolUseID: c.ToolUseID, content: bytes.Clone(c.Content), isError: c.IsError}
	// A start block holds text or thinking (both empty when streamed),
	// which the deltas then extend.
	b.sb.WriteString(c.Text)
	b.sb.WriteString(c.Thinking)
	return b
}

// delta adds a content_block_delta to its block; a delta for a block that
// never started (a cut recording) starts it, typed by the delta.
func (a *anthropic) delta(index int64, v []byte) {
	b := a.blocks[index]
	if b == nil {
		b = &anBlock{}
		a.blocks[index] = b
	}
	_ = eachField(v, func(k, val []byte) {
		switch string(k) {
		case "text", "thinking", "partial_json":
			b.sb.WriteString(rawjson.Str(val))
		case "type":
			if b.typ == "" {
				switch rawjson.Str(val) {
				case "text_delta":
					b.typ = "text"
				case "thinking_delta", "signature_delta":
					b.typ = "thinking"
				case "input_json_delta":
					b.typ = "tool_use"
				}
			}
		}
	})
}

func (a *anthropic) block(b *anBlock) {
	s := a.st
	switch b.typ {
	case "text":
		s.text(b.sb.String(), s.msgTS)
	case "thinking", "redacted_thinking":
		s.thinking(b.sb.String(), s.msgTS)
	case "tool_use", "server_tool_use", "mcp_tool_use":
		var in any
		if b.sb.Len() > 0 {
			in = jsonText(b.sb.String())
		} else {
			in = raw(b.input)
		}
		s.toolUse(b.id, b.name, in, s.msgTS)
	default:
		if isServerToolResult(b.typ, b.toolUseID) {
			s.serverToolResult(b.toolUseID, b.content, b.isError, s.msgTS)
			return
		}
		s.skip(SkipUnknownBlock)
	}
}

// end completes the message: blocks never stopped (a cut stream) are kept.
func (a *anthropic) end() {
	if !a.open {
		return
	}
	idx := make([]int64, 0, len(a.blocks))
	for i := range a.blocks {
		idx = append(idx, i)
	}
	sort.Slice(idx, func(x, y int) bool { return idx[x] < idx[y] })
	for _, i := range idx {
		a.block(a.blocks[i])
	}
	a.blocks = map[int64]*anBlock{}
	a.st.flush()
	a.st.addUsage(a.usage.usage())
	a.st.res.Agent.Turns++
	a.usage = anUsage{}
	a.open = false
}
