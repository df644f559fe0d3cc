package normalize

import (
	"strings"
	"time"

	"github.com/reelhq/reel/internal/rawjson"
)

// codexRollout reads a Codex session file. response_item lines are the
// model-visible history and the source of truth; event_msg lines repeat
// them for the UI and are used only when a file has no response items.
type codexRollout struct {
	st       *state
	scratch  []byte
	ev       *codexEvents
	sawItems bool
}

func newCodexRollout(p *Parser) {
	c := &codexRollout{st: p.st}
	c.ev = &codexEvents{st: p.st}
	p.st.res.Agent.Provider = "codex"
	p.line = c.line
	p.finish = c.finish
}

func (c *codexRollout) line(v []byte) error {
	var typ string
	var payload []byte
	var ts time.Time
	handled := false
	_, err := rawjson.Members(v, func(k, d []byte, vs int) (int, error) {
		if string(k) == "payload" && d[vs] == '{' && (typ == "response_item" || typ == "event_msg") {
			// Nearly all of a rollout's bytes are in these payloads: parse
			// them in place rather than skipping them first.
			var end int
			var err error
			if typ == "response_item" {
				end, err = c.item(d[vs:], ts)
			} else {
				end, err = c.ev.event(d[vs:], ts)
			}
			if err != nil {
				return 0, err
			}
			handled = true
			return vs + end, nil
		}
		ve, err := skipValue(d, vs)
		if err != nil {
			return 0, err
		}
		val := d[vs:ve]
		switch string(k) {
		case "type":
			typ = rawjson.Str(val)
		case "payload":
			payload = val
		case "timestamp":
			ts = rawjson.Time(val)
		}
		return ve, nil
	})
	if err != nil {
		return err
	}
	s := c.st
	s.seen(ts)
	switch typ {
	case "session_meta":
		s.res.Agent.SessionID = rawjson.Str(field(payload, "id"))
		s.setCWD(rawjson.Str(field(payload, "cwd")))
	case "turn_context":
		s.flush()
		s.setCWD(rawjson.Str(field(payload, "cwd")))
		s.setModel(rawjson.Str(field(payload, "model")))
		s.res.Agent.Turns++
	case "response_item":
		if !handled {
			if _, err := c.item(payload, ts); err != nil {
				return err
			}
		}
	case "event_msg":
		if !handled {
			if _, err := c.ev.event(payload, ts); err != nil {
				return err
			}
		}
	case "compacted":
	default:
		s.skip(SkipUnknownEvent)
	}
	return nil
}

func (c *codexRollout) finish() { c.ev.replay() }

// item handles a response item and returns the length of its object; it
// emits nothing when the object is malformed.
func (c *codexRollout) item(v []byte, ts time.Time) (int, error) {
	it, end, err := parseCodexObject(v)
	if err != nil {
		return 0, err
	}
	if !c.sawItems {
		c.sawItems = true
		c.ev.itemsStart()
	}
	s := c.st
	switch it.Type {
	case "message":
		c.message(&it, ts)
	case "reasoning":
		parts := partTexts(it.Content)
		if len(parts) == 0 {
			parts = partTexts(it.Summary)
		}
		s.thinking(strings.Join(parts, "\n\n"), ts)
	case "function_call":
		args := rawjson.Str(it.Arguments)
		in := jsonText(args)
		switch it.Name {
		case "shell", "container.exec", "shell_command", "exec_command":
			cmd := args
			if c := field([]byte(args), "command"); c != nil {
				cmd = argv(c)
			}
			s.command(cmd, ts)
			s.call(it.CallID, it.Name, in, ts)
		default:
			s.toolUse(it.CallID, it.Name, in, ts)
		}
	case "custom_tool_call":
		s.toolUse(it.CallID, it.Name, rawjson.Str(it.Input), ts)
	case "local_shell_call":
		cmd := argv(field(it.Action, "command"))
		s.command(cmd, ts)
		s.call(it.CallID, "local_shell", raw(it.Action), ts)
	case "web_search_call":
		id := s.toolUse("", "web_search", raw(it.Action), ts)
		s.flush()
		s.result(id, "web_search", map[string]any{"status": it.Status}, failedMsg(it.Status, "web search failed"), ts)
	case "function_call_output", "custom_tool_call_output", "local_shell_call_output":
		s.flush()
		out, errMsg := codexToolOutput(it.Output, &c.scratch)
		s.result(it.CallID, "", out, errMsg, ts)
	default:
		s.skip(SkipUnknownItem)
	}
	return end, nil
}

// message handles a message item: the assistant's texts, or a user turn.
func (c *codexRollout) message(it *codexObject, ts time.Time) {
	s := c.st
	texts := partTexts(it.Content)
	switch it.Role {
	case "assistant":
		// Each message item is a reply of its own (newer Codex writes a
		// turn's commentary and its final answer as separate messages):
		// one after another they are not one text.
		if len(texts) > 0 && s.hasText() {
			s.flush()
		}
		for _, t := range texts {
			s.text(t, ts)
		}
	case "user":
		if !c.ev.userItem(texts) {
			return
		}
		// The CLI injects its environment and instructions as user
		// messages; they are recorded but are not the prompt.
		prompt := len(texts) > 0 && isCodexPrompt(texts[0])
		if prompt && s.res.Prompt == "" {
			s.res.Prompt = codexRequest(strings.Join(texts, "\n"))
		}
		s.user(texts, ts, prompt)
	default:
		s.skip("system message")
	}
}

// partTexts is the non-empty texts of a list of parts [{text}].
func partTexts(parts []byte) []string {
	var texts []string
	_ = rawjson.EachElem(parts, func(b []byte) {
		if t := rawjson.Str(field(b, "text")); t != "" {
			texts = append(texts, t)
		}
	})
	return texts
}

// isCodexPrompt tells the user's own messages from those the CLI injects:
// its environment, the user's instructions and AGENTS.md files.
func isCodexPrompt(text string) bool {
	for _, p := range []string{"<environment_context>", "<user_instructions>", "# AGENTS.md instructions for "} {
		if strings.HasPrefix(text, p) {
			return false
		}
	}
	return text != ""
}

// codexRequest is what the user asked in a prompt the IDE extension sent:
// it puts the editor's state first ("# Context from my IDE setup:", the
// active file, open tabs) and the request under "## My request for
// Codex:". Any other prompt is the request as it is.
func codexRequest(text string) string {
	const marker = "## My request for Codex:"
	if t := strings.TrimSpace(text); strings.HasPrefix(t, marker) {
		// the extension sends the request alone under its heading when it
		// has no editor context to add
		if req := strings.TrimSpace(t[len(marker):]); req != "" {
			return req
		}
	}
	if !strings.HasPrefix(text, "# Context from my IDE setup") {
		return text
	}
	if i := strings.LastIndex(text, marker); i >= 0 {
		if req := strings.TrimSpace(text[i+len(marker):]); req != "" {
			return req
		}
	}
	return text
}
