package agentlog

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/reelhq/reel/internal/rawjson"
	"github.com/reelhq/reel/transcript"
)

// An imported trace must export back record for record: the same payloads,
// so the same content ids, the same timestamps, parents and meta. The
// transcript events hold a record's content (a request's prompt, a
// response's blocks, a tool's input and output); what they cannot hold
// (request params and tools, a response's model, stop reason, usage and
// latency, a result's latency, fields reel does not know, the records that
// become no event) is kept beside them, in the step's or the run's result
// under agentlog.trace, as the difference between the record's payload and
// the payload its event gives back. Export rebuilds each payload from its
// event and that difference, so an edit of the transcript shows in the
// trace it exports (with new content ids), and nothing else changes.

// Trace is what an import keeps of the records of one step (or of the
// run, for the records that belong to no step).
type Trace struct {
	Records []SourceRecord `json:"records"`
	// SyntheticCalls and SyntheticResults name the tool.call and
	// tool.result events the import made without a record: a tool_use
	// block whose call the trace does not record, a result without its
	// call, a call that never got a result. Export skips them.
	SyntheticCalls   []string `json:"synthetic_calls,omitempty"`
	SyntheticResults []string `json:"synthetic_results,omitempty"`
}

// SourceRecord is one record of an imported trace, less what its event
// holds.
type SourceRecord struct {
	// Index is the record's position in the trace, from 0.
	Index   int             `json:"index"`
	ID      string          `json:"id"`
	Kind    string          `json:"kind"`
	TS      string          `json:"ts"`
	Parent  string          `json:"parent,omitempty"`
	Version string          `json:"version,omitempty"` // when not "0.1"
	Meta    json.RawMessage `json:"meta,omitempty"`
	// Event says the record became an exchange event (or, for a chunk, a
	// stream block of one): its payload is the event's with Set's members
	// over it and Unset's removed. A record without an event has its
	// whole payload in Set.
	Event bool                       `json:"event,omitempty"`
	Set   map[string]json.RawMessage `json:"set,omitempty"`
	Unset []string                   `json:"unset,omitempty"`
	// PrevMessages: a chat_request's messages begin with this many of the
	// previous request's (Shadow requests repeat the conversation), and
	// Set.messages holds only the ones after them.
	PrevMessages int `json:"prev_messages,omitempty"`
}

// derived is the payload an exchange event gives back, by member, each
// value in canonical form.
type derived map[string]json.RawMessage

func members(v any) (derived, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return canonicalMembers(raw)
}

// canonicalMembers splits the object raw into its members in canonical
// form, so two payloads compare member by member as bytes.
func canonicalMembers(raw []byte) (derived, error) {
	c, err := Canonical(raw)
	if err != nil {
		return nil, err
	}
	d := derived{}
	err = eachMember(c, func(k string, v json.RawMessage) { d[k] = v })
	return d, err
}

// eachMember calls fn with every member of the JSON object raw, its key
// decoded.
func eachMember(raw []byte, fn func(key string, val json.RawMessage)) error {
	var bad error
	err := rawjson.Each(raw, func(k, v []byte) bool {
		key := string(k)
		if bytes.IndexByte(k, '\\') >= 0 {
			s, _, err := rawjson.Unquote(append(append([]byte{'"'}, k...), '"'), 0)
			if err != nil {
				bad = err
				return false
			}
			key = s
		}
		fn(key, v)
		return true
	})
	if err == nil {
		err = bad
	}
	return err
}

// requestPayload is the chat_request an event gives back.
func requestPayload(mp *transcript.MessagePayload) (derived, error) {
	msgs, _ := requestMessages(mp)
	return members(map[string]any{"messages": msgs})
}

// responsePayload is the chat_response an event gives back.
func responsePayload(mp *transcript.MessagePayload) (derived, error) {
	content, stop, _ := responseContent(mp)
	return members(map[string]any{"content": content, "stop_reason": stop})
}

func toolCallPayload(tp *transcript.ToolPayload) (derived, error) {
	return members(toolCall{ToolName: tp.Name, ToolCallID: tp.CallID, Arguments: arguments(tp.Input)})
}

func toolResultPayload(tp *transcript.ToolPayload) (derived, error) {
	out, _ := toolOutput(tp)
	return members(map[string]any{"tool_call_id": tp.CallID, "output": out, "is_error": tp.Error != ""})
}

func chunkDelta(b transcript.ContentBlock) (derived, error) {
	c, err := Canonical([]byte(b.Chunk))
	if err != nil {
		return nil, fmt.Errorf("stream block: %w", err)
	}
	return derived{"delta": c}, nil
}

// sameJSON compares two JSON values in Shadow's canonical form.
func sameJSON(a, b json.RawMessage) bool {
	if bytes.Equal(a, b) {
		return true
	}
	ca, err1 := Canonical(a)
	cb, err2 := Canonical(b)
	return err1 == nil && err2 == nil && bytes.Equal(ca, cb)
}

// diff sets src's Set and Unset to what payload has that d lacks or holds
// otherwise. With no d (no event), Set is the whole payload.
func (src *SourceRecord) diff(payload json.RawMessage, d derived) error {
	orig, err := canonicalMembers(payload)
	if err != nil {
		return fmt.Errorf("payload is not an object: %w", err)
	}
	src.Set = map[string]json.RawMessage{}
	for k, v := range orig {
		if dv, ok := d[k]; !ok || !bytes.Equal(dv, v) {
			src.Set[k] = v
		}
	}
	for k := range d {
		if _, ok := orig[k]; !ok {
			src.Unset = append(src.Unset, k)
		}
	}
	sort.Strings(src.Unset)
	if len(src.Set) == 0 {
		src.Set = nil
	}
	return nil
}

// shareMessages replaces the messages kept in Set by those after the
// prefix they share with prev, the previous request's.
func (src *SourceRecord) shareMessages(prev []json.RawMessage) {
	raw, ok := src.Set["messages"]
	if !ok || len(prev) == 0 {
		return
	}
	var msgs []json.RawMessage
	if json.Unmarshal(raw, &msgs) != nil {
		return
	}
	n := 0
	for n < len(msgs) && n < len(prev) && sameJSON(msgs[n], prev[n]) {
		n++
	}
	if n == 0 {
		return
	}
	rest, err := json.Marshal(msgs[n:])
	if err != nil {
		return
	}
	src.Set["messages"] = rest
	src.PrevMessages = n
}

// payload rebuilds the record's payload from d (nil for a record without
// an event) and the kept difference; prev are the previous request's
// messages.
func (src *SourceRecord) payload(d derived, prev []json.RawMessage) (json.RawMessage, error) {
	out := map[string]json.RawMessage{}
	for k, v := range d {
		out[k] = v
	}
	for _, k := range src.Unset {
		delete(out, k)
	}
	for k, v := range src.Set {
		out[k] = v
	}
	if src.PrevMessages > 0 {
		if src.PrevMessages > len(prev) {
			return nil, fmt.Errorf("record %s shares %d messages with a request that has %d", src.ID, src.PrevMessages, len(prev))
		}
		var rest []json.RawMessage
		if err := json.Unmarshal(out["messages"], &rest); err != nil {
			return nil, fmt.Errorf("record %s: messages: %w", src.ID, err)
		}
		all := append(append([]json.RawMessage{}, prev[:src.PrevMessages]...), rest...)
		raw, err := json.Marshal(all)
		if err != nil {
			return nil, err
		}
		out["messages"] = raw
	}
	return json.Marshal(out)
}

// requestMessagesOf returns the messages of a chat_request payload.
func requestMessagesOf(payload json.RawMessage) []json.RawMessage {
	var p struct {
		Messages []json.RawMessage `json:"messages"`
	}
	_ = json.Unmarshal(payload, &p)
	return p.Messages
}
