package acpserve

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/reelhq/reel/internal/engine"
	"github.com/reelhq/reel/internal/launch"
)

// liveRun is the run a session started and that has not been reported
// ended yet: where its conversation turns and pauses meet the editor.
type liveRun struct {
	s    *session
	cmd  *command
	feed *feed
	// asks carries a conversation step's request for the user's next
	// message from the engine to the prompt that ends the turn on it.
	asks chan *ask

	pauseMu  sync.Mutex // one permission request at a time
	pauses   atomic.Int64
	allowAll atomic.Bool

	// cancelled is set once the run was asked to stop: a parked message
	// no longer reaches it.
	cancelled atomic.Bool

	mu     sync.Mutex
	run    *launch.Run
	parked *ask
	// cause is a cancel asked for before the run was known.
	cause error
}

// ask is a conversation step waiting for the user's next message.
type ask struct {
	info   engine.TurnInfo
	answer chan string
}

func newLiveRun(s *session, cmd *command) *liveRun {
	return &liveRun{s: s, cmd: cmd, feed: newFeed(s.out, s.srv.log), asks: make(chan *ask)}
}

func (lr *liveRun) setRun(r *launch.Run) {
	lr.mu.Lock()
	lr.run = r
	cause := lr.cause
	lr.mu.Unlock()
	if cause != nil {
		lr.cancel(cause)
	}
}

// done is closed once the run ended.
func (lr *liveRun) done() <-chan struct{} { return lr.run.Done() }

// cancel cancels the run without waiting for it: the turn waiting on it
// sees it end.
func (lr *liveRun) cancel(cause error) {
	lr.cancelled.Store(true)
	lr.mu.Lock()
	r := lr.run
	if r == nil {
		lr.cause = cause
	}
	lr.mu.Unlock()
	if r != nil {
		go lr.s.launcher.Cancel(context.Background(), r.ID, cause)
	}
}

// park keeps the conversation step's request for the next prompt.
func (lr *liveRun) park(a *ask) {
	lr.mu.Lock()
	lr.parked = a
	lr.mu.Unlock()
}

// nextAsk is the conversation step the next prompt answers: the parked
// one, else the next to ask; nil once the run ended (it is waited for
// when it was cancelled).
func (lr *liveRun) nextAsk(ctx context.Context) (*ask, error) {
	lr.mu.Lock()
	a := lr.parked
	lr.parked = nil
	lr.mu.Unlock()
	if lr.cancelled.Load() {
		select {
		case <-lr.done():
			return nil, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if a != nil {
		return a, nil
	}
	select {
	case a := <-lr.asks:
		return a, nil
	case <-lr.done():
		return nil, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// turn is the run's engine.TurnFunc: it ends the editor's turn and waits
// for the next prompt, which becomes the user's message.
func (lr *liveRun) turn(ctx context.Context, ti engine.TurnInfo) (string, bool, error) {
	a := &ask{info: ti, answer: make(chan string, 1)}
	select {
	case lr.asks <- a:
	case <-ctx.Done():
		return "", false, ctx.Err()
	}
	select {
	case msg := <-a.answer:
		return msg, true, nil
	case <-ctx.Done():
		return "", false, ctx.Err()
	}
}

// The choices of a pause, as permission options.
const (
	optRun    = "run"
	optRunAll = "run_all"
	optSkip   = "skip"
	optAbort  = "abort"
)

var pauseOptions = []sdk.PermissionOption{
	{OptionId: optRun, Name: "Run this step", Kind: sdk.PermissionOptionKindAllowOnce},
	{OptionId: optRunAll, Name: "Run it and every later step", Kind: sdk.PermissionOptionKindAllowAlways},
	{OptionId: optSkip, Name: "Skip this step", Kind: sdk.PermissionOptionKindRejectOnce},
	{OptionId: optAbort, Name: "Abort the run", Kind: sdk.PermissionOptionKindRejectAlways},
}

// pause is the run's engine.PauseFunc (the command's --interactive or
// --breakpoint): before a step, the editor is asked for permission with
// what the step is about to run. No answer (the request cancelled, the
// editor gone) aborts the run, as the end of input does on a terminal.
func (lr *liveRun) pause(ctx context.Context, st engine.StepInfo) engine.Action {
	bps := lr.cmd.Breakpoints
	if len(bps) > 0 && !slices.Contains(bps, st.Name) && !slices.Contains(bps, st.Path) {
		return engine.Continue
	}
	if lr.allowAll.Load() {
		return engine.Continue
	}
	lr.pauseMu.Lock()
	defer lr.pauseMu.Unlock()
	if lr.allowAll.Load() {
		return engine.Continue
	}
	if ctx.Err() != nil {
		return engine.Abort
	}
	lr.feed.flush(ctx)
	id := sdk.ToolCallId(fmt.Sprintf("%s/pause/%d", lr.s.id, lr.pauses.Add(1)))
	head := st.Path
	if st.Iteration > 0 || strings.Contains(st.Path, ".") {
		head += fmt.Sprintf(" [%d]", st.Iteration)
	}
	title := "Run " + head + " (" + st.Type + ")?"
	kind := stepKindOfType(st.Type)
	raw := map[string]any{"step": st.Path, "type": st.Type}
	var lines []string
	for _, f := range st.Resolved {
		raw[f.Name] = f.Value
		if strings.Contains(f.Value, "\n") || f.Name == "command" || f.Name == "prompt" {
			lines = append(lines, "**"+f.Name+"**\n"+fence(clip(f.Value, maxCardText)))
		} else {
			lines = append(lines, "**"+f.Name+"**: "+f.Value)
		}
	}
	if st.Next != "" {
		raw["next"] = st.Next
		lines = append(lines, "**next**: "+st.Next)
	}
	content := []sdk.ToolCallContent{sdk.ToolContent(sdk.TextBlock(strings.Join(lines, "\n\n")))}
	lr.s.out.send(ctx, sdk.StartToolCall(id, title, sdk.WithStartKind(kind), sdk.WithStartStatus(sdk.ToolCallStatusPending),
		sdk.WithStartRawInput(maps.Clone(raw)), sdk.WithStartContent(content)))
	pending := sdk.ToolCallStatusPending
	resp, err := lr.s.srv.conn.RequestPermission(ctx, sdk.RequestPermissionRequest{
		SessionId: lr.s.id,
		ToolCall:  sdk.ToolCallUpdate{ToolCallId: id, Title: &title, Kind: &kind, Status: &pending, RawInput: raw, Content: content},
		Options:   pauseOptions,
	})
	answer := optAbort
	why := "no answer"
	switch {
	case err != nil:
		why = "no answer: " + err.Error()
	case resp.Outcome.Selected != nil:
		answer, why = string(resp.Outcome.Selected.OptionId), ""
	}
	status, note, act := sdk.ToolCallStatusCompleted, "approved", engine.Continue
	switch answer {
	case optRun:
	case optRunAll:
		lr.allowAll.Store(true)
		note = "approved, with every later step"
	case optSkip:
		note, act = "skipped", engine.Skip
	default:
		status, note, act = sdk.ToolCallStatusFailed, "aborted", engine.Abort
		if why != "" {
			note += " (" + why + ")"
		}
	}
	lr.s.out.send(context.WithoutCancel(ctx), sdk.UpdateToolCall(id, sdk.WithUpdateStatus(status),
		sdk.WithUpdateRawOutput(map[string]any{"answer": answer, "note": note})))
	return act
}

// stepKindOfType is the card kind of a workflow state type.
func stepKindOfType(t string) sdk.ToolKind {
	switch t {
	case "step":
		return sdk.ToolKindExecute
	case "agent":
		return sdk.ToolKindThink
	case "operation":
		return sdk.ToolKindFetch
	}
	return sdk.ToolKindOther
}
