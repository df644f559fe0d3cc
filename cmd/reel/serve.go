package main

import (
	"fmt"
	"log/slog"
	"net"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/reelhq/reel/internal/serve"
)

// awfAddr is where awf serve listens: reel serve --awf listens there too.
const awfAddr = "127.0.0.1:2511"

// serveOptions are reel serve's flags.
type serveOptions struct {
	storage, addr, token string
	host                 string
	port                 int
	allowRuns, awf       bool
}

func newServeCmd() *cobra.Command {
	var o serveOptions
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Browse, search and follow runs in a local web app; AWF's HTTP API",
		Long: `Serve a web app over the storage: the runs with filters (/), each run's
execution tree, timeline and conversation, live while it runs (/runs/ID),
full-text search (/search), the comparison of two runs (/diff/A/B), and a
JSON API beside them (/api/runs, /api/runs/ID, /api/runs/ID/events as
Server-Sent Events). Everything is embedded: it works offline.

It also serves AWF's HTTP API (the routes of awf serve: /api/workflows,
/api/executions, /api/history), its OpenAPI 3.1 document (/openapi.json,
/openapi.yaml) and an interactive reference (/docs). Reading is always on.
Starting, cancelling and resuming runs (over the API, and from the web
app's start page and run pages) is off unless --allow-runs is given;
--awf is what awf serve gives: runs on, on 127.0.0.1:2511. A run started
over HTTP is an ordinary run of the storage, run with this server's
environment and working directory; stopping the server cancels the runs
it started (they stay resumable).

It listens on 127.0.0.1:7419 by default. Any address that is not loopback
needs a token (--token or REEL_TOKEN), checked on every request; open the
printed address once (it carries ?token=) and the browser keeps it in a
cookie, or send Authorization: Bearer TOKEN. Without a token, requests
must be addressed to a loopback name, and requests that change something
from a page of another site are refused.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runServe(cmd, &o) },
	}
	fl := cmd.Flags()
	fl.StringVar(&o.storage, "storage", "", storageUsage)
	fl.StringVar(&o.addr, "addr", serve.DefaultAddr, "listen `ADDRESS` (host:port; port 0 picks a free one)")
	fl.StringVar(&o.host, "host", "", "listen on this `HOST` (AWF's flag; with --port, in place of --addr)")
	fl.IntVar(&o.port, "port", 0, "listen on this `PORT` (AWF's flag; with --host, in place of --addr)")
	fl.StringVar(&o.token, "token", "", "require this token on every request (default $REEL_TOKEN; required off loopback)")
	fl.BoolVar(&o.allowRuns, "allow-runs", false, "let clients start, cancel and resume runs (the API's run routes and the web app's buttons)")
	fl.BoolVar(&o.awf, "awf", false, "what awf serve gives: --allow-runs, listening on "+awfAddr+" unless --addr, --host or --port say otherwise")
	cmd.MarkFlagsMutuallyExclusive("addr", "host")
	cmd.MarkFlagsMutuallyExclusive("addr", "port")
	return cmd
}

// listenAddr is the address the flags ask for.
func (o *serveOptions) listenAddr(cmd *cobra.Command) string {
	fl := cmd.Flags()
	if fl.Changed("host") || fl.Changed("port") {
		host, port := "127.0.0.1", "7419"
		if o.awf {
			host, port, _ = net.SplitHostPort(awfAddr)
		}
		if fl.Changed("host") {
			host = o.host
		}
		if fl.Changed("port") {
			port = strconv.Itoa(o.port)
		}
		return net.JoinHostPort(host, port)
	}
	if o.awf && !fl.Changed("addr") {
		return awfAddr
	}
	return o.addr
}

func runServe(cmd *cobra.Command, o *serveOptions) error {
	dir, err := storageDir(o.storage)
	if err != nil {
		return err
	}
	if o.token == "" {
		o.token = os.Getenv("REEL_TOKEN")
	}
	addr := o.listenAddr(cmd)
	if err := serve.CheckAddr(addr, o.token); err != nil {
		return &exitError{code: 2, msg: err.Error()}
	}
	if _, err := os.Stat(dir); err != nil {
		if !o.allowRuns && !o.awf {
			return &exitError{code: 1, msg: fmt.Sprintf("no storage at %s (set --storage or REEL_STORAGE, or run reel inside a project)", dir)}
		}
		// A server that runs workflows makes the storage its first run
		// would.
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return &exitError{code: 1, msg: err.Error()}
		}
	}
	log := slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), &slog.HandlerOptions{Level: slog.LevelWarn}))
	proj, err := findProject()
	if err != nil {
		return err
	}
	// Runs the server starts use the project's plugins, closed after the
	// server (and its runs) stopped.
	e := newEngine(proj, dir, cmd.ErrOrStderr())
	defer e.PluginHost.Close()
	s, err := serve.New(cmd.Context(), serve.Options{Storage: dir, Addr: addr, Token: o.token, Log: log, Prices: proj.Prices(),
		Engine: e, AllowRuns: o.allowRuns || o.awf, Defaults: proj.Config.Inputs})
	if err != nil {
		return err
	}
	defer s.Close()
	return s.Serve(cmd.Context(), func(bound string) {
		host := bound
		if strings.HasPrefix(bound, "0.0.0.0:") || strings.HasPrefix(bound, "[::]:") {
			host = "localhost" + bound[strings.LastIndex(bound, ":"):]
		}
		u := "http://" + host + "/"
		if o.token != "" {
			u += "?token=" + o.token
		}
		runs := "runs off: --allow-runs turns them on"
		if s.Launcher() != nil {
			runs = "runs on"
		}
		fmt.Fprintf(cmd.OutOrStdout(), "reel serve: %s  (storage %s; API reference %sdocs; %s; Ctrl-C stops)\n", u, dir, "http://"+host+"/", runs)
	})
}
