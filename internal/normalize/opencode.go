package normalize

import (
	"cmp"
	"strings"
	"time"

	"github.com/reelhq/reel/internal/rawjson"
	"github.com/reelhq/reel/transcript"
)

// opencode reads `opencode run --format json`: one JSON object per line,
// {type, timestamp (Unix milliseconds), sessionID, part}, where part is the
// message part that just completed. A model call is a step: step_start,
// then its text, reasoning and tool parts, then step_finish with the
// step's tokens and cost. A tool part is printed once, completed or
// failed, so it carries the call and its result together. error lines
// report a session error; done ends the run.
type opencode struct {
	st *state
	// msg is the provider message id whose parts are being assembled.
	msg  string
	cost float64
}

// maxUnixMilli is 10000-01-01T00:00:00Z in Unix milliseconds.
const maxUnixMilli = 253402300800000

func newOpencode(p *Parser) {
	o := &opencode{st: p.st}
	p.st.res.Agent.Provider = "opencode"
	p.line = o.line
}

// opencodePart is the fields of a line's part that any of its kinds uses.
type opencodePart struct {
	msgID, text, callID, tool string
	state, tokens, cost       []byte
}

func parseOpencodePart(v []byte) opencodePart {
	var p opencodePart
	_ = eachField(v, func(k, val []byte) {
		switch string(k) {
		case "messageID":
			p.msgID = rawjson.Str(val)
		case "text":
			p.text = rawjson.Str(val)
		case "callID":
			p.callID = rawjson.Str(val)
		case "tool":
			p.tool = rawjson.Str(val)
		case "state":
			p.state = val
		case "tokens":
			p.tokens = val
		case "cost":
			p.cost = val
		}
	})
	return p
}

func (o *opencode) line(v []byte) error {
	var typ, sid string
	var part, errv, rejected []byte
	var ts time.Time
	err := eachField(v, func(k, val []byte) {
		switch string(k) {
		case "type":
			typ = rawjson.Str(val)
		case "sessionID":
			sid = rawjson.Str(val)
		case "timestamp":
			// Unix milliseconds; anything past year 9999 is not a time.
			if n := num(val); n > 0 && n < maxUnixMilli {
				ts = time.UnixMilli(n).UTC()
			}
		case "part":
			part = val
		case "error":
			errv = val
		case "rejected":
			rejected = val
		}
	})
	if err != nil {
		return err
	}
	s := o.st
	if sid != "" {
		s.res.Agent.SessionID = sid
	}
	p := parseOpencodePart(part)
	if p.msgID != o.msg {
		// Parts of another provider message: the previous one is over.
		s.flush()
		o.msg = p.msgID
	}
	switch typ {
	case "step_start":
		s.flush()
		s.res.Agent.Turns++
	case "text":
		s.text(p.text, ts)
	case "reasoning":
		s.thinking(p.text, ts)
	case "tool_use":
		o.tool(&p, ts)
	case "step_finish":
		s.addUsage(opencodeUsage(p.tokens))
		if c, ok := float(p.cost); ok {
			o.cost += c
			total := o.cost
			s.res.Agent.CostUSD = &total
		}
		s.flush()
	case "error":
		s.flush()
		s.fail(opencodeError(errv))
	case "done":
		s.flush()
		_ = rawjson.EachElem(rejected, func(r []byte) {
			if name := rawjson.Str(r); name != "" {
				s.warn("permission rejected: " + name)
			}
		})
	default:
		s.skip(SkipUnknownEvent)
	}
	return nil
}

// tool maps a tool part, printed once with the call and, when it is done,
// its result.
func (o *opencode) tool(p *opencodePart, ts time.Time) {
	s := o.st
	var status, errText string
	var input, output []byte
	_ = eachField(p.state, func(k, val []byte) {
		switch string(k) {
		case "status":
			status = rawjson.Str(val)
		case "input":
			input = val
		case "output":
			output = val
		case "error":
			errText = rawjson.Str(val)
		}
	})
	id := s.toolUse(p.callID, p.tool, raw(input), ts)
	switch status {
	case "completed":
		s.result(id, p.tool, raw(output), "", ts)
	case "error":
		s.result(id, p.tool, nil, cmp.Or(errText, "tool failed"), ts)
	}
	// Any other status is a call still under way; Close answers it.
}

// opencodeUsage reads a step-finish part's tokens: {total?, input, output,
// reasoning, cache: {read, write}}. opencode's input excludes the cache
// (its total adds them) and its reasoning is apart from output (it prices
// the two separately); in reel's convention both are inside (usage.go),
// unless the reported total shows the reasoning already in output.
func opencodeUsage(v []byte) transcript.Usage {
	u := opencodeUsageKeys.read(v)
	total := u.TotalTokens
	u.InputTokens += u.CacheReadTokens + u.CacheWriteTokens
	if total == 0 || total == u.InputTokens+u.OutputTokens+u.ReasoningTokens {
		u.OutputTokens += u.ReasoningTokens
	}
	u.TotalTokens = u.InputTokens + u.OutputTokens
	return u
}

// opencodeError reads a session error {name, data: {message}}: the message
// when there is one, else the error's name.
func opencodeError(v []byte) string {
	if msg := rawjson.Str(field(field(v, "data"), "message")); msg != "" {
		return msg
	}
	if name := rawjson.Str(field(v, "name")); name != "" {
		return strings.TrimSuffix(name, "Error") + " error"
	}
	return rawjson.Str(v)
}
