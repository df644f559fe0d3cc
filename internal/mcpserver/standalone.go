package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/reelhq/reel/internal/tools"
	"github.com/reelhq/reel/transcript"
)

// StepName is the path and name of the one step a recorded standalone
// session holds.
const StepName = "mcp-serve"

// Standalone is reel's MCP server on its own (reel mcp-serve): the
// builtin tools confined to Dir, and any plugin operations, for whatever
// MCP client started it.
//
// With Storage set, the session is recorded as a run of its own: one
// agent step named mcp-serve whose tool pairs are the calls the client
// made (router fidelity, under the id the client's _meta names a call by,
// else mcp-1, mcp-2, …), its result naming the client as the provider;
// run.completed when the client disconnects or the context ends.
type Standalone struct {
	// Dir is the working directory the tools are confined to.
	Dir string
	// Tools names the builtin tools served (nil: all six; empty: none).
	Tools []string
	// Extra are tools served besides the builtins (plugin operations).
	Extra []tools.Tool
	// Env is the environment Bash takes its allow-listed variables from;
	// PassEnv names more of them; BashTimeout bounds a command.
	Env         []string
	PassEnv     []string
	BashTimeout time.Duration
	// Storage, when set, records the session into <Storage>/transcripts,
	// as run RunID (a new id when empty).
	Storage string
	RunID   string
	Masker  transcript.Masker
	Version string
}

// ErrOptions marks an error in Standalone's fields (an unknown tool, a
// working directory that is not one): the caller's mistake, not the
// session's.
var ErrOptions = errors.New("bad mcp-serve options")

// Serve serves one session over t until the client disconnects or ctx
// ends. It returns the path of the session's transcript ("" when not
// recording).
func (o Standalone) Serve(ctx context.Context, t mcp.Transport) (path string, err error) {
	defs, err := pick(o.Tools)
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrOptions, err)
	}
	for _, t := range o.Extra {
		defs = append(defs, t.Definition)
	}
	if len(defs) == 0 {
		return "", fmt.Errorf("%w: no tool to serve", ErrOptions)
	}
	if st, err := os.Stat(o.Dir); err != nil || !st.IsDir() {
		return "", fmt.Errorf("%w: --dir %s is not a directory", ErrOptions, o.Dir)
	}
	emit := func(transcript.ExchangeEvent) error { return nil }
	var rec *transcript.Recorder
	var mu sync.Mutex
	var srv *Server // for the client's name in the step's result
	start := time.Now()
	if o.Storage != "" {
		id := o.RunID
		if id == "" {
			id = transcript.NewRunID()
		}
		rec, err = transcript.Create(transcript.Dir(o.Storage), id, transcript.Options{Masker: o.Masker})
		if err != nil {
			return "", fmt.Errorf("mcp-serve: %w", err)
		}
		path = rec.Path()
		record := func(ev transcript.ExchangeEvent) error {
			mu.Lock()
			defer mu.Unlock()
			_, err := rec.Record(ev)
			return err
		}
		if err := record(transcript.ExchangeEvent{Type: transcript.RunStarted, Payload: &transcript.StepPayload{Name: StepName, Kind: transcript.KindWorkflow}}); err != nil {
			rec.Close()
			return path, fmt.Errorf("mcp-serve: %w", err)
		}
		if err := record(transcript.ExchangeEvent{Type: transcript.StepStarted, Path: StepName, Payload: &transcript.StepPayload{Name: StepName, Kind: transcript.KindAgent}}); err != nil {
			rec.Close()
			return path, fmt.Errorf("mcp-serve: %w", err)
		}
		emit = func(ev transcript.ExchangeEvent) error {
			ev.Path = StepName
			return record(ev)
		}
		defer func() {
			status, errText := "success", ""
			switch {
			case err != nil:
				status, errText = "failure", err.Error()
			case ctx.Err() != nil:
				status, errText = "cancelled", "stopped: "+context.Cause(ctx).Error()
			}
			dur := time.Since(start).Milliseconds()
			step := &transcript.StepPayload{Name: StepName, Kind: transcript.KindAgent, Error: errText,
				Result: &transcript.AgentResult{Provider: srv.Client(), DurationMS: dur}}
			cerr := errors.Join(
				record(transcript.ExchangeEvent{Type: transcript.StepCompleted, Path: StepName, Payload: step}),
				record(transcript.ExchangeEvent{Type: transcript.RunCompleted, Payload: &transcript.StepPayload{Name: StepName, Kind: transcript.KindWorkflow, Error: errText,
					Result: transcript.RunResult{Status: status, DurationMS: dur}}}),
				rec.Close())
			if err == nil && cerr != nil {
				err = fmt.Errorf("mcp-serve: record the session's end: %w", cerr)
			}
		}()
	}
	names := make([]string, len(defs))
	for i, d := range defs {
		names[i] = d.Name
	}
	r, err := tools.NewRouter(o.Dir, emit, tools.Options{Env: o.Env, PassEnv: o.PassEnv, BashTimeout: o.BashTimeout, Allow: names, Extra: o.Extra})
	if err != nil {
		return path, fmt.Errorf("mcp-serve: %w", err)
	}
	srv = New(r, Options{Tools: defs, Version: o.Version})
	defer srv.Close()
	return path, srv.Run(ctx, t)
}

// pick returns the builtin tools named, in their order, or all of them
// (names nil).
func pick(names []string) ([]tools.Definition, error) {
	all := tools.Definitions()
	if names == nil {
		return all, nil
	}
	var out []tools.Definition
	for _, n := range names {
		i := slices.IndexFunc(all, func(d tools.Definition) bool { return d.Name == n })
		if i < 0 {
			var known []string
			for _, d := range all {
				known = append(known, d.Name)
			}
			return nil, fmt.Errorf("unknown tool %q (builtin: %s)", n, strings.Join(known, ", "))
		}
		out = append(out, all[i])
	}
	return out, nil
}
