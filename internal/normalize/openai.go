package normalize

import (
	"sort"
	"strings"
	"time"

	"github.com/reelhq/reel/internal/rawjson"
	"github.com/reelhq/reel/transcript"
)

// openAI reads Chat Completions output: chat.completion.chunk objects (SSE
// `data:` framing or one JSON per line, tool-call fragments assembled by
// index, reasoning_content/reasoning deltas, the usage chunk, [DONE]) and a
// non-streaming chat.completion.
type openAI struct {
	st      *state
	id      string
	open    bool
	created time.Time
	think   strings.Builder
	text    strings.Builder
	tools   map[int64]*oaTool
}

type oaTool struct {
	id, name string
	args     strings.Builder
}

func newOpenAI(p *Parser) {
	o := &openAI{st: p.st, tools: map[int64]*oaTool{}}
	p.st.res.Agent.Provider = "openai"
	p.sse = true
	p.line = o.line
	p.finish = o.end
}

// oaChunk is the fields of a chunk or a completion.
type oaChunk struct {
	Type, ID, Object, Model string
	Choices, Usage, Error   []byte
	Created                 time.Time
}

var oaChunkFields = rawjson.NewBinder[oaChunk]()

func (o *openAI) line(v []byte) error {
	var c oaChunk
	if _, err := oaChunkFields.Bind(v, &c); err != nil {
		return err
	}
	s := o.st
	if c.Type == "[DONE]" {
		o.end()
		return nil
	}
	if c.Error != nil && !isNull(c.Error) {
		o.end()
		s.fail(errMessage(c.Error))
		return nil
	}
	if c.ID != "" && o.open && c.ID != o.id {
		o.end()
	}
	if c.Object != "" && c.Object != "chat.completion.chunk" && c.Object != "chat.completion" {
		s.skip(SkipUnknownEvent)
		return nil
	}
	s.setModel(c.Model)
	if !o.open && c.Choices != nil && string(c.Choices) != "[]" {
		o.open, o.id, o.created = true, c.ID, c.Created
	}
	if o.choices(c.Choices) {
		o.end()
	}
	if !isNull(c.Usage) {
		s.addUsage(openAIUsage(c.Usage))
		s.res.Agent.Turns++
	}
	return nil
}

// oaChoice is the fields of a choice.
type oaChoice struct {
	Index                        int64
	Delta, Message, FinishReason []byte
}

var oaChoiceFields = rawjson.NewBinder[oaChoice]()

// choices reads a chunk's (or a completion's) choices, the first one only,
// and reports whether it finished.
func (o *openAI) choices(choices []byte) bool {
	finished := false
	_ = rawjson.EachElem(choices, func(c []byte) {
		var ch oaChoice
		_, _ = oaChoiceFields.Bind(c, &ch)
		if ch.Index != 0 {
			o.st.skip("choice other than the first")
			return
		}
		if ch.Message != nil {
			o.delta(ch.Message)
			finished = true
		}
		if ch.Delta != nil {
			o.delta(ch.Delta)
		}
		if !isNull(ch.FinishReason) {
			finished = true
		}
	})
	return finished
}

// openAIUsage reads a usage object. OpenAI counts reasoning inside
// completion_tokens; some compatible servers (xAI) count it apart, which
// their total shows: then it is added to the output, so it is counted once.
func openAIUsage(v []byte) transcript.Usage {
	var u transcript.Usage
	_ = eachField(v, func(k, val []byte) {
		switch string(k) {
		case "prompt_tokens":
			u.InputTokens = rawjson.Int(val)
		case "completion_tokens":
			u.OutputTokens = rawjson.Int(val)
		case "total_tokens":
			u.TotalTokens = rawjson.Int(val)
		case "prompt_tokens_details":
			u.CacheReadTokens = rawjson.Int(field(val, "cached_tokens"))
		case "completion_tokens_details":
			u.ReasoningTokens = rawjson.Int(field(val, "reasoning_tokens"))
		}
	})
	if u.ReasoningTokens > 0 && u.TotalTokens == u.InputTokens+u.OutputTokens+u.ReasoningTokens {
		u.OutputTokens += u.ReasoningTokens
	}
	return u
}

func (o *openAI) delta(d []byte) {
	_ = eachField(d, func(k, val []byte) {
		switch string(k) {
		case "content":
			o.text.WriteString(rawjson.Str(val))
		case "reasoning_content", "reasoning":
			o.think.WriteString(rawjson.Str(val))
		case "refusal":
			o.text.WriteString(rawjson.Str(val))
		case "tool_calls":
			_ = rawjson.EachElem(val, func(tc []byte) {
				var index int64
				var id, name, args string
				_ = eachField(tc, func(k, v []byte) {
					switch string(k) {
					case "index":
						index = rawjson.Int(v)
					case "id":
						id = rawjson.Str(v)
					case "function":
						name = rawjson.Str(field(v, "name"))
						args = rawjson.Str(field(v, "arguments"))
					}
				})
				t := o.tools[index]
				if t == nil {
					t = &oaTool{}
					o.tools[index] = t
				}
				if id != "" {
					t.id = id
				}
				if name != "" {
					t.name = name
				}
				t.args.WriteString(args)
			})
		}
	})
}

// end completes the response being assembled: its message.assistant and
// the tool.call of every tool it requested.
func (o *openAI) end() {
	if !o.open && o.think.Len() == 0 && o.text.Len() == 0 && len(o.tools) == 0 {
		return
	}
	s := o.st
	ts := o.created
	if o.think.Len() > 0 {
		s.thinking(o.think.String(), ts)
	}
	s.text(o.text.String(), ts)
	idx := make([]int64, 0, len(o.tools))
	for i := range o.tools {
		idx = append(idx, i)
	}
	sort.Slice(idx, func(a, b int) bool { return idx[a] < idx[b] })
	for _, i := range idx {
		t := o.tools[i]
		s.toolUse(t.id, t.name, jsonText(t.args.String()), ts)
	}
	s.flush()
	o.open, o.id = false, ""
	o.think.Reset()
	o.text.Reset()
	o.tools = map[int64]*oaTool{}
}
