package transcript

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"time"
	"unicode/utf8"
)

// TimeLayout is the timestamp layout reel writes: UTC, fixed-width
// microseconds. Fixed width keeps timestamps byte-comparable, so range
// filters can compare them without parsing.
const TimeLayout = "2006-01-02T15:04:05.000000Z"

// AppendEvent appends the canonical JSON encoding of e to dst, without a
// trailing newline. It refuses events outside the closed vocabularies or
// whose payload does not fit the event type.
func AppendEvent(dst []byte, e *ExchangeEvent) ([]byte, error) {
	dst = append(dst, `{"seq":`...)
	dst = strconv.AppendUint(dst, e.Seq, 10)
	return appendEventBody(dst, e)
}

// appendEventBody writes everything after the seq field, so the recorder can
// encode outside its lock and stamp seq when the line takes its place.
func appendEventBody(dst []byte, e *ExchangeEvent) ([]byte, error) {
	if !e.Type.Known() {
		return dst, fmt.Errorf("%w: event type %q is not in the vocabulary", ErrInvalidEvent, e.Type)
	}
	if e.RunID == "" {
		return dst, fmt.Errorf("%w: empty run_id", ErrInvalidEvent)
	}
	dst = append(dst, `,"run_id":`...)
	dst = appendString(dst, e.RunID)
	if e.ParentRunID != "" {
		dst = append(dst, `,"parent_run_id":`...)
		dst = appendString(dst, e.ParentRunID)
	}
	if e.ChildRunID != "" {
		dst = append(dst, `,"child_run_id":`...)
		dst = appendString(dst, e.ChildRunID)
	}
	dst = append(dst, `,"type":"`...)
	dst = append(dst, e.Type...)
	dst = append(dst, `","path":`...)
	dst = appendString(dst, e.Path)
	dst = append(dst, `,"iteration":`...)
	dst = strconv.AppendInt(dst, int64(e.Iteration), 10)
	dst = append(dst, `,"timestamp":"`...)
	dst = appendTime(dst, e.Timestamp)
	dst = append(dst, `","payload":`...)
	var err error
	dst, err = appendPayload(dst, e.Type, e.Payload)
	if err != nil {
		return dst, err
	}
	return append(dst, '}'), nil
}

func appendPayload(dst []byte, t EventType, p any) ([]byte, error) {
	switch t {
	case RunStarted, RunCompleted:
		switch v := p.(type) {
		case nil:
			return append(dst, "null"...), nil
		case *StepPayload:
			if v == nil {
				return append(dst, "null"...), nil
			}
			return appendStep(dst, v)
		case StepPayload:
			return appendStep(dst, &v)
		}
	case StepStarted, StepCompleted, CallWorkflowStarted, CallWorkflowCompleted:
		switch v := p.(type) {
		case *StepPayload:
			if v != nil {
				return appendStep(dst, v)
			}
		case StepPayload:
			return appendStep(dst, &v)
		}
	case MessageUser, MessageAssistant:
		switch v := p.(type) {
		case *MessagePayload:
			if v != nil {
				return appendMessage(dst, t, v)
			}
		case MessagePayload:
			return appendMessage(dst, t, &v)
		}
	case ToolCall, ToolResult:
		switch v := p.(type) {
		case *ToolPayload:
			if v != nil {
				return appendTool(dst, v)
			}
		case ToolPayload:
			return appendTool(dst, &v)
		}
	}
	return dst, fmt.Errorf("%w: %s needs a %s payload, got %T", ErrInvalidEvent, t, payloadName(t), p)
}

func payloadName(t EventType) string {
	switch t {
	case MessageUser, MessageAssistant:
		return "*MessagePayload"
	case ToolCall, ToolResult:
		return "*ToolPayload"
	}
	return "*StepPayload"
}

func appendStep(dst []byte, p *StepPayload) ([]byte, error) {
	if p.Kind == "" {
		return dst, fmt.Errorf("%w: step payload %q has no kind", ErrInvalidEvent, p.Name)
	}
	dst = append(dst, `{"name":`...)
	dst = appendString(dst, p.Name)
	dst = append(dst, `,"kind":`...)
	dst = appendString(dst, p.Kind)
	if p.Command != "" {
		dst = append(dst, `,"command":`...)
		dst = appendString(dst, p.Command)
	}
	if p.Attempt != 0 {
		dst = append(dst, `,"attempt":`...)
		dst = strconv.AppendInt(dst, int64(p.Attempt), 10)
	}
	if !isNil(p.Input) {
		dst = append(dst, `,"input":`...)
		var err error
		if dst, err = appendValue(dst, p.Input); err != nil {
			return dst, fmt.Errorf("step %q input: %w", p.Name, err)
		}
	}
	if p.Error != "" {
		dst = append(dst, `,"error":`...)
		dst = appendString(dst, p.Error)
	}
	if !isNil(p.Result) {
		dst = append(dst, `,"result":`...)
		var err error
		if dst, err = appendValue(dst, p.Result); err != nil {
			return dst, fmt.Errorf("step %q result: %w", p.Name, err)
		}
	}
	return append(dst, '}'), nil
}

func appendMessage(dst []byte, t EventType, p *MessagePayload) ([]byte, error) {
	want := "user"
	if t == MessageAssistant {
		want = "assistant"
	}
	if p.Role != want {
		return dst, fmt.Errorf("%w: %s needs role %q, got %q", ErrInvalidEvent, t, want, p.Role)
	}
	dst = append(dst, `{"role":"`...)
	dst = append(dst, want...)
	dst = append(dst, `","blocks":`...)
	dst, err := appendBlocks(dst, p.Blocks)
	if err != nil {
		return dst, err
	}
	return append(dst, '}'), nil
}

func appendBlocks(dst []byte, blocks []ContentBlock) ([]byte, error) {
	dst = append(dst, '[')
	for i := range blocks {
		if i > 0 {
			dst = append(dst, ',')
		}
		var err error
		if dst, err = appendBlock(dst, &blocks[i]); err != nil {
			return dst, fmt.Errorf("block %d: %w", i, err)
		}
	}
	return append(dst, ']'), nil
}

func appendBlock(dst []byte, b *ContentBlock) ([]byte, error) {
	if !b.Type.Known() {
		return dst, fmt.Errorf("%w: block type %q is not in the vocabulary", ErrInvalidEvent, b.Type)
	}
	if !b.Fidelity.Known() {
		return dst, fmt.Errorf("%w: block fidelity %q", ErrInvalidEvent, b.Fidelity)
	}
	dst = append(dst, `{"type":"`...)
	dst = append(dst, b.Type...)
	dst = append(dst, `","fidelity":"`...)
	dst = append(dst, b.Fidelity...)
	dst = append(dst, '"')
	var err error
	switch b.Type {
	case BlockText:
		dst = append(dst, `,"text":`...)
		dst = appendString(dst, b.Text)
	case BlockThinking:
		dst = append(dst, `,"thinking":`...)
		dst = appendString(dst, b.Thinking)
	case BlockToolUse:
		dst = append(dst, `,"tool_name":`...)
		dst = appendString(dst, b.ToolName)
		dst = append(dst, `,"tool_id":`...)
		dst = appendString(dst, b.ToolID)
		if !isNil(b.ToolInput) {
			dst = append(dst, `,"tool_input":`...)
			if dst, err = appendValue(dst, b.ToolInput); err != nil {
				return dst, fmt.Errorf("tool_input: %w", err)
			}
		}
	case BlockToolResult:
		dst = append(dst, `,"tool_id":`...)
		dst = appendString(dst, b.ToolID)
		if !isNil(b.ToolContent) {
			dst = append(dst, `,"tool_content":`...)
			if dst, err = appendValue(dst, b.ToolContent); err != nil {
				return dst, fmt.Errorf("tool_content: %w", err)
			}
		}
	case BlockCommand:
		dst = append(dst, `,"command":`...)
		dst = appendString(dst, b.Command)
	case BlockStream:
		if b.Text != "" {
			dst = append(dst, `,"text":`...)
			dst = appendString(dst, b.Text)
		}
		dst = append(dst, `,"chunk":`...)
		dst = appendString(dst, b.Chunk)
	}
	return append(dst, '}'), nil
}

func appendTool(dst []byte, p *ToolPayload) ([]byte, error) {
	if !p.Fidelity.Known() {
		return dst, fmt.Errorf("%w: tool fidelity %q", ErrInvalidEvent, p.Fidelity)
	}
	if p.CallID == "" {
		return dst, fmt.Errorf("%w: tool %q has no call_id", ErrInvalidEvent, p.Name)
	}
	dst = append(dst, `{"name":`...)
	dst = appendString(dst, p.Name)
	dst = append(dst, `,"call_id":`...)
	dst = appendString(dst, p.CallID)
	var err error
	dst = append(dst, `,"input":`...)
	if dst, err = appendValue(dst, p.Input); err != nil {
		return dst, fmt.Errorf("tool %q input: %w", p.Name, err)
	}
	dst = append(dst, `,"output":`...)
	if dst, err = appendValue(dst, p.Output); err != nil {
		return dst, fmt.Errorf("tool %q output: %w", p.Name, err)
	}
	if p.Error != "" {
		dst = append(dst, `,"error":`...)
		dst = appendString(dst, p.Error)
	}
	dst = append(dst, `,"fidelity":"`...)
	dst = append(dst, p.Fidelity...)
	return append(dst, `"}`...), nil
}

// isNil reports whether a free-form value should be treated as absent.
func isNil(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case json.RawMessage:
		return x == nil
	}
	return false
}

// appendValue encodes a free-form value. Common shapes are written by hand;
// anything else goes through encoding/json. json.RawMessage is validated and
// compacted so a line break inside it can never split a transcript line.
func appendValue(dst []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return append(dst, "null"...), nil
	case json.RawMessage:
		return appendRaw(dst, x)
	case string:
		return appendString(dst, x), nil
	case bool:
		return strconv.AppendBool(dst, x), nil
	case int:
		return strconv.AppendInt(dst, int64(x), 10), nil
	case int64:
		return strconv.AppendInt(dst, x, 10), nil
	case uint64:
		return strconv.AppendUint(dst, x, 10), nil
	case float64:
		return appendFloat(dst, x)
	case json.Number:
		return appendRaw(dst, json.RawMessage(x))
	case []byte:
		// Bytes are text in a transcript (command output, provider lines):
		// write them as a string, invalid UTF-8 replaced.
		return appendString(dst, string(x)), nil
	case []any:
		dst = append(dst, '[')
		for i, e := range x {
			if i > 0 {
				dst = append(dst, ',')
			}
			var err error
			if dst, err = appendValue(dst, e); err != nil {
				return dst, err
			}
		}
		return append(dst, ']'), nil
	case []string:
		dst = append(dst, '[')
		for i, e := range x {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendString(dst, e)
		}
		return append(dst, ']'), nil
	case map[string]any:
		return appendMap(dst, x, appendValue)
	case map[string]string:
		return appendMap(dst, x, func(dst []byte, v string) ([]byte, error) { return appendString(dst, v), nil })
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return dst, err
	}
	// Encode ends with a newline and never emits one elsewhere.
	return append(dst, bytes.TrimRight(buf.Bytes(), "\n")...), nil
}

// appendMap writes a map with its keys sorted, as encoding/json does, so
// that equal values always encode to equal bytes.
func appendMap[V any](dst []byte, m map[string]V, value func([]byte, V) ([]byte, error)) ([]byte, error) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	dst = append(dst, '{')
	for i, k := range keys {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendString(dst, k)
		dst = append(dst, ':')
		var err error
		if dst, err = value(dst, m[k]); err != nil {
			return dst, err
		}
	}
	return append(dst, '}'), nil
}

func appendFloat(dst []byte, f float64) ([]byte, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return dst, fmt.Errorf("unsupported number %v", f)
	}
	// Same choice as encoding/json: plain notation for ordinary magnitudes.
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	return strconv.AppendFloat(dst, f, format, -1, 64), nil
}

func appendRaw(dst []byte, raw []byte) ([]byte, error) {
	if len(raw) == 0 {
		return append(dst, "null"...), nil
	}
	// The decoder's scanner validates several times faster than
	// json.Valid, and raw values are a large part of a line.
	d := decoder{data: raw}
	if err := d.skip(0); err != nil {
		return dst, fmt.Errorf("invalid raw JSON value: %w", err)
	}
	if d.ws(); d.pos != len(raw) {
		return dst, fmt.Errorf("invalid raw JSON value: data after the value")
	}
	if !utf8.Valid(raw) {
		// Rare: rebuild the value so that strings get U+FFFD, like every
		// other string reel writes.
		var v any
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		if err := dec.Decode(&v); err != nil {
			return dst, fmt.Errorf("invalid raw JSON value: %w", err)
		}
		return appendValue(dst, v)
	}
	if bytes.IndexByte(raw, '\n') < 0 && bytes.IndexByte(raw, '\r') < 0 {
		return append(dst, raw...), nil
	}
	// Line breaks in valid JSON are whitespace between tokens.
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return dst, err
	}
	return append(dst, buf.Bytes()...), nil
}

const hexDigits = "0123456789abcdef"

// safeASCII[c] is true for ASCII bytes that need no escaping in a string.
var safeASCII = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// appendString writes s as a JSON string. Control characters (NUL among
// them) get escapes, invalid UTF-8 becomes U+FFFD, and U+2028/U+2029 are
// escaped as encoding/json does, so any input yields one valid line.
func appendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		// Skip eight plain ASCII bytes at a time: most text needs no escape.
		for i+8 <= len(s) {
			w := uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
				uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
			q := w ^ (swarLo * '"')
			bs := w ^ (swarLo * '\\')
			if (((w-swarLo*0x20)&^w)|((q-swarLo)&^q)|((bs-swarLo)&^bs)|w)&swarHi != 0 {
				break
			}
			i += 8
		}
		if i >= len(s) {
			break
		}
		c := s[i]
		if c < utf8.RuneSelf {
			if safeASCII[c] {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			dst = appendEscape(dst, c)
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, "\uFFFD"...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\u202`...)
			dst = append(dst, hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

func appendEscape(dst []byte, c byte) []byte {
	switch c {
	case '"', '\\':
		return append(dst, '\\', c)
	case '\n':
		return append(dst, '\\', 'n')
	case '\r':
		return append(dst, '\\', 'r')
	case '\t':
		return append(dst, '\\', 't')
	case '\b':
		return append(dst, '\\', 'b')
	case '\f':
		return append(dst, '\\', 'f')
	}
	return append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
}

// appendTime writes t in TimeLayout without the general formatter, which
// is a measurable part of encoding an event.
func appendTime(dst []byte, t time.Time) []byte {
	t = t.UTC()
	y, mo, d := t.Date()
	h, mi, s := t.Clock()
	if y < 0 || y > 9999 {
		return t.AppendFormat(dst, TimeLayout)
	}
	us := t.Nanosecond() / 1000
	b := [27]byte{
		byte('0' + y/1000), byte('0' + y/100%10), digits2[2*(y%100)], digits2[2*(y%100)+1], '-',
		digits2[2*int(mo)], digits2[2*int(mo)+1], '-', digits2[2*d], digits2[2*d+1], 'T',
		digits2[2*h], digits2[2*h+1], ':', digits2[2*mi], digits2[2*mi+1], ':', digits2[2*s], digits2[2*s+1], '.',
		digits2[2*(us/10000)], digits2[2*(us/10000)+1], digits2[2*(us/100%100)], digits2[2*(us/100%100)+1],
		digits2[2*(us%100)], digits2[2*(us%100)+1], 'Z',
	}
	return append(dst, b[:]...)
}

const digits2 = "00010203040506070809101112131415161718192021222324252627282930313233343536373839404142434445464748495051525354555657585960616263646566676869707172737475767778798081828384858687888990919293949596979899"

// FormatTime renders t the way reel writes timestamps.
func FormatTime(t time.Time) string { return t.UTC().Format(TimeLayout) }
