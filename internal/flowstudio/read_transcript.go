package flowstudio

import (
	"cmp"
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"github.com/reelhq/reel/transcript"
)

type call struct{ id, name string }

// emitTranscript emits a step's transcript as message and tool events and
// returns the usage its lines report, if any.
func (im *importer) emitTranscript(a *artifact, s stepState, info *StepInfo, ar *transcript.AgentResult, errText *string) *transcript.Usage {
	f, err := im.fsys.Open(a.transcriptFile)
	if err != nil {
		im.warn("%s: %v", a.transcriptFile, err)
		return nil
	}
	defer f.Close()
	st := &stepTranscript{im: im, ar: ar, errText: errText, at: -1}
	err = eachLine(f, im.maxLine, func(n int, line []byte) {
		entries, err := ParseLine(line)
		if err != nil {
			im.warn("%s:%d: skipped: %v", a.transcriptFile, n, err)
			info.Skipped++
			return
		}
		for _, e := range entries {
			st.entry(e)
		}
	})
	if err != nil {
		im.warn("%s: %v", a.transcriptFile, err)
	}
	st.at = -1
	st.flushSystem(im.last)
	for _, c := range st.open {
		st.toolResult(im.last, c.id, c.name, nil, "no result: the transcript ended before the tool result", nil, "")
	}
	sortPending(st.buf)
	for _, p := range st.buf {
		im.emit(p.ts, p.typ, s.path, s.iter, p.p)
	}
	return st.usage
}

// stepTranscript turns the entries of one step's transcript into events.
// The step's events are collected first: a reel export numbers them
// (reel_seq, reel_call_seq), and a tool line, which stands for a call and
// its result at the result's place, has its call put back where it was
// (before the message that asked for it, say). Lines without the numbers
// keep their order.
type stepTranscript struct {
	im      *importer
	ar      *transcript.AgentResult
	errText *string
	usage   *transcript.Usage
	system  *string   // a system prompt waiting for its user message
	open    []call    // calls without a result yet
	buf     []pending // the step's events, waiting for their place
	at      int       // the current line's place
}

const (
	router = transcript.FidelityRouter
	agent  = transcript.FidelityAgentEmitted
)

func (st *stepTranscript) entry(e Entry) {
	st.at = e.Seq
	switch e.Kind {
	case EntryMessage:
		st.message(e)
	case EntryToolUse:
		st.flushSystem(e.Time)
		id := e.ToolID
		if id == "" {
			id = st.newID()
		}
		st.open = append(st.open, call{id, e.ToolName})
		st.toolCall(st.at, e.Time, id, e.ToolName, e.Input, "")
	case EntryToolResult:
		st.result(e)
	case EntryTool:
		st.tool(e)
	case EntryUsage:
		if e.Usage != nil {
			if st.usage == nil {
				st.usage = &transcript.Usage{}
			}
			st.usage.Add(*e.Usage)
		}
	case EntryError:
		if *st.errText == "" {
			*st.errText = e.Text
		} else {
			*st.errText += "; " + e.Text
		}
	case EntryOther:
		if e.Model != "" && st.ar.Model == "" {
			st.ar.Model = e.Model
		}
	}
}

func (st *stepTranscript) message(e Entry) {
	switch e.Role {
	case "system":
		st.flushSystem(e.Time)
		t := e.Text
		st.system = &t
	case "user":
		blocks := e.Blocks
		if !e.Exact {
			blocks = []transcript.ContentBlock{{Type: transcript.BlockText, Fidelity: router, Text: e.Text}}
			if st.system != nil && *st.system != "" {
				blocks = append(blocks, transcript.ContentBlock{Type: transcript.BlockText, Fidelity: router, Text: *st.system})
			}
		}
		st.system = nil
		st.emit(e.Time, transcript.MessageUser, &transcript.MessagePayload{Role: "user", Blocks: blocks})
	default:
		st.flushSystem(e.Time)
		blocks := e.Blocks
		if blocks == nil {
			blocks = []transcript.ContentBlock{{Type: transcript.BlockText, Fidelity: agent, Text: e.Text}}
		}
		st.emit(e.Time, transcript.MessageAssistant, &transcript.MessagePayload{Role: "assistant", Blocks: blocks})
		st.ar.Turns++
		if e.Text != "" {
			st.ar.Output = e.Text
		}
		if e.Model != "" {
			st.ar.Model = e.Model
		}
	}
}

// result pairs a tool result with its open call, by id or else by name; a
// result with no call gets one.
func (st *stepTranscript) result(e Entry) {
	i := -1
	for j, c := range st.open {
		if (e.ToolID != "" && c.id == e.ToolID) || (e.ToolID == "" && c.name == e.ToolName) {
			i = j
			break
		}
	}
	var c call
	if i < 0 {
		c = call{e.ToolID, e.ToolName}
		if c.id == "" {
			c.id = st.newID()
		}
		st.toolCall(st.at, e.Time, c.id, c.name, nil, "")
	} else {
		c = st.open[i]
		st.open = append(st.open[:i], st.open[i+1:]...)
	}
	if c.name == "" {
		c.name = e.ToolName
	}
	st.toolResult(e.Time, c.id, c.name, e.Output, e.Error, nil, "")
}

// tool is a line that stands for a call and its result.
func (st *stepTranscript) tool(e Entry) {
	st.flushSystem(e.Time)
	id := e.ToolID
	if id == "" {
		id = st.newID()
	}
	callT := e.CallTime
	if callT.IsZero() {
		callT = e.Time
	}
	place := e.CallSeq
	if place < 0 {
		place = st.at
	}
	st.toolCall(place, callT, id, e.ToolName, e.Input, e.Fidelity)
	if e.Seq < 0 && e.CallSeq >= 0 {
		// A call that never got a result: its no-result line goes where
		// the call was.
		st.at = e.CallSeq
	}
	st.toolResult(e.Time, id, e.ToolName, e.Output, e.Error, e.ResultInput, cmp.Or(e.ResultFidelity, e.Fidelity))
}

func (st *stepTranscript) put(place int, ts time.Time, typ transcript.EventType, p any) {
	st.buf = append(st.buf, pending{place: place, order: len(st.buf), ts: ts, typ: typ, p: p})
}

func (st *stepTranscript) emit(ts time.Time, typ transcript.EventType, p any) {
	st.put(st.at, ts, typ, p)
}

// flushSystem writes a system prompt no user message took, as a user
// message of its own.
func (st *stepTranscript) flushSystem(ts time.Time) {
	if st.system == nil {
		return
	}
	st.emit(ts, transcript.MessageUser, &transcript.MessagePayload{Role: "user", Blocks: []transcript.ContentBlock{
		{Type: transcript.BlockText, Fidelity: router}, {Type: transcript.BlockText, Fidelity: router, Text: *st.system}}})
	st.system = nil
}

func (st *stepTranscript) newID() string {
	st.im.nextCall++
	return fmt.Sprintf("flowstudio-%d", st.im.nextCall)
}

func (st *stepTranscript) toolCall(place int, ts time.Time, id, name string, in json.RawMessage, fid transcript.Fidelity) {
	var input any
	if len(in) > 0 {
		input = in
	}
	st.put(place, ts, transcript.ToolCall, &transcript.ToolPayload{Name: name, CallID: id, Input: input, Fidelity: cmp.Or(fid, agent)})
}

func (st *stepTranscript) toolResult(ts time.Time, id, name string, out json.RawMessage, errT string, in json.RawMessage, fid transcript.Fidelity) {
	var output, input any
	if len(out) > 0 && string(out) != "null" {
		output = out
	}
	if len(in) > 0 {
		input = in
	}
	st.emit(ts, transcript.ToolResult, &transcript.ToolPayload{Name: name, CallID: id, Input: input, Output: output, Error: errT, Fidelity: cmp.Or(fid, agent)})
}

// pending is an event of a step's transcript waiting for its place.
type pending struct {
	place, order int
	ts           time.Time
	typ          transcript.EventType
	p            any
}

// sortPending orders events by the place reel numbered them with, a call
// before its result at the same place; events without a number keep their
// line order after the numbered event before them.
func sortPending(buf []pending) {
	numbered := false
	for _, p := range buf {
		numbered = numbered || p.place >= 0
	}
	if !numbered {
		return
	}
	// Unnumbered events take the place of the event before them.
	last := -1
	for i := range buf {
		if buf[i].place < 0 {
			buf[i].place = last
		} else {
			last = buf[i].place
		}
	}
	sort.SliceStable(buf, func(i, j int) bool {
		if buf[i].place != buf[j].place {
			return buf[i].place < buf[j].place
		}
		return buf[i].order < buf[j].order
	})
}
