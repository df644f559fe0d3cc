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

func (o *openAI) line(v []byte) error {
	var typ, id, object, model string
	var choices, usage, errv []byte
	var created time.Time
	err := eachField(v, func(k, val []byte) {
		switch string(k) {
		case "type":
			typ = rawjson.Str(val)
		case "id":
			id = rawjson.Str(val)
		case "object":
			object = rawjson.Str(val)
		case "model":
			model = rawjson.Str(val)
		case "choices":
			choices = val
		case "usage":
			usage = val
		case "error":
			errv = val
		case "created":
			created = timestamp(val)
		}
	})
	if err != nil {
		return err
	}
	s := o.st
	if typ == "[DONE]" {
		o.end()
		return nil
	}
	if errv != nil && !isNull(errv) {
		o.end()
		s.fail(errMessage(errv))
		return nil
	}
	if id != "" && o.open && id != o.id {
		o.end()
	}
	if object != "" && object != "chat.completion.chunk" && object != "chat.completion" {
		s.skip(SkipUnknownEvent)
		return nil
	}
	s.setModel(model)
	if !o.open && choices != nil && string(choices) != "[]" {
		o.open, o.id, o.created = true, id, created
	}
	if o.choices(choices) {
		o.end()
	}
	if !isNull(usage) {
		s.addUsage(openAIUsage(usage))
		s.res.Agent.Turns++
	}
	return nil
}

// choices reads a chunk's (or a completion's) choices, the first one only,
// and reports whether it finished.
func (o *openAI) choices(choices []byte) bool {
	finished := false
	_ = rawjson.EachElem(choices, func(c []byte) {
		var index int64
		var delta, message, finish []byte
		_ = eachField(c, func(k, val []byte) {
			switch string(k) {
			case "index":
				index = num(val)
			case "delta":
				delta = val
			case "message":
				message = val
			case "finish_reason":
				finish = val
			}
		})
		if index != 0 {
			o.st.skip("choice other than the first")
			return
		}
		if message != nil {
			o.delta(message)
			finished = true
		}
		if delta != nil {
			o.delta(delta)
		}
		if !isNull(finish) {
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
			u.InputTokens = num(val)
		case "completion_tokens":
			u.OutputTokens = num(val)
		case "total_tokens":
			u.TotalTokens = num(val)
		case "prompt_tokens_details":
			u.CacheReadTokens = num(field(val, "cached_tokens"))
		case "completion_tokens_details":
			u.ReasoningTokens = num(field(val, "reasoning_tokens"))
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
						index = num(v)
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
