// Package agentlog reads and writes Shadow's .agentlog traces: JSON-Lines
// files of content-addressed records (id = sha256 of the canonical JSON of
// the payload) linked into a DAG by parent ids, and converts them to and
// from reel's canonical transcript events.
package agentlog

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/reelhq/reel/internal/rawjson"
)

// Version is the envelope version Shadow writes for every kind.
const Version = "0.1"

// Record kinds. The v0.1 set plus the three v0.2 extensions.
const (
	KindMetadata      = "metadata"
	KindChatRequest   = "chat_request"
	KindChatResponse  = "chat_response"
	KindToolCall      = "tool_call"
	KindToolResult    = "tool_result"
	KindError         = "error"
	KindReplaySummary = "replay_summary"
	KindChunk         = "chunk"
	KindHarnessEvent  = "harness_event"
	KindBlobRef       = "blob_ref"
)

// KnownKind reports whether kind is one of the v0.1 or v0.2 kinds.
func KnownKind(kind string) bool {
	switch kind {
	case KindMetadata, KindChatRequest, KindChatResponse, KindToolCall, KindToolResult,
		KindError, KindReplaySummary, KindChunk, KindHarnessEvent, KindBlobRef:
		return true
	}
	return false
}

// TimeLayout is the ts layout Shadow writes: UTC with milliseconds.
const TimeLayout = "2006-01-02T15:04:05.000Z"

// Record is one line of a trace. Payload and Meta keep their bytes as read
// so unknown fields survive a round trip.
type Record struct {
	Version string
	ID      string
	Kind    string
	TS      string
	// Parent is "" for the root (JSON null).
	Parent  string
	Meta    json.RawMessage
	Payload json.RawMessage
}

// Time parses TS.
func (r *Record) Time() (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, r.TS)
	if err != nil {
		return time.Time{}, fmt.Errorf("record %s: ts %q: %w", r.ID, r.TS, err)
	}
	return t, nil
}

// MarshalJSON writes the envelope in Shadow's field order.
func (r Record) MarshalJSON() ([]byte, error) {
	return AppendRecord(nil, &r)
}

// AppendRecord appends r's JSON line (without newline) to dst.
func AppendRecord(dst []byte, r *Record) ([]byte, error) {
	if len(r.Payload) == 0 || !json.Valid(r.Payload) {
		return dst, fmt.Errorf("record %s (%s): payload is not valid JSON", r.ID, r.Kind)
	}
	if len(r.Meta) > 0 && !json.Valid(r.Meta) {
		return dst, fmt.Errorf("record %s (%s): meta is not valid JSON", r.ID, r.Kind)
	}
	v := r.Version
	if v == "" {
		v = Version
	}
	dst = append(dst, `{"version":`...)
	dst = appendEscaped(dst, v)
	dst = append(dst, `,"id":`...)
	dst = appendEscaped(dst, r.ID)
	dst = append(dst, `,"kind":`...)
	dst = appendEscaped(dst, r.Kind)
	dst = append(dst, `,"ts":`...)
	dst = appendEscaped(dst, r.TS)
	dst = append(dst, `,"parent":`...)
	if r.Parent == "" {
		dst = append(dst, "null"...)
	} else {
		dst = appendEscaped(dst, r.Parent)
	}
	if len(r.Meta) > 0 {
		dst = append(dst, `,"meta":`...)
		var err error
		if dst, err = appendCompact(dst, r.Meta); err != nil {
			return dst, err
		}
	}
	dst = append(dst, `,"payload":`...)
	var err error
	if dst, err = appendCompact(dst, r.Payload); err != nil {
		return dst, err
	}
	return append(dst, '}'), nil
}

func appendCompact(dst, raw []byte) ([]byte, error) {
	// Canonical form is compact, valid and newline-free, which is all a
	// JSONL line needs; Shadow itself does not require it on the wire.
	c, err := Canonical(raw)
	if err != nil {
		return dst, err
	}
	return append(dst, c...), nil
}

// Errors the reader reports; match them with errors.Is.
var (
	// ErrIDMismatch: a record's id is not the content hash of its payload.
	ErrIDMismatch = errors.New("id does not match the payload's content hash")
	// ErrParent: a parent link breaks the chain rules.
	ErrParent = errors.New("bad parent link")
	// ErrMalformed: a line is not a valid record.
	ErrMalformed = errors.New("malformed record")
	// ErrLineTooLong: a record is over the per-line limit.
	ErrLineTooLong = errors.New("record exceeds the line limit")
	// ErrTraceTooLarge: a trace is over the per-trace limit.
	ErrTraceTooLarge = errors.New("trace exceeds the size limit")
)

// RecordError locates a problem at one record of a trace.
type RecordError struct {
	Line int
	ID   string
	Kind string
	Err  error
}

func (e *RecordError) Error() string {
	switch {
	case e.ID != "" && e.Kind != "":
		return fmt.Sprintf("line %d: %s record %s: %v", e.Line, e.Kind, e.ID, e.Err)
	case e.ID != "":
		return fmt.Sprintf("line %d: record %s: %v", e.Line, e.ID, e.Err)
	}
	return fmt.Sprintf("line %d: %v", e.Line, e.Err)
}

func (e *RecordError) Unwrap() error { return e.Err }

// ParseRecord decodes one line into a Record, checking the envelope's
// shape but not the id or the parent chain.
func ParseRecord(line []byte) (Record, error) {
	env, err := decodeEnvelope(line)
	if err != nil {
		return Record{}, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	var r Record
	switch {
	case env.Version == nil:
		return r, fmt.Errorf("%w: no version", ErrMalformed)
	case env.ID == nil || *env.ID == "":
		return r, fmt.Errorf("%w: no id", ErrMalformed)
	case env.Kind == nil || *env.Kind == "":
		return r, fmt.Errorf("%w: no kind", ErrMalformed)
	case env.TS == nil:
		return r, fmt.Errorf("%w: no ts", ErrMalformed)
	case len(env.Payload) == 0 || string(env.Payload) == "null":
		return r, fmt.Errorf("%w: no payload", ErrMalformed)
	}
	r = Record{Version: *env.Version, ID: *env.ID, Kind: *env.Kind, TS: *env.TS, Payload: env.Payload}
	if r.Version != Version {
		return r, fmt.Errorf("%w: version %q, want %q", ErrMalformed, r.Version, Version)
	}
	if env.Parent != nil {
		if *env.Parent == "" {
			return r, fmt.Errorf("%w: empty parent", ErrMalformed)
		}
		r.Parent = *env.Parent
	}
	if len(env.Meta) > 0 && string(env.Meta) != "null" {
		r.Meta = env.Meta
	}
	if _, err := time.Parse(time.RFC3339Nano, r.TS); err != nil {
		return r, fmt.Errorf("%w: ts %q is not RFC 3339", ErrMalformed, r.TS)
	}
	return r, nil
}

type envelope struct {
	Version, ID, Kind, TS, Parent *string
	Meta, Payload                 json.RawMessage
}

// decodeEnvelope reads the envelope's members without reflection: a
// trace's lines are many. Payload and meta are copied out of line, which
// the reader reuses; a repeated key keeps its last value, as with
// encoding/json.
func decodeEnvelope(line []byte) (envelope, error) {
	var env envelope
	if !json.Valid(line) {
		var v any
		if err := json.Unmarshal(line, &v); err != nil {
			return env, err
		}
		return env, errors.New("invalid JSON")
	}
	var err error
	text := func(key string, v []byte) *string {
		if string(v) == "null" {
			return nil
		}
		s, ok := jsonString(v)
		if !ok && err == nil {
			err = fmt.Errorf("%s is not a string", key)
		}
		return &s
	}
	walk := rawjson.Each(line, func(k, v []byte) bool {
		switch string(k) {
		case "version":
			env.Version = text("version", v)
		case "id":
			env.ID = text("id", v)
		case "kind":
			env.Kind = text("kind", v)
		case "ts":
			env.TS = text("ts", v)
		case "parent":
			env.Parent = text("parent", v)
		case "meta":
			env.Meta = append(json.RawMessage(nil), v...)
		case "payload":
			env.Payload = append(json.RawMessage(nil), v...)
		}
		return err == nil
	})
	if walk != nil {
		return env, errors.New("not a JSON object")
	}
	return env, err
}

// jsonString decodes raw when it is a JSON string.
func jsonString(raw []byte) (string, bool) {
	if len(raw) == 0 || raw[0] != '"' {
		return "", false
	}
	c := canonicalizer{data: raw}
	s, err := c.str()
	if err != nil || c.pos != len(raw) {
		return "", false
	}
	return s, true
}
