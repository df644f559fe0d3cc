package agent

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/openai/openai-go/v3"

	"github.com/reelhq/reel/internal/mcpproxy"
	"github.com/reelhq/reel/transcript"
)

// Session is one agent step's conversation with its provider. The first
// Send carries the step's prompt (and system prompt); each later Send is a
// follow-up user message in the same provider session, so the agent sees
// everything said and done before. All turns emit through the same Emit,
// under the one step.
//
// A Session is not safe for concurrent use: turns are sequential by
// nature.
type Session struct {
	req  Request
	emit Emit
	// snapshot returns the provider session's state after the turns so
	// far.
	snapshot func() *Snapshot
	// turn runs one user turn with the provider; first is set for the
	// step's opening prompt.
	turn  func(ctx context.Context, prompt string, first bool, emit Emit) (*transcript.AgentResult, error)
	sent  int
	start time.Time
	res   transcript.AgentResult
}

// NewSession checks req (provider, output format, options, executable) and
// returns a session that has not contacted the provider yet. Its errors are
// configuration mistakes, reported before the step records anything.
func NewSession(req Request, emit Emit) (*Session, error) {
	if emit == nil {
		return nil, errors.New("agent: nil emit")
	}
	req, err := checkRequest(req)
	if err != nil {
		return nil, err
	}
	s := &Session{req: req, emit: emit}
	if isHTTP(req.Provider) {
		err = s.overHTTP()
	} else {
		err = s.throughCLI()
	}
	if err != nil {
		return nil, err
	}
	return s, nil
}

// checkRequest checks what every provider shares in req and fills in its
// defaults (the process's environment and working directory).
func checkRequest(req Request) (Request, error) {
	if !slices.Contains(Providers(), req.Provider) {
		return req, fmt.Errorf("%w %q (known: %s)", ErrUnknownProvider, req.Provider, strings.Join(Providers(), ", "))
	}
	switch req.OutputFormat {
	case "", "text", "json":
	default:
		return req, fmt.Errorf("agent: output_format %q: want text or json", req.OutputFormat)
	}
	if req.Env == nil {
		req.Env = os.Environ()
	}
	if req.Dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return req, fmt.Errorf("agent: working directory: %w", err)
		}
		req.Dir = wd
	}
	if c := req.Continue; c != nil && c.Provider != req.Provider {
		return req, fmt.Errorf("agent %s: cannot continue a %s session (%s): a session does not move between providers", req.Provider, c.Provider, c.From)
	}
	return req, nil
}

// overHTTP makes s talk to an HTTP provider: one chat whose history the
// turns extend (continuing the chat of req.Continue).
func (s *Session) overHTTP() error {
	req := s.req
	cfg, err := openAIConfigFrom(req)
	if err != nil {
		return err
	}
	var chat *openAIChat
	var history []openai.ChatCompletionMessageParamUnion
	if c := req.Continue; c != nil {
		if len(c.chat) == 0 {
			return fmt.Errorf("agent %s: %s has no conversation to continue", req.Provider, c.From)
		}
		history = c.chat
	}
	s.turn = func(ctx context.Context, prompt string, first bool, emit Emit) (*transcript.AgentResult, error) {
		if first {
			var err error
			if chat, err = cfg.newChat(s.req, emit, history); err != nil {
				return nil, err
			}
		}
		return chat.send(ctx, prompt)
	}
	s.snapshot = func() *Snapshot {
		sn := &Snapshot{Provider: req.Provider, chat: history}
		if chat != nil {
			sn.chat = slices.Clone(chat.messages)
		}
		return sn
	}
	return nil
}

// throughCLI makes s run an agent CLI: one invocation a turn, each
// resuming the session the one before reported (or, for a CLI that cannot
// resume its own, replaying the exchanges in the prompt).
func (s *Session) throughCLI() error {
	req := s.req
	if req.MCPProxy != nil {
		if _, _, err := routerOptions(req.Options); err != nil {
			return fmt.Errorf("agent %s: %w", req.Provider, err)
		}
		// A CLI that keeps its own tools beside the proxy's is told to
		// use the proxy's, and the record shows what it was told.
		req.SystemPrompt = mcpproxy.SystemPrompt(req.Provider, *req.MCPProxy, req.SystemPrompt)
		s.req.SystemPrompt = req.SystemPrompt
	}
	a, err := newCLIAgent(req)
	if err != nil {
		return err
	}
	var sessionID string
	var history []exchange
	// total is the session's running total after the previous turn, for
	// CLIs that report usage that way (codex, claude): a resumed turn's
	// report includes the earlier turns, and only the difference is this
	// turn's.
	var total *runningTotal
	if c := req.Continue; c != nil {
		sessionID, history, total = c.SessionID, slices.Clone(c.history), c.total
		if !a.spec.resumeInPrompt && sessionID == "" {
			return fmt.Errorf("agent %s: %s reported no session id, so its session cannot be continued", req.Provider, c.From)
		}
	}
	s.turn = func(ctx context.Context, prompt string, first bool, emit Emit) (*transcript.AgentResult, error) {
		resume := sessionID
		if a.spec.resumeInPrompt {
			resume = ""
		} else if !first && sessionID == "" {
			return nil, fmt.Errorf("agent %s: turn %d: the previous turn reported no session id, so the conversation cannot be resumed", req.Provider, s.sent)
		}
		inv := a.invocation(prompt, resume, first, history)
		if req.MCPProxy != nil {
			px, err := startProxy(ctx, s.req, emit)
			if err != nil {
				return nil, fmt.Errorf("agent %s: %w", req.Provider, err)
			}
			inv.proxy(px)
		}
		res, turnTotal, err := inv.run(ctx, s.req, emit)
		if res != nil && turnTotal != nil {
			if total != nil && res.SessionID == sessionID {
				turnTotal.share(res, *total)
			}
			total = turnTotal
		}
		if res != nil {
			// A resumed session may come back under a new id (claude can
			// fork one); the next turn continues the latest.
			if res.SessionID != "" {
				sessionID = res.SessionID
			}
			user := prompt
			if first && len(history) == 0 {
				user = inv.sent // the system prompt went with it
			}
			history = append(history, exchange{user: user, reply: res.Output})
		}
		return res, err
	}
	s.snapshot = func() *Snapshot {
		return &Snapshot{Provider: req.Provider, SessionID: sessionID, history: slices.Clone(history), total: total}
	}
	return nil
}

// isHTTP reports whether provider speaks Chat Completions over HTTP.
func isHTTP(provider string) bool { return provider == "openai_compatible" || provider == "anthropic" }

// Snapshot is an agent step's provider session after its turns, for a
// later step to continue (AWF's conversation.continue_from): the session
// id a CLI reported, or the chat history of an HTTP provider, or the
// exchanges of a CLI that cannot resume its own session.
type Snapshot struct {
	Provider  string
	SessionID string
	// From names where the session comes from, for error messages (the
	// engine sets it to the step).
	From    string
	history []exchange
	chat    []openai.ChatCompletionMessageParamUnion
	// total is the session's running usage total, for CLIs that report
	// it that way (codex, claude), so a step continuing it counts its own
	// share.
	total *runningTotal
}

// runningTotal is a CLI's report of a session's running usage and cost
// (normalize.Result's SessionTotal, SessionCost and QueryUsage).
type runningTotal struct {
	usage transcript.Usage
	cost  *float64
	// query is what the turn's own queries reported, when the running
	// total may also be the turn's alone (claude before 2.1.332); nil
	// when it always covers the session (codex).
	query *transcript.Usage
}

// share sets res's usage and cost to this turn's part of t, when t
// includes before, the running total after the session's previous turn.
func (t *runningTotal) share(res *transcript.AgentResult, before runningTotal) {
	if q := t.query; q != nil {
		want := before.usage
		want.Add(*q)
		if !covers(t.usage, want) {
			return // a total of this turn alone
		}
	}
	res.Usage = usageSince(t.usage, before.usage)
	if t.cost != nil && before.cost != nil && res.CostUSD != nil {
		c := max(*t.cost-*before.cost, 0)
		res.CostUSD = &c
	}
}

// covers reports whether every count of a is at least b's.
func covers(a, b transcript.Usage) bool {
	return a.InputTokens >= b.InputTokens && a.OutputTokens >= b.OutputTokens &&
		a.CacheReadTokens >= b.CacheReadTokens && a.CacheWriteTokens >= b.CacheWriteTokens
}

// Empty reports whether the snapshot holds nothing to continue.
func (s *Snapshot) Empty() bool {
	return s == nil || s.SessionID == "" && len(s.history) == 0 && len(s.chat) == 0
}

// Snapshot returns the session's state after the turns sent so far.
func (s *Session) Snapshot() *Snapshot { return s.snapshot() }

// Send runs one user turn: it emits message.user (blocks[0] prompt; on
// the first turn blocks[1] the system prompt when non-empty; router
// fidelity), then what the provider streams, and returns this turn's own
// result (its reply, usage and provider turns). On failure the result
// holds what the turn produced before it failed, and the step should stop:
// the session cannot be trusted to continue.
func (s *Session) Send(ctx context.Context, prompt string) (*transcript.AgentResult, error) {
	first := s.sent == 0
	s.sent++
	blocks := []transcript.ContentBlock{{Type: transcript.BlockText, Fidelity: transcript.FidelityRouter, Text: prompt}}
	if first && s.req.SystemPrompt != "" {
		blocks = append(blocks, transcript.ContentBlock{Type: transcript.BlockText, Fidelity: transcript.FidelityRouter, Text: s.req.SystemPrompt})
	}
	if err := s.emit(transcript.ExchangeEvent{
		Type:      transcript.MessageUser,
		Timestamp: time.Now(),
		Payload:   &transcript.MessagePayload{Role: "user", Blocks: blocks},
	}); err != nil {
		return nil, fmt.Errorf("agent %s: record message.user: %w", s.req.Provider, err)
	}
	if first {
		s.start = time.Now()
	}
	res, err := s.turn(ctx, prompt, first, s.emit)
	if res == nil {
		res = &transcript.AgentResult{}
	}
	res.Provider = s.req.Provider
	res.RequestModel, _ = s.req.Options["model"].(string)
	s.add(res)
	return res, err
}

// add folds one turn's result into the step's.
func (s *Session) add(t *transcript.AgentResult) {
	r := &s.res
	r.Output = t.Output
	if t.Model != "" {
		r.Model = t.Model
	}
	if t.RequestModel != "" {
		r.RequestModel = t.RequestModel
	}
	if t.Proxy != nil {
		r.Proxy = t.Proxy
	}
	if t.SessionID != "" {
		r.SessionID = t.SessionID
	}
	r.Usage.Add(t.Usage)
	if t.CostUSD != nil {
		c := *t.CostUSD
		if r.CostUSD != nil {
			c += *r.CostUSD
		}
		r.CostUSD = &c
	}
	r.Turns += t.Turns
	for k, n := range t.Skipped {
		if r.Skipped == nil {
			r.Skipped = map[string]int{}
		}
		r.Skipped[k] += n
	}
}

// UserTurns reports how many user messages were sent (the step's prompt
// and its follow-ups); the result's Turns counts provider turns instead.
func (s *Session) UserTurns() int { return s.sent }

// Result returns the step's result so far: the last turn's output, usage,
// cost and provider turns summed over the turns, the latest model and
// session id, and the duration since the first turn began. With
// OutputFormat json the output is the JSON value found in the last reply;
// when it holds none, Result returns the raw reply with an error matching
// ErrNotJSON. With OutputFormat text it is the last reply without the code
// fence it opens with (StripFence).
func (s *Session) Result() (*transcript.AgentResult, error) {
	res := s.res
	res.Provider = s.req.Provider
	res.Skipped = maps.Clone(s.res.Skipped)
	if s.sent > 0 {
		res.DurationMS = time.Since(s.start).Milliseconds()
	}
	switch s.req.OutputFormat {
	case "json":
		js, err := ExtractJSON(res.Output)
		if err != nil {
			return &res, fmt.Errorf("agent %s: output_format json: %w", s.req.Provider, err)
		}
		res.Output = string(js)
	case "text":
		res.Output = StripFence(res.Output)
	}
	return &res, nil
}

// usageSince is what a running total gained since an earlier reading of
// it; a count that went down (the provider restarted its count) is taken
// whole.
func usageSince(now, before transcript.Usage) transcript.Usage {
	d := func(a, b int64) int64 {
		if a < b {
			return a
		}
		return a - b
	}
	u := transcript.Usage{
		InputTokens:        d(now.InputTokens, before.InputTokens),
		OutputTokens:       d(now.OutputTokens, before.OutputTokens),
		CacheReadTokens:    d(now.CacheReadTokens, before.CacheReadTokens),
		CacheWriteTokens:   d(now.CacheWriteTokens, before.CacheWriteTokens),
		CacheWrite1hTokens: d(now.CacheWrite1hTokens, before.CacheWrite1hTokens),
		ReasoningTokens:    d(now.ReasoningTokens, before.ReasoningTokens),
	}
	u.TotalTokens = u.InputTokens + u.OutputTokens
	return u
}
