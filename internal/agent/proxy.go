package agent

import (
	"context"
	"fmt"
	"time"

	"github.com/reelhq/reel/internal/mcpproxy"
	"github.com/reelhq/reel/transcript"
)

// routerOptions reads the options that shape reel's tool router, for the
// HTTP providers' chat loop and for a CLI step's MCP proxy alike:
// bash_env, more variables the Bash tool passes on, and bash_timeout in
// seconds.
func routerOptions(o map[string]any) (passEnv []string, timeout time.Duration, err error) {
	if n, ok, err := optInt(o, "bash_timeout"); err != nil {
		return nil, 0, err
	} else if ok {
		if n < 1 {
			return nil, 0, fmt.Errorf("options.bash_timeout %d: want at least 1 (seconds)", n)
		}
		timeout = time.Duration(n) * time.Second
	}
	if names, ok, err := optStrings(o, "bash_env"); err != nil {
		return nil, 0, err
	} else if ok {
		passEnv = names
	}
	return passEnv, timeout, nil
}

// startProxy starts the MCP proxy for one run of a CLI (mcp_proxy): the
// step's tools served on a loopback endpoint only that process can use,
// recorded through emit.
func startProxy(ctx context.Context, req Request, emit Emit) (*mcpproxy.Proxy, error) {
	passEnv, timeout, err := routerOptions(req.Options)
	if err != nil {
		return nil, err
	}
	return mcpproxy.Start(ctx, *req.MCPProxy, mcpproxy.Options{
		Provider: req.Provider, Dir: req.Dir, Env: req.Env, PassEnv: passEnv, BashTimeout: timeout,
		Emit: mcpproxy.Emit(emit),
	})
}

// proxyInfo describes a proxy for the step's result.
func proxyInfo(p *mcpproxy.Proxy) *transcript.ToolProxy {
	return &transcript.ToolProxy{Server: mcpproxy.ServerName, Tools: p.Names}
}
