package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/pmezard/go-difflib/difflib"

	"github.com/reelhq/reel/internal/rerun"
	"github.com/reelhq/reel/internal/workflow"
	"github.com/reelhq/reel/transcript"
)

// A replayed run (reel run --replay-from RUN) is a new run whose agent steps
// do not call their provider: each takes the reply, tool calls and usage of
// the recorded run's execution at the same path and iteration (the k-th
// execution there answers the k-th attempt), while every other step runs for
// real. The step's message and tool events are the recorded ones, content
// and fidelity kept, under the new run's id, seq and time; its result is the
// recorded AgentResult with replayed_from naming the recorded run. The
// resolved prompt must equal the recorded one (the system prompt too), else
// the step fails with a diff of the two, unless drift is allowed. A
// sub-workflow replays from the recorded call's child run.

// replaySource is the recorded run a replayed run takes agent replies from.
type replaySource struct {
	// rec is nil when the recorded run has no counterpart for this run (a
	// sub-workflow it never started); missing says so.
	rec        *rerun.Run
	missing    string
	allowDrift bool

	mu     sync.Mutex
	queues map[rerun.Key][]*rerun.Execution
}

func newReplaySource(rec *rerun.Run, allowDrift bool) *replaySource {
	s := &replaySource{rec: rec, allowDrift: allowDrift, queues: map[rerun.Key][]*rerun.Execution{}}
	for _, x := range rec.Executions {
		if x.Kind == transcript.KindAgent || x.Kind == transcript.KindCallWorkflow {
			s.queues[x.Key()] = append(s.queues[x.Key()], x)
		}
	}
	return s
}

// next takes the next recorded execution of kind at k.
func (s *replaySource) next(k rerun.Key, kind string) *rerun.Execution {
	s.mu.Lock()
	defer s.mu.Unlock()
	q := s.queues[k]
	for i, x := range q {
		if x.Kind == kind {
			s.queues[k] = append(q[:i:i], q[i+1:]...)
			return x
		}
	}
	return nil
}

// child is the source of the sub-workflow the next recorded call at k ran.
func (s *replaySource) child(k rerun.Key) *replaySource {
	miss := func(format string, args ...any) *replaySource {
		return &replaySource{missing: fmt.Sprintf(format, args...), allowDrift: s.allowDrift}
	}
	if s.rec == nil {
		return miss("%s", s.missing)
	}
	x := s.next(k, transcript.KindCallWorkflow)
	if x == nil || x.ChildRunID == "" {
		return miss("the recorded run %s started no sub-workflow at %s", s.rec.RunID, k.Path)
	}
	rec, err := rerun.LoadChild(s.rec.Path, x.ChildRunID, rerun.Options{Exchange: true})
	if err != nil {
		return miss("recorded sub-workflow run at %s: %v", k.Path, err)
	}
	return newReplaySource(rec, s.allowDrift)
}

// PromptDriftError reports an agent step whose prompt differs from the
// recording it replays.
type PromptDriftError struct {
	RunID string
	Diff  string
}

func (e *PromptDriftError) Error() string {
	return fmt.Sprintf("prompt differs from the one recorded in run %s (--allow-prompt-drift replays it anyway):\n%s", e.RunID, e.Diff)
}

// replayAgent finishes an agent step from the recording: the part of
// execAgent after the span started and the prompt was resolved.
func (r *run) replayAgent(ctx context.Context, st *workflow.State, sp *span, prompt, sys string) outcome {
	key := rerun.Key{Path: sp.path, Iteration: sp.iter}
	src := r.replay
	var res *transcript.AgentResult
	var err error
	show := r.newOutputWriter(sp.path)
	x := (*rerun.Execution)(nil)
	switch {
	case src.rec == nil:
		err = errors.New("replay: " + src.missing)
	default:
		if x = src.next(key, transcript.KindAgent); x == nil {
			err = fmt.Errorf("replay: the recorded run %s has no more executions of agent step %s at iteration %d", src.rec.RunID, sp.path, sp.iter)
		} else if !x.Completed {
			err = fmt.Errorf("replay: the recorded execution of %s in run %s never completed", sp.path, src.rec.RunID)
		}
	}
	if err == nil {
		err = src.drift(x, prompt, sys)
		var de *PromptDriftError
		if errors.As(err, &de) {
			fmt.Fprintln(show, de.Diff)
		}
	}
	if err == nil {
		r.replayExchange(sp, x, prompt, sys)
		res = &transcript.AgentResult{}
		if derr := transcript.DecodeResult(x.Result, res); derr != nil {
			err = fmt.Errorf("replay: recorded result of %s: %v", sp.path, derr)
		}
		res.ReplayedFrom = src.rec.RunID
		if x.Error != "" && err == nil {
			err = errors.New(x.Error)
		}
		fmt.Fprintln(show, res.Output)
	}
	show.flush()
	o := outcomeOf(ctx, err)
	var conv *conversationLog
	if x != nil && res != nil && st.Tracked() {
		conv = conversationOf(x, res)
	}
	return r.agentDone(ctx, st, sp, o, res, conv)
}

// drift compares the resolved prompts with the recorded ones.
func (s *replaySource) drift(x *rerun.Execution, prompt, sys string) error {
	old, oldSys, ok := x.Prompt()
	if !ok || s.allowDrift || old == prompt && oldSys == sys {
		return nil
	}
	from := "recorded (run " + s.rec.RunID + ")"
	var diff string
	for _, d := range []struct{ what, a, b string }{{"prompt", old, prompt}, {"system prompt", oldSys, sys}} {
		if d.a == d.b {
			continue
		}
		text, err := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
			A: difflib.SplitLines(d.a), B: difflib.SplitLines(d.b),
			FromFile: from + " " + d.what, ToFile: "this run's " + d.what, Context: 3,
		})
		if err != nil {
			return err
		}
		diff += text
	}
	return &PromptDriftError{RunID: s.rec.RunID, Diff: diff}
}

// replayExchange writes the recorded message and tool events of x under
// this run's step. With drift allowed, the first message.user says what
// this run composed, not what the recording did.
func (r *run) replayExchange(sp *span, x *rerun.Execution, prompt, sys string) {
	first := true
	for _, ev := range x.Exchange {
		ev.Seq, ev.RunID, ev.ParentRunID, ev.ChildRunID, ev.Timestamp = 0, "", "", "", time.Time{}
		ev.Path, ev.Iteration = sp.path, sp.iter
		if first && ev.Type == transcript.MessageUser {
			first = false
			if old, oldSys, _ := x.Prompt(); old != prompt || oldSys != sys {
				blocks := []transcript.ContentBlock{{Type: transcript.BlockText, Fidelity: transcript.FidelityRouter, Text: prompt}}
				if sys != "" {
					blocks = append(blocks, transcript.ContentBlock{Type: transcript.BlockText, Fidelity: transcript.FidelityRouter, Text: sys})
				}
				ev.Payload = &transcript.MessagePayload{Role: "user", Blocks: blocks}
			}
		}
		r.emit(ev)
	}
}

// conversationOf rebuilds the .Conversation of a session-tracked agent
// step from its recorded exchange: the system prompt, then each turn's
// prompt and reply (a turn's reply is the text of its last assistant
// message; the step's output, exactly, for the last turn).
func conversationOf(x *rerun.Execution, res *transcript.AgentResult) *conversationLog {
	log := &conversationLog{}
	if _, sys, ok := x.Prompt(); ok && sys != "" {
		log.add("system", sys)
	}
	reply, open := "", false
	flush := func() {
		if open {
			log.add("assistant", reply)
		}
		reply, open = "", false
	}
	for i := range x.Exchange {
		ev := &x.Exchange[i]
		m := ev.Message()
		if m == nil {
			continue
		}
		if ev.Type == transcript.MessageUser {
			flush()
			if len(m.Blocks) > 0 {
				log.add("user", m.Blocks[0].Text)
			}
			open = true
			continue
		}
		var text []string
		for _, b := range m.Blocks {
			if b.Type == transcript.BlockText && b.Text != "" {
				text = append(text, b.Text)
			}
		}
		if len(text) > 0 {
			reply = strings.Join(text, "\n")
		}
	}
	if open {
		reply = res.Output
	}
	flush()
	return log
}
