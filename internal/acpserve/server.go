package acpserve

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/reelhq/reel/internal/engine"
	"github.com/reelhq/reel/internal/pricing"
	"github.com/reelhq/reel/internal/project"
)

// Options configure Serve.
type Options struct {
	// NewEngine configures the engine of a session's project, as `reel
	// run` does (its storage, plugins, AWF plugin host); the session sets
	// what is its own (the directory, the recorders' hook) and closes the
	// plugin host when it ends.
	NewEngine func(*project.Project) *engine.Engine
	// MaskSecrets masks secrets in the transcripts, and so in what the
	// editor is sent.
	MaskSecrets bool
	// KillGrace is how long a cancelled step's processes have between
	// SIGTERM and SIGKILL (the engine's default when 0).
	KillGrace time.Duration
	// Version is reel's version, told to the editor.
	Version string
	// Log receives the server's diagnostics; it must not write to the
	// protocol's output. Nil discards them.
	Log *slog.Logger
	// OnEnd, when set, is called once each run ended with its storage,
	// its transcript and its project's price table (the command updates
	// the run index there).
	OnEnd func(storage, transcript string, prices *pricing.Table)
}

// server is the agent side of the connection: it implements the SDK's
// Agent and holds the sessions.
type server struct {
	opts Options
	log  *slog.Logger
	conn *sdk.AgentSideConnection
	out  *frameWriter

	mu       sync.Mutex
	sessions map[sdk.SessionId]*session
	closed   bool
}

var (
	_ sdk.Agent = (*server)(nil)
)

// Serve speaks ACP over in and out (an editor's pipes to `reel acp-serve`)
// until in ends or ctx is cancelled. Then every session's run still going
// is cancelled and waited for, so it ends `cancelled` with its
// run.completed, resumable. Nothing but protocol frames is written to out.
func Serve(ctx context.Context, in io.Reader, out io.Writer, opts Options) error {
	log := opts.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	srv := &server{opts: opts, log: log, out: &frameWriter{w: out}, sessions: map[sdk.SessionId]*session{}}
	// The SDK reads from a pipe that nothing writes before its logger is
	// set, so the two never race; the filter answers frames the SDK would
	// drop without a word.
	pr, pw := io.Pipe()
	srv.conn = sdk.NewAgentSideConnection(srv, srv.out, pr)
	srv.conn.SetLogger(log)
	go filterFrames(in, pw, srv.out, srv.inOrder)

	var cause error
	select {
	case <-srv.conn.Done():
		cause = errors.New("the editor closed the connection")
	case <-ctx.Done():
		cause = context.Cause(ctx)
	}
	pw.CloseWithError(io.EOF)
	grace := opts.KillGrace
	if grace == 0 {
		grace = 2 * time.Second
	}
	sctx, cancel := context.WithTimeout(context.Background(), grace+30*time.Second)
	defer cancel()
	return srv.shutdown(sctx, cause)
}

// shutdown closes every session.
func (srv *server) shutdown(ctx context.Context, cause error) error {
	srv.mu.Lock()
	srv.closed = true
	sessions := make([]*session, 0, len(srv.sessions))
	for _, s := range srv.sessions {
		sessions = append(sessions, s)
	}
	srv.mu.Unlock()
	var errs []error
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, s := range sessions {
		wg.Go(func() {
			if err := s.close(ctx, cause); err != nil {
				mu.Lock()
				errs = append(errs, fmt.Errorf("close session %s: %w", s.id, err))
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

func (srv *server) session(id sdk.SessionId) (*session, error) {
	srv.mu.Lock()
	defer srv.mu.Unlock()
	s, ok := srv.sessions[id]
	if !ok {
		return nil, sdk.NewInvalidParams(map[string]any{"error": fmt.Sprintf("unknown session %q: start one with session/new", id)})
	}
	return s, nil
}

// Initialize answers with the protocol version the SDK speaks and what
// the server offers: sessions that can be closed, prompts of text and
// resource links (the baseline), no authentication.
func (srv *server) Initialize(ctx context.Context, req sdk.InitializeRequest) (sdk.InitializeResponse, error) {
	return sdk.InitializeResponse{
		ProtocolVersion: sdk.ProtocolVersionNumber,
		AgentCapabilities: sdk.AgentCapabilities{
			SessionCapabilities: sdk.SessionCapabilities{Close: &sdk.SessionCloseCapabilities{}},
		},
		AgentInfo:   &sdk.Implementation{Name: "reel", Title: sdk.Ptr("reel"), Version: srv.opts.Version},
		AuthMethods: []sdk.AuthMethod{},
	}, nil
}

// NewSession opens a session in the editor's working directory and, once
// the editor has its id, advertises the workflows as slash commands.
func (srv *server) NewSession(ctx context.Context, req sdk.NewSessionRequest) (sdk.NewSessionResponse, error) {
	srv.mu.Lock()
	closed := srv.closed
	srv.mu.Unlock()
	if closed {
		return sdk.NewSessionResponse{}, sdk.NewInternalError(map[string]any{"error": "the server is shutting down"})
	}
	s, err := srv.newSession(req.Cwd)
	if err != nil {
		return sdk.NewSessionResponse{}, sdk.NewInvalidParams(map[string]any{"error": err.Error()})
	}
	if len(req.McpServers) > 0 {
		srv.log.Info("the editor's MCP servers are not passed to workflows' agents", "session", s.id, "servers", len(req.McpServers))
	}
	srv.mu.Lock()
	srv.sessions[s.id] = s
	srv.mu.Unlock()
	cmds, refs, err := s.listCommands()
	if err != nil {
		srv.log.Warn("list workflows", "session", s.id, "err", err)
	}
	s.mu.Lock()
	s.commands, s.refs = cmds, refs
	s.mu.Unlock()
	// An update for a session the editor does not know yet would be
	// dropped: it goes out after the response that names the session.
	srv.out.after([]byte(`"sessionId":"`+string(s.id)+`"`), func() {
		if err := s.refreshCommands(context.Background(), true); err != nil {
			srv.log.Warn("advertise workflows", "session", s.id, "err", err)
		}
	})
	srv.log.Info("session opened", "session", s.id, "cwd", s.cwd, "project", s.eng.ProjectDir, "storage", s.eng.Storage, "workflows", len(cmds))
	return sdk.NewSessionResponse{SessionId: s.id}, nil
}

// Prompt answers one prompt of a session.
func (srv *server) Prompt(ctx context.Context, req sdk.PromptRequest) (sdk.PromptResponse, error) {
	s, err := srv.session(req.SessionId)
	if err != nil {
		return sdk.PromptResponse{}, err
	}
	return s.prompt(ctx, req.Prompt)
}

// Cancel cancels a session's run, whatever it is doing; the prompt being
// answered, if any, ends `cancelled` once the run ended. Over Serve's
// connection session/cancel is taken in the order of the stream, by
// inOrder, and never reaches the SDK.
func (srv *server) Cancel(ctx context.Context, n sdk.CancelNotification) error {
	s, err := srv.session(n.SessionId)
	if err != nil {
		return err
	}
	srv.log.Info("cancel", "session", s.id)
	s.cancelTurn(errors.New("cancelled from the editor"))
	return nil
}

// inOrder sees each frame of the editor's, in the order they came, before
// the SDK does. The SDK answers requests each in a goroutine of its own
// but queues notifications for another: a session/cancel followed by the
// next session/prompt could reach the session the other way round, and the
// new prompt become the cancelled conversation's next message, or the
// late cancel stop the new run. So the prompts are counted here and a
// cancel is taken here, at once, for the prompts sent before it alone.
func (srv *server) inOrder(frame []byte) bool {
	isPrompt := bytes.Contains(frame, []byte(`"session/prompt"`))
	if !isPrompt && !bytes.Contains(frame, []byte(`"session/cancel"`)) {
		return true
	}
	var f struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			SessionID sdk.SessionId `json:"sessionId"`
		} `json:"params"`
	}
	if json.Unmarshal(frame, &f) != nil {
		return true
	}
	switch {
	case f.Method == sdk.AgentMethodSessionPrompt && f.ID != nil:
		if s, err := srv.session(f.Params.SessionID); err == nil {
			s.prompts.Add(1)
		}
	case f.Method == sdk.AgentMethodSessionCancel && f.ID == nil:
		if err := srv.Cancel(context.Background(), sdk.CancelNotification{SessionId: f.Params.SessionID}); err != nil {
			srv.log.Warn("session/cancel", "session", f.Params.SessionID, "err", err)
		}
		return false
	}
	return true
}

// CloseSession cancels the session's run, waits for it and forgets the
// session. Its record stays in its state directory.
func (srv *server) CloseSession(ctx context.Context, req sdk.CloseSessionRequest) (sdk.CloseSessionResponse, error) {
	s, err := srv.session(req.SessionId)
	if err != nil {
		return sdk.CloseSessionResponse{}, err
	}
	srv.mu.Lock()
	delete(srv.sessions, s.id)
	srv.mu.Unlock()
	if err := s.close(ctx, errors.New("the editor closed the session")); err != nil {
		return sdk.CloseSessionResponse{}, err
	}
	return sdk.CloseSessionResponse{}, nil
}

// Authenticate is not offered: no authentication method is advertised.
func (srv *server) Authenticate(ctx context.Context, req sdk.AuthenticateRequest) (sdk.AuthenticateResponse, error) {
	return sdk.AuthenticateResponse{}, sdk.NewMethodNotFound(sdk.AgentMethodAuthenticate)
}

// ListSessions is not offered.
func (srv *server) ListSessions(ctx context.Context, req sdk.ListSessionsRequest) (sdk.ListSessionsResponse, error) {
	return sdk.ListSessionsResponse{}, sdk.NewMethodNotFound(sdk.AgentMethodSessionList)
}

// ResumeSession is not offered.
func (srv *server) ResumeSession(ctx context.Context, req sdk.ResumeSessionRequest) (sdk.ResumeSessionResponse, error) {
	return sdk.ResumeSessionResponse{}, sdk.NewMethodNotFound(sdk.AgentMethodSessionResume)
}

// SetSessionConfigOption is not offered: a session has no options.
func (srv *server) SetSessionConfigOption(ctx context.Context, req sdk.SetSessionConfigOptionRequest) (sdk.SetSessionConfigOptionResponse, error) {
	return sdk.SetSessionConfigOptionResponse{}, sdk.NewMethodNotFound(sdk.AgentMethodSessionSetConfigOption)
}

// SetSessionMode is not offered: a session has no modes.
func (srv *server) SetSessionMode(ctx context.Context, req sdk.SetSessionModeRequest) (sdk.SetSessionModeResponse, error) {
	return sdk.SetSessionModeResponse{}, sdk.NewMethodNotFound(sdk.AgentMethodSessionSetMode)
}

// frameWriter serializes whole frames, the SDK's and the frame filter's,
// onto the one output: each Write is one frame. It can run a function once
// a frame holding given bytes was written.
type frameWriter struct {
	mu       sync.Mutex
	w        io.Writer
	watchers []watcher
}

type watcher struct {
	match []byte
	fn    func()
}

func (f *frameWriter) Write(p []byte) (int, error) {
	f.mu.Lock()
	n, err := f.w.Write(p)
	var run []func()
	if err == nil && len(f.watchers) > 0 {
		kept := f.watchers[:0]
		for _, w := range f.watchers {
			if bytes.Contains(p, w.match) {
				run = append(run, w.fn)
			} else {
				kept = append(kept, w)
			}
		}
		f.watchers = kept
	}
	f.mu.Unlock()
	for _, fn := range run {
		go fn()
	}
	return n, err
}

// after runs fn (in its own goroutine) once a frame holding match was
// written.
func (f *frameWriter) after(match []byte, fn func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.watchers = append(f.watchers, watcher{match, fn})
}
