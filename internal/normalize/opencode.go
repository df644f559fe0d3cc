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

// opencodeLine is the fields of a line.
type opencodeLine struct {
	Type, SessionID       string
	Part, Error, Rejected []byte
	// Timestamp is in Unix milliseconds.
	Timestamp int64
}

// opencodePart is the fields of a line's part that any of its kinds uses.
type opencodePart struct {
	MessageID, Text, CallID, Tool string
	State, Tokens, Cost           []byte
}

var (
	opencodeLineFields = rawjson.NewBinder[opencodeLine]()
	opencodePartFields = rawjson.NewBinder[opencodePart]()
)

func (o *opencode) line(v []byte) error {
	var l opencodeLine
	if _, err := opencodeLineFields.Bind(v, &l); err != nil {
		return err
	}
	var ts time.Time
	// Anything past year 9999 is not a time.
	if n := l.Timestamp; n > 0 && n < maxUnixMilli {
		ts = time.UnixMilli(n).UTC()
	}
	s := o.st
	if l.SessionID != "" {
		s.res.Agent.SessionID = l.SessionID
	}
	var p opencodePart
	_, _ = opencodePartFields.Bind(l.Part, &p)
	if p.MessageID != o.msg {
		// Parts of another provider message: the previous one is over.
		s.flush()
		o.msg = p.MessageID
	}
	switch l.Type {
	case "step_start":
		s.flush()
		s.res.Agent.Turns++
	case "text":
		s.text(p.Text, ts)
	case "reasoning":
		s.thinking(p.Text, ts)
	case "tool_use":
		o.tool(&p, ts)
	case "step_finish":
		s.addUsage(opencodeUsage(p.Tokens))
		if c, ok := float(p.Cost); ok {
			o.cost += c
			total := o.cost
			s.res.Agent.CostUSD = &total
		}
		s.flush()
	case "error":
		s.flush()
		s.fail(opencodeError(l.Error))
	case "done":
		s.flush()
		_ = rawjson.EachElem(l.Rejected, func(r []byte) {
			if name := rawjson.Str(r); name != "" {
				s.warn("permission rejected: " + name)
			}
		})
	default:
		s.skip(SkipUnknownEvent)
	}
	return nil
}

// opencodeState is the fields of a tool part's state.
type opencodeState struct {
	Status, Error string
	Input, Output []byte
}

var opencodeStateFields = rawjson.NewBinder[opencodeState]()

// tool maps a tool part, printed once with the call and, when it is done,
// its result.
func (o *opencode) tool(p *opencodePart, ts time.Time) {
	s := o.st
	var st opencodeState
	_, _ = opencodeStateFields.Bind(p.State, &st)
	id := s.toolUse(p.CallID, p.Tool, raw(st.Input), ts)
	switch st.Status {
	case "completed":
		s.result(id, p.Tool, raw(st.Output), "", ts)
	case "error":
		s.result(id, p.Tool, nil, cmp.Or(st.Error, "tool failed"), ts)
	}
	// Any other status is a call still under way; Close answers it.
}

// opencodeTokens is a step-finish part's tokens as opencode writes them.
type opencodeTokens struct {
	Input, Output, Reasoning, Total int64
	Cache                           []byte // {read, write}
}

var opencodeTokensFields = rawjson.NewBinder[opencodeTokens]()

// opencodeUsage reads a step-finish part's tokens: {total?, input, output,
// reasoning, cache: {read, write}}. opencode's input excludes the cache
// (its total adds them) and its reasoning is apart from output (it prices
// the two separately); in reel's convention both are inside (usage.go),
// unless the reported total shows the reasoning already in output.
func opencodeUsage(v []byte) transcript.Usage {
	var t opencodeTokens
	_, _ = opencodeTokensFields.Bind(v, &t)
	u := transcript.Usage{InputTokens: t.Input, OutputTokens: t.Output,
		CacheReadTokens: rawjson.Int(field(t.Cache, "read")), CacheWriteTokens: rawjson.Int(field(t.Cache, "write")),
		ReasoningTokens: t.Reasoning, TotalTokens: t.Total}
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
