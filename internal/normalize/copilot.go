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
	messageID, content, delta, toolCallID, toolName, sid, model, message string
	toolRequests, args, result, errv, success                            []byte
	duration                                                             int64
}

func parseCopilotData(data []byte) copilotData {
	var d copilotData
	_ = eachField(data, func(k, val []byte) {
		switch string(k) {
		case "messageId":
			d.messageID = rawjson.Str(val)
		case "content":
			d.content = rawjson.Str(val)
		case "deltaContent":
			d.delta = rawjson.Str(val)
		case "toolCallId":
			d.toolCallID = rawjson.Str(val)
		case "toolName":
			d.toolName = rawjson.Str(val)
		case "sessionId":
			d.sid = rawjson.Str(val)
		case "model", "selectedModel":
			d.model = rawjson.Str(val)
		case "message":
			d.message = rawjson.Str(val)
		case "toolRequests":
			d.toolRequests = val
		case "arguments":
			d.args = val
		case "result":
			d.result = val
		case "error":
			d.errv = val
		case "success":
			d.success = val
		case "duration":
			d.duration = num(val)
		}
	})
	return d
}

func (c *copilot) line(v []byte) error {
	var typ, sid string
	var data, usage, exitCode []byte
	var ts time.Time
	ephemeral := false
	err := eachField(v, func(k, val []byte) {
		switch string(k) {
		case "ephemeral":
			ephemeral = boolean(val)
		case "type":
			typ = rawjson.Str(val)
		case "data":
			data = val
		case "timestamp":
			ts = timestamp(val)
		case "sessionId":
			sid = rawjson.Str(val)
		case "usage":
			usage = val
		case "exitCode":
			exitCode = val
		}
	})
	if err != nil {
		return err
	}
	s := c.st
	d := parseCopilotData(data)
	if d.sid != "" {
		s.res.Agent.SessionID = d.sid
	}
	if sid != "" {
		s.res.Agent.SessionID = sid
	}
	switch typ {
	case "user.message":
		s.user([]string{d.content}, ts, true)
	case "assistant.turn_start":
		s.res.Agent.Turns++
	case "assistant.turn_end":
		s.flush()
	case "assistant.reasoning":
		s.thinking(d.content, ts)
	case "assistant.message":
		c.message(&d, ts)
	case "assistant.message_delta":
		if c.complete[d.messageID] {
			s.skip("message delta superseded")
			return nil
		}
		if _, ok := c.deltas[d.messageID]; !ok {
			c.deltaOrder = append(c.deltaOrder, d.messageID)
		}
		c.deltas[d.messageID] += d.delta
	case "assistant.reasoning_delta", "tool.execution_partial_result", "tool.execution_progress",
		"assistant.message_start", "assistant.tool_call_delta":
		// Partial output; the complete event follows.
	case "assistant.idle", "model.call_start", "model.call_finished", "model.call_final_result":
		// Progress of the agent loop (1.0.x): the turn, message and tool
		// events around them say what happened.
	case "tool.execution_start":
		c.toolStart(&d, ts)
	case "tool.execution_complete":
		c.toolComplete(&d, ts)
	case "assistant.usage":
		// Copilot's "cost" counts premium requests, not dollars, so it is
		// not reported as CostUSD.
		s.addUsage(copilotUsageKeys.read(data))
		s.setModel(d.model)
		s.res.Agent.DurationMS += d.duration
	case "session.error":
		s.fail(d.message)
	case "result":
		s.flush()
		if code := num(exitCode); code != 0 {
			s.fail(fmt.Sprintf("copilot exited with code %d", code))
		}
		_ = usage
	default:
		if len(typ) > 8 && typ[:8] == "session." {
			s.setModel(d.model)
			return nil
		}
		if ephemeral {
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
	c.complete[d.messageID] = true
	delete(c.deltas, d.messageID)
	s.text(d.content, ts)
	_ = rawjson.EachElem(d.toolRequests, func(r []byte) {
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
	id := d.toolCallID
	if id == "" {
		s.anon++
		id = fmt.Sprintf("copilot-tool-%d", s.anon)
		c.byName[d.toolName] = append(c.byName[d.toolName], id)
	}
	s.flush()
	s.call(id, d.toolName, raw(d.args), ts)
}

func (c *copilot) toolComplete(d *copilotData, ts time.Time) {
	s := c.st
	id := d.toolCallID
	if id == "" {
		if q := c.byName[d.toolName]; len(q) > 0 {
			id, c.byName[d.toolName] = q[0], q[1:]
		} else {
			s.anon++
			id = fmt.Sprintf("copilot-tool-%d", s.anon)
		}
	}
	errMsg := ""
	if string(d.success) == "false" {
		errMsg = cmp.Or(errMessage(d.errv), "tool failed")
	}
	s.flush()
	s.result(id, d.toolName, raw(d.result), errMsg, ts)
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
