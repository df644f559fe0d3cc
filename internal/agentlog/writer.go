package agentlog

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/reelhq/reel/internal/safefile"
)

// Builder assembles a trace record by record, computing content ids and
// chaining parents the way Shadow's writer does: each record points at the
// record before it, except a chat_response or chunk, which points at its
// chat_request, and a tool_result, which points at its tool_call.
type Builder struct {
	recs    []Record
	last    time.Time
	request string            // id of the latest chat_request
	calls   map[string]string // tool_call_id → tool_call record id
}

// NewBuilder returns an empty Builder.
func NewBuilder() *Builder { return &Builder{calls: map[string]string{}} }

// Records returns the records built so far.
func (b *Builder) Records() []Record { return b.recs }

// Add appends a record of kind with payload (any JSON-marshalable value or
// json.RawMessage) and meta (nil for none) at time ts. Timestamps are
// clamped so they never decrease along the trace. It returns the new id.
func (b *Builder) Add(kind string, ts time.Time, payload any, meta any) (string, error) {
	raw, err := marshal(payload)
	if err != nil {
		return "", fmt.Errorf("%s payload: %w", kind, err)
	}
	id, err := ContentID(raw)
	if err != nil {
		return "", fmt.Errorf("%s payload: %w", kind, err)
	}
	var metaRaw json.RawMessage
	if meta != nil {
		if metaRaw, err = marshal(meta); err != nil {
			return "", fmt.Errorf("%s meta: %w", kind, err)
		}
	}
	ts = ts.UTC().Truncate(time.Millisecond)
	if ts.Before(b.last) {
		ts = b.last
	}
	b.last = ts
	rec := Record{Version: Version, ID: id, Kind: kind, TS: ts.Format(TimeLayout), Meta: metaRaw, Payload: raw}
	if len(b.recs) > 0 {
		rec.Parent = b.recs[len(b.recs)-1].ID
	}
	switch kind {
	case KindChatRequest:
		b.request = id
	case KindChatResponse, KindChunk:
		if b.request != "" {
			rec.Parent = b.request
		}
	case KindToolCall:
		var p struct {
			ID string `json:"tool_call_id"`
		}
		if json.Unmarshal(raw, &p) == nil && p.ID != "" {
			b.calls[p.ID] = id
		}
	case KindToolResult:
		var p struct {
			ID string `json:"tool_call_id"`
		}
		if json.Unmarshal(raw, &p) == nil {
			if call, ok := b.calls[p.ID]; ok {
				rec.Parent = call
			}
		}
	case KindMetadata:
		if len(b.recs) == 0 {
			rec.Parent = ""
		}
	}
	b.recs = append(b.recs, rec)
	return id, nil
}

func marshal(v any) (json.RawMessage, error) {
	switch x := v.(type) {
	case json.RawMessage:
		return x, nil
	case []byte:
		return x, nil
	}
	return json.Marshal(v)
}

// Encode writes recs as JSON Lines.
func Encode(w io.Writer, recs []Record) error {
	bw := bufio.NewWriter(w)
	var line []byte
	for i := range recs {
		var err error
		line, err = AppendRecord(line[:0], &recs[i])
		if err != nil {
			return err
		}
		line = append(line, '\n')
		if _, err := bw.Write(line); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// WriteFile writes recs to path atomically (written beside it, synced,
// renamed over it), the file 0600 and new directories 0700, never through
// a link planted at its name (package safefile).
func WriteFile(path string, recs []Record) error {
	f, err := safefile.Create(path)
	if err != nil {
		return fmt.Errorf("write trace: %w", err)
	}
	defer f.Close()
	if err := Encode(f, recs); err != nil {
		return fmt.Errorf("write trace %s: %w", path, err)
	}
	if err := f.Commit(); err != nil {
		return fmt.Errorf("write trace: %w", err)
	}
	return nil
}
