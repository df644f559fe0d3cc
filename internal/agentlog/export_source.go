package agentlog

import (
	"encoding/json"
	"sort"

	"github.com/reelhq/reel/transcript"
)

// fromSource writes a run that ToTranscript made back as the trace it was
// made from: every record its source trace kept, in order, each payload
// rebuilt from its event and the kept difference, with the record's own
// timestamp, parent and meta. A record whose content the transcript no
// longer matches gets a new content id, and the parents naming it follow.
// ok is false when the run holds no source trace or its events no longer
// line up with it (steps added, events removed); the caller then exports
// the transcript the ordinary way.
func fromSource(events []transcript.ExchangeEvent) (recs []Record, ok bool, err error) {
	records, synthCall, synthResult := keptTrace(events)
	if len(records) == 0 {
		return nil, false, nil
	}
	sort.SliceStable(records, func(i, j int) bool { return records[i].Index < records[j].Index })
	for i, r := range records {
		if r.Index != i {
			return nil, false, nil // records missing: not a whole trace
		}
	}

	evs := traceEvents(events, synthCall, synthResult)

	newID := map[string]string{}
	var prevMessages []json.RawMessage
	next := 0 // next event in evs
	var stream *transcript.MessagePayload
	streamAt := 0 // next block of stream
	for _, src := range records {
		var d derived
		if src.Event {
			switch src.Kind {
			case KindChunk:
				if stream == nil || streamAt == len(stream.Blocks) {
					if next >= len(evs) || evs[next].Type != transcript.MessageAssistant || !allStream(evs[next].Message()) {
						return nil, false, nil
					}
					stream, streamAt = evs[next].Message(), 0
					next++
				}
				d, err = chunkDelta(stream.Blocks[streamAt])
				streamAt++
			default:
				if next >= len(evs) || !eventFits(src.Kind, evs[next]) {
					return nil, false, nil
				}
				e := evs[next]
				next++
				switch src.Kind {
				case KindChatRequest:
					d, err = requestPayload(e.Message())
				case KindChatResponse:
					d, err = responsePayload(e.Message())
				case KindToolCall:
					d, err = toolCallPayload(e.Tool())
				case KindToolResult:
					d, err = toolResultPayload(e.Tool())
				}
			}
			if err != nil {
				return nil, false, err
			}
		}
		payload, err := src.payload(d, prevMessages)
		if err != nil {
			return nil, false, err
		}
		if src.Kind == KindChatRequest {
			prevMessages = requestMessagesOf(payload)
		}
		id, err := ContentID(payload)
		if err != nil {
			return nil, false, err
		}
		if id != src.ID {
			newID[src.ID] = id
		}
		parent := src.Parent
		if p, moved := newID[parent]; moved {
			parent = p
		}
		version := src.Version
		if version == "" {
			version = Version
		}
		recs = append(recs, Record{Version: version, ID: id, Kind: src.Kind, TS: src.TS, Parent: parent, Meta: src.Meta, Payload: payload})
	}
	if next != len(evs) || stream != nil && streamAt != len(stream.Blocks) {
		return nil, false, nil // events the trace does not account for
	}
	return recs, true, nil
}

// eventFits reports whether e is the kind of event a record of kind
// becomes.
func eventFits(kind string, e *transcript.ExchangeEvent) bool {
	switch kind {
	case KindChatRequest:
		return e.Type == transcript.MessageUser && e.Message() != nil
	case KindChatResponse:
		return e.Type == transcript.MessageAssistant && e.Message() != nil && !allStream(e.Message())
	case KindToolCall:
		return e.Type == transcript.ToolCall && e.Tool() != nil
	case KindToolResult:
		return e.Type == transcript.ToolResult && e.Tool() != nil
	}
	return false
}

func allStream(mp *transcript.MessagePayload) bool {
	if mp == nil || len(mp.Blocks) == 0 {
		return false
	}
	for _, b := range mp.Blocks {
		if b.Type != transcript.BlockStream {
			return false
		}
	}
	return true
}

// keptTrace gathers the agentlog trace an import kept in the results of a
// transcript's steps and run, with the ids of the calls and results the
// import made up.
func keptTrace(events []transcript.ExchangeEvent) (records []SourceRecord, synthCall, synthResult map[string]bool) {
	synthCall, synthResult = map[string]bool{}, map[string]bool{}
	collect := func(result any) {
		var r struct {
			Agentlog *struct {
				Trace *Trace `json:"trace"`
			} `json:"agentlog"`
		}
		if result == nil || transcript.DecodeResult(result, &r) != nil || r.Agentlog == nil || r.Agentlog.Trace == nil {
			return
		}
		tr := r.Agentlog.Trace
		records = append(records, tr.Records...)
		for _, id := range tr.SyntheticCalls {
			synthCall[id] = true
		}
		for _, id := range tr.SyntheticResults {
			synthResult[id] = true
		}
	}
	for i := range events {
		switch events[i].Type {
		case transcript.StepCompleted, transcript.RunCompleted:
			if sp := events[i].Step(); sp != nil {
				collect(sp.Result)
			}
		}
	}
	return records, synthCall, synthResult
}

// traceEvents are the events the trace's records became, in order.
func traceEvents(events []transcript.ExchangeEvent, synthCall, synthResult map[string]bool) []*transcript.ExchangeEvent {
	var evs []*transcript.ExchangeEvent
	for i := range events {
		e := &events[i]
		switch e.Type {
		case transcript.MessageUser, transcript.MessageAssistant:
			evs = append(evs, e)
		case transcript.ToolCall:
			if tp := e.Tool(); tp != nil && !synthCall[tp.CallID] {
				evs = append(evs, e)
			}
		case transcript.ToolResult:
			if tp := e.Tool(); tp != nil && !synthResult[tp.CallID] {
				evs = append(evs, e)
			}
		}
	}
	return evs
}
