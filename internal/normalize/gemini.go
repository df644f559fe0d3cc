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
	Type, Role, Content, ToolName, ToolID, Status, Model, SessionID, CWD, Severity, Message string
	Parameters, Output, Error, Stats                                                        []byte
	Timestamp                                                                               time.Time
	Delta                                                                                   bool
}

var geminiEventFields = rawjson.NewBinder[geminiEvent]()

func (g *geminiStream) line(v []byte) error {
	var e geminiEvent
	_, err := geminiEventFields.Bind(v, &e)
	// The cwd is kept even from a line broken after it.
	g.st.setCWD(e.CWD)
	if err != nil {
		return err
	}
	s := g.st
	switch e.Type {
	case "init":
		s.res.Agent.SessionID = e.SessionID
		s.setModel(e.Model)
	case "message":
		g.message(&e)
	case "tool_use":
		g.delta = false
		s.toolUse(e.ToolID, e.ToolName, raw(e.Parameters), e.Timestamp)
	case "tool_result":
		g.delta = false
		s.flush()
		s.result(e.ToolID, "", raw(e.Output), geminiToolError(e.Status, errMessage(e.Error)), e.Timestamp)
	case "error":
		if e.Severity == "warning" {
			s.warn(e.Message)
		} else {
			s.fail(e.Message)
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
	if e.Role == "user" {
		g.delta = false
		s.user([]string{e.Content}, e.Timestamp, true)
		return
	}
	if e.Delta && g.delta && len(s.blocks) > 0 {
		s.blocks[len(s.blocks)-1].Text += e.Content
		return
	}
	if e.Content != "" {
		s.text(e.Content, e.Timestamp)
		g.delta = e.Delta
	}
}

// result ends a turn: its status and its stats.
func (g *geminiStream) result(e *geminiEvent) {
	s := g.st
	g.delta = false
	s.flush()
	if e.Status != "" && e.Status != "success" {
		m := errMessage(e.Error)
		if m == "" {
			m = "gemini status " + e.Status
		}
		s.fail(m)
	}
	var c geminiCounts
	_ = eachField(e.Stats, func(k, val []byte) {
		switch string(k) {
		case "input_tokens", "prompt_tokens":
			c.Input = rawjson.Int(val)
		case "output_tokens", "candidates_tokens":
			c.Output = rawjson.Int(val)
		case "total_tokens":
			c.Total = rawjson.Int(val)
		case "cached", "cached_tokens":
			c.Cached = rawjson.Int(val)
		case "thoughts_tokens", "thoughts":
			c.Thoughts = rawjson.Int(val)
		case "tool_tokens", "tool_use_prompt_tokens":
			c.Tool = rawjson.Int(val)
		case "duration_ms":
			s.res.Agent.DurationMS += rawjson.Int(val)
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
				s.seen(rawjson.Time(val))
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

// geminiMessage is the fields reel reads of a chat file's message.
type geminiMessage struct {
	Type, Model                          string
	Content, Thoughts, ToolCalls, Tokens []byte
	Timestamp                            time.Time
}

var geminiMessageFields = rawjson.NewBinder[geminiMessage]()

func (g *geminiSession) message(v []byte) {
	s := g.st
	var m geminiMessage
	if _, err := geminiMessageFields.Bind(v, &m); err != nil {
		s.skip(SkipMalformed)
		return
	}
	s.seen(m.Timestamp)
	switch m.Type {
	case "user":
		s.user([]string{geminiText(m.Content)}, m.Timestamp, true)
	case "gemini", "model", "assistant":
		s.setModel(m.Model)
		_ = rawjson.EachElem(m.Thoughts, func(t []byte) {
			subject, desc := rawjson.Str(field(t, "subject")), rawjson.Str(field(t, "description"))
			text := desc
			if subject != "" {
				text = subject + "\n\n" + desc
			}
			s.thinking(text, rawjson.Time(field(t, "timestamp")))
		})
		s.text(geminiText(m.Content), m.Timestamp)
		g.toolCalls(m.ToolCalls, m.Timestamp)
		if m.Tokens != nil {
			s.addUsage(geminiTokens(m.Tokens).usage())
			s.res.Agent.Turns++
		}
	case "error":
		s.warn(geminiText(m.Content))
	case "info", "warning":
		s.skip("info message")
	default:
		s.skip(SkipUnknownEvent)
	}
}

// geminiToolCall is the fields reel reads of a message's tool call.
type geminiToolCall struct {
	ID, Name, Status string
	Args, Result     []byte
	Timestamp        time.Time
}

var geminiToolCallFields = rawjson.NewBinder[geminiToolCall]()

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
		var c geminiToolCall
		_, _ = geminiToolCallFields.Bind(tc, &c)
		id := s.toolUse(c.ID, c.Name, raw(c.Args), ts)
		// The result is a list of parts; the first functionResponse's
		// response is the tool's output.
		var resp []byte
		_ = rawjson.EachElem(c.Result, func(r []byte) {
			if resp == nil {
				resp = field(field(r, "functionResponse"), "response")
			}
		})
		var out any
		if resp != nil {
			out = raw(resp)
		} else {
			out = raw(c.Result)
		}
		if c.Result != nil || c.Status != "" {
			results = append(results, res{id, c.Name, geminiToolError(c.Status, rawjson.Str(field(resp, "error"))), out, c.Timestamp})
		}
	})
	s.flush()
	for _, r := range results {
		s.result(r.id, r.name, r.out, r.errMsg, r.ts)
	}
}

var geminiCountsFields = rawjson.NewBinder[geminiCounts]()

// geminiTokens reads a chat file message's token counts.
func geminiTokens(v []byte) geminiCounts {
	var c geminiCounts
	_, _ = geminiCountsFields.Bind(v, &c)
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
