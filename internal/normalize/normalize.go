// Package normalize turns what agent CLIs and model APIs print into
// canonical transcript events. It is the one place where provider divergence
// is absorbed: every format below becomes message.user, message.assistant,
// tool.call and tool.result events with the same block vocabulary, plus the
// usage, cost and final text of the step.
//
// Parsers are incremental. A Parser is an io.Writer: feed it provider output
// in chunks of any size while the provider runs and it emits each event as
// soon as its unit is complete (a line, an SSE frame, a finished message).
// Bad input never stops it: noise lines, comments, malformed JSON, over-long
// lines and unknown event types are skipped and counted by reason in the
// result, and the surrounding content is kept.
//
// The mapping, the same for every format:
//   - one message.assistant per provider message, with text, thinking,
//     tool_use and command blocks (fidelity agent_emitted). A message is
//     complete when the provider shows it ended (the next message, a user
//     line, a tool result, a turn or result event) or at Close;
//   - every tool invocation gives exactly one tool.call, emitted as soon as
//     the use is seen (so before the message that carries its tool_use
//     block), and one tool.result sharing the provider's id, emitted when
//     the result is seen; Close answers the unanswered ones with the error
//     "no result: <reason>";
//   - message.user events carry user turns the recording itself contains
//     (session logs, rollouts; a Claude stream only with
//     --replay-user-messages or a compaction summary), fidelity
//     agent_emitted. A caller that records its own prompt with router
//     fidelity keeps doing so.
package normalize

import (
	"bytes"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/reelhq/reel/internal/rawjson"
	"github.com/reelhq/reel/transcript"
)

// Format names a provider output format; the values are the `reel import
// --from` names.
type Format string

// The supported formats.
const (
	ClaudeStreamJSON Format = "claude-stream-json" // claude -p --output-format stream-json --verbose
	ClaudeSessionLog Format = "claude-session-log" // ~/.claude/projects/**/<session>.jsonl
	CodexExecJSON    Format = "codex-exec-json"    // codex exec --json
	CodexRollout     Format = "codex-rollout"      // ~/.codex/sessions/**/rollout-*.jsonl
	GeminiStreamJSON Format = "gemini-stream-json" // gemini --output-format stream-json
	GeminiSession    Format = "gemini-session"     // ~/.gemini/tmp/<hash>/chats/session-*.json
	CopilotJSON      Format = "copilot-json"       // copilot -p … --output-format json
	OpenAIChatStream Format = "openai-chat-stream" // Chat Completions chunks (SSE or one JSON per line) or a chat.completion
	AnthropicSSE     Format = "anthropic-sse"      // Messages API streaming events
	VibeStreaming    Format = "vibe-streaming"     // vibe --prompt … --output streaming (or json); a session's messages.jsonl
	OpencodeJSON     Format = "opencode-json"      // opencode run --format json
)

// Formats lists every supported format.
func Formats() []Format {
	return []Format{ClaudeStreamJSON, ClaudeSessionLog, CodexExecJSON, CodexRollout,
		GeminiStreamJSON, GeminiSession, CopilotJSON, OpenAIChatStream, AnthropicSSE, VibeStreaming, OpencodeJSON}
}

// ParseFormat returns the format named s.
func ParseFormat(s string) (Format, error) {
	for _, f := range Formats() {
		if string(f) == s {
			return f, nil
		}
	}
	names := make([]string, 0, len(Formats()))
	for _, f := range Formats() {
		names = append(names, string(f))
	}
	return "", fmt.Errorf("unknown format %q (known: %s)", s, strings.Join(names, ", "))
}

// MaxLineSize bounds a provider line held in memory; longer lines are
// discarded as they stream in and counted as "line too long".
const MaxLineSize = transcript.DefaultMaxLineSize

// maxDocSize bounds a whole-document format (a Gemini session file, a
// pretty-printed response).
const maxDocSize = 256 << 20

// Skip reasons reported in Result.Agent.Skipped.
const (
	SkipLineTooLong   = "line too long"
	SkipMalformed     = "malformed JSON"
	SkipTruncated     = "truncated last line"
	SkipNonJSON       = "non-JSON line"
	SkipComment       = "comment line"
	SkipUnknownEvent  = "unknown event type"
	SkipUnknownItem   = "unknown item type"
	SkipUnknownBlock  = "unknown block type"
	SkipDocTooLarge   = "document too large"
	SkipDupToolResult = "duplicate tool result"
)

// Emit receives each canonical event as soon as its unit is complete: Type
// and Payload set (message.user / message.assistant / tool.call /
// tool.result), Timestamp set when the provider gives one (else zero); Seq,
// RunID, Path and Iteration are left to the caller. An error from Emit stops
// the parser and is returned by Write and Close.
type Emit func(ev transcript.ExchangeEvent) error

// Result is what a parsed step amounts to.
type Result struct {
	// Agent is the agent step's result: Output is the final assistant text
	// (the provider's own final text when it reports one), Usage the
	// provider's token counts, each counted once in transcript.Usage's
	// convention and read as running or per-turn totals as the format
	// reports them (usage.go), CostUSD only when reported,
	// DurationMS as reported by the provider, Skipped by reason.
	Agent transcript.AgentResult `json:"agent"`
	// IsError and Error report a provider-declared failure (error result
	// subtypes, turn.failed, error events).
	IsError bool   `json:"is_error,omitempty"`
	Error   string `json:"error,omitempty"`
	// Prompt is the first user prompt when the recording contains it
	// (session logs, rollouts); the parser also emits it as message.user.
	Prompt string `json:"prompt,omitempty"`
	// Title is the session's own title when the recording has one (a
	// Claude session log's summary), and CWD the directory the agent ran
	// in when the recording says (Claude's and Codex's cwd): an import
	// names its run after them.
	Title string `json:"title,omitempty"`
	CWD   string `json:"cwd,omitempty"`
	// Warnings are non-fatal problems the provider reported (Codex error
	// items, aborted turns).
	Warnings []string `json:"warnings,omitempty"`
	// Start and End span every time the recording states, also on lines
	// that give no event (a Codex rollout's session_meta and token
	// counts, a Gemini session's startTime and lastUpdated, a reply's own
	// time after the thoughts that began it): an import's run covers the
	// session, not only its events. Zero when the format states none.
	Start time.Time `json:"-"`
	End   time.Time `json:"-"`
	// SessionTotal is set for formats whose usage reports are, or may
	// be, the provider session's running total: Codex exec's
	// turn.completed always is; Claude Code's modelUsage is in a resumed
	// process from 2.1.332 on (the totals start from the session's
	// earlier processes) and was not before. It is the total as of the
	// end of the stream (its last process). Agent.Usage holds the same,
	// since a stream alone cannot tell its share from the earlier turns'
	// of a resumed session; a caller that ran those turns subtracts
	// their total (see QueryUsage).
	SessionTotal *transcript.Usage `json:"session_total,omitempty"`
	// SessionCost is SessionTotal's cost (Claude Code's total_cost_usd),
	// nil when the provider reports none.
	SessionCost *float64 `json:"session_cost_usd,omitempty"`
	// QueryUsage, when set, is what the last process's own queries
	// reported (Claude Code's result usage): SessionTotal includes the
	// earlier turns exactly when it covers their total plus QueryUsage.
	// Unset (Codex), SessionTotal always does.
	QueryUsage *transcript.Usage `json:"query_usage,omitempty"`
}

// Parser normalizes one step's provider output. It is not safe for
// concurrent use.
type Parser struct {
	format Format
	st     *state
	// line handles one JSON object (a line, an SSE data payload, an element
	// of a document).
	line func(v []byte) error
	// doc, when set, handles the whole input as one document at Close
	// instead of line by line.
	doc func(d []byte)
	// finish runs at Close before dangling tools are closed.
	finish func()
	sse    bool

	buf      []byte
	overlong bool
	started  bool
	docMode  bool
	docBuf   []byte
	docOver  bool
	closed   bool
}

// NewParser returns a parser for f that hands events to emit.
func NewParser(f Format, emit Emit) (*Parser, error) {
	if emit == nil {
		return nil, errors.New("normalize: nil emit")
	}
	p := &Parser{format: f, st: newState(emit)}
	switch f {
	case ClaudeStreamJSON, ClaudeSessionLog:
		newClaude(p, f == ClaudeSessionLog)
	case CodexExecJSON:
		newCodexExec(p)
	case CodexRollout:
		newCodexRollout(p)
	case GeminiStreamJSON:
		newGeminiStream(p)
	case GeminiSession:
		newGeminiSession(p)
	case CopilotJSON:
		newCopilot(p)
	case OpenAIChatStream:
		newOpenAI(p)
	case AnthropicSSE:
		newAnthropic(p)
	case VibeStreaming:
		newVibe(p)
	case OpencodeJSON:
		newOpencode(p)
	default:
		_, err := ParseFormat(string(f))
		return nil, err
	}
	return p, nil
}

// NewSubagentParser returns a parser of a Claude Code subagent's session
// log (<session>/subagents/agent-<id>.jsonl): a session log whose every
// line is a sidechain, which is the subagent's own conversation rather
// than one to leave out.
func NewSubagentParser(emit Emit) (*Parser, error) {
	if emit == nil {
		return nil, errors.New("normalize: nil emit")
	}
	p := &Parser{format: ClaudeSessionLog, st: newState(emit)}
	newClaude(p, true).subagent = true
	return p, nil
}

// Format returns the parser's format.
func (p *Parser) Format() Format { return p.format }

var errClosed = errors.New("normalize: parser closed")

// Write feeds provider output. Lines may be split anywhere; a partial line is
// buffered until its newline arrives.
func (p *Parser) Write(b []byte) (int, error) {
	if p.closed {
		return 0, errClosed
	}
	if p.st.err != nil {
		return 0, p.st.err
	}
	n := len(b)
	for len(b) > 0 {
		if p.docMode {
			p.appendDoc(b)
			return n, nil
		}
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			if p.overlong {
				return n, nil
			}
			if len(p.buf)+len(b) > MaxLineSize {
				p.dropLine()
				return n, nil
			}
			p.buf = appendBounded(p.buf, b)
			return n, nil
		}
		seg := b[:i]
		b = b[i+1:]
		if p.overlong {
			p.overlong = false
			p.st.skip(SkipLineTooLong)
			continue
		}
		if len(p.buf) > 0 {
			if len(p.buf)+len(seg) > MaxLineSize {
				p.buf = p.buf[:0]
				p.st.skip(SkipLineTooLong)
				continue
			}
			p.buf = appendBounded(p.buf, seg)
			p.handle(p.buf, false)
			p.buf = p.buf[:0]
		} else {
			p.handle(seg, false)
		}
		if p.docMode {
			continue
		}
		if p.st.err != nil {
			return n, p.st.err
		}
	}
	return n, p.st.err
}

// appendBounded appends to a line buffer whose length never exceeds
// MaxLineSize, growing its capacity no further than that either.
func appendBounded(buf, b []byte) []byte {
	if need := len(buf) + len(b); need > cap(buf) {
		c := min(max(2*cap(buf), need, 4096), MaxLineSize)
		nb := make([]byte, len(buf), c)
		copy(nb, buf)
		buf = nb
	}
	return append(buf, b...)
}

// dropLine starts discarding the current line: it is over the limit.
func (p *Parser) dropLine() {
	p.overlong = true
	if cap(p.buf) > 1<<20 {
		p.buf = nil // do not keep a 16 MiB buffer alive for the rest of the step
	} else {
		p.buf = p.buf[:0]
	}
}

func (p *Parser) appendDoc(b []byte) {
	if p.docOver {
		return
	}
	if len(p.docBuf)+len(b) > maxDocSize {
		p.docOver = true
		p.docBuf = nil
		p.st.skip(SkipDocTooLarge)
		return
	}
	p.docBuf = append(p.docBuf, b...)
}

// handle processes one complete line.
func (p *Parser) handle(line []byte, last bool) {
	t := bytes.TrimSpace(line)
	if len(t) == 0 {
		return
	}
	if !p.started {
		p.started = true
		// A pretty-printed document (a chat.completion, a session file, a
		// JSON array of events) is read whole at Close.
		if p.doc != nil || string(t) == "{" || string(t) == "[" {
			p.docMode = true
			p.appendDoc(line)
			p.appendDoc([]byte{'\n'})
			return
		}
	}
	if t[0] == '#' {
		p.st.skip(SkipComment)
		return
	}
	if p.sse {
		switch {
		case bytes.HasPrefix(t, []byte("data:")):
			t = bytes.TrimSpace(t[len("data:"):])
			if len(t) == 0 {
				return // an empty data field carries nothing
			}
			if string(t) == "[DONE]" {
				p.value([]byte(`{"type":"[DONE]"}`), false)
				return
			}
		case t[0] == ':' || bytes.HasPrefix(t, []byte("event:")) || bytes.HasPrefix(t, []byte("id:")) || bytes.HasPrefix(t, []byte("retry:")):
			// SSE framing: the event name is repeated inside the data.
			return
		}
	}
	if t[0] != '{' {
		p.st.skip(SkipNonJSON)
		return
	}
	p.value(t, last)
}

func (p *Parser) value(v []byte, last bool) {
	if err := p.line(v); err != nil {
		if last {
			p.st.skip(SkipTruncated)
		} else {
			p.st.skip(SkipMalformed)
		}
	}
}

// Close flushes the last unit, closes tool uses that never got a result with
// a tool.result whose Error is "no result: "+reason, and returns the step's
// result. Close may be called once.
func (p *Parser) Close(reason string) (*Result, error) {
	if p.closed {
		return nil, errClosed
	}
	p.closed = true
	if p.st.err == nil {
		switch {
		case p.docMode:
			if len(p.buf) > 0 {
				p.appendDoc(p.buf)
				p.buf = nil
			}
			if !p.docOver {
				if p.doc != nil {
					p.doc(p.docBuf)
				} else {
					p.docValues(p.docBuf)
				}
			}
			p.docBuf = nil
		case p.overlong:
			p.st.skip(SkipLineTooLong)
		case len(p.buf) > 0:
			p.handle(p.buf, true)
		}
		p.buf = nil
	}
	if p.st.err == nil && p.finish != nil {
		p.finish()
	}
	if reason == "" {
		reason = "step ended"
	}
	p.st.closeAll(reason)
	if p.st.err != nil {
		return nil, p.st.err
	}
	return p.st.final(), nil
}

// docValues reads a document made of JSON values (objects, or arrays of
// objects) and handles each object like a line.
func (p *Parser) docValues(d []byte) {
	i := 0
	for {
		i = rawjson.SkipSpace(d, i)
		if i >= len(d) {
			return
		}
		end, err := skipValue(d, i)
		if err != nil {
			p.st.skip(SkipTruncated)
			return
		}
		v := d[i:end]
		i = end
		switch v[0] {
		case '{':
			p.value(v, false)
		case '[':
			if err := rawjson.EachElem(v, func(e []byte) {
				if len(e) > 0 && e[0] == '{' {
					p.value(e, false)
				} else {
					p.st.skip(SkipNonJSON)
				}
			}); err != nil {
				p.st.skip(SkipMalformed)
			}
		default:
			p.st.skip(SkipNonJSON)
		}
		if p.st.err != nil {
			return
		}
	}
}

// SkippedSummary renders skipped counts as "reason ×n, …" in a stable order.
func SkippedSummary(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s ×%d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}
