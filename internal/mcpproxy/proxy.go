// Package mcpproxy puts reel's MCP server between a CLI agent and its file
// and shell tools: AWF's mcp_proxy. For one run of an agent CLI it serves
// the step's tool router (package mcpserver) on a loopback endpoint only
// that process holds the key to, wires the endpoint into the CLI's command
// line, configuration and environment the way the CLI takes MCP servers,
// turns the CLI's own tools off where it can, and records each call
// through the proxy exactly once, tied to the agent's own report of it
// (Ledger). Besides the builtin tools it serves the plugin operations a
// step exposes (plugin_tools, OperationTools), through the same router.
//
// It decides the transport: streamable HTTP on 127.0.0.1, guarded by a
// bearer token made for the one process, rather than a stdio subprocess as
// AWF spawns. The server then runs inside reel, beside the step: the
// router it serves is the very router of the HTTP providers, every call
// is recorded by the run's one recorder as it happens (a subprocess would
// have to ship its events back over a second channel, and could not be
// tied to the agent's stream), and stopping the step stops the server and
// voids the token. Nothing else can call it: the port answers only
// requests bearing the token, and the token never appears on a command
// line (which other users can read in /proc); it travels in a 0600 file in
// a 0700 directory or in the environment of the agent, which only its
// owner can read.
//
// And it decides the wiring per CLI (Wire): flags, a configuration file
// or an environment variable naming the server "reel", and in intercept
// mode the switches that leave the agent only the proxy's tools: claude
// gets --strict-mcp-config and --tools "" (full isolation); gemini's
// settings allow MCP server "reel" only; vibe's enabled tools are the
// proxy's. codex, copilot and opencode cannot turn their own tools off
// (AWF's coexistence mode): reel warns at load and tells the model, ahead
// of the system prompt, to use the proxy's tools.
package mcpproxy

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/reelhq/reel/internal/mcpserver"
	"github.com/reelhq/reel/internal/plugin"
	"github.com/reelhq/reel/internal/tools"
	"github.com/reelhq/reel/transcript"
)

// ServerName is the name the agent knows reel's MCP server by.
const ServerName = "reel"

// Config is a step's mcp_proxy block, as the engine hands it on.
type Config struct {
	// InterceptBuiltins serves Read, Write, Edit, Bash, Glob and Grep and
	// turns the agent's own tools off where its CLI can.
	InterceptBuiltins bool
	// PluginTools are the plugin operations served besides, each as tool
	// <plugin>_<operation> with the operation's input schema, run by
	// Plugins.
	PluginTools []PluginTools
	Plugins     *plugin.Host
}

// Options are what a proxy needs from its step.
type Options struct {
	// Provider is the CLI provider (claude, codex, …).
	Provider string
	// Dir is the working directory the tools are confined to.
	Dir string
	// Env is the step's environment: the Bash tool takes the variables of
	// tools.BashEnv (and PassEnv) from it.
	Env     []string
	PassEnv []string
	// BashTimeout bounds one Bash command (0: the router's default).
	BashTimeout time.Duration
	// Emit records the step's events (see Ledger).
	Emit Emit
	// Version is reported to the agent in MCP's initialize exchange.
	Version string
	// Grace overrides DefaultGrace (tests).
	Grace time.Duration
}

// Proxy is reel's MCP server serving one agent process.
type Proxy struct {
	// Args are the flags to add to the CLI's command line, Env the
	// variables to add to its environment.
	Args []string
	Env  []string
	// Names maps the names the agent calls the proxy's tools by to the
	// tools.
	Names map[string]string

	ledger *Ledger
	server *mcpserver.Server
	ep     *mcpserver.Endpoint
	tmp    string
}

// Start serves the step's tools on a fresh loopback endpoint and returns
// the proxy, wired for the provider. ctx bounds the start of the plugins
// whose operations it serves; Close ends it.
func Start(ctx context.Context, cfg Config, o Options) (*Proxy, error) {
	if o.Emit == nil {
		return nil, fmt.Errorf("mcp proxy: nil emit")
	}
	var defs []tools.Definition
	if cfg.InterceptBuiltins {
		defs = tools.Definitions()
	}
	extra, err := OperationTools(ctx, cfg.Plugins, cfg.PluginTools)
	if err != nil {
		return nil, err
	}
	for _, t := range extra {
		defs = append(defs, t.Definition)
	}
	if len(defs) == 0 {
		return nil, fmt.Errorf("mcp proxy: nothing to serve (intercept_builtins is off and no plugin_tools)")
	}
	p := &Proxy{Names: AgentNames(o.Provider, defs)}
	p.ledger = NewLedger(o.Emit, p.Names, o.Grace)
	allow := make([]string, len(defs))
	for i, d := range defs {
		allow[i] = d.Name
	}
	router, err := tools.NewRouter(o.Dir, p.ledger.RouterEmit, tools.Options{Env: o.Env, PassEnv: o.PassEnv, BashTimeout: o.BashTimeout, Allow: allow, Extra: extra})
	if err != nil {
		return nil, fmt.Errorf("mcp proxy: %w", err)
	}
	p.server = mcpserver.New(router, mcpserver.Options{Tools: defs, Version: o.Version, CallID: p.ledger.Open})
	if p.ep, err = p.server.Listen(); err != nil {
		return nil, fmt.Errorf("mcp proxy: %w", err)
	}
	if p.tmp, err = os.MkdirTemp("", "reel-mcp-*"); err != nil {
		p.ep.Close()
		return nil, fmt.Errorf("mcp proxy: %w", err)
	}
	w, err := Wire(o.Provider, cfg, Endpoint{URL: p.ep.URL, Token: p.ep.Token}, p.tmp, o.Env, allow)
	if err != nil {
		p.Close("not started")
		return nil, err
	}
	p.Args, p.Env = w.Args, w.Env
	return p, nil
}

// Agent records an event of the agent's stream (see Ledger.Agent).
func (p *Proxy) Agent(ev transcript.ExchangeEvent) error { return p.ledger.Agent(ev) }

// Err returns the first error recording a call, which fails the step.
func (p *Proxy) Err() error { return p.ledger.Err() }

// Close stops the endpoint (the token dies with it), cancels the calls
// still running and waits for them, writes what the ledger holds, and
// removes the wiring's files. reason closes what never got a result. It
// returns the first error recording a call.
func (p *Proxy) Close(reason string) error {
	if p.ep != nil {
		p.ep.Close()
	}
	if p.server != nil {
		p.server.Close()
	}
	err := p.ledger.Close(reason)
	if p.tmp != "" {
		os.RemoveAll(p.tmp)
	}
	return err
}
