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

type claudeLine struct {
	typ, subtype, sid, model, result    string
	cwd, summary, uuid, leafUUID        string
	message, usage, models, errors      []byte
	compact                             []byte
	ts                                  time.Time
	sidechain, meta, isError, synthetic bool
	durationMS, turns                   int64
	cost                                []byte
}

func (c *claude) line(v []byte) error {
	l, err := parseClaudeLine(v)
	if err != nil {
		return err
	}
	c.track(&l)
	s := c.st
	switch l.typ {
	case "assistant":
		if l.sidechain && !c.subagent {
			// A subagent's exchange stays out of the conversation, but
			// its tokens were spent by the session.
			c.messageUsage(l.message)
			s.skip("sidechain line")
			return nil
		}
		c.assistant(l)
	case "user":
		if l.sidechain && !c.subagent {
			s.skip("sidechain line")
			return nil
		}
		c.user(l)
	case "result":
		c.result(l)
	case "system":
		switch l.subtype {
		case "init":
			s.setModel(l.model)
		case "compact_boundary":
			c.compaction(l.compact)
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

// parseClaudeLine reads the fields of one line that any of its kinds uses.
func parseClaudeLine(v []byte) (claudeLine, error) {
	var l claudeLine
	err := eachField(v, func(k, val []byte) {
		switch string(k) {
		case "type":
			l.typ = rawjson.Str(val)
		case "subtype":
			l.subtype = rawjson.Str(val)
		case "session_id", "sessionId":
			l.sid = rawjson.Str(val)
		case "model":
			l.model = rawjson.Str(val)
		case "message":
			l.message = val
		case "timestamp":
			l.ts = timestamp(val)
		case "isSidechain":
			l.sidechain = boolean(val)
		case "isMeta":
			l.meta = boolean(val)
		case "isSynthetic", "isCompactSummary":
			l.synthetic = l.synthetic || boolean(val)
		case "is_error":
			l.isError = boolean(val)
		case "result":
			l.result = rawjson.Str(val)
		case "usage":
			l.usage = val
		case "modelUsage":
			l.models = val
		case "errors":
			l.errors = val
		case "duration_ms":
			l.durationMS = num(val)
		case "num_turns":
			l.turns = num(val)
		case "total_cost_usd":
			l.cost = val
		case "cwd":
			l.cwd = rawjson.Str(val)
		case "summary":
			l.summary = rawjson.Str(val)
		case "uuid":
			l.uuid = rawjson.Str(val)
		case "leafUuid":
			l.leafUUID = rawjson.Str(val)
		case "compact_metadata", "compactMetadata":
			l.compact = val
		}
	})
	return l, err
}

// track keeps what every kind of line may carry: the session id, the
// working directory and the message uuid a summary line may name.
func (c *claude) track(l *claudeLine) {
	s := c.st
	if l.sid != "" {
		s.res.Agent.SessionID = l.sid
	}
	if l.uuid != "" && l.typ != "summary" {
		if _, ok := c.summaries[l.uuid]; ok {
			c.leaf = l.uuid
		} else if len(c.pendingLeaves) < maxLeaves {
			// a summary line may also come after the message it names
			c.pendingLeaves = append(c.pendingLeaves, l.uuid)
		}
	}
	if l.cwd != "" {
		s.setCWD(l.cwd)
	}
}

// summary keeps a summary line: the session's title as Claude Code shows
// it, if it is this session's (finish).
func (c *claude) summary(l claudeLine) {
	if l.summary == "" || l.leafUUID == "" {
		return
	}
	if c.summaries == nil {
		c.summaries = map[string]string{}
	}
	c.summaries[l.leafUUID] = l.summary
}

func (c *claude) assistant(l claudeLine) {
	s := c.st
	var id, model string
	var content, usage []byte
	_ = eachField(l.message, func(k, val []byte) {
		switch string(k) {
		case "id":
			id = rawjson.Str(val)
		case "model":
			model = rawjson.Str(val)
		case "content":
			content = val
		case "usage":
			usage = val
		}
	})
	if id == "" || id != c.msgID {
		s.flush()
		c.msgID = id
	}
	s.setModel(model)
	c.keepUsage(id, usage)
	if c.postPending && usage != nil {
		if u := claudeUsage(usage); u.InputTokens > 0 {
			cs := s.res.Agent.Compactions
			cs[len(cs)-1].PostTokens, c.postPending = u.InputTokens, false
		}
	}
	if len(content) > 0 && content[0] == '"' {
		s.text(rawjson.Str(content), l.ts)
		return
	}
	_ = rawjson.EachElem(content, func(v []byte) {
		b := parseContentBlock(v)
		switch {
		case b.typ == "text":
			s.text(b.text, l.ts)
		case b.typ == "thinking":
			// Claude may stream thinking as a signature with empty text;
			// the block is kept so readers see that the model thought.
			s.thinking(b.thinking, l.ts)
		case b.typ == "redacted_thinking":
			s.thinking("", l.ts)
		case b.typ == "tool_use" || b.typ == "server_tool_use" || b.typ == "mcp_tool_use":
			s.toolUse(b.id, b.name, raw(b.input), l.ts)
		case isServerToolResult(b.typ, b.toolUseID):
			s.serverToolResult(b.toolUseID, b.content, b.isError, l.ts)
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
			cp.PreTokens = num(val)
		case "post_tokens", "postTokens":
			cp.PostTokens = num(val)
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
	var id string
	var usage []byte
	_ = eachField(message, func(k, val []byte) {
		switch string(k) {
		case "id":
			id = rawjson.Str(val)
		case "usage":
			usage = val
		}
	})
	c.keepUsage(id, usage)
}

func (c *claude) user(l claudeLine) {
	s := c.st
	var content []byte
	_ = eachField(l.message, func(k, val []byte) {
		if string(k) == "content" {
			content = val
		}
	})
	s.flush()
	c.msgID = ""
	if len(content) > 0 && content[0] == '"' {
		if l.meta {
			s.skip("meta line")
			return
		}
		text := rawjson.Str(content)
		prompt := isClaudePrompt(text) && !l.synthetic
		if prompt {
			c.prompts++
		}
		s.user([]string{text}, l.ts, prompt)
		return
	}
	var texts []string
	_ = rawjson.EachElem(content, func(v []byte) {
		b := parseContentBlock(v)
		switch b.typ {
		case "text":
			texts = append(texts, b.text)
		case "tool_result":
			errMsg := ""
			if b.isError {
				errMsg = toolErrorText(b.content)
			}
			s.result(b.toolUseID, "", raw(b.content), errMsg, l.ts)
		case "image", "document":
			s.skip("image block")
		default:
			s.skip(SkipUnknownBlock)
		}
	})
	if len(texts) > 0 {
		if l.meta {
			s.skip("meta line")
			return
		}
		prompt := isClaudePrompt(texts[0]) && !l.synthetic
		if prompt {
			c.prompts++
		}
		s.user(texts, l.ts, prompt)
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
	c.totals.result(l.sid, l.usage, l.models, l.cost)
	s.res.Agent.DurationMS += l.durationMS
	c.turns += int(l.turns)
	if l.result != "" {
		s.finalText = l.result
	}
	if l.isError || strings.HasPrefix(l.subtype, "error") {
		var msgs []string
		_ = rawjson.EachElem(l.errors, func(e []byte) {
			if m := rawjson.Str(e); m != "" {
				msgs = append(msgs, m)
			}
		})
		msg := strings.Join(msgs, "; ")
		if msg == "" {
			msg = l.result
		}
		if msg == "" {
			msg = l.subtype
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
