package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/reelhq/reel/internal/mcpproxy"
	"github.com/reelhq/reel/internal/mcpserver"
	"github.com/reelhq/reel/transcript"
	"github.com/reelhq/reel/transcript/secrets"
)

type mcpServeOptions struct {
	dir         string
	tools       []string
	bashEnv     []string
	bashTimeout string
	record      bool
	storage     string
	maskSecrets bool
	config      string
	pluginTools []string
}

func newMCPServeCmd() *cobra.Command {
	var o mcpServeOptions
	cmd := &cobra.Command{
		Use:   "mcp-serve",
		Short: "Serve reel's tools to an MCP client over stdio",
		Long: `Serve reel's builtin tools (Read, Write, Edit, Bash, Glob, Grep) over MCP on
stdin and stdout, for the MCP client that starts it: the same tools, confined
to the working directory (--dir) and with the same Bash environment
allow-list that an agent step gets through mcp_proxy.

--record writes the session as a run of its own (one agent step, mcp-serve,
with a router tool pair per call) into the storage; reel tools, replay,
stats and verify read it like any run. The transcript's path goes to stderr.

--plugin-tool PLUGIN.OP serves an operation of an installed AWF plugin as
tool PLUGIN_OP, with the operation's input schema (as mcp_proxy's
plugin_tools does); the plugins are the project's (reel plugin list).

--config takes AWF's mcp-serve configuration file ({"intercept_builtins":
true, "plugin_tools": [{"plugin": P, "expose": [OP]}], "root_dir": DIR}).`,
		Example: `  npx @modelcontextprotocol/inspector --cli reel mcp-serve --dir . --method tools/list
  claude mcp add reel -- reel mcp-serve --dir "$PWD" --record`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return o.run(cmd) },
	}
	f := cmd.Flags()
	f.StringVar(&o.dir, "dir", ".", "the `DIR` the tools are confined to")
	f.StringSliceVar(&o.tools, "tools", nil, "serve only these tools (comma-separated; default all six)")
	f.StringArrayVar(&o.bashEnv, "bash-env", nil, "pass this environment variable on to Bash commands too (repeatable)")
	f.StringVar(&o.bashTimeout, "bash-timeout", "", "bound each Bash command (seconds or a duration; default 2m)")
	f.BoolVar(&o.record, "record", false, "record the session as a run in the storage")
	f.StringVar(&o.storage, "storage", "", storageUsage)
	f.BoolVar(&o.maskSecrets, "mask-secrets", false, "mask secret-looking environment values and key shapes in the recorded session")
	f.StringVar(&o.config, "config", "", "AWF's mcp-serve configuration `FILE` (JSON)")
	f.StringArrayVar(&o.pluginTools, "plugin-tool", nil, "serve the operation `PLUGIN.OP` of an installed plugin too, as tool PLUGIN_OP (repeatable)")
	return cmd
}

// awfServeConfig is the file AWF hands its mcp-serve subprocess.
type awfServeConfig struct {
	InterceptBuiltins bool `json:"intercept_builtins"`
	PluginTools       []struct {
		Plugin string   `json:"plugin"`
		Expose []string `json:"expose"`
	} `json:"plugin_tools"`
	RootDir string `json:"root_dir"`
}

func (o *mcpServeOptions) run(cmd *cobra.Command) error {
	user := func(format string, args ...any) error {
		return &exitError{code: exitUser, msg: fmt.Sprintf(format, args...)}
	}
	var specs []mcpproxy.PluginTools
	if o.config != "" {
		b, err := os.ReadFile(o.config)
		if err != nil {
			return user("mcp-serve: --config: %v", err)
		}
		var c awfServeConfig
		if err := json.Unmarshal(b, &c); err != nil {
			return user("mcp-serve: --config %s: %v", o.config, err)
		}
		for _, pt := range c.PluginTools {
			if pt.Plugin == "" || len(pt.Expose) == 0 {
				return user("mcp-serve: --config %s: plugin_tools: each entry needs plugin and expose", o.config)
			}
			specs = append(specs, mcpproxy.PluginTools{Plugin: pt.Plugin, Expose: pt.Expose})
		}
		if !c.InterceptBuiltins {
			if len(specs) == 0 {
				return user("mcp-serve: --config %s: intercept_builtins is false and there are no plugin tools: nothing to serve", o.config)
			}
			if o.tools == nil {
				o.tools = []string{}
			}
		}
		if c.RootDir != "" && !cmd.Flags().Changed("dir") {
			o.dir = c.RootDir
		}
	}
	for _, name := range o.pluginTools {
		plugin, op, ok := strings.Cut(name, ".")
		if !ok || plugin == "" || op == "" {
			return user("mcp-serve: --plugin-tool %q: want PLUGIN.OPERATION", name)
		}
		specs = append(specs, mcpproxy.PluginTools{Plugin: plugin, Expose: []string{op}})
	}
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	s := mcpserver.Standalone{Dir: o.dir, Tools: o.tools, Env: os.Environ(), PassEnv: o.bashEnv, Version: versionString()}
	if len(specs) > 0 {
		p, err := findProject()
		if err != nil {
			return err
		}
		// What plugins print goes to stderr: stdout is the MCP stream.
		host := openPlugins(p, cmd.ErrOrStderr())
		defer host.Close()
		if s.Extra, err = mcpproxy.OperationTools(ctx, host, specs); err != nil {
			return user("mcp-serve: %v", err)
		}
	}
	if o.bashTimeout != "" {
		d, err := time.ParseDuration(o.bashTimeout)
		if n, nerr := strconv.Atoi(o.bashTimeout); nerr == nil {
			d, err = time.Duration(n)*time.Second, nil
		}
		if err != nil || d <= 0 {
			return user("mcp-serve: --bash-timeout %q: want seconds or a duration such as 30s", o.bashTimeout)
		}
		s.BashTimeout = d
	}
	if o.record {
		storage, err := storageDir(o.storage)
		if err != nil {
			return err
		}
		s.Storage, s.RunID = storage, transcript.NewRunID()
		if o.maskSecrets {
			s.Masker = secrets.NewMasker(os.Environ())
		}
		fmt.Fprintf(cmd.ErrOrStderr(), "mcp-serve: recording to %s\n", filepath.Join(transcript.Dir(storage), s.RunID+".jsonl"))
	}
	if _, err := s.Serve(ctx, &mcp.StdioTransport{}); err != nil {
		code := exitSystem
		if errors.Is(err, mcpserver.ErrOptions) {
			code = exitUser
		}
		return &exitError{code: code, msg: "mcp-serve: " + err.Error()}
	}
	return nil
}
