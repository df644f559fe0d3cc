package flowstudio

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/reelhq/reel/internal/rawjson"
	"github.com/reelhq/reel/transcript"
)

// EntryKind classifies what one transcript line reports.
type EntryKind int

// Entry kinds.
const (
	// EntryMessage is a system, user or assistant message.
	EntryMessage EntryKind = iota + 1
	// EntryToolUse starts a tool invocation.
	EntryToolUse
	// EntryToolResult ends one.
	EntryToolResult
	// EntryTool is the documented form: invocation and result on one line.
	EntryTool
	// EntryUsage reports token usage (an SDK or CLI result line).
	EntryUsage
	// EntryError reports a failure.
	EntryError
	// EntryOther is a line of a known stream that carries nothing reel
	// records (CLI init, rate-limit notices).
	EntryOther
)

// Entry is one thing a transcript line says. A CLI stream line can hold
// several (an assistant message with a tool_use block yields the message
// and the tool start).
type Entry struct {
	Kind EntryKind
	// Time is the line's timestamp; zero when it has none.
	Time time.Time
	Role string
	Text string
	// Blocks are the message's reel blocks when the line carries more than
	// plain text (a CLI assistant message, or reel's own reel_blocks).
	Blocks []transcript.ContentBlock
	// Exact says Blocks came from reel_blocks and are the message exactly.
	Exact bool
	// Tool fields. ToolID is "" when the line names none.
	ToolName string
	ToolID   string
	Input    json.RawMessage
	Output   json.RawMessage
	Error    string
	// CallTime is when a documented tool line's call began (reel's
	// call_timestamp), else zero.
	CallTime time.Time
	Usage    *transcript.Usage
	Model    string
	// ResultInput is the input a reel tool.result repeated, when it did.
	ResultInput json.RawMessage
	// Fidelity and ResultFidelity are the tool events' fidelities reel
	// kept (reel_fidelity, reel_result_fidelity), or "".
	Fidelity, ResultFidelity transcript.Fidelity
	// Seq and CallSeq are the places of the line's events (a tool line's
	// result and call) among its step's, when reel wrote them (reel_seq,
	// reel_call_seq); -1 otherwise.
	Seq, CallSeq int
}

// line is the union of the three line shapes found in real runs.
type line struct {
	Timestamp string `json:"timestamp"`
	Type      string `json:"type"`
	Subtype   string `json:"subtype"`
	Role      string `json:"role"`
	// Content is a string in the documented and SDK forms.
	Content    json.RawMessage `json:"content"`
	ToolName   string          `json:"tool_name"`
	ToolInput  json.RawMessage `json:"tool_input"`
	ToolOutput json.RawMessage `json:"tool_output"`
	// SDK fields.
	Tool    string          `json:"tool"`
	Input   json.RawMessage `json:"input"`
	Success *bool           `json:"success"`
	Output  json.RawMessage `json:"output"`
	Error   json.RawMessage `json:"error"`
	Usage   json.RawMessage `json:"usage"`
	// Gemini stream-json fields.
	ToolID     string          `json:"tool_id"`
	Parameters json.RawMessage `json:"parameters"`
	Status     string          `json:"status"`
	Stats      json.RawMessage `json:"stats"`
	// Claude stream-json fields.
	Message json.RawMessage `json:"message"`
	Model   string          `json:"model"`
	IsError bool            `json:"is_error"`
	Result  json.RawMessage `json:"result"`
	Errors  []string        `json:"errors"`
	// reel's additions to the documented form.
	CallID        string          `json:"call_id"`
	CallTimestamp string          `json:"call_timestamp"`
	ReelBlocks    json.RawMessage `json:"reel_blocks"`
	ReelOutput    json.RawMessage `json:"reel_output"`
	InputWrapped  bool            `json:"reel_input_wrapped"`
	ReelSeq       int             `json:"reel_seq"`
	ReelCallSeq   int             `json:"reel_call_seq"`
	ResultInput   json.RawMessage `json:"reel_result_input"`
	ResultSame    bool            `json:"reel_result_input_same"`
	Fidelity      string          `json:"reel_fidelity"`
	ResultFid     string          `json:"reel_result_fidelity"`
}

// decodeLine fills a line from its top-level members without reflection:
// transcript lines are many and their members few. Values are copied out of
// data, which the caller may reuse. A key repeated in the object keeps its
// last value, as with encoding/json.
func decodeLine(data []byte) (line, error) {
	l := line{ReelSeq: -1, ReelCallSeq: -1}
	if !json.Valid(data) {
		var v any
		err := json.Unmarshal(data, &v)
		if err == nil {
			err = errors.New("invalid JSON")
		}
		return l, err
	}
	if len(data) == 0 || data[0] != '{' {
		return l, errors.New("not a JSON object")
	}
	var err error
	text := func(dst *string, key string, v []byte) {
		if string(v) == "null" {
			*dst = ""
			return
		}
		s, ok := str(v)
		if !ok && err == nil {
			err = fmt.Errorf("%s is not a string", key)
		}
		*dst = s
	}
	raw := func(v []byte) json.RawMessage { return append(json.RawMessage(nil), v...) }
	walkErr := rawjson.Each(data, func(k, v []byte) bool {
		if dst := l.textField(string(k)); dst != nil {
			text(dst, string(k), v)
			return err == nil
		}
		if dst := l.rawField(string(k)); dst != nil {
			*dst = raw(v)
			return err == nil
		}
		switch string(k) {
		case "success":
			switch string(v) {
			case "true", "false":
				b := string(v) == "true"
				l.Success = &b
			case "null":
				l.Success = nil
			default:
				err = errors.New("success is not a boolean")
			}
		case "is_error":
			switch string(v) {
			case "true", "false", "null":
				l.IsError = string(v) == "true"
			default:
				err = errors.New("is_error is not a boolean")
			}
		case "errors":
			if e := json.Unmarshal(v, &l.Errors); e != nil {
				err = fmt.Errorf("errors: %w", e)
			}
		case "reel_input_wrapped":
			l.InputWrapped = string(v) == "true"
		case "reel_result_input_same":
			l.ResultSame = string(v) == "true"
		case "reel_seq", "reel_call_seq":
			n, e := strconv.Atoi(string(v))
			if e != nil || n < 0 {
				err = fmt.Errorf("%s is not a count", k)
			} else if string(k) == "reel_seq" {
				l.ReelSeq = n
			} else {
				l.ReelCallSeq = n
			}
		}
		return err == nil
	})
	if walkErr != nil {
		return l, walkErr
	}
	return l, err
}

// textField is where the string member k of a line goes, if it is one.
func (l *line) textField(k string) *string {
	switch k {
	case "timestamp":
		return &l.Timestamp
	case "type":
		return &l.Type
	case "subtype":
		return &l.Subtype
	case "role":
		return &l.Role
	case "tool_name":
		return &l.ToolName
	case "tool":
		return &l.Tool
	case "tool_id":
		return &l.ToolID
	case "status":
		return &l.Status
	case "model":
		return &l.Model
	case "call_id":
		return &l.CallID
	case "call_timestamp":
		return &l.CallTimestamp
	case "reel_fidelity":
		return &l.Fidelity
	case "reel_result_fidelity":
		return &l.ResultFid
	}
	return nil
}

// rawField is where the member k of a line kept as raw JSON goes, if it is one.
func (l *line) rawField(k string) *json.RawMessage {
	switch k {
	case "content":
		return &l.Content
	case "tool_input":
		return &l.ToolInput
	case "tool_output":
		return &l.ToolOutput
	case "input":
		return &l.Input
	case "output":
		return &l.Output
	case "error":
		return &l.Error
	case "usage":
		return &l.Usage
	case "parameters":
		return &l.Parameters
	case "stats":
		return &l.Stats
	case "message":
		return &l.Message
	case "result":
		return &l.Result
	case "reel_blocks":
		return &l.ReelBlocks
	case "reel_output":
		return &l.ReelOutput
	case "reel_result_input":
		return &l.ResultInput
	}
	return nil
}

// ParseLine decodes one transcript line in any of the three shapes: the
// documented {timestamp, role, content, tool_name, tool_input,
// tool_output}; the SDK's {type: message|tool_use|tool_result|result|
// error}; and an agent CLI's raw stream-json line with a timestamp added.
// Unknown types of a typed line come back as EntryOther, so a reader can
// count them.
func ParseLine(data []byte) ([]Entry, error) {
	data = bytes.TrimSpace(data)
	l, err := decodeLine(data)
	if err != nil {
		return nil, fmt.Errorf("transcript line: %w", err)
	}
	var ts time.Time
	if l.Timestamp != "" {
		t, err := ParseTime(l.Timestamp)
		if err != nil {
			return nil, fmt.Errorf("transcript line: %w", err)
		}
		ts = t
	}
	base := Entry{Time: ts, Seq: -1, CallSeq: -1}
	if l.Type == "" {
		base.Seq, base.CallSeq = l.ReelSeq, l.ReelCallSeq
		return documented(&l, base)
	}
	switch l.Type {
	case "message":
		if l.Role == "" {
			return nil, fmt.Errorf("transcript line: message without role")
		}
		base.Kind, base.Role, base.Text = EntryMessage, l.Role, contentText(l.Content)
		return []Entry{base}, nil
	case "tool_use":
		base.Kind = EntryToolUse
		base.ToolName = first(l.Tool, l.ToolName)
		base.ToolID = l.ToolID
		base.Input = firstRaw(l.Input, l.Parameters, l.ToolInput)
		return []Entry{base}, nil
	case "tool_result":
		base.Kind = EntryToolResult
		base.ToolName = first(l.Tool, l.ToolName)
		base.ToolID = l.ToolID
		base.Output = firstRaw(l.Output, l.ToolOutput, l.Content)
		failed := (l.Success != nil && !*l.Success) || (l.Status != "" && l.Status != "success")
		if failed {
			base.Error = errorText(l.Error)
			if base.Error == "" {
				base.Error = "tool failed"
				if l.Status != "" {
					base.Error = "tool " + l.Status
				}
			}
		}
		return []Entry{base}, nil
	case "result":
		return resultLine(&l, base)
	case "error":
		base.Kind = EntryError
		base.Text = errorText(l.Error)
		if base.Text == "" {
			if s, ok := str(l.Message); ok {
				base.Text = s
			} else {
				base.Text = "error"
			}
		}
		return []Entry{base}, nil
	case "assistant", "user":
		return cliMessage(&l, base)
	case "system", "init":
		base.Kind, base.Model = EntryOther, l.Model
		return []Entry{base}, nil
	}
	base.Kind = EntryOther
	return []Entry{base}, nil
}

func documented(l *line, base Entry) ([]Entry, error) {
	switch l.Role {
	case "system", "user", "assistant":
		base.Kind, base.Role, base.Text = EntryMessage, l.Role, contentText(l.Content)
		if len(l.ReelBlocks) > 0 && string(l.ReelBlocks) != "null" {
			if err := json.Unmarshal(l.ReelBlocks, &base.Blocks); err != nil {
				return nil, fmt.Errorf("transcript line: reel_blocks: %w", err)
			}
			for _, b := range base.Blocks {
				if !b.Type.Known() || !b.Fidelity.Known() {
					return nil, fmt.Errorf("transcript line: reel_blocks: block %q with fidelity %q", b.Type, b.Fidelity)
				}
			}
			base.Exact = true
		}
		return []Entry{base}, nil
	case "tool":
		base.Kind = EntryTool
		base.ToolName, base.ToolID = l.ToolName, l.CallID
		base.Input = l.ToolInput
		if l.InputWrapped {
			var w struct {
				Input json.RawMessage `json:"input"`
			}
			if json.Unmarshal(l.ToolInput, &w) == nil {
				base.Input = w.Input
			}
		}
		base.Output = firstRaw(l.ReelOutput, l.ToolOutput, l.Content)
		base.Error = errorText(l.Error)
		for _, f := range []string{l.Fidelity, l.ResultFid} {
			if f != "" && !transcript.Fidelity(f).Known() {
				return nil, fmt.Errorf("transcript line: fidelity %q", f)
			}
		}
		base.Fidelity, base.ResultFidelity = transcript.Fidelity(l.Fidelity), transcript.Fidelity(l.ResultFid)
		switch {
		case l.ResultSame:
			base.ResultInput = base.Input
		case len(l.ResultInput) > 0 && string(l.ResultInput) != "null":
			base.ResultInput = l.ResultInput
		}
		if l.CallTimestamp != "" {
			if t, err := ParseTime(l.CallTimestamp); err == nil {
				base.CallTime = t
			}
		}
		return []Entry{base}, nil
	case "":
		return nil, fmt.Errorf("transcript line: neither role nor type")
	}
	return nil, fmt.Errorf("transcript line: unknown role %q", l.Role)
}

func resultLine(l *line, base Entry) ([]Entry, error) {
	base.Kind = EntryUsage
	var u struct {
		Prompt       *int64 `json:"prompt"`
		Completion   *int64 `json:"completion"`
		Total        *int64 `json:"total"`
		Input        int64  `json:"input_tokens"`
		Output       int64  `json:"output_tokens"`
		CacheRead    int64  `json:"cache_read_input_tokens"`
		CacheWrite   int64  `json:"cache_creation_input_tokens"`
		GeminiCached int64  `json:"cached"`
	}
	raw := firstRaw(l.Usage, l.Stats)
	if len(raw) > 0 && string(raw) != "null" {
		if err := json.Unmarshal(raw, &u); err != nil {
			return nil, fmt.Errorf("transcript line: usage: %w", err)
		}
		us := transcript.Usage{InputTokens: u.Input, OutputTokens: u.Output, CacheReadTokens: u.CacheRead, CacheWriteTokens: u.CacheWrite}
		if u.Prompt != nil || u.Completion != nil {
			us.InputTokens, us.OutputTokens = deref(u.Prompt), deref(u.Completion)
		}
		us.TotalTokens = us.InputTokens + us.OutputTokens
		if u.Total != nil {
			us.TotalTokens = *u.Total
		}
		base.Usage = &us
	}
	out := []Entry{base}
	if l.IsError || (l.Subtype != "" && strings.HasPrefix(l.Subtype, "error")) || l.Status == "error" {
		msg := strings.Join(l.Errors, "; ")
		if msg == "" {
			msg = first(l.Subtype, "agent reported an error")
		}
		out = append(out, Entry{Kind: EntryError, Time: base.Time, Text: msg})
	}
	return out, nil
}

// cliMessage reads a Claude stream-json assistant or user line.
func cliMessage(l *line, base Entry) ([]Entry, error) {
	var m struct {
		Role    string          `json:"role"`
		Model   string          `json:"model"`
		Content json.RawMessage `json:"content"`
	}
	if len(l.Message) == 0 || json.Unmarshal(l.Message, &m) != nil {
		return nil, fmt.Errorf("transcript line: %s line without a message object", l.Type)
	}
	if s, ok := str(m.Content); ok {
		base.Kind, base.Role, base.Text = EntryMessage, l.Type, s
		return []Entry{base}, nil
	}
	var blocks []struct {
		Type      string          `json:"type"`
		Text      string          `json:"text"`
		Thinking  string          `json:"thinking"`
		ID        string          `json:"id"`
		Name      string          `json:"name"`
		Input     json.RawMessage `json:"input"`
		ToolUseID string          `json:"tool_use_id"`
		Content   json.RawMessage `json:"content"`
		IsError   bool            `json:"is_error"`
	}
	if err := json.Unmarshal(m.Content, &blocks); err != nil {
		return nil, fmt.Errorf("transcript line: message content: %w", err)
	}
	var out []Entry
	msg := base
	msg.Kind, msg.Role, msg.Model = EntryMessage, l.Type, m.Model
	fid := transcript.FidelityAgentEmitted
	for _, b := range blocks {
		switch b.Type {
		case "text":
			msg.Blocks = append(msg.Blocks, transcript.ContentBlock{Type: transcript.BlockText, Fidelity: fid, Text: b.Text})
			msg.Text += b.Text
		case "thinking":
			msg.Blocks = append(msg.Blocks, transcript.ContentBlock{Type: transcript.BlockThinking, Fidelity: fid, Thinking: b.Thinking})
		case "tool_use":
			var in any
			if len(b.Input) > 0 {
				in = b.Input
			}
			msg.Blocks = append(msg.Blocks, transcript.ContentBlock{Type: transcript.BlockToolUse, Fidelity: fid, ToolName: b.Name, ToolID: b.ID, ToolInput: in})
			out = append(out, Entry{Kind: EntryToolUse, Time: base.Time, ToolName: b.Name, ToolID: b.ID, Input: b.Input})
		case "tool_result":
			r := Entry{Kind: EntryToolResult, Time: base.Time, ToolID: b.ToolUseID, Output: b.Content}
			if b.IsError {
				r.Error = contentText(b.Content)
				if r.Error == "" {
					r.Error = "tool error"
				}
			}
			out = append(out, r)
		}
	}
	if len(msg.Blocks) > 0 {
		out = append([]Entry{msg}, out...)
	}
	if len(out) == 0 {
		msg.Kind = EntryOther
		out = append(out, msg)
	}
	return out, nil
}

func deref(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

func first(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

func firstRaw(r ...json.RawMessage) json.RawMessage {
	for _, v := range r {
		if len(v) > 0 {
			return v
		}
	}
	return nil
}

// str decodes a JSON string value the way encoding/json does, without
// reflection; ok is false for anything else.
func str(raw json.RawMessage) (string, bool) {
	raw = bytes.Trim(raw, " \t\r\n")
	s, end, err := rawjson.Unquote(raw, 0)
	if err != nil || end != len(raw) {
		return "", false
	}
	return s, true
}

// contentText flattens content: a string, or a list of {type:text,text}
// parts; anything else is kept as its JSON text.
func contentText(raw json.RawMessage) string {
	if s, ok := str(raw); ok {
		return s
	}
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var parts []struct {
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) == nil {
		var b strings.Builder
		for _, p := range parts {
			b.WriteString(p.Text)
		}
		return b.String()
	}
	return string(raw)
}

func errorText(raw json.RawMessage) string {
	if s, ok := str(raw); ok {
		return s
	}
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var o struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(raw, &o) == nil && o.Message != "" {
		return o.Message
	}
	return string(raw)
}

// ParseTime reads Flow Studio's timestamps: RFC 3339, and also the
// "+00:00Z" form (an offset followed by Z) its Python writer produces, and
// naive times, which it writes in UTC.
func ParseTime(s string) (time.Time, error) {
	orig := s
	if len(s) > 6 && strings.HasSuffix(s, "Z") {
		if off := s[len(s)-7 : len(s)-1]; (off[0] == '+' || off[0] == '-') && off[3] == ':' {
			s = s[:len(s)-1]
		}
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02 15:04:05.999999999Z07:00", "2006-01-02 15:04:05.999999999"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, fmt.Errorf("timestamp %q is not ISO 8601", orig)
}
