package main

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strings"

	"github.com/cli/browser"
	"github.com/spf13/cobra"

	"github.com/reelhq/reel/internal/serve"
)

func newServeCmd() *cobra.Command {
	var storage, addr, token string
	var open bool
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Browse, search and follow runs in a local web app (read-only)",
		Long: `Serve a read-only web app over the storage: the runs with filters (/), each
run's execution tree, timeline and conversation, live while it runs
(/runs/ID), full-text search (/search), the comparison of two runs
(/diff/A/B), and a JSON API beside them (/api/runs, /api/runs/ID,
/api/runs/ID/events as Server-Sent Events). Everything is embedded: it works
offline.

It listens on 127.0.0.1:7419 by default. Any address that is not loopback
needs a token (--token or REEL_TOKEN), checked on every request; open the
printed address once (it carries ?token=) and the browser keeps it in a
cookie, or send Authorization: Bearer TOKEN. --open opens the address in
the browser ($BROWSER when set, else the desktop's default).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			dir, err := storageDir(storage)
			if err != nil {
				return err
			}
			if token == "" {
				token = os.Getenv("REEL_TOKEN")
			}
			if err := serve.CheckAddr(addr, token); err != nil {
				return &exitError{code: 2, msg: err.Error()}
			}
			if _, err := os.Stat(dir); err != nil {
				return &exitError{code: 1, msg: fmt.Sprintf("no storage at %s (set --storage or REEL_STORAGE, or run reel inside a project)", dir)}
			}
			log := slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), &slog.HandlerOptions{Level: slog.LevelWarn}))
			prices, err := priceTable()
			if err != nil {
				return err
			}
			s, err := serve.New(cmd.Context(), serve.Options{Storage: dir, Addr: addr, Token: token, Log: log, Prices: prices})
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
				if token != "" {
					u += "?token=" + token
				}
				fmt.Fprintf(cmd.OutOrStdout(), "reel serve: %s  (storage %s; Ctrl-C stops)\n", u, dir)
				if open {
					if err := openBrowser(u); err != nil {
						fmt.Fprintf(cmd.ErrOrStderr(), "reel: warning: --open: %v (open %s yourself)\n", err, u)
					}
				}
			})
		},
	}
	cmd.Flags().StringVar(&storage, "storage", "", storageUsage)
	cmd.Flags().StringVar(&addr, "addr", serve.DefaultAddr, "listen `ADDRESS` (host:port; port 0 picks a free one)")
	cmd.Flags().BoolVar(&open, "open", false, "open the address in the browser once listening")
	cmd.Flags().StringVar(&token, "token", "", "require this token on every request (default $REEL_TOKEN; required off loopback)")
	return cmd
}

// openBrowser opens u as gh does: with $BROWSER when it is set (a command,
// given the address as its argument), else with the desktop's opener
// (cli/browser: xdg-open and its kin, open, start). It does not wait for
// the browser.
func openBrowser(u string) error {
	if b := os.Getenv("BROWSER"); b != "" {
		args := strings.Fields(b)
		c := exec.Command(args[0], append(args[1:], u)...)
		if err := c.Start(); err != nil {
			return fmt.Errorf("$BROWSER %s: %w", b, err)
		}
		go c.Wait()
		return nil
	}
	browser.Stdout, browser.Stderr = io.Discard, io.Discard
	return browser.OpenURL(u)
}
