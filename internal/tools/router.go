// Package tools serves reel's builtin tools (Read, Write, Edit, Bash, Glob,
// Grep) to agents that let the caller run their tools, such as
// OpenAI-compatible chat models, or that reach them through reel's MCP
// server. Every invocation goes through one Router, which confines it to
// a working directory and records it as a tool.call / tool.result pair
// with fidelity "router"; tools other than the builtins (plugin
// operations) go through it too, recorded the same way.
package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/reelhq/reel/transcript"
)

// ErrRecord marks a failure to record a tool event. Unlike a tool's own
// error, which goes back to the model as the tool's answer, it means the
// transcript is broken and the agent step must stop.
var ErrRecord = errors.New("record tool event")

// ErrUnknownTool is returned for a tool name the router does not serve.
var ErrUnknownTool = errors.New("unknown tool")

// Emit receives the events a Router records. The caller fills the
// envelope's path, iteration and run id.
type Emit func(transcript.ExchangeEvent) error

// Options tune a Router. Zero values mean the defaults.
type Options struct {
	// Env is the environment Bash commands take their variables from
	// (nil = os.Environ()). Only the variables of BashEnv and those named
	// in PassEnv are passed on: a model's commands do not see the API keys
	// and tokens of the environment reel runs in.
	Env []string
	// PassEnv names more variables of Env the Bash tool passes on (the
	// workflow's choice, such as a step's bash_env option).
	PassEnv []string
	// BashTimeout bounds one Bash command (default 2 minutes). A command
	// may ask for less, never for more.
	BashTimeout time.Duration
	// MaxOutput bounds the bytes a tool returns (default 64 KiB for Bash
	// and Grep, 256 KiB for Read); longer output is cut with a note.
	MaxOutput int
	// Allow, when non-nil, lists the only tools the router runs; a call to
	// any other is refused (and recorded) as not enabled.
	Allow []string
	// Extra are tools the router runs besides its builtins (the plugin
	// operations a step's mcp_proxy exposes), recorded the same way.
	Extra []Tool
}

// Tool is a tool other than a builtin: how a model sees it and what a
// call does. Run gets the call's arguments as sent and returns the
// output, or the tool's own failure.
type Tool struct {
	Definition
	Run func(ctx context.Context, input json.RawMessage) (any, error)
}

// Router runs builtin tools inside one directory and records every call.
type Router struct {
	dir     string // absolute, cleaned
	realDir string // dir with symlinks resolved, for absolute paths given through a symlinked parent
	emit    Emit
	opts    Options
}

// NewRouter returns a router confined to dir. emit records the tool.call
// and tool.result events; it must not be nil.
func NewRouter(dir string, emit Emit, opts Options) (*Router, error) {
	if emit == nil {
		return nil, errors.New("tools: nil emit")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("tools: working directory %s: %w", dir, err)
	}
	st, err := os.Stat(abs)
	if err != nil {
		return nil, fmt.Errorf("tools: working directory: %w", err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("tools: working directory %s is not a directory", abs)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("tools: working directory: %w", err)
	}
	if opts.BashTimeout <= 0 {
		opts.BashTimeout = 2 * time.Minute
	}
	return &Router{dir: abs, realDir: real, emit: emit, opts: opts}, nil
}

// Dir returns the directory the router's tools are confined to.
func (r *Router) Dir() string { return r.dir }

// Call runs the tool name with the JSON arguments input and records the
// invocation as one tool.call and one tool.result sharing callID. The
// returned error is the tool's own failure (bad arguments, a path outside
// the working directory, a non-zero exit), to be reported to the model, or
// an error matching ErrRecord when recording failed.
func (r *Router) Call(ctx context.Context, name, callID string, input json.RawMessage) (output any, err error) {
	in := recordedInput(input)
	call := &transcript.ToolPayload{Name: name, CallID: callID, Input: in, Fidelity: transcript.FidelityRouter}
	if err := r.emit(transcript.ExchangeEvent{Type: transcript.ToolCall, Timestamp: time.Now(), Payload: call}); err != nil {
		return nil, fmt.Errorf("%w: tool.call %s: %v", ErrRecord, callID, err)
	}
	output, err = r.dispatch(ctx, name, input)
	res := &transcript.ToolPayload{Name: name, CallID: callID, Input: in, Output: output, Fidelity: transcript.FidelityRouter}
	if err != nil {
		res.Error = err.Error()
	}
	if rerr := r.emit(transcript.ExchangeEvent{Type: transcript.ToolResult, Timestamp: time.Now(), Payload: res}); rerr != nil {
		return output, fmt.Errorf("%w: tool.result %s: %v", ErrRecord, callID, rerr)
	}
	return output, err
}

// recordedInput keeps well-formed arguments as JSON and anything else as
// the string the model sent, so a malformed call is still recorded as-is.
func recordedInput(input json.RawMessage) any {
	if len(input) == 0 {
		return map[string]any{}
	}
	if json.Valid(input) {
		return input
	}
	return string(input)
}

func (r *Router) dispatch(ctx context.Context, name string, input json.RawMessage) (any, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if r.opts.Allow != nil && !slices.Contains(r.opts.Allow, name) {
		return nil, fmt.Errorf("%w %q: not enabled for this step (enabled: %s)", ErrUnknownTool, name, strings.Join(r.opts.Allow, ", "))
	}
	for _, t := range r.opts.Extra {
		if t.Name == name {
			return t.Run(ctx, input)
		}
	}
	switch name {
	case "Read":
		return bounded(ctx, name, func() (any, error) { return r.read(input) })
	case "Write":
		return bounded(ctx, name, func() (any, error) { return r.write(input) })
	case "Edit":
		return bounded(ctx, name, func() (any, error) { return r.edit(input) })
	case "Bash":
		return r.bash(ctx, input)
	case "Glob":
		return bounded(ctx, name, func() (any, error) { return r.glob(ctx, input) })
	case "Grep":
		return bounded(ctx, name, func() (any, error) { return r.grep(ctx, input) })
	}
	return nil, fmt.Errorf("%w %q (available: Read, Write, Edit, Bash, Glob, Grep)", ErrUnknownTool, name)
}

// bounded runs a file tool so that its step's timeout or cancellation ends
// the call even when the tool is stuck in a system call (a file system
// that hangs): the call returns at once, and the goroutine, which nothing
// waits for any more, ends whenever the system call does. Files are opened
// non-blocking, so nothing reel controls hangs; this is for what it does
// not (a dead network mount).
func bounded(ctx context.Context, tool string, fn func() (any, error)) (any, error) {
	type result struct {
		out any
		err error
	}
	done := make(chan result, 1)
	go func() {
		out, err := fn()
		done <- result{out, err}
	}()
	select {
	case res := <-done:
		return res.out, res.err
	case <-ctx.Done():
		return nil, fmt.Errorf("%s: %w (abandoned before it returned)", tool, context.Cause(ctx))
	}
}

// decode parses a tool's arguments strictly enough to catch a model that
// sent the wrong shape, and names the tool in the error.
func decode(tool string, input json.RawMessage, v any) error {
	if len(input) == 0 {
		input = json.RawMessage("{}")
	}
	if err := json.Unmarshal(input, v); err != nil {
		return fmt.Errorf("%s: invalid arguments: %v", tool, err)
	}
	return nil
}

// Answer is what the model gets back for a call that returned output and
// err: the output as text (a result struct as JSON), after "error: " and
// the error when the tool failed. Every front door of the router (the
// Chat Completions loop, the MCP server) answers with it, so a model sees
// the same text whichever way it called.
func Answer(output any, err error) string {
	var s string
	switch v := output.(type) {
	case nil:
	case string:
		s = v
	default:
		b, merr := json.Marshal(v)
		if merr != nil {
			s = fmt.Sprint(v)
		} else {
			s = string(b)
		}
	}
	if err != nil {
		if s != "" {
			return "error: " + err.Error() + "\n" + s
		}
		return "error: " + err.Error()
	}
	return s
}
