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

func (g *geminiStream) line(v []byte) error {
	var typ, role, content, toolName, toolID, status, model, sid, severity, message string
	var params, output, errv, stats []byte
	var ts time.Time
	delta := false
	err := eachField(v, func(k, val []byte) {
		switch string(k) {
		case "type":
			typ = rawjson.Str(val)
		case "role":
			role = rawjson.Str(val)
		case "content":
			content = rawjson.Str(val)
		case "delta":
			delta = boolean(val)
		case "tool_name":
			toolName = rawjson.Str(val)
		case "tool_id":
			toolID = rawjson.Str(val)
		case "parameters":
			params = val
		case "status":
			status = rawjson.Str(val)
		case "output":
			output = val
		case "error":
			errv = val
		case "stats":
			stats = val
		case "model":
			model = rawjson.Str(val)
		case "session_id":
			sid = rawjson.Str(val)
		case "cwd":
			g.st.setCWD(rawjson.Str(val))
		case "severity":
			severity = rawjson.Str(val)
		case "message":
			message = rawjson.Str(val)
		case "timestamp":
			ts = timestamp(val)
		}
	})
	if err != nil {
		return err
	}
	s := g.st
	switch typ {
	case "init":
		s.res.Agent.SessionID = sid
		s.setModel(model)
	case "message":
		if role == "user" {
			g.delta = false
			s.user([]string{content}, ts, true)
			return nil
		}
		if delta && g.delta && len(s.blocks) > 0 {
			s.blocks[len(s.blocks)-1].Text += content
			return nil
		}
		if content != "" {
			s.text(content, ts)
			g.delta = delta
		}
	case "tool_use":
		g.delta = false
		s.toolUse(toolID, toolName, raw(params), ts)
	case "tool_result":
		g.delta = false
		s.flush()
		errMsg := ""
		if status != "" && status != "success" {
			errMsg = errMessage(errv)
			if errMsg == "" {
				errMsg = "tool " + status
			}
		}
		s.result(toolID, "", raw(output), errMsg, ts)
	case "error":
		if severity == "warning" {
			s.warn(message)
		} else {
			s.fail(message)
		}
	case "result":
		g.delta = false
		s.flush()
		if status != "" && status != "success" {
			m := errMessage(errv)
			if m == "" {
				m = "gemini status " + status
			}
			s.fail(m)
		}
		var in, out, cached, thoughts, tool, total int64
		_ = eachField(stats, func(k, val []byte) {
			switch string(k) {
			case "input_tokens", "prompt_tokens":
				in = num(val)
			case "output_tokens", "candidates_tokens":
				out = num(val)
			case "total_tokens":
				total = num(val)
			case "cached", "cached_tokens":
				cached = num(val)
			case "thoughts_tokens", "thoughts":
				thoughts = num(val)
			case "tool_tokens", "tool_use_prompt_tokens":
				tool = num(val)
			case "duration_ms":
				s.res.Agent.DurationMS += num(val)
			}
		})
		s.addUsage(geminiUsage(in, out, cached, thoughts, tool, total))
		s.res.Agent.Turns++
	default:
		s.skip(SkipUnknownEvent)
	}
	return nil
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
		type res struct {
			id, name, errMsg string
			out              any
			ts               time.Time
		}
		var results []res
		_ = rawjson.EachElem(toolCalls, func(tc []byte) {
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
			var out any
			errMsg := ""
			var resp []byte
			_ = rawjson.EachElem(result, func(r []byte) {
				if resp == nil {
					resp = field(field(r, "functionResponse"), "response")
				}
			})
			if resp != nil {
				out = raw(resp)
			} else {
				out = raw(result)
			}
			if status != "" && status != "success" {
				errMsg = rawjson.Str(field(resp, "error"))
				if errMsg == "" {
					errMsg = "tool " + status
				}
			}
			if result != nil || status != "" {
				results = append(results, res{id, name, errMsg, out, tts})
			}
		})
		s.flush()
		for _, r := range results {
			s.result(r.id, r.name, r.out, r.errMsg, r.ts)
		}
		if tokens != nil {
			var in, out, cached, thoughts, tool, total int64
			_ = eachField(tokens, func(k, val []byte) {
				switch string(k) {
				case "input":
					in = num(val)
				case "output":
					out = num(val)
				case "cached":
					cached = num(val)
				case "thoughts":
					thoughts = num(val)
				case "tool":
					tool = num(val)
				case "total":
					total = num(val)
				}
			})
			s.addUsage(geminiUsage(in, out, cached, thoughts, tool, total))
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

// geminiText reads content given as a string or as parts [{text}].
func geminiText(v []byte) string {
	if len(v) > 0 && v[0] == '"' {
		return rawjson.Str(v)
	}
	var sb strings.Builder
	_ = rawjson.EachElem(v, func(p []byte) { sb.WriteString(rawjson.Str(field(p, "text"))) })
	return sb.String()
}
