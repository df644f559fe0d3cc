package transcript

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/bits"
	"strconv"
	"time"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// DecodeEvent decodes one transcript line (with or without its trailing
// newline). Decoding is tolerant: unknown fields are ignored; an unknown
// event or block type yields the event intact together with an error
// matching ErrUnknownEventType or ErrUnknownBlockType. Any other failure
// wraps ErrMalformed.
func DecodeEvent(line []byte) (ExchangeEvent, error) {
	var d decoder
	return d.event(line)
}

// decoder parses the wire shape directly from bytes. Free-form values
// (tool inputs, outputs, results) are validated and kept as
// json.RawMessage, so the common path never builds a map and every byte of
// them round-trips.
type decoder struct {
	data []byte
	pos  int
	// intern holds strings that repeat across lines (run ids, paths, names),
	// so a long read allocates them once. Nil disables interning.
	intern map[string]string
	recent [64]string
	// arena, when non-nil, receives copies of strings and raw values (see
	// newString). Nil means one allocation per value.
	arena []byte
	// unknownBlock is set while decoding a line that holds an unknown block.
	unknownBlock BlockType
}

const maxDepth = 10000

type syntaxError struct {
	msg string
	off int
}

func (e *syntaxError) Error() string { return fmt.Sprintf("%s at byte %d", e.msg, e.off) }
func (e *syntaxError) Unwrap() error { return ErrMalformed }

func (d *decoder) fail(msg string) error { return &syntaxError{msg: msg, off: d.pos} }

func (d *decoder) event(line []byte) (ExchangeEvent, error) {
	for n := len(line); n > 0 && (line[n-1] == '\n' || line[n-1] == '\r'); n-- {
		line = line[:n-1]
	}
	d.data, d.pos, d.unknownBlock = line, 0, ""
	var e ExchangeEvent
	if err := d.envelope(&e); err != nil {
		return ExchangeEvent{}, err
	}
	d.ws()
	if d.pos != len(d.data) {
		return ExchangeEvent{}, d.fail("data after the event object")
	}
	if !e.Type.Known() {
		return e, fmt.Errorf("%w %q", ErrUnknownEventType, e.Type)
	}
	if d.unknownBlock != "" {
		return e, fmt.Errorf("%w %q", ErrUnknownBlockType, d.unknownBlock)
	}
	return e, nil
}

func (d *decoder) envelope(e *ExchangeEvent) error {
	var (
		seen       uint16
		payloadRaw []byte
	)
	const (
		fSeq = 1 << iota
		fRun
		fType
		fPath
		fIter
		fTime
		fPayload
	)
	err := d.object(func(key []byte) error {
		var err error
		switch string(key) {
		case "seq":
			seen |= fSeq
			e.Seq, err = d.uint()
		case "run_id":
			seen |= fRun
			e.RunID, err = d.str()
		case "parent_run_id":
			e.ParentRunID, err = d.str()
		case "child_run_id":
			e.ChildRunID, err = d.str()
		case "type":
			seen |= fType
			var b []byte
			b, err = d.strBytes()
			e.Type = eventType(b)
		case "path":
			seen |= fPath
			e.Path, err = d.str()
		case "iteration":
			seen |= fIter
			var n int64
			n, err = d.int()
			e.Iteration = int(n)
		case "timestamp":
			seen |= fTime
			var b []byte
			if b, err = d.strBytes(); err == nil {
				e.Timestamp, err = parseTime(b)
			}
		case "payload":
			seen |= fPayload
			start := d.pos
			if err = d.payload(e); err == nil {
				payloadRaw = d.data[start:d.pos]
			}
		default:
			err = d.skip(0)
		}
		return err
	})
	if err != nil {
		return err
	}
	missing := ""
	switch {
	case seen&fSeq == 0:
		missing = "seq"
	case seen&fRun == 0:
		missing = "run_id"
	case seen&fType == 0:
		missing = "type"
	case seen&fPath == 0:
		missing = "path"
	case seen&fIter == 0:
		missing = "iteration"
	case seen&fTime == 0:
		missing = "timestamp"
	case seen&fPayload == 0:
		missing = "payload"
	}
	if missing != "" {
		return fmt.Errorf("%w: missing field %q", ErrMalformed, missing)
	}
	if !e.Type.Known() {
		// Unknown types keep their payload verbatim for forward compatibility.
		e.Payload = nil
		if string(payloadRaw) != "null" {
			e.Payload = json.RawMessage(d.clone(payloadRaw))
		}
	}
	return nil
}

// clone copies b out of the line buffer, into the arena when there is one.
func (d *decoder) clone(b []byte) []byte {
	if d.arena == nil || len(b) > arenaChunk/8 {
		return append([]byte(nil), b...)
	}
	if cap(d.arena)-len(d.arena) < len(b) {
		d.arena = make([]byte, 0, arenaChunk)
	}
	start := len(d.arena)
	d.arena = append(d.arena, b...)
	// Cap the slice so a caller's append can never reach a neighbour.
	return d.arena[start:len(d.arena):len(d.arena)]
}

// newString makes a string of b. With an arena the bytes are copied into a
// shared chunk that is never written again, so the string needs no
// allocation of its own: a long read allocates per chunk, not per field.
func (d *decoder) newString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if d.arena == nil {
		return string(b)
	}
	c := d.clone(b)
	return unsafe.String(&c[0], len(c))
}

// arenaChunk is the size of the chunks a Reader copies strings into.
const arenaChunk = 64 << 10

// payload decodes the payload at the current position, dispatching in the
// schema's probe order: array → blocks; object with "role" → message;
// "call_id" → tool; "kind" → step; else generic. It reads the bytes once,
// collecting the fields of every payload kind, and picks the kind at the
// end.
func (d *decoder) payload(e *ExchangeEvent) error {
	start := d.pos
	e.Payload = nil
	switch d.peek() {
	case 'n':
		return d.literal("null")
	case '[':
		blocks, err := d.blocks()
		if err != nil {
			return fmt.Errorf("payload: %w", err)
		}
		e.Payload = blocks
		return nil
	case '{':
	default:
		if err := d.skip(0); err != nil {
			return err
		}
		e.Payload = json.RawMessage(d.clone(d.data[start:d.pos]))
		return nil
	}
	var (
		u                         payloadUnion
		hasRole, hasCall, hasKind bool
	)
	err := d.object(func(key []byte) error {
		var err error
		switch string(key) {
		case "role":
			hasRole = true
			u.role, err = d.str()
		case "blocks":
			if d.peek() == 'n' {
				err = d.skip(0)
			} else {
				u.blocks, err = d.blocks()
			}
		case "name":
			u.name, err = d.str()
		case "call_id":
			hasCall = true
			u.callID, err = d.strNoIntern()
		case "input":
			u.input, err = d.raw()
		case "output":
			u.output, err = d.raw()
		case "error":
			u.err, err = d.str()
		case "fidelity":
			var b []byte
			b, err = d.strBytes()
			u.fidelity = fidelity(b)
		case "kind":
			hasKind = true
			u.kind, err = d.str()
		case "command":
			u.command, err = d.str()
		case "attempt":
			var n int64
			n, err = d.int()
			u.attempt = int(n)
		case "result":
			u.result, err = d.raw()
		default:
			err = d.skip(0)
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("payload: %w", err)
	}
	switch {
	case hasRole:
		if u.blocks == nil {
			u.blocks = []ContentBlock{}
		}
		e.Payload = &MessagePayload{Role: u.role, Blocks: u.blocks}
	case hasCall:
		e.Payload = &ToolPayload{Name: u.name, CallID: u.callID, Input: u.input, Output: u.output, Error: u.err, Fidelity: u.fidelity}
	case hasKind:
		e.Payload = &StepPayload{Name: u.name, Kind: u.kind, Command: u.command, Attempt: u.attempt, Input: u.input, Error: u.err, Result: u.result}
	default:
		e.Payload = json.RawMessage(d.clone(d.data[start:d.pos]))
	}
	return nil
}

type payloadUnion struct {
	role, name, callID, err, kind, command string
	fidelity                               Fidelity
	attempt                                int
	blocks                                 []ContentBlock
	input, output, result                  any
}

func (d *decoder) blocks() ([]ContentBlock, error) {
	d.ws()
	if d.pos >= len(d.data) || d.data[d.pos] != '[' {
		return nil, d.fail("blocks must be an array")
	}
	d.pos++
	blocks := make([]ContentBlock, 0, 2)
	d.ws()
	if d.pos < len(d.data) && d.data[d.pos] == ']' {
		d.pos++
		return blocks, nil
	}
	for {
		var b ContentBlock
		start := d.pos
		if err := d.block(&b); err != nil {
			return nil, err
		}
		if !b.Type.Known() {
			d.ws()
			b.Raw = json.RawMessage(d.clone(d.data[start:d.pos]))
			if d.unknownBlock == "" {
				d.unknownBlock = b.Type
			}
		}
		blocks = append(blocks, b)
		if done, err := d.more(']'); done || err != nil {
			return blocks, err
		}
	}
}

// more passes the separator after a member of an object or array: it
// reports done at the closing byte and an error at anything but a comma.
func (d *decoder) more(closing byte) (done bool, err error) {
	d.ws()
	if d.pos >= len(d.data) {
		return false, d.fail("unterminated " + container(closing))
	}
	switch d.data[d.pos] {
	case ',':
		d.pos++
		return false, nil
	case closing:
		d.pos++
		return true, nil
	}
	return false, d.fail("expected , or " + string(closing) + " in " + container(closing))
}

func container(closing byte) string {
	if closing == ']' {
		return "array"
	}
	return "object"
}

func (d *decoder) block(b *ContentBlock) error {
	d.ws()
	return d.object(func(key []byte) error {
		var err error
		switch string(key) {
		case "type":
			var s []byte
			s, err = d.strBytes()
			b.Type = blockType(s)
		case "fidelity":
			var s []byte
			s, err = d.strBytes()
			b.Fidelity = fidelity(s)
		case "text":
			b.Text, err = d.strNoIntern()
		case "thinking":
			b.Thinking, err = d.strNoIntern()
		case "tool_name":
			b.ToolName, err = d.str()
		case "tool_id":
			b.ToolID, err = d.strNoIntern()
		case "tool_input":
			b.ToolInput, err = d.raw()
		case "tool_content":
			b.ToolContent, err = d.raw()
		case "command":
			b.Command, err = d.strNoIntern()
		case "chunk":
			b.Chunk, err = d.strNoIntern()
		default:
			err = d.skip(0)
		}
		return err
	})
}

func eventType(b []byte) EventType {
	switch string(b) {
	case "run.started":
		return RunStarted
	case "run.completed":
		return RunCompleted
	case "step.started":
		return StepStarted
	case "step.completed":
		return StepCompleted
	case "step.call_workflow.started":
		return CallWorkflowStarted
	case "step.call_workflow.completed":
		return CallWorkflowCompleted
	case "message.user":
		return MessageUser
	case "message.assistant":
		return MessageAssistant
	case "tool.call":
		return ToolCall
	case "tool.result":
		return ToolResult
	}
	return EventType(b)
}

func blockType(b []byte) BlockType {
	switch string(b) {
	case "text":
		return BlockText
	case "thinking":
		return BlockThinking
	case "tool_use":
		return BlockToolUse
	case "tool_result":
		return BlockToolResult
	case "command":
		return BlockCommand
	case "stream":
		return BlockStream
	}
	return BlockType(b)
}

func fidelity(b []byte) Fidelity {
	switch string(b) {
	case "router":
		return FidelityRouter
	case "agent_emitted":
		return FidelityAgentEmitted
	}
	return Fidelity(b)
}

// parseTime reads reel's fixed layout without the general parser and falls
// back to RFC 3339 for timestamps written by other tools.
func parseTime(b []byte) (time.Time, error) {
	if len(b) == len(TimeLayout) && b[4] == '-' && b[7] == '-' && b[10] == 'T' && b[13] == ':' && b[16] == ':' && b[19] == '.' && b[26] == 'Z' {
		n := func(i, j int) (int, bool) {
			v := 0
			for _, c := range b[i:j] {
				if c < '0' || c > '9' {
					return 0, false
				}
				v = v*10 + int(c-'0')
			}
			return v, true
		}
		y, ok1 := n(0, 4)
		mo, ok2 := n(5, 7)
		dd, ok3 := n(8, 10)
		h, ok4 := n(11, 13)
		mi, ok5 := n(14, 16)
		s, ok6 := n(17, 19)
		us, ok7 := n(20, 26)
		if ok1 && ok2 && ok3 && ok4 && ok5 && ok6 && ok7 && mo >= 1 && mo <= 12 && dd >= 1 && dd <= 31 && h < 24 && mi < 60 && s < 60 {
			t := time.Date(y, time.Month(mo), dd, h, mi, s, us*1000, time.UTC)
			if t.Day() == dd {
				return t, nil
			}
		}
	}
	t, err := time.Parse(time.RFC3339Nano, string(b))
	if err != nil {
		return time.Time{}, fmt.Errorf("%w: timestamp %q is not RFC 3339", ErrMalformed, b)
	}
	return t, nil
}

// --- scanning primitives ---

func (d *decoder) ws() {
	if d.pos < len(d.data) && d.data[d.pos] > ' ' {
		return
	}
	for d.pos < len(d.data) {
		switch d.data[d.pos] {
		case ' ', '\t', '\n', '\r':
			d.pos++
		default:
			return
		}
	}
}

func (d *decoder) peek() byte {
	d.ws()
	if d.pos < len(d.data) {
		return d.data[d.pos]
	}
	return 0
}

// object iterates the members of a JSON object, calling field with each key
// while the position rests on the member's value.
func (d *decoder) object(field func(key []byte) error) error {
	d.ws()
	if d.pos >= len(d.data) || d.data[d.pos] != '{' {
		return d.fail("expected an object")
	}
	d.pos++
	d.ws()
	if d.pos < len(d.data) && d.data[d.pos] == '}' {
		d.pos++
		return nil
	}
	for {
		d.ws()
		key, err := d.strBytes()
		if err != nil {
			return err
		}
		d.ws()
		if d.pos >= len(d.data) || d.data[d.pos] != ':' {
			return d.fail("expected : after object key")
		}
		d.pos++
		d.ws()
		if err := field(key); err != nil {
			return err
		}
		if done, err := d.more('}'); done || err != nil {
			return err
		}
	}
}

func (d *decoder) uint() (uint64, error) {
	b, start, err := d.numberBytes()
	if err != nil {
		return 0, err
	}
	n, err := strconv.ParseUint(string(b), 10, 64)
	if err != nil {
		return 0, &syntaxError{msg: "expected an unsigned integer", off: start}
	}
	return n, nil
}

func (d *decoder) int() (int64, error) {
	b, start, err := d.numberBytes()
	if err != nil {
		return 0, err
	}
	n, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil {
		return 0, &syntaxError{msg: "expected an integer", off: start}
	}
	return n, nil
}

// numberBytes passes over a JSON number and returns its bytes and offset.
func (d *decoder) numberBytes() ([]byte, int, error) {
	d.ws()
	start := d.pos
	if err := d.number(); err != nil {
		return nil, start, err
	}
	return d.data[start:d.pos], start, nil
}

// raw validates one value and returns it as json.RawMessage; null is nil.
func (d *decoder) raw() (any, error) {
	d.ws()
	start := d.pos
	if err := d.skip(0); err != nil {
		return nil, err
	}
	b := d.data[start:d.pos]
	if len(b) == 4 && string(b) == "null" {
		return nil, nil
	}
	return json.RawMessage(d.clone(b)), nil
}

// str decodes a string, interning short ones.
func (d *decoder) str() (string, error) {
	b, err := d.strBytes()
	if err != nil {
		return "", err
	}
	if d.intern != nil && len(b) <= 128 {
		// A direct-mapped cache in front of the map: the same few run
		// ids, paths and names repeat line after line, and comparing
		// bytes is cheaper than hashing them.
		h := 0
		if len(b) > 0 {
			h = (len(b)*31 + int(b[0])*7 + int(b[len(b)-1])) & (len(d.recent) - 1)
		}
		if d.recent[h] == string(b) {
			return d.recent[h], nil
		}
		if s, ok := d.intern[string(b)]; ok {
			d.recent[h] = s
			return s, nil
		}
		s := d.newString(b)
		if len(d.intern) < 1<<14 {
			d.intern[s] = s
		}
		d.recent[h] = s
		return s, nil
	}
	return d.newString(b), nil
}

func (d *decoder) strNoIntern() (string, error) {
	b, err := d.strBytes()
	if err != nil {
		return "", err
	}
	return d.newString(b), nil
}

// strBytes decodes a string. The result aliases the input when the string
// needs no unescaping, so callers must copy what they keep.
func (d *decoder) strBytes() ([]byte, error) {
	if d.pos >= len(d.data) || d.data[d.pos] != '"' {
		return nil, d.fail("expected a string")
	}
	d.pos++
	start := d.pos
	i, ascii := scanString(d.data, d.pos)
	d.pos = i
	if i >= len(d.data) {
		return nil, d.fail("unterminated string")
	}
	switch c := d.data[i]; {
	case c == '"':
		s := d.data[start:i]
		d.pos++
		if !ascii && !utf8.Valid(s) {
			return fixUTF8(s), nil
		}
		return s, nil
	case c == '\\':
		return d.unescape(start)
	}
	return nil, d.fail("control character in string")
}

const (
	swarLo = 0x0101010101010101
	swarHi = 0x8080808080808080
)

// scanString returns the index of the first '"', '\\' or control byte at
// or after i, and whether the bytes before it were all ASCII. It looks at
// eight bytes at a time: strings are most of a transcript's bytes.
func scanString(data []byte, i int) (int, bool) {
	ascii := true
	for i < len(data) {
		if i+8 <= len(data) {
			w := binary.LittleEndian.Uint64(data[i:])
			q := w ^ (swarLo * '"')
			b := w ^ (swarLo * '\\')
			// The lowest flagged byte is exact for each test (borrows only
			// propagate upward), which is all that is needed.
			m := (((w - swarLo*0x20) & ^w) | ((q - swarLo) & ^q) | ((b - swarLo) & ^b) | w) & swarHi
			if m == 0 {
				i += 8
				continue
			}
			i += bits.TrailingZeros64(m) / 8
		}
		c := data[i]
		if c >= utf8.RuneSelf {
			ascii = false
			i++
			continue
		}
		if c == '"' || c == '\\' || c < 0x20 {
			return i, ascii
		}
		i++
	}
	return i, ascii
}

// fixUTF8 replaces invalid sequences with U+FFFD, as encoding/json does.
func fixUTF8(s []byte) []byte {
	out := make([]byte, 0, len(s)+8)
	for len(s) > 0 {
		r, size := utf8.DecodeRune(s)
		if r == utf8.RuneError && size == 1 {
			out = append(out, "\uFFFD"...)
		} else {
			out = append(out, s[:size]...)
		}
		s = s[size:]
	}
	return out
}

func (d *decoder) unescape(start int) ([]byte, error) {
	out := make([]byte, 0, d.pos-start+16)
	out = append(out, d.data[start:d.pos]...)
	for d.pos < len(d.data) {
		c := d.data[d.pos]
		switch {
		case c == '"':
			d.pos++
			if !utf8.Valid(out) {
				return fixUTF8(out), nil
			}
			return out, nil
		case c < 0x20:
			return nil, d.fail("control character in string")
		case c != '\\':
			out = append(out, c)
			d.pos++
			continue
		}
		d.pos++
		if d.pos >= len(d.data) {
			break
		}
		switch e := d.data[d.pos]; e {
		case '"', '\\', '/':
			out = append(out, e)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, ok := d.hex4(d.pos + 1)
			if !ok {
				return nil, d.fail("bad \\u escape")
			}
			d.pos += 4
			if utf16.IsSurrogate(r) {
				r2, ok2 := rune(-1), false
				if d.pos+2 < len(d.data) && d.data[d.pos+1] == '\\' && d.data[d.pos+2] == 'u' {
					r2, ok2 = d.hex4(d.pos + 3)
				}
				if dec := utf16.DecodeRune(r, r2); ok2 && dec != utf8.RuneError {
					r = dec
					d.pos += 6
				} else {
					r = utf8.RuneError
				}
			}
			out = utf8.AppendRune(out, r)
		default:
			return nil, d.fail("bad escape")
		}
		d.pos++
	}
	return nil, d.fail("unterminated string")
}

func (d *decoder) hex4(i int) (rune, bool) {
	if i+4 > len(d.data) {
		return 0, false
	}
	var r rune
	for _, c := range d.data[i : i+4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// skip validates and passes over one JSON value.
func (d *decoder) skip(depth int) error {
	if depth > maxDepth {
		return d.fail("nesting too deep")
	}
	d.ws()
	if d.pos >= len(d.data) {
		return d.fail("unexpected end of line")
	}
	switch c := d.data[d.pos]; {
	case c == '"':
		return d.skipString()
	case c == '{':
		d.pos++
		d.ws()
		if d.pos < len(d.data) && d.data[d.pos] == '}' {
			d.pos++
			return nil
		}
		for {
			d.ws()
			if err := d.skipString(); err != nil {
				return err
			}
			d.ws()
			if d.pos >= len(d.data) || d.data[d.pos] != ':' {
				return d.fail("expected : after object key")
			}
			d.pos++
			if err := d.skip(depth + 1); err != nil {
				return err
			}
			if done, err := d.more('}'); done || err != nil {
				return err
			}
		}
	case c == '[':
		d.pos++
		d.ws()
		if d.pos < len(d.data) && d.data[d.pos] == ']' {
			d.pos++
			return nil
		}
		for {
			if err := d.skip(depth + 1); err != nil {
				return err
			}
			if done, err := d.more(']'); done || err != nil {
				return err
			}
		}
	case c == 't':
		return d.literal("true")
	case c == 'f':
		return d.literal("false")
	case c == 'n':
		return d.literal("null")
	case c == '-' || ('0' <= c && c <= '9'):
		return d.number()
	}
	return d.fail("unexpected character")
}

func (d *decoder) literal(lit string) error {
	if len(d.data)-d.pos < len(lit) || string(d.data[d.pos:d.pos+len(lit)]) != lit {
		return d.fail("invalid literal")
	}
	d.pos += len(lit)
	return nil
}

// skipString passes over a string, checking escapes. Raw values keep their
// bytes; invalid UTF-8 inside them is left for the consumer's decoder,
// which replaces it as encoding/json does.
func (d *decoder) skipString() error {
	if d.pos >= len(d.data) || d.data[d.pos] != '"' {
		return d.fail("expected a string")
	}
	d.pos++
	for d.pos < len(d.data) {
		d.pos, _ = scanString(d.data, d.pos)
		if d.pos >= len(d.data) {
			break
		}
		c := d.data[d.pos]
		switch {
		case c == '"':
			d.pos++
			return nil
		case c == '\\':
			d.pos++
			if d.pos >= len(d.data) {
				return d.fail("unterminated string")
			}
			switch d.data[d.pos] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if _, ok := d.hex4(d.pos + 1); !ok {
					return d.fail("bad \\u escape")
				}
				d.pos += 4
			default:
				return d.fail("bad escape")
			}
		case c < 0x20:
			return d.fail("control character in string")
		}
		d.pos++
	}
	return d.fail("unterminated string")
}

func (d *decoder) number() error {
	start := d.pos
	if d.pos < len(d.data) && d.data[d.pos] == '-' {
		d.pos++
	}
	digits := func() int {
		n := 0
		for d.pos < len(d.data) && d.data[d.pos] >= '0' && d.data[d.pos] <= '9' {
			d.pos++
			n++
		}
		return n
	}
	if d.pos < len(d.data) && d.data[d.pos] == '0' {
		d.pos++
	} else if digits() == 0 {
		d.pos = start
		return d.fail("invalid number")
	}
	if d.pos < len(d.data) && d.data[d.pos] == '.' {
		d.pos++
		if digits() == 0 {
			return d.fail("invalid number")
		}
	}
	if d.pos < len(d.data) && (d.data[d.pos] == 'e' || d.data[d.pos] == 'E') {
		d.pos++
		if d.pos < len(d.data) && (d.data[d.pos] == '+' || d.data[d.pos] == '-') {
			d.pos++
		}
		if digits() == 0 {
			return d.fail("invalid number")
		}
	}
	return nil
}
