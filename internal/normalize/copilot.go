package normalize

import (
	"cmp"
	"fmt"
	"time"

	"github.com/reelhq/reel/internal/rawjson"
)

// copilot reads `copilot -p … --output-format json`: session events
// {type, data, id, timestamp}, a final `result` line without a data wrapper,
// and whatever non-JSON noise the CLI prints between them.
type copilot struct {
	st *state
	// deltas joins assistant.message_delta fragments per messageId; a
	// complete assistant.message supersedes them.
	deltas     map[string]string
	deltaOrder []string
	complete   map[string]bool
	// byName matches tool completions to starts when the CLI gives no
	// toolCallId.
	byName map[string][]string
}

func newCopilot(p *Parser) {
	c := &copilot{st: p.st, deltas: map[string]string{}, complete: map[string]bool{}, byName: map[string][]string{}}
	p.st.res.Agent.Provider = "copilot"
	p.line = c.line
	p.finish = c.finish
}

// copilotData is the "data" object of a Copilot event, the fields reel reads.
type copilotData struct {
	MessageID, Content, DeltaContent, ToolCallID, ToolName, SessionID, Message string
	Model                                                                      string `raw:"model,selectedModel"`
	ToolRequests, Arguments, Result, Error, Success                            []byte
	Duration                                                                   int64
}

var copilotDataFields = rawjson.NewBinder[copilotData]()

// copilotEvent is the fields of a line, data aside.
type copilotEvent struct {
	Type, SessionID string
	Data            []byte
	ExitCode        int64
	Timestamp       time.Time
	Ephemeral       bool
}

var copilotEventFields = rawjson.NewBinder[copilotEvent]()

func (c *copilot) line(v []byte) error {
	var e copilotEvent
	if _, err := copilotEventFields.Bind(v, &e); err != nil {
		return err
	}
	s := c.st
	var d copilotData
	_, _ = copilotDataFields.Bind(e.Data, &d)
	if d.SessionID != "" {
		s.res.Agent.SessionID = d.SessionID
	}
	if e.SessionID != "" {
		s.res.Agent.SessionID = e.SessionID
	}
	switch e.Type {
	case "user.message":
		s.user([]string{d.Content}, e.Timestamp, true)
	case "assistant.turn_start":
		s.res.Agent.Turns++
	case "assistant.turn_end":
		s.flush()
	case "assistant.reasoning":
		s.thinking(d.Content, e.Timestamp)
	case "assistant.message":
		c.message(&d, e.Timestamp)
	case "assistant.message_delta":
		if c.complete[d.MessageID] {
			s.skip("message delta superseded")
			return nil
		}
		if _, ok := c.deltas[d.MessageID]; !ok {
			c.deltaOrder = append(c.deltaOrder, d.MessageID)
		}
		c.deltas[d.MessageID] += d.DeltaContent
	case "assistant.reasoning_delta", "tool.execution_partial_result", "tool.execution_progress",
		"assistant.message_start", "assistant.tool_call_delta":
		// Partial output; the complete event follows.
	case "assistant.idle", "model.call_start", "model.call_finished", "model.call_final_result":
		// Progress of the agent loop (1.0.x): the turn, message and tool
		// events around them say what happened.
	case "tool.execution_start":
		c.toolStart(&d, e.Timestamp)
	case "tool.execution_complete":
		c.toolComplete(&d, e.Timestamp)
	case "assistant.usage":
		// Copilot's "cost" counts premium requests, not dollars, so it is
		// not reported as CostUSD.
		s.addUsage(readCopilotUsage(e.Data))
		s.setModel(d.Model)
		s.res.Agent.DurationMS += d.Duration
	case "session.error":
		s.fail(d.Message)
	case "result":
		s.flush()
		if e.ExitCode != 0 {
			s.fail(fmt.Sprintf("copilot exited with code %d", e.ExitCode))
		}
	default:
		if len(e.Type) > 8 && e.Type[:8] == "session." {
			s.setModel(d.Model)
			return nil
		}
		if e.Ephemeral {
			// Copilot marks the events that are not part of the
			// session's history (progress, deltas): nothing is lost.
			return nil
		}
		s.skip(SkipUnknownEvent)
	}
	return nil
}

// message is a complete assistant message, with the tools it asks for.
func (c *copilot) message(d *copilotData, ts time.Time) {
	s := c.st
	c.complete[d.MessageID] = true
	delete(c.deltas, d.MessageID)
	s.text(d.Content, ts)
	_ = rawjson.EachElem(d.ToolRequests, func(r []byte) {
		id, name := rawjson.Str(field(r, "toolCallId")), rawjson.Str(field(r, "name"))
		args := field(r, "arguments")
		var in any
		if len(args) > 0 && args[0] == '"' {
			in = jsonText(rawjson.Str(args))
		} else {
			in = raw(args)
		}
		s.toolUse(id, name, in, ts)
	})
	s.flush()
}

// toolStart opens a tool call; one without an id is remembered by its
// tool's name, for the completion to find.
func (c *copilot) toolStart(d *copilotData, ts time.Time) {
	s := c.st
	id := d.ToolCallID
	if id == "" {
		s.anon++
		id = fmt.Sprintf("copilot-tool-%d", s.anon)
		c.byName[d.ToolName] = append(c.byName[d.ToolName], id)
	}
	s.flush()
	s.call(id, d.ToolName, raw(d.Arguments), ts)
}

func (c *copilot) toolComplete(d *copilotData, ts time.Time) {
	s := c.st
	id := d.ToolCallID
	if id == "" {
		if q := c.byName[d.ToolName]; len(q) > 0 {
			id, c.byName[d.ToolName] = q[0], q[1:]
		} else {
			s.anon++
			id = fmt.Sprintf("copilot-tool-%d", s.anon)
		}
	}
	errMsg := ""
	if string(d.Success) == "false" {
		errMsg = cmp.Or(errMessage(d.Error), "tool failed")
	}
	s.flush()
	s.result(id, d.ToolName, raw(d.Result), errMsg, ts)
}

func (c *copilot) finish() {
	s := c.st
	for _, id := range c.deltaOrder {
		text, ok := c.deltas[id]
		if !ok {
			continue
		}
		// Deltas without a message id belong to whichever message had no
		// id either; if one arrived complete, the deltas repeat it.
		if id == "" && c.complete[""] {
			s.skip("message delta superseded")
			continue
		}
		s.text(text, time.Time{})
		s.flush()
	}
}
