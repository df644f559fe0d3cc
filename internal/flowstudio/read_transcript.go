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
	var usage *transcript.Usage
	var system *string
	var open []call
	router, agent := transcript.FidelityRouter, transcript.FidelityAgentEmitted
	// The step's events are collected first: a reel export numbers them
	// (reel_seq, reel_call_seq), and a tool line, which stands for a call
	// and its result at the result's place, has its call put back where it
	// was (before the message that asked for it, say). Lines without the
	// numbers keep their order.
	var buf []pending
	at := -1 // the current line's place
	put := func(place int, ts time.Time, typ transcript.EventType, p any) {
		buf = append(buf, pending{place: place, order: len(buf), ts: ts, typ: typ, p: p})
	}
	emit := func(ts time.Time, typ transcript.EventType, p any) { put(at, ts, typ, p) }
	flushSystem := func(ts time.Time) {
		if system == nil {
			return
		}
		emit(ts, transcript.MessageUser, &transcript.MessagePayload{Role: "user", Blocks: []transcript.ContentBlock{
			{Type: transcript.BlockText, Fidelity: router}, {Type: transcript.BlockText, Fidelity: router, Text: *system}}})
		system = nil
	}
	newID := func() string {
		im.nextCall++
		return fmt.Sprintf("flowstudio-%d", im.nextCall)
	}
	toolCall := func(place int, ts time.Time, id, name string, in json.RawMessage, fid transcript.Fidelity) {
		var input any
		if len(in) > 0 {
			input = in
		}
		put(place, ts, transcript.ToolCall, &transcript.ToolPayload{Name: name, CallID: id, Input: input, Fidelity: cmp.Or(fid, agent)})
	}
	toolResult := func(ts time.Time, id, name string, out json.RawMessage, errT string, in json.RawMessage, fid transcript.Fidelity) {
		var output, input any
		if len(out) > 0 && string(out) != "null" {
			output = out
		}
		if len(in) > 0 {
			input = in
		}
		emit(ts, transcript.ToolResult, &transcript.ToolPayload{Name: name, CallID: id, Input: input, Output: output, Error: errT, Fidelity: cmp.Or(fid, agent)})
	}
	err = eachLine(f, im.maxLine, func(n int, line []byte) {
		entries, err := ParseLine(line)
		if err != nil {
			im.warn("%s:%d: skipped: %v", a.transcriptFile, n, err)
			info.Skipped++
			return
		}
		for _, e := range entries {
			at = e.Seq
			switch e.Kind {
			case EntryMessage:
				switch e.Role {
				case "system":
					flushSystem(e.Time)
					t := e.Text
					system = &t
				case "user":
					blocks := e.Blocks
					if !e.Exact {
						blocks = []transcript.ContentBlock{{Type: transcript.BlockText, Fidelity: router, Text: e.Text}}
						if system != nil && *system != "" {
							blocks = append(blocks, transcript.ContentBlock{Type: transcript.BlockText, Fidelity: router, Text: *system})
						}
					}
					system = nil
					emit(e.Time, transcript.MessageUser, &transcript.MessagePayload{Role: "user", Blocks: blocks})
				default:
					flushSystem(e.Time)
					blocks := e.Blocks
					if blocks == nil {
						blocks = []transcript.ContentBlock{{Type: transcript.BlockText, Fidelity: agent, Text: e.Text}}
					}
					emit(e.Time, transcript.MessageAssistant, &transcript.MessagePayload{Role: "assistant", Blocks: blocks})
					ar.Turns++
					if e.Text != "" {
						ar.Output = e.Text
					}
					if e.Model != "" {
						ar.Model = e.Model
					}
				}
			case EntryToolUse:
				flushSystem(e.Time)
				id := e.ToolID
				if id == "" {
					id = newID()
				}
				open = append(open, call{id, e.ToolName})
				toolCall(at, e.Time, id, e.ToolName, e.Input, "")
			case EntryToolResult:
				i := -1
				for j, c := range open {
					if (e.ToolID != "" && c.id == e.ToolID) || (e.ToolID == "" && c.name == e.ToolName) {
						i = j
						break
					}
				}
				var c call
				if i < 0 {
					c = call{e.ToolID, e.ToolName}
					if c.id == "" {
						c.id = newID()
					}
					toolCall(at, e.Time, c.id, c.name, nil, "")
				} else {
					c = open[i]
					open = append(open[:i], open[i+1:]...)
				}
				if c.name == "" {
					c.name = e.ToolName
				}
				toolResult(e.Time, c.id, c.name, e.Output, e.Error, nil, "")
			case EntryTool:
				flushSystem(e.Time)
				id := e.ToolID
				if id == "" {
					id = newID()
				}
				callT := e.CallTime
				if callT.IsZero() {
					callT = e.Time
				}
				place := e.CallSeq
				if place < 0 {
					place = at
				}
				toolCall(place, callT, id, e.ToolName, e.Input, e.Fidelity)
				if e.Seq < 0 && e.CallSeq >= 0 {
					// A call that never got a result: its no-result line
					// goes where the call was.
					at = e.CallSeq
				}
				toolResult(e.Time, id, e.ToolName, e.Output, e.Error, e.ResultInput, cmp.Or(e.ResultFidelity, e.Fidelity))
			case EntryUsage:
				if e.Usage != nil {
					if usage == nil {
						usage = &transcript.Usage{}
					}
					usage.Add(*e.Usage)
				}
			case EntryError:
				if *errText == "" {
					*errText = e.Text
				} else {
					*errText += "; " + e.Text
				}
			case EntryOther:
				if e.Model != "" && ar.Model == "" {
					ar.Model = e.Model
				}
			}
		}
	})
	if err != nil {
		im.warn("%s: %v", a.transcriptFile, err)
	}
	at = -1
	flushSystem(im.last)
	for _, c := range open {
		toolResult(im.last, c.id, c.name, nil, "no result: the transcript ended before the tool result", nil, "")
	}
	sortPending(buf)
	for _, p := range buf {
		im.emit(p.ts, p.typ, s.path, s.iter, p.p)
	}
	return usage
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
