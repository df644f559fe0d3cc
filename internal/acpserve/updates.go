package acpserve

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/reelhq/reel/transcript"
)

// maxCardText bounds the text one tool-call card carries (a step's output,
// a tool's result): the editor shows a card, the transcript keeps it all.
const maxCardText = 16 << 10

// stream sends one session's updates to the editor. Updates of a run's
// several transcripts (a sub-workflow has its own) go through it one at a
// time, so that replies are separated where they should be.
type stream struct {
	conn    *sdk.AgentSideConnection
	session sdk.SessionId

	mu sync.Mutex
	// afterText is set when the last update was a piece of the agent's
	// message, so that the next reply starts on a paragraph of its own.
	afterText bool
}

func (s *stream) send(ctx context.Context, u sdk.SessionUpdate) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sendLocked(ctx, u)
}

func (s *stream) sendLocked(ctx context.Context, u sdk.SessionUpdate) error {
	s.afterText = u.AgentMessageChunk != nil
	if err := s.conn.SessionUpdate(ctx, sdk.SessionNotification{SessionId: s.session, Update: u}); err != nil {
		return fmt.Errorf("send session update: %w", err)
	}
	return nil
}

// say sends text as a new paragraph of the agent's message.
func (s *stream) say(ctx context.Context, text string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.afterText {
		text = "\n\n" + text
	}
	return s.sendLocked(ctx, sdk.UpdateAgentMessageText(text))
}

// projector turns the events of one transcript into session updates:
//
//   - each step execution is a tool call, in progress from step.started,
//     completed or failed at step.completed, with what it ran as raw input
//     (the command, the agent's prompt) and what it printed as content;
//   - an agent's replies are the agent's message, its thinking thoughts,
//     and each of its tool calls a tool call of its own, completed by the
//     tool's result;
//   - the user's turns of a conversation are not echoed: the editor shows
//     what its user typed.
//
// Terminal states are left to the run's closing message.
type projector struct {
	out *stream
	// prefix names the sub-workflow a child run's steps belong to.
	prefix string
	open   map[string][]sdk.ToolCallId // path#iteration → open step cards
	// kinds holds the kind of the step last started at each path, so that
	// a loop's body steps are numbered and a parallel block's are not.
	kinds map[string]string
	// prompted marks the step cards whose prompt was attached.
	prompted map[sdk.ToolCallId]bool
	tools    map[string]bool // tool cards created
}

func newProjector(out *stream) *projector {
	return &projector{out: out, open: map[string][]sdk.ToolCallId{}, kinds: map[string]string{}, prompted: map[sdk.ToolCallId]bool{}, tools: map[string]bool{}}
}

func stepKey(ev *transcript.ExchangeEvent) string {
	return fmt.Sprintf("%s#%d", ev.Path, ev.Iteration)
}

// project sends the updates of one event.
func (p *projector) project(ctx context.Context, ev *transcript.ExchangeEvent) error {
	switch ev.Type {
	case transcript.RunStarted:
		if ev.ParentRunID != "" {
			if sp := ev.Step(); sp != nil {
				p.prefix = sp.Name + " › "
			}
		}
	case transcript.StepStarted:
		return p.stepStarted(ctx, ev)
	case transcript.StepCompleted:
		return p.stepCompleted(ctx, ev)
	case transcript.MessageUser:
		return p.prompt(ctx, ev)
	case transcript.MessageAssistant:
		return p.reply(ctx, ev)
	case transcript.ToolCall, transcript.ToolResult:
		return p.tool(ctx, ev)
	}
	return nil
}

func (p *projector) stepStarted(ctx context.Context, ev *transcript.ExchangeEvent) error {
	sp := ev.Step()
	if sp == nil || sp.Kind == transcript.KindTerminal {
		return nil
	}
	id := sdk.ToolCallId(fmt.Sprintf("%s/step/%d", ev.RunID, ev.Seq))
	k := stepKey(ev)
	p.open[k] = append(p.open[k], id)
	p.kinds[ev.Path] = sp.Kind
	title := p.prefix + ev.Path
	if i := strings.LastIndexByte(ev.Path, '.'); i >= 0 {
		if k := p.kinds[ev.Path[:i]]; k == transcript.KindForEach || k == transcript.KindWhile {
			title += fmt.Sprintf(" [%d]", ev.Iteration)
		}
	}
	if sp.Attempt > 1 {
		title += fmt.Sprintf(" (attempt %d)", sp.Attempt)
	}
	opts := []sdk.ToolCallStartOpt{sdk.WithStartKind(stepKind(sp.Kind)), sdk.WithStartStatus(sdk.ToolCallStatusInProgress)}
	input := map[string]any{"kind": sp.Kind}
	if sp.Command != "" {
		input["command"] = sp.Command
		title += ": " + firstLine(sp.Command, 80)
	}
	opts = append(opts, sdk.WithStartRawInput(input))
	return p.out.send(ctx, sdk.StartToolCall(id, title, opts...))
}

// card returns the open card of the step ev completes (or is part of).
func (p *projector) card(ev *transcript.ExchangeEvent, pop bool) (sdk.ToolCallId, bool) {
	k := stepKey(ev)
	ids := p.open[k]
	if len(ids) == 0 {
		return "", false
	}
	id := ids[len(ids)-1]
	if pop {
		if len(ids) == 1 {
			delete(p.open, k)
		} else {
			p.open[k] = ids[:len(ids)-1]
		}
		delete(p.prompted, id)
	}
	return id, true
}

func (p *projector) stepCompleted(ctx context.Context, ev *transcript.ExchangeEvent) error {
	sp := ev.Step()
	if sp == nil {
		return nil
	}
	id, ok := p.card(ev, true)
	if !ok {
		return nil
	}
	status := sdk.ToolCallStatusCompleted
	if sp.Error != "" {
		status = sdk.ToolCallStatusFailed
	}
	opts := []sdk.ToolCallUpdateOpt{sdk.WithUpdateStatus(status)}
	var text string
	switch sp.Kind {
	case transcript.KindCommand:
		var r transcript.CommandResult
		if transcript.DecodeResult(sp.Result, &r) == nil {
			text = r.Output
			if r.Stderr != "" {
				text = strings.TrimRight(text, "\n") + "\n" + r.Stderr
			}
			text = strings.TrimRight(text, "\n")
			if text != "" {
				text = fence(clip(text, maxCardText))
			}
			opts = append(opts, sdk.WithUpdateRawOutput(map[string]any{"exit_code": r.ExitCode, "duration_ms": r.DurationMS, "truncated": r.Truncated}))
		}
	case transcript.KindAgent:
		// The reply went out as the agent's message; the card keeps who
		// answered and at what cost.
		var r transcript.AgentResult
		if transcript.DecodeResult(sp.Result, &r) == nil {
			out := map[string]any{"provider": r.Provider, "model": r.Model, "usage": r.Usage, "duration_ms": r.DurationMS}
			if r.CostUSD != nil {
				out["cost_usd"] = *r.CostUSD
			}
			if r.StoppedBy != "" {
				out["stopped_by"] = r.StoppedBy
			}
			opts = append(opts, sdk.WithUpdateRawOutput(out))
		}
	default:
		if sp.Result != nil {
			opts = append(opts, sdk.WithUpdateRawOutput(sp.Result))
		}
	}
	if sp.Error != "" {
		if text != "" {
			text += "\n\n"
		}
		text += "**error:** " + clip(sp.Error, maxCardText)
	}
	if text != "" {
		opts = append(opts, sdk.WithUpdateContent([]sdk.ToolCallContent{sdk.ToolContent(sdk.TextBlock(text))}))
	}
	return p.out.send(ctx, sdk.UpdateToolCall(id, opts...))
}

// prompt attaches an agent step's first prompt, the one reel composed, to
// its card: what the agent saw. Later user turns are the editor's own.
func (p *projector) prompt(ctx context.Context, ev *transcript.ExchangeEvent) error {
	id, ok := p.card(ev, false)
	if !ok || p.prompted[id] {
		return nil
	}
	p.prompted[id] = true
	m := ev.Message()
	if m == nil {
		return nil
	}
	var parts []string
	for _, b := range m.Blocks {
		if b.Type == transcript.BlockText && b.Text != "" {
			parts = append(parts, b.Text)
		}
	}
	if len(parts) == 0 {
		return nil
	}
	prompt := strings.Join(parts, "\n")
	return p.out.send(ctx, sdk.UpdateToolCall(id,
		sdk.WithUpdateRawInput(map[string]any{"kind": transcript.KindAgent, "prompt": prompt}),
		sdk.WithUpdateContent([]sdk.ToolCallContent{sdk.ToolContent(sdk.TextBlock(quote(clip(prompt, maxCardText))))})))
}

// reply streams an agent's message: its text as the agent's message, its
// thinking as thoughts. Its tool_use blocks are the tool.call events'.
func (p *projector) reply(ctx context.Context, ev *transcript.ExchangeEvent) error {
	m := ev.Message()
	if m == nil {
		return nil
	}
	for _, b := range m.Blocks {
		var err error
		switch b.Type {
		case transcript.BlockText:
			if strings.TrimSpace(b.Text) != "" {
				err = p.out.say(ctx, b.Text)
			}
		case transcript.BlockThinking:
			if strings.TrimSpace(b.Thinking) != "" {
				err = p.out.send(ctx, sdk.UpdateAgentThoughtText(b.Thinking))
			}
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// tool shows an agent's tool call as a card: created by the call (or by a
// result whose call was not seen), completed or failed by the result.
func (p *projector) tool(ctx context.Context, ev *transcript.ExchangeEvent) error {
	t := ev.Tool()
	if t == nil {
		return nil
	}
	key := t.CallID
	if key == "" {
		key = fmt.Sprintf("seq%d", ev.Seq)
	}
	id := sdk.ToolCallId(ev.RunID + "/tool/" + key)
	if !p.tools[key] {
		p.tools[key] = true
		opts := []sdk.ToolCallStartOpt{sdk.WithStartKind(toolKind(t.Name)), sdk.WithStartStatus(sdk.ToolCallStatusInProgress)}
		if t.Input != nil {
			opts = append(opts, sdk.WithStartRawInput(t.Input))
		}
		if path := toolPath(t.Input); path != "" {
			opts = append(opts, sdk.WithStartLocations([]sdk.ToolCallLocation{{Path: path}}))
		}
		if err := p.out.send(ctx, sdk.StartToolCall(id, toolTitle(t.Name, t.Input), opts...)); err != nil {
			return err
		}
	}
	if ev.Type != transcript.ToolResult {
		return nil
	}
	delete(p.tools, key)
	status := sdk.ToolCallStatusCompleted
	text := valueText(t.Output)
	if t.Error != "" {
		status = sdk.ToolCallStatusFailed
		if text == "" {
			text = t.Error
		}
	}
	opts := []sdk.ToolCallUpdateOpt{sdk.WithUpdateStatus(status)}
	if t.Output != nil && !isText(t.Output) {
		// Text is the card's content already; structured output is kept
		// as it came too.
		opts = append(opts, sdk.WithUpdateRawOutput(t.Output))
	}
	if text = strings.TrimRight(text, "\n"); text != "" {
		opts = append(opts, sdk.WithUpdateContent([]sdk.ToolCallContent{sdk.ToolContent(sdk.TextBlock(fence(clip(text, maxCardText))))}))
	}
	return p.out.send(ctx, sdk.UpdateToolCall(id, opts...))
}

// stepKind is the card kind of a step kind.
func stepKind(kind string) sdk.ToolKind {
	switch kind {
	case transcript.KindCommand:
		return sdk.ToolKindExecute
	case transcript.KindAgent:
		return sdk.ToolKindThink
	case transcript.KindOperation:
		return sdk.ToolKindFetch
	}
	return sdk.ToolKindOther
}

// toolKind is the card kind of an agent tool, by the names the agent CLIs
// give their tools.
func toolKind(name string) sdk.ToolKind {
	n := strings.ToLower(name)
	if i := strings.LastIndex(n, "__"); i >= 0 { // MCP tools: mcp__server__tool
		n = n[i+2:]
	}
	switch {
	case strings.Contains(n, "think") || strings.Contains(n, "todo") || n == "task" || strings.Contains(n, "plan"):
		return sdk.ToolKindThink
	case n == "read" || strings.Contains(n, "read_file") || n == "view" || n == "cat" || n == "notebookread":
		return sdk.ToolKindRead
	case strings.Contains(n, "edit") || strings.Contains(n, "write") || strings.Contains(n, "patch") || n == "replace":
		return sdk.ToolKindEdit
	case strings.Contains(n, "delete") || n == "rm":
		return sdk.ToolKindDelete
	case n == "move" || n == "mv" || n == "rename":
		return sdk.ToolKindMove
	case n == "bash" || strings.Contains(n, "shell") || strings.Contains(n, "exec") || strings.Contains(n, "command") || n == "terminal":
		return sdk.ToolKindExecute
	case strings.Contains(n, "grep") || strings.Contains(n, "glob") || strings.Contains(n, "search") || n == "ls" || n == "list" || strings.Contains(n, "find") || strings.Contains(n, "list_dir"):
		return sdk.ToolKindSearch
	case strings.Contains(n, "fetch") || strings.Contains(n, "web") || strings.Contains(n, "http"):
		return sdk.ToolKindFetch
	}
	return sdk.ToolKindOther
}

// toolArgKeys are the input keys whose value says what a tool call is
// about, in the order they are looked for.
var toolArgKeys = []string{"file_path", "path", "filePath", "absolute_path", "notebook_path", "command", "cmd", "pattern", "query", "url", "description"}

// toolPath is the file a tool call is about, when its input names one.
func toolPath(input any) string {
	m := asMap(input)
	for _, k := range []string{"file_path", "path", "filePath", "absolute_path", "notebook_path"} {
		if s, ok := m[k].(string); ok && s != "" {
			return s
		}
	}
	return ""
}

// toolTitle is "Name argument": the tool and what it is about.
func toolTitle(name string, input any) string {
	if name == "" {
		name = "tool"
	}
	m := asMap(input)
	for _, k := range toolArgKeys {
		switch v := m[k].(type) {
		case string:
			if v != "" {
				return name + " " + firstLine(v, 80)
			}
		case []any:
			if len(v) > 0 {
				parts := make([]string, len(v))
				for i, x := range v {
					parts[i] = fmt.Sprint(x)
				}
				return name + " " + firstLine(strings.Join(parts, " "), 80)
			}
		}
	}
	return name
}

// asMap reads a tool input as an object, whether decoded or raw JSON.
func asMap(v any) map[string]any {
	switch x := v.(type) {
	case map[string]any:
		return x
	case json.RawMessage:
		var m map[string]any
		if json.Unmarshal(x, &m) == nil {
			return m
		}
	}
	return nil
}

// valueText is a tool output as text: a string as is, else its JSON.
func valueText(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case json.RawMessage:
		var s string
		if json.Unmarshal(x, &s) == nil {
			return s
		}
		if string(x) == "null" {
			return ""
		}
		return string(x)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// isText reports whether a tool output is a string.
func isText(v any) bool {
	switch x := v.(type) {
	case string:
		return true
	case json.RawMessage:
		return len(x) > 0 && x[0] == '"'
	}
	return false
}

// firstLine is s's first line, cut at n runes.
func firstLine(s string, n int) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i] + " …"
	}
	if utf8.RuneCountInString(s) > n {
		r := []rune(s)
		s = string(r[:n]) + "…"
	}
	return s
}

// clip cuts s at n bytes (on a rune boundary) and says so.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf("\n… (%d more bytes in the transcript)", len(s)-cut)
}

// fence puts text in a Markdown code block longer than any backtick run
// it holds, so the editor shows it as printed.
func fence(text string) string {
	f := "```"
	for strings.Contains(text, f) {
		f += "`"
	}
	return f + "\n" + text + "\n" + f
}

// quote puts text in a Markdown block quote.
func quote(text string) string {
	return "> " + strings.ReplaceAll(text, "\n", "\n> ")
}
