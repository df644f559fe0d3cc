package normalize

import (
	"strings"
	"time"

	"github.com/reelhq/reel/internal/rawjson"
)

// geminiStream reads `gemini --output-format stream-json`: init, message
// (assistant text may come as delta fragments to join), tool_use and
// tool_result joined by tool_id, error and result with stats.
type geminiStream struct {
	st    *state
	delta bool // the open message's last block is a text being joined
}

func newGeminiStream(p *Parser) {
	g := &geminiStream{st: p.st}
	p.st.res.Agent.Provider = "gemini"
	p.line = g.line
}

// geminiEvent is the fields of a stream-json line that any of its kinds
// uses.
type geminiEvent struct {
	typ, role, content, toolName, toolID, status, model, sid, cwd, severity, message string
	params, output, errv, stats                                                      []byte
	ts                                                                               time.Time
	delta                                                                            bool
}

func parseGeminiEvent(v []byte) (geminiEvent, error) {
	var e geminiEvent
	err := eachField(v, func(k, val []byte) {
		switch string(k) {
		case "type":
			e.typ = rawjson.Str(val)
		case "role":
			e.role = rawjson.Str(val)
		case "content":
			e.content = rawjson.Str(val)
		case "delta":
			e.delta = boolean(val)
		case "tool_name":
			e.toolName = rawjson.Str(val)
		case "tool_id":
			e.toolID = rawjson.Str(val)
		case "parameters":
			e.params = val
		case "status":
			e.status = rawjson.Str(val)
		case "output":
			e.output = val
		case "error":
			e.errv = val
		case "stats":
			e.stats = val
		case "model":
			e.model = rawjson.Str(val)
		case "session_id":
			e.sid = rawjson.Str(val)
		case "cwd":
			if e.cwd == "" { // the first one counts (setCWD)
				e.cwd = rawjson.Str(val)
			}
		case "severity":
			e.severity = rawjson.Str(val)
		case "message":
			e.message = rawjson.Str(val)
		case "timestamp":
			e.ts = timestamp(val)
		}
	})
	return e, err
}

func (g *geminiStream) line(v []byte) error {
	e, err := parseGeminiEvent(v)
	// The cwd is kept even from a line broken after it.
	g.st.setCWD(e.cwd)
	if err != nil {
		return err
	}
	s := g.st
	switch e.typ {
	case "init":
		s.res.Agent.SessionID = e.sid
		s.setModel(e.model)
	case "message":
		g.message(&e)
	case "tool_use":
		g.delta = false
		s.toolUse(e.toolID, e.toolName, raw(e.params), e.ts)
	case "tool_result":
		g.delta = false
		s.flush()
		s.result(e.toolID, "", raw(e.output), geminiToolError(e.status, errMessage(e.errv)), e.ts)
	case "error":
		if e.severity == "warning" {
			s.warn(e.message)
		} else {
			s.fail(e.message)
		}
	case "result":
		g.result(&e)
	default:
		s.skip(SkipUnknownEvent)
	}
	return nil
}

// message handles a message line: a user turn, or assistant text that a
// delta line may join to the text before it.
func (g *geminiStream) message(e *geminiEvent) {
	s := g.st
	if e.role == "user" {
		g.delta = false
		s.user([]string{e.content}, e.ts, true)
		return
	}
	if e.delta && g.delta && len(s.blocks) > 0 {
		s.blocks[len(s.blocks)-1].Text += e.content
		return
	}
	if e.content != "" {
		s.text(e.content, e.ts)
		g.delta = e.delta
	}
}

// result ends a turn: its status and its stats.
func (g *geminiStream) result(e *geminiEvent) {
	s := g.st
	g.delta = false
	s.flush()
	if e.status != "" && e.status != "success" {
		m := errMessage(e.errv)
		if m == "" {
			m = "gemini status " + e.status
		}
		s.fail(m)
	}
	var c geminiCounts
	_ = eachField(e.stats, func(k, val []byte) {
		switch string(k) {
		case "input_tokens", "prompt_tokens":
			c.input = num(val)
		case "output_tokens", "candidates_tokens":
			c.output = num(val)
		case "total_tokens":
			c.total = num(val)
		case "cached", "cached_tokens":
			c.cached = num(val)
		case "thoughts_tokens", "thoughts":
			c.thoughts = num(val)
		case "tool_tokens", "tool_use_prompt_tokens":
			c.tool = num(val)
		case "duration_ms":
			s.res.Agent.DurationMS += num(val)
		}
	})
	s.addUsage(c.usage())
	s.res.Agent.Turns++
}

// geminiToolError is a tool's error: none when its status is success (or
// absent), else msg, else the status.
func geminiToolError(status, msg string) string {
	if status == "" || status == "success" {
		return ""
	}
	if msg == "" {
		msg = "tool " + status
	}
	return msg
}

// geminiSession reads a Gemini CLI chat file: {sessionId, messages: […]},
// a bare array of messages, or one message object.
type geminiSession struct{ st *state }

func newGeminiSession(p *Parser) {
	g := &geminiSession{st: p.st}
	p.st.res.Agent.Provider = "gemini"
	p.doc = g.doc
	p.line = func(v []byte) error { g.message(v); return nil }
}

func (g *geminiSession) doc(d []byte) {
	s := g.st
	i := rawjson.SkipSpace(d, 0)
	if i >= len(d) {
		return
	}
	end, err := skipValue(d, i)
	if err != nil {
		s.skip(SkipTruncated)
		return
	}
	v := d[i:end]
	if j := rawjson.SkipSpace(d, end); j < len(d) {
		s.skip("trailing data after document")
	}
	switch v[0] {
	case '[':
		_ = rawjson.EachElem(v, g.message)
	case '{':
		var messages []byte
		var typ string
		_ = eachField(v, func(k, val []byte) {
			switch string(k) {
			case "messages":
				messages = val
			case "sessionId":
				s.res.Agent.SessionID = rawjson.Str(val)
			case "startTime", "lastUpdated":
				s.seen(timestamp(val))
			case "type":
				typ = rawjson.Str(val)
			}
		})
		if messages != nil {
			_ = rawjson.EachElem(messages, g.message)
		} else if typ != "" {
			g.message(v)
		} else {
			s.skip(SkipUnknownEvent)
		}
	default:
		s.skip(SkipNonJSON)
	}
}

func (g *geminiSession) message(v []byte) {
	s := g.st
	var typ, model string
	var content, thoughts, toolCalls, tokens []byte
	var ts time.Time
	if err := eachField(v, func(k, val []byte) {
		switch string(k) {
		case "type":
			typ = rawjson.Str(val)
		case "content":
			content = val
		case "thoughts":
			thoughts = val
		case "toolCalls":
			toolCalls = val
		case "tokens":
			tokens = val
		case "model":
			model = rawjson.Str(val)
		case "timestamp":
			ts = timestamp(val)
		}
	}); err != nil {
		s.skip(SkipMalformed)
		return
	}
	s.seen(ts)
	switch typ {
	case "user":
		s.user([]string{geminiText(content)}, ts, true)
	case "gemini", "model", "assistant":
		s.setModel(model)
		_ = rawjson.EachElem(thoughts, func(t []byte) {
			subject, desc := rawjson.Str(field(t, "subject")), rawjson.Str(field(t, "description"))
			text := desc
			if subject != "" {
				text = subject + "\n\n" + desc
			}
			s.thinking(text, timestamp(field(t, "timestamp")))
		})
		s.text(geminiText(content), ts)
		g.toolCalls(toolCalls, ts)
		if tokens != nil {
			s.addUsage(geminiTokens(tokens).usage())
			s.res.Agent.Turns++
		}
	case "error":
		s.warn(geminiText(content))
	case "info", "warning":
		s.skip("info message")
	default:
		s.skip(SkipUnknownEvent)
	}
}

// toolCalls adds the tool_use blocks of a message's calls, ends the
// message and then gives the calls' results.
func (g *geminiSession) toolCalls(calls []byte, ts time.Time) {
	s := g.st
	type res struct {
		id, name, errMsg string
		out              any
		ts               time.Time
	}
	var results []res
	_ = rawjson.EachElem(calls, func(tc []byte) {
		var id, name, status string
		var args, result []byte
		var tts time.Time
		_ = eachField(tc, func(k, val []byte) {
			switch string(k) {
			case "id":
				id = rawjson.Str(val)
			case "name":
				name = rawjson.Str(val)
			case "args":
				args = val
			case "result":
				result = val
			case "status":
				status = rawjson.Str(val)
			case "timestamp":
				tts = timestamp(val)
			}
		})
		id = s.toolUse(id, name, raw(args), ts)
		// The result is a list of parts; the first functionResponse's
		// response is the tool's output.
		var resp []byte
		_ = rawjson.EachElem(result, func(r []byte) {
			if resp == nil {
				resp = field(field(r, "functionResponse"), "response")
			}
		})
		var out any
		if resp != nil {
			out = raw(resp)
		} else {
			out = raw(result)
		}
		if result != nil || status != "" {
			results = append(results, res{id, name, geminiToolError(status, rawjson.Str(field(resp, "error"))), out, tts})
		}
	})
	s.flush()
	for _, r := range results {
		s.result(r.id, r.name, r.out, r.errMsg, r.ts)
	}
}

// geminiTokens reads a chat file message's token counts.
func geminiTokens(v []byte) geminiCounts {
	var c geminiCounts
	_ = eachField(v, func(k, val []byte) {
		switch string(k) {
		case "input":
			c.input = num(val)
		case "output":
			c.output = num(val)
		case "cached":
			c.cached = num(val)
		case "thoughts":
			c.thoughts = num(val)
		case "tool":
			c.tool = num(val)
		case "total":
			c.total = num(val)
		}
	})
	return c
}

// geminiText reads content given as a string or as parts [{text}].
func geminiText(v []byte) string {
	if len(v) > 0 && v[0] == '"' {
		return rawjson.Str(v)
	}
	var sb strings.Builder
	_ = rawjson.EachElem(v, func(p []byte) { sb.WriteString(rawjson.Str(field(p, "text"))) })
	return sb.String()
}
