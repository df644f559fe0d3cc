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

func (a *anthropic) line(v []byte) error {
	var typ string
	var index int64
	var message, block, delta, usage, errv []byte
	err := eachField(v, func(k, val []byte) {
		switch string(k) {
		case "type":
			typ = rawjson.Str(val)
		case "index":
			index = num(val)
		case "message":
			message = val
		case "content_block":
			block = val
		case "delta":
			delta = val
		case "usage":
			usage = val
		case "error":
			errv = val
		}
	})
	if err != nil {
		return err
	}
	s := a.st
	switch typ {
	case "message_start":
		a.end()
		a.open = true
		s.setModel(rawjson.Str(field(message, "model")))
		a.usage = anUsage{}
		a.usage.read(field(message, "usage"))
	case "content_block_start":
		a.blocks[index] = startBlock(block)
	case "content_block_delta":
		a.delta(index, delta)
	case "content_block_stop":
		if b := a.blocks[index]; b != nil {
			delete(a.blocks, index)
			a.block(b)
		}
	case "message_delta":
		// The final usage: a field present here replaces message_start's.
		a.usage.read(usage)
	case "message_stop":
		a.end()
	case "ping", "[DONE]":
	case "error":
		a.end()
		s.fail(errMessage(errv))
	default:
		s.skip(SkipUnknownEvent)
	}
	return nil
}

// contentBlock is the fields reel reads of a content block in the Messages
// API's vocabulary, which Claude Code's lines carry too: text, thinking,
// a tool's call, a tool's result.
type contentBlock struct {
	typ, text, thinking, id, name, toolUseID string
	input, content                           []byte
	isError                                  bool
}

// parseContentBlock reads a content block; input and content stay raw and
// share v's memory.
func parseContentBlock(v []byte) contentBlock {
	var b contentBlock
	_ = eachField(v, func(k, val []byte) {
		switch string(k) {
		case "type":
			b.typ = rawjson.Str(val)
		case "text":
			b.text = rawjson.Str(val)
		case "thinking":
			b.thinking = rawjson.Str(val)
		case "id":
			b.id = rawjson.Str(val)
		case "name":
			b.name = rawjson.Str(val)
		case "input":
			b.input = val
		case "tool_use_id":
			b.toolUseID = rawjson.Str(val)
		case "content":
			b.content = val
		case "is_error":
			b.isError = boolean(val)
		}
	})
	return b
}

// startBlock reads a content_block_start's block; a server tool's result
// arrives whole in it. The block outlives the line, so what stays raw is
// copied.
func startBlock(v []byte) *anBlock {
	c := parseContentBlock(v)
	b := &anBlock{typ: c.typ, id: c.id, name: c.name, input: bytes.Clone(c.input),
		toolUseID: c.toolUseID, content: bytes.Clone(c.content), isError: c.isError}
	// A start block holds text or thinking (both empty when streamed),
	// which the deltas then extend.
	b.sb.WriteString(c.text)
	b.sb.WriteString(c.thinking)
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
