package acpserve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/reelhq/reel/internal/engine"
	"github.com/reelhq/reel/internal/launch"
	"github.com/reelhq/reel/internal/project"
	"github.com/reelhq/reel/internal/safefile"
	"github.com/reelhq/reel/internal/workflow"
	"github.com/reelhq/reel/transcript"
	"github.com/reelhq/reel/transcript/secrets"
)

// session is one editor conversation: its own working directory and
// project, its own engine and launcher, its own state directory, and at
// most one run at a time.
type session struct {
	id       sdk.SessionId
	srv      *server
	cwd      string
	proj     *project.Project
	eng      *engine.Engine
	launcher *launch.Launcher
	out      *stream
	// dir is the session's state directory: session.json says which runs
	// the session started and how they ended.
	dir     string
	started time.Time

	busy atomic.Bool // a prompt is being answered
	// prompts counts the session/prompt requests in the order the editor
	// sent them (server.inOrder), begun those that reached prompt, and
	// every prompt up to cancelledTo was cancelled by a session/cancel
	// sent after it: one that had not begun when the cancel came is
	// cancelled as it begins.
	prompts, begun, cancelledTo atomic.Int64
	// saveMu orders the writes of session.json, each of the state as it
	// is when it is written.
	saveMu sync.Mutex

	mu       sync.Mutex
	commands []sdk.AvailableCommand
	refs     map[string]string // command name → workflow reference
	live     *liveRun
	record   []runRecord
	closed   bool
}

// runRecord is a run in session.json.
type runRecord struct {
	RunID      string    `json:"run_id"`
	Workflow   string    `json:"workflow"`
	Command    string    `json:"command"`
	Transcript string    `json:"transcript,omitempty"`
	Started    time.Time `json:"started_at"`
	Status     string    `json:"status"`
}

// newSession finds the project cwd is in and prepares the session's engine.
func (srv *server) newSession(cwd string) (*session, error) {
	if !filepath.IsAbs(cwd) {
		return nil, fmt.Errorf("cwd %q is not an absolute path", cwd)
	}
	if fi, err := os.Stat(cwd); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("cwd %q is not a directory", cwd)
	}
	proj, err := project.Find(cwd)
	if err != nil {
		return nil, err
	}
	s := &session{
		id:      sdk.SessionId("sess_" + transcript.NewRunID()),
		srv:     srv,
		cwd:     cwd,
		proj:    proj,
		started: time.Now().UTC(),
	}
	s.out = &stream{conn: srv.conn, session: s.id}
	s.eng = srv.opts.NewEngine(proj)
	s.eng.Dir, s.eng.OnRecorder, s.eng.Display = cwd, s.onRecorder, warnings{s}
	if srv.opts.KillGrace > 0 {
		s.eng.KillGrace = srv.opts.KillGrace
	}
	if srv.opts.MaskSecrets {
		s.eng.Masker = secrets.NewMasker(os.Environ())
	}
	s.launcher = launch.New(launch.Config{Engine: s.eng, Defaults: proj.Config.Inputs, OnEnd: s.ended})
	s.dir = filepath.Join(s.eng.Storage, "acp", "sessions", string(s.id))
	err = safefile.MkdirAll(s.dir)
	if err != nil {
		err = fmt.Errorf("create the session's state directory: %w", err)
	} else {
		err = s.save()
	}
	if err != nil {
		s.eng.PluginHost.Close()
		return nil, err
	}
	return s, nil
}

// onRecorder hands each transcript of the live run to its feed.
func (s *session) onRecorder(rec *transcript.Recorder, parentRunID string) {
	s.mu.Lock()
	lr := s.live
	s.mu.Unlock()
	if lr != nil {
		lr.feed.add(rec, parentRunID)
	}
}

// warnings is the engine's display for a session: the run's cards come
// from its transcripts, but what the engine only displays, its warnings
// (lines marked "!": an undeclared input a call dropped, what a resume
// could not count), would be lost; they are said in the agent's message.
type warnings struct{ s *session }

func (w warnings) Write(p []byte) (int, error) {
	for line := range strings.Lines(string(p)) {
		if t := strings.TrimSpace(line); strings.HasPrefix(t, "! ") {
			w.s.out.say(context.Background(), "⚠ "+strings.TrimPrefix(t, "! "))
		}
	}
	return len(p), nil
}

// ended updates the session's record and tells the server (the run index).
func (s *session) ended(r *launch.Run) {
	status := ""
	if rep := r.Report(); rep != nil {
		status = rep.Status
	}
	s.mu.Lock()
	for i := range s.record {
		if s.record[i].RunID == r.ID {
			s.record[i].Status = status
		}
	}
	s.mu.Unlock()
	if err := s.save(); err != nil {
		s.srv.log.Warn("session record not saved", "session", s.id, "err", err)
	}
	if s.srv.opts.OnEnd != nil && r.Transcript != "" {
		s.srv.opts.OnEnd(s.eng.Storage, r.Transcript, s.proj.Prices())
	}
}

// save writes session.json.
func (s *session) save() error {
	s.saveMu.Lock()
	defer s.saveMu.Unlock()
	s.mu.Lock()
	rec := struct {
		SessionID string      `json:"session_id"`
		Cwd       string      `json:"cwd"`
		Project   string      `json:"project,omitempty"`
		Storage   string      `json:"storage"`
		Started   time.Time   `json:"started_at"`
		Closed    bool        `json:"closed,omitempty"`
		Runs      []runRecord `json:"runs"`
	}{string(s.id), s.cwd, s.eng.ProjectDir, s.eng.Storage, s.started, s.closed, slices.Clone(s.record)}
	s.mu.Unlock()
	if rec.Runs == nil {
		rec.Runs = []runRecord{}
	}
	b, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return err
	}
	if err := safefile.WriteFile(filepath.Join(s.dir, "session.json"), append(b, '\n')); err != nil {
		return fmt.Errorf("write the session record: %w", err)
	}
	return nil
}

// listCommands reads the workflows the session can run as slash commands:
// every workflow `reel list` shows from the session's directory (the
// project's, the global ones, the installed packs'), with its description
// and an input hint built from its declared inputs.
func (s *session) listCommands() ([]sdk.AvailableCommand, map[string]string, error) {
	entries, _, err := s.eng.Workflows()
	if err != nil {
		return nil, nil, err
	}
	var cmds []sdk.AvailableCommand
	refs := map[string]string{}
	for _, e := range entries {
		if e.ShadowedBy != "" {
			continue
		}
		name := commandName(e.Name)
		if _, dup := refs[name]; dup {
			continue
		}
		refs[name] = e.Name
		c := sdk.AvailableCommand{Name: name, Description: "run the workflow " + e.Name}
		wf, err := s.eng.LoadWorkflow(e.Name)
		var probs workflow.Problems
		switch {
		case errors.As(err, &probs):
			c.Description = fmt.Sprintf("invalid workflow (%d problems; reel validate %s lists them)", probs.Errors(), e.Name)
		case err != nil:
			c.Description = "unreadable workflow: " + err.Error()
		default:
			if wf.Description != "" {
				c.Description = wf.Description
			}
			if hint := inputHint(wf.Inputs); hint != "" {
				c.Input = &sdk.AvailableCommandInput{Unstructured: &sdk.UnstructuredCommandInput{Hint: hint}}
			}
		}
		cmds = append(cmds, c)
	}
	return cmds, refs, nil
}

// inputHint shows a workflow's inputs the way the command takes them:
// required ones as name=<type>, optional ones in brackets with their
// default, enums as their choices.
func inputHint(inputs []workflow.Input) string {
	var req, opt []string
	for _, in := range inputs {
		v := "<" + in.Type + ">"
		if in.Type == "" {
			v = "<string>"
		}
		if in.Validation != nil && len(in.Validation.Enum) > 0 {
			v = strings.Join(in.Validation.Enum, "|")
		}
		if in.Required && in.Default == nil {
			req = append(req, in.Name+"="+v)
			continue
		}
		if in.Default != nil {
			v = *in.Default
		}
		opt = append(opt, "["+in.Name+"="+v+"]")
	}
	return strings.Join(append(req, opt...), " ")
}

// refreshCommands lists the workflows again and tells the editor when the
// list changed (a workflow added or removed while the session is open).
func (s *session) refreshCommands(ctx context.Context, always bool) error {
	cmds, refs, err := s.listCommands()
	if err != nil {
		return err
	}
	s.mu.Lock()
	same := commandsEqual(cmds, s.commands)
	s.commands, s.refs = cmds, refs
	s.mu.Unlock()
	if same && !always {
		return nil
	}
	if cmds == nil {
		cmds = []sdk.AvailableCommand{}
	}
	return s.out.send(ctx, sdk.SessionUpdate{AvailableCommandsUpdate: &sdk.SessionAvailableCommandsUpdate{AvailableCommands: cmds}})
}

func commandsEqual(a, b []sdk.AvailableCommand) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// resolve finds the workflow a command names, listing the workflows again
// when it is not known yet.
func (s *session) resolve(ctx context.Context, name string) (string, bool) {
	s.mu.Lock()
	ref, ok := s.refs[commandName(name)]
	s.mu.Unlock()
	if ok {
		return ref, true
	}
	if err := s.refreshCommands(ctx, false); err != nil {
		s.srv.log.Warn("list workflows", "session", s.id, "err", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ref, ok = s.refs[commandName(name)]
	return ref, ok
}

// commandList is the known commands as text, for an error message.
func (s *session) commandList() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.commands) == 0 {
		return "there is no workflow here: reel looks in .reel/workflows and .awf/workflows of " + s.cwd + "'s project, the global workflows and the installed packs"
	}
	var names []string
	for _, c := range s.commands {
		names = append(names, "/"+c.Name)
	}
	return "the workflows here: " + strings.Join(names, ", ")
}

var (
	endTurn   = sdk.PromptResponse{StopReason: sdk.StopReasonEndTurn}
	cancelled = sdk.PromptResponse{StopReason: sdk.StopReasonCancelled}
)

// prompt answers one session/prompt: the next message of a conversation
// the live run waits for, or a slash command that starts a run. It returns
// when the run waits for the user again (end_turn) or ended.
func (s *session) prompt(ctx context.Context, blocks []sdk.ContentBlock) (sdk.PromptResponse, error) {
	turn := s.begun.Add(1)
	if !s.busy.CompareAndSwap(false, true) {
		return sdk.PromptResponse{}, sdk.NewInvalidRequest(map[string]any{"error": "a prompt is already being answered in this session: wait for it, or cancel it"})
	}
	defer s.busy.Store(false)
	if turn <= s.cancelledTo.Load() {
		// cancelled before it began: the run it was for, if any, is
		// cancelled already
		if lr := s.current(); lr != nil {
			if _, err := lr.nextAsk(ctx); err == nil {
				s.finish(ctx, lr)
			}
		}
		return cancelled, nil
	}
	text, err := promptText(blocks)
	if err != nil {
		return endTurn, s.out.say(ctx, err.Error())
	}
	if lr := s.current(); lr != nil {
		a, err := lr.nextAsk(ctx)
		if err != nil {
			return s.stop(ctx, lr, errors.New("cancelled from the editor")), nil
		}
		if a != nil {
			a.answer <- text
			return s.wait(ctx, lr), nil
		}
		// The run ended while nobody was waiting for it.
		resp := s.finish(ctx, lr)
		if strings.TrimSpace(text) == "" {
			return resp, nil
		}
	}
	cmd, err := parseCommand(text)
	if err != nil {
		msg := err.Error()
		if errors.Is(err, errNotCommand) {
			msg += "; " + s.commandList()
		}
		return endTurn, s.out.say(ctx, msg)
	}
	return s.start(ctx, cmd, turn), nil
}

// current is the live run, if any.
func (s *session) current() *liveRun {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.live
}

// start starts the workflow cmd names and answers the turn, the session's
// turn-th prompt.
func (s *session) start(ctx context.Context, cmd *command, turn int64) sdk.PromptResponse {
	ref, ok := s.resolve(ctx, cmd.Name)
	if !ok {
		s.out.say(ctx, fmt.Sprintf("Unknown workflow /%s: %s.", commandName(cmd.Name), s.commandList()))
		return endTurn
	}
	if len(cmd.Ignored) > 0 {
		s.out.say(ctx, fmt.Sprintf("Ignored %s: inputs are key=value.", strings.Join(quoteAll(cmd.Ignored), ", ")))
	}
	lr := newLiveRun(s, cmd)
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return cancelled
	}
	s.live = lr
	s.mu.Unlock()
	if turn <= s.cancelledTo.Load() {
		// a cancel came while the command was read: it saw no run
		lr.cancel(errors.New("cancelled from the editor"))
	}
	in := launch.Interaction{Turns: lr.turn}
	if cmd.Interactive {
		in.Pause = lr.pause
	}
	// Not the turn's context: a run the launcher started is always waited
	// for here, and a turn cancelled meanwhile stops it in wait.
	run, err := s.launcher.StartInteractive(context.WithoutCancel(ctx), ref, cmd.Inputs, in)
	if err != nil {
		s.mu.Lock()
		s.live = nil
		s.mu.Unlock()
		lr.feed.stop()
		s.out.say(ctx, startError(ref, err))
		return endTurn
	}
	lr.setRun(run)
	if len(run.Ignored) > 0 {
		// as reel run warns, and as AWF drops them without a word
		s.out.say(ctx, fmt.Sprintf("Ignored %s: /%s declares no such input.", strings.Join(quoteAll(run.Ignored), ", "), commandName(ref)))
	}
	s.mu.Lock()
	s.record = append(s.record, runRecord{RunID: run.ID, Workflow: run.Workflow, Command: "/" + commandName(ref),
		Transcript: run.Transcript, Started: run.Started.UTC(), Status: "running"})
	s.mu.Unlock()
	if err := s.save(); err != nil {
		s.srv.log.Warn("session record not saved", "session", s.id, "err", err)
	}
	return s.wait(ctx, lr)
}

// startError says why a run was refused, and what to do.
func startError(ref string, err error) string {
	var probs workflow.Problems
	var ie *engine.InputError
	switch {
	case errors.As(err, &probs):
		lines := []string{fmt.Sprintf("/%s is not a valid workflow:", commandName(ref))}
		for _, p := range probs {
			lines = append(lines, "- "+p.String())
		}
		return strings.Join(lines, "\n")
	case errors.As(err, &ie):
		return fmt.Sprintf("Cannot start /%s: %v. Give inputs as key=value after the command.", commandName(ref), err)
	}
	return fmt.Sprintf("Cannot start /%s: %v", commandName(ref), err)
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = "`" + s + "`"
	}
	return out
}

// wait ends the turn when the live run asks for the user's next message
// (the conversation is parked until the next prompt), when it ends, or
// when the turn is cancelled (which cancels the run).
func (s *session) wait(ctx context.Context, lr *liveRun) sdk.PromptResponse {
	select {
	case a := <-lr.asks:
		lr.park(a)
		lr.feed.flush(ctx)
		s.out.say(ctx, "_Reply to go on with the conversation; an empty message, exit or quit ends it._")
		return endTurn
	case <-lr.done():
		return s.finish(ctx, lr)
	case <-ctx.Done():
		return s.stop(ctx, lr, errors.New("cancelled from the editor"))
	}
}

// stop cancels the live run and answers the turn once it ended.
func (s *session) stop(ctx context.Context, lr *liveRun, cause error) sdk.PromptResponse {
	lr.cancel(cause)
	<-lr.done()
	s.finish(context.WithoutCancel(ctx), lr)
	return cancelled
}

// finish reports the end of the live run: every event of its transcripts
// sent, then one closing line with its status, time, tokens and cost.
func (s *session) finish(ctx context.Context, lr *liveRun) sdk.PromptResponse {
	s.mu.Lock()
	if s.live == lr {
		s.live = nil
	}
	s.mu.Unlock()
	<-lr.done()
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	if err := lr.feed.wait(wctx); err != nil {
		s.srv.log.Warn("the run's updates were not all sent", "session", s.id, "err", err)
	}
	cancel()
	lr.feed.stop()
	rep := lr.run.Report()
	if rep == nil {
		return endTurn
	}
	s.out.say(ctx, summary(lr.run.Workflow, rep, lr.feed.terminalMessage()))
	resp := endTurn
	if rep.Status == "cancelled" {
		resp = cancelled
	}
	u := rep.Usage
	if u.TotalTokens > 0 {
		resp.Usage = &sdk.Usage{InputTokens: int(u.InputTokens), OutputTokens: int(u.OutputTokens), TotalTokens: int(u.TotalTokens)}
		if u.CacheReadTokens > 0 {
			resp.Usage.CachedReadTokens = sdk.Ptr(int(u.CacheReadTokens))
		}
		if u.CacheWriteTokens > 0 {
			resp.Usage.CachedWriteTokens = sdk.Ptr(int(u.CacheWriteTokens))
		}
		if u.ReasoningTokens > 0 {
			resp.Usage.ThoughtTokens = sdk.Ptr(int(u.ReasoningTokens))
		}
	}
	return resp
}

// summary is the run's closing line.
func summary(name string, rep *engine.Report, terminal string) string {
	var b strings.Builder
	switch rep.Status {
	case "success":
		fmt.Fprintf(&b, "✔ **%s** succeeded", name)
	case "cancelled":
		fmt.Fprintf(&b, "■ **%s** was cancelled", name)
	default:
		fmt.Fprintf(&b, "✖ **%s** failed", name)
	}
	fmt.Fprintf(&b, " in %s", rep.Duration.Round(time.Millisecond))
	if rep.Usage.TotalTokens > 0 {
		fmt.Fprintf(&b, " · %d tokens", rep.Usage.TotalTokens)
	}
	if rep.CostUSD != nil {
		fmt.Fprintf(&b, " · $%.4f", *rep.CostUSD)
	}
	if terminal != "" {
		fmt.Fprintf(&b, "\n\n%s", terminal)
	}
	for _, k := range slices.Sorted(maps.Keys(rep.Outputs)) {
		v := strings.TrimRight(valueText(rep.Outputs[k]), "\n")
		switch {
		case v == "":
			fmt.Fprintf(&b, "\n\n**%s**: _(empty)_", k)
		case strings.Contains(v, "\n"):
			fmt.Fprintf(&b, "\n\n**%s**:\n%s", k, fence(clip(v, maxCardText)))
		default:
			fmt.Fprintf(&b, "\n\n**%s**: %s", k, clip(v, maxCardText))
		}
	}
	if rep.Status != "success" && rep.Error != "" && rep.Error != terminal {
		fmt.Fprintf(&b, "\n\n%s", rep.Error)
	}
	fmt.Fprintf(&b, "\n\nrun `%s`", rep.RunID)
	if rep.TranscriptPath != "" {
		fmt.Fprintf(&b, " · transcript `%s`", rep.TranscriptPath)
	}
	return b.String()
}

// cancelTurn cancels the prompts the editor sent so far and the live run,
// whatever it is doing (session/cancel).
func (s *session) cancelTurn(cause error) {
	s.cancelledTo.Store(s.prompts.Load())
	if lr := s.current(); lr != nil {
		lr.cancel(cause)
	}
}

// close ends the session: its run is cancelled and waited for.
func (s *session) close(ctx context.Context, cause error) error {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	err := s.launcher.Close(ctx, cause)
	if lr := s.current(); lr != nil {
		lr.feed.stop()
	}
	s.eng.PluginHost.Close()
	if serr := s.save(); err == nil {
		err = serr
	}
	return err
}
