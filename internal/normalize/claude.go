package normalize

import (
	"strings"
	"time"

	"github.com/reelhq/reel/internal/rawjson"
	"github.com/reelhq/reel/transcript"
)

// claude reads Claude Code's stream-json output and its on-disk session
// logs. Both are lines of {type, message}; an assistant message may arrive
// as several lines, one per content block, sharing message.id, and is merged
// back into one message.assistant.
type claude struct {
	st      *state
	session bool // session log: per-line usage, sidechains, isMeta
	// subagent: the log is a subagent's own (subagents/agent-*.jsonl),
	// whose sidechain lines are its conversation
	subagent bool

	msgID string
	// msgUsage keeps the last usage seen per message id (session logs repeat
	// it on every block line); used when no result line reports totals.
	msgUsage map[string]transcript.Usage
	usageIDs []string
	results  int
	totals   claudeTotals
	turns    int
	prompts  int
	// summaries are the title lines of the log by the message they
	// summarise (leafUuid); leaf is the latest of this session's messages
	// that one of them names. A log's summary lines may name another
	// session's messages (Claude Code writes them where it resumes), so
	// a summary titles the session only when its leaf is here, as
	// claude-code-log matches them.
	summaries     map[string]string
	leaf          string
	pendingLeaves []string
	// postPending: the last compaction's size after is the next model
	// call's input (the session log's compactMetadata has no postTokens).
	postPending bool
}

func newClaude(p *Parser, session bool) *claude {
	c := &claude{st: p.st, session: session, msgUsage: map[string]transcript.Usage{}}
	p.line = c.line
	p.finish = c.finish
	p.st.res.Agent.Provider = "claude"
	return c
}

// claudeLine is the fields of a line that any of its kinds uses.
type claudeLine struct {
	Type, Subtype, SessionID, Model, Result, CWD, Summary, UUID, LeafUUID string
	Message, Usage, ModelUsage, Errors, CompactMetadata, TotalCostUSD     []byte
	Timestamp                                                             time.Time
	IsSidechain, IsMeta, IsError, IsSynthetic, IsCompactSummary           bool
	DurationMS, NumTurns                                                  int64
}

var claudeLineFields = rawjson.NewBinder[claudeLine]()

// synthetic reports a user line Claude Code wrote itself, not the user.
func (l *claudeLine) synthetic() bool { return l.IsSynthetic || l.IsCompactSummary }

func (c *claude) line(v []byte) error {
	var l claudeLine
	if _, err := claudeLineFields.Bind(v, &l); err != nil {
		return err
	}
	c.track(&l)
	s := c.st
	switch l.Type {
	case "assistant":
		if l.IsSidechain && !c.subagent {
			// A subagent's exchange stays out of the conversation, but
			// its tokens were spent by the session.
			c.messageUsage(l.Message)
			s.skip("sidechain line")
			return nil
		}
		c.assistant(l)
	case "user":
		if l.IsSidechain && !c.subagent {
			s.skip("sidechain line")
			return nil
		}
		c.user(l)
	case "result":
		c.result(l)
	case "system":
		switch l.Subtype {
		case "init":
			s.setModel(l.Model)
		case "compact_boundary":
			c.compaction(l.CompactMetadata)
		}
	case "summary":
		c.summary(l)
	case "file-history-snapshot", "rate_limit_event":
		// Session titles, file backups and rate-limit notices carry no
		// conversation content.
	case "stream_event":
		// Partial deltas; the complete assistant line follows them.
		s.skip("stream_event partial")
	default:
		s.skip(SkipUnknownEvent)
	}
	return nil
}

// track keeps what every kind of line may carry: the session id, the
// working directory and the message uuid a summary line may name.
func (c *claude) track(l *claudeLine) {
	s := c.st
	if l.SessionID != "" {
		s.res.Agent.SessionID = l.SessionID
	}
	if l.UUID != "" && l.Type != "summary" {
		if _, ok := c.summaries[l.UUID]; ok {
			c.leaf = l.UUID
		} else if len(c.pendingLeaves) < maxLeaves {
			// a summary line may also come after the message it names
			c.pendingLeaves = append(c.pendingLeaves, l.UUID)
		}
	}
	if l.CWD != "" {
		s.setCWD(l.CWD)
	}
}

// summary keeps a summary line: the session's title as Claude Code shows
// it, if it is this session's (finish).
func (c *claude) summary(l claudeLine) {
	if l.Summary == "" || l.LeafUUID == "" {
		return
	}
	if c.summaries == nil {
		c.summaries = map[string]string{}
	}
	c.summaries[l.LeafUUID] = l.Summary
}

// claudeMessage is the fields reel reads of a line's message.
type claudeMessage struct {
	ID, Model      string
	Content, Usage []byte
}

var claudeMessageFields = rawjson.NewBinder[claudeMessage]()

func (c *claude) assistant(l claudeLine) {
	s := c.st
	var m claudeMessage
	_, _ = claudeMessageFields.Bind(l.Message, &m)
	if m.ID == "" || m.ID != c.msgID {
		s.flush()
		c.msgID = m.ID
	}
	s.setModel(m.Model)
	c.keepUsage(m.ID, m.Usage)
	if c.postPending && m.Usage != nil {
		if u := claudeUsage(m.Usage); u.InputTokens > 0 {
			cs := s.res.Agent.Compactions
			cs[len(cs)-1].PostTokens, c.postPending = u.InputTokens, false
		}
	}
	if len(m.Content) > 0 && m.Content[0] == '"' {
		s.text(rawjson.Str(m.Content), l.Timestamp)
		return
	}
	_ = rawjson.EachElem(m.Content, func(v []byte) {
		b := parseContentBlock(v)
		switch {
		case b.Type == "text":
			s.text(b.Text, l.Timestamp)
		case b.Type == "thinking":
			// Claude may stream thinking as a signature with empty text;
			// the block is kept so readers see that the model thought.
			s.thinking(b.Thinking, l.Timestamp)
		case b.Type == "redacted_thinking":
			s.thinking("", l.Timestamp)
		case b.Type == "tool_use" || b.Type == "server_tool_use" || b.Type == "mcp_tool_use":
			s.toolUse(b.ID, b.Name, raw(b.Input), l.Timestamp)
		case isServerToolResult(b.Type, b.ToolUseID):
			s.serverToolResult(b.ToolUseID, b.Content, b.IsError, l.Timestamp)
		default:
			s.skip(SkipUnknownBlock)
		}
	})
}

// compaction records a compact_boundary: stream-json's compact_metadata
// says the context's size before and after (pre_tokens, post_tokens), a
// session log's compactMetadata the size before (preTokens).
func (c *claude) compaction(meta []byte) {
	var cp transcript.Compaction
	_ = eachField(meta, func(k, val []byte) {
		switch string(k) {
		case "trigger":
			cp.Trigger = rawjson.Str(val)
		case "pre_tokens", "preTokens":
			cp.PreTokens = rawjson.Int(val)
		case "post_tokens", "postTokens":
			cp.PostTokens = rawjson.Int(val)
		}
	})
	c.st.res.Agent.Compactions = append(c.st.res.Agent.Compactions, cp)
	c.postPending = cp.PostTokens == 0
}

// keepUsage remembers the usage a message line reports; the lines of one
// message repeat it, so the last one per message id counts.
func (c *claude) keepUsage(id string, usage []byte) {
	if usage == nil || id == "" {
		return
	}
	if _, seen := c.msgUsage[id]; !seen {
		c.usageIDs = append(c.usageIDs, id)
	}
	c.msgUsage[id] = claudeUsage(usage)
}

// messageUsage keeps the usage of a message whose content is not recorded.
func (c *claude) messageUsage(message []byte) {
	var m claudeMessage
	_, _ = claudeMessageFields.Bind(message, &m)
	c.keepUsage(m.ID, m.Usage)
}

func (c *claude) user(l claudeLine) {
	s := c.st
	var m claudeMessage
	_, _ = claudeMessageFields.Bind(l.Message, &m)
	content := m.Content
	s.flush()
	c.msgID = ""
	if len(content) > 0 && content[0] == '"' {
		if l.IsMeta {
			s.skip("meta line")
			return
		}
		text := rawjson.Str(content)
		prompt := isClaudePrompt(text) && !l.synthetic()
		if prompt {
			c.prompts++
		}
		s.user([]string{text}, l.Timestamp, prompt)
		return
	}
	var texts []string
	_ = rawjson.EachElem(content, func(v []byte) {
		b := parseContentBlock(v)
		switch b.Type {
		case "text":
			texts = append(texts, b.Text)
		case "tool_result":
			errMsg := ""
			if b.IsError {
				errMsg = toolErrorText(b.Content)
			}
			s.result(b.ToolUseID, "", raw(b.Content), errMsg, l.Timestamp)
		case "image", "document":
			s.skip("image block")
		default:
			s.skip(SkipUnknownBlock)
		}
	})
	if len(texts) > 0 {
		if l.IsMeta {
			s.skip("meta line")
			return
		}
		prompt := isClaudePrompt(texts[0]) && !l.synthetic()
		if prompt {
			c.prompts++
		}
		s.user(texts, l.Timestamp, prompt)
	}
}

// isClaudePrompt tells a prompt the user typed from the user-role lines
// Claude Code writes itself: slash-command markup, local command output and
// interruption notices.
func isClaudePrompt(text string) bool {
	for _, p := range []string{"<command-name>", "<command-message>", "<local-command-stdout>", "<local-command-stderr>", "[Request interrupted by user"} {
		if strings.HasPrefix(text, p) {
			return false
		}
	}
	return text != ""
}

// toolErrorText is the text of an error tool_result's content.
func toolErrorText(content []byte) string {
	if len(content) > 0 && content[0] == '"' {
		if t := rawjson.Str(content); t != "" {
			return t
		}
		return "tool error"
	}
	var sb strings.Builder
	_ = rawjson.EachElem(content, func(b []byte) {
		if t := rawjson.Str(field(b, "text")); t != "" {
			if sb.Len() > 0 {
				sb.WriteByte('\n')
			}
			sb.WriteString(t)
		}
	})
	if sb.Len() == 0 {
		return "tool error"
	}
	return sb.String()
}

func (c *claude) result(l claudeLine) {
	s := c.st
	s.flush()
	c.msgID = ""
	c.results++
	c.totals.result(l.SessionID, l.Usage, l.ModelUsage, l.TotalCostUSD)
	s.res.Agent.DurationMS += l.DurationMS
	c.turns += int(l.NumTurns)
	if l.Result != "" {
		s.finalText = l.Result
	}
	if l.IsError || strings.HasPrefix(l.Subtype, "error") {
		var msgs []string
		_ = rawjson.EachElem(l.Errors, func(e []byte) {
			if m := rawjson.Str(e); m != "" {
				msgs = append(msgs, m)
			}
		})
		msg := strings.Join(msgs, "; ")
		if msg == "" {
			msg = l.Result
		}
		if msg == "" {
			msg = l.Subtype
		}
		s.fail(msg)
	}
}

// maxLeaves bounds the message ids a log keeps to match summary lines
// written after the messages they name.
const maxLeaves = 1 << 16

func (c *claude) finish() {
	s := c.st
	if c.leaf == "" {
		for _, id := range c.pendingLeaves {
			if _, ok := c.summaries[id]; ok {
				c.leaf = id
			}
		}
	}
	if t := c.summaries[c.leaf]; t != "" && s.res.Title == "" {
		s.res.Title = t
	}
	if c.results == 0 {
		// No result line (a session log, or a stream cut short): the
		// per-message usage is all the provider reported.
		for _, id := range c.usageIDs {
			s.addUsage(c.msgUsage[id])
		}
	} else {
		u, cost := c.totals.totals()
		s.setUsage(u)
		s.res.Agent.CostUSD = cost
		if total, cost, own, ok := c.totals.lastProcess(); ok {
			s.res.SessionTotal, s.res.SessionCost, s.res.QueryUsage = &total, cost, &own
		}
	}
	s.res.Agent.Turns = c.turns
	if c.results == 0 {
		s.res.Agent.Turns = c.prompts
	}
}
