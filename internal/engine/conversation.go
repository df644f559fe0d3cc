package engine

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"strings"

	"github.com/reelhq/reel/internal/agent"
	"github.com/reelhq/reel/internal/workflow"
	"github.com/reelhq/reel/transcript"
)

// Why a multi-turn step stopped (transcript.AgentResult.StoppedBy).
const (
	stoppedByEnd       = "conversation_end"
	stoppedByUser      = "user_exit"
	stoppedByCondition = "stop_condition"
	stoppedByMaxTurns  = "max_turns"
)

// conversationLog is a session-tracked step's exchange, as its state's
// Conversation shows it.
type conversationLog struct{ turns []logTurn }

type logTurn struct{ role, content string }

func (l *conversationLog) add(role, content string) {
	if l != nil {
		l.turns = append(l.turns, logTurn{role, content})
	}
}

// turnSource says what the user says after each reply, and when the
// conversation is over. One of three, by the step's syntax:
//   - a conversation list: its follow-ups in order, each rendered with the
//     previous reply as .turn;
//   - mode conversation with max_turns or stop_condition (AWF before
//     F083): the step's prompt again, until the condition holds after a
//     reply or max_turns turns ran;
//   - mode conversation otherwise (AWF since F083): a line of the run's
//     input each, until an empty line, exit, quit or the end of input.
//
// inject_context, when set, is appended to every message after the first.
type turnSource struct {
	r     *run
	st    *workflow.State
	sc    scope
	data  map[string]any
	sess  *agent.Session
	kind  string // "single", "list", "repeat" or "input"
	max   int
	multi bool
}

func newTurnSource(r *run, st *workflow.State, sc scope, data map[string]any, sess *agent.Session) *turnSource {
	s := &turnSource{r: r, st: st, sc: sc, data: data, sess: sess, kind: "single"}
	switch {
	case len(st.Conversation) > 0:
		s.kind, s.max = "list", len(st.Conversation)+1
	case talksToUser(st):
		s.kind = "input"
	case st.Agent != nil && st.Agent.Mode == workflow.ModeConversation:
		s.kind, s.max = "repeat", st.Agent.Session.MaxTurns
		if s.max == 0 {
			s.max = workflow.DefaultMaxTurns
		}
	}
	s.multi = s.kind != "single"
	return s
}

// talksToUser reports whether st is a conversation whose follow-up turns
// the user types: one without a list of messages, max_turns or
// stop_condition.
func talksToUser(st *workflow.State) bool {
	if len(st.Conversation) > 0 || st.Agent == nil || st.Agent.Mode != workflow.ModeConversation {
		return false
	}
	c := st.Agent.Session
	return c == nil || (c.MaxTurns == 0 && c.StopCondition == nil)
}

// label numbers a turn for the display.
func (s *turnSource) label(n int) string {
	switch {
	case !s.multi:
		return ""
	case s.max > 0:
		return fmt.Sprintf("turn %d/%d", n, s.max)
	}
	return fmt.Sprintf("turn %d", n)
}

// next returns the user message of turn n+1 after turn n's reply, or
// more=false with the reason the conversation ends.
func (s *turnSource) next(ctx context.Context, n int, reply *transcript.AgentResult) (msg string, more bool, stoppedBy string, err error) {
	output := ""
	if reply != nil {
		output = reply.Output
	}
	tv := turnValue(output, n+1)
	switch s.kind {
	case "single":
		return "", false, "", nil
	case "list":
		if n > len(s.st.Conversation) {
			return "", false, stoppedByEnd, nil
		}
		d := maps.Clone(s.data)
		d["turn"] = templateState(tv) // .turn.JSON prints as JSON, like .states.X.JSON
		msg, err = s.st.Conversation[n-1].Execute(d)
		if err != nil {
			return "", false, "", fmt.Errorf("conversation[%d]: %w", n-1, err)
		}
	case "repeat":
		if c := s.st.Agent.Session; c.StopCondition != nil {
			stop, err := c.StopCondition.True(s.stopEnv(n, output))
			if err != nil {
				return "", false, "", fmt.Errorf("conversation.stop_condition: %w", err)
			}
			if stop {
				return "", false, stoppedByCondition, nil
			}
		}
		if n >= s.max {
			return "", false, stoppedByMaxTurns, nil
		}
		if msg, err = s.r.prompt(s.st, s.data); err != nil {
			return "", false, "", err
		}
	case "input":
		path := joinPath(s.sc.prefix, s.st.Name)
		var line string
		var ok bool
		if s.r.turns != nil {
			line, ok, err = s.r.askTurn(ctx, TurnInfo{Path: path, Iteration: s.sc.iteration, Turn: n + 1, Reply: output})
		} else {
			line, ok, err = s.r.readTurn(ctx, s.r.newOutputWriter(path).prefix)
		}
		if err != nil {
			return "", false, "", err
		}
		if !ok {
			return "", false, stoppedByUser, nil
		}
		msg = line
	}
	if c := s.st.Agent; c != nil && c.Session != nil && c.Session.InjectContext != nil {
		d := maps.Clone(s.data)
		d["turn"] = templateState(tv) // .turn.JSON prints as JSON, like .states.X.JSON
		extra, err := c.Session.InjectContext.Execute(d)
		if err != nil {
			return "", false, "", fmt.Errorf("conversation.inject_context: %w", err)
		}
		if extra = strings.TrimSpace(extra); extra != "" {
			msg += "\n\n" + extra
		}
	}
	return msg, true, "", nil
}

// stopEnv is stop_condition's environment after turn n's reply: the
// expressions' usual variables, turn, and AWF's inputs.response,
// inputs.turn_count and inputs.total_tokens (unless the workflow declares
// inputs of those names).
func (s *turnSource) stopEnv(n int, output string) map[string]any {
	env := maps.Clone(s.r.exprEnv(s.sc))
	var total int64
	if res, _ := s.sess.Result(); res != nil {
		total = res.Usage.TotalTokens
	}
	t := turnValue(output, n)
	t["TotalTokens"] = total
	env["turn"] = t
	inputs := map[string]any{}
	if in, ok := env["inputs"].(map[string]any); ok {
		inputs = maps.Clone(in)
	}
	for k, v := range map[string]any{"response": t["Output"], "turn_count": n, "total_tokens": total} {
		if _, declared := inputs[k]; !declared {
			inputs[k] = v
		}
	}
	env["inputs"] = inputs
	return env
}

// converse runs an agent step's turns in one provider session: the step's
// prompt, then what its turn source says, each answered before the next
// is sent. The first failing turn ends the step; the result covers every
// turn that ran. show receives each turn's reply as soon as it is
// complete.
func (r *run) converse(ctx context.Context, sess *agent.Session, st *workflow.State, sc scope, data map[string]any, req agent.Request, show io.Writer) (*transcript.AgentResult, *conversationLog, error) {
	src := newTurnSource(r, st, sc, data, sess)
	var log *conversationLog
	if st.Tracked() {
		log = &conversationLog{}
		if req.SystemPrompt != "" {
			log.add("system", req.SystemPrompt)
		}
	}
	msg, n, stopped := req.Prompt, 1, ""
	var err error
	for {
		log.add("user", msg)
		var turn *transcript.AgentResult
		turn, err = sess.Send(ctx, msg)
		if turn != nil {
			log.add("assistant", turn.Output)
			if l := src.label(n); l != "" {
				fmt.Fprintln(show, l)
			}
			fmt.Fprintln(show, turn.Output)
		}
		if err != nil {
			break
		}
		// A step cancelled or timed out between turns records no
		// follow-up it will never send.
		if err = ctx.Err(); err != nil {
			break
		}
		var more bool
		if msg, more, stopped, err = src.next(ctx, n, turn); err != nil || !more {
			break
		}
		n++
	}
	res, rerr := sess.Result()
	if err == nil {
		err = rerr
	}
	if res != nil && src.multi {
		res.UserTurns, res.StoppedBy = sess.UserTurns(), stopped
	}
	return res, log, err
}

// turnValue is what a follow-up prompt sees as .turn: the previous reply
// like a state's .Output (and .JSON when it is JSON), and the number of the
// turn being prompted (the step's prompt is turn 1).
func turnValue(output string, number int) map[string]any {
	v := map[string]any{"Output": strings.TrimRight(output, "\r\n"), "Number": number}
	if js := parseJSON(output); js != nil {
		v["JSON"] = js
	}
	return v
}

// TurnFunc gives the user's next message in a mode: conversation agent
// step, after the agent replied. ok false ends the conversation
// (stopped_by user_exit); an error fails the step.
type TurnFunc func(ctx context.Context, turn TurnInfo) (msg string, ok bool, err error)

// TurnInfo says which conversation asks for a message.
type TurnInfo struct {
	// Path and Iteration are the step's, as its events record them.
	Path      string
	Iteration int
	// Turn is the number of the turn the message starts (the step's
	// prompt is turn 1); Reply is the agent's reply to the turn before.
	Turn  int
	Reply string
}

// askTurn asks RunOptions.Turns for the next message. An empty message,
// exit or quit ends the conversation, as a line of Stdin does.
func (r *run) askTurn(ctx context.Context, t TurnInfo) (string, bool, error) {
	msg, ok, err := r.turns(ctx, t)
	if err != nil || !ok {
		return "", false, err
	}
	if err := ctx.Err(); err != nil {
		return "", false, err
	}
	if s := strings.TrimSpace(msg); s == "" || strings.EqualFold(s, "exit") || strings.EqualFold(s, "quit") {
		return "", false, nil
	}
	return msg, true, nil
}

// readTurn reads the user's next message for a mode conversation step: one
// line of the engine's Stdin. ok is false at an empty line, "exit",
// "quit" or the end of input; prefix leads the prompt line on the display.
func (r *run) readTurn(ctx context.Context, prefix string) (string, bool, error) {
	lines := r.e.inputLines()
	if lines == nil {
		return "", false, nil
	}
	r.display(prefix + "> (your reply; an empty line, exit or quit ends the conversation)")
	select {
	case <-ctx.Done():
		return "", false, ctx.Err()
	case l, ok := <-lines:
		if !ok {
			return "", false, nil
		}
		if l.err != nil {
			return "", false, fmt.Errorf("read the conversation's next message: %w", l.err)
		}
		t := strings.TrimSpace(l.text)
		if t == "" || strings.EqualFold(t, "exit") || strings.EqualFold(t, "quit") {
			return "", false, nil
		}
		return strings.TrimRight(l.text, "\r"), true, nil
	}
}

type inputLine struct {
	text string
	err  error
}

// inputLines returns the lines of Stdin, read by one goroutine for the
// whole engine so that a step that stops waiting (a timeout) loses no line
// and parallel steps never read the same one; nil without Stdin.
func (e *Engine) inputLines() <-chan inputLine {
	if e.Stdin == nil {
		return nil
	}
	e.stdinOnce.Do(func() {
		ch := make(chan inputLine)
		e.stdinLines = ch
		go func() {
			defer close(ch)
			br := bufio.NewReader(e.Stdin)
			for {
				s, err := br.ReadString('\n')
				if s != "" {
					ch <- inputLine{text: strings.TrimSuffix(s, "\n")}
				}
				if err != nil {
					if !errors.Is(err, io.EOF) {
						ch <- inputLine{err: err}
					}
					return
				}
			}
		}()
	})
	return e.stdinLines
}
