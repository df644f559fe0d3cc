package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/reelhq/reel/internal/acpserve"
	"github.com/reelhq/reel/internal/engine"
	"github.com/reelhq/reel/internal/index"
	"github.com/reelhq/reel/internal/pricing"
	"github.com/reelhq/reel/internal/project"
)

// acpServeFlags are reel acp-serve's flags.
type acpServeFlags struct {
	storage     string
	config      string
	logLevel    string
	maskSecrets bool
}

func newACPServeCmd() *cobra.Command {
	var f acpServeFlags
	cmd := &cobra.Command{
		Use:   "acp-serve",
		Short: "Serve workflows to an editor's agent panel over the Agent Client Protocol (stdio)",
		Long: `Speak the Agent Client Protocol on stdin and stdout, as AWF's acp-serve does:
an editor (Zed, acp.nvim) spawns reel acp-serve and shows the workflows as
slash commands in its agent panel. /review file=main.go runs the workflow
review (inputs as key=value, --input=key=value or --input key=value;
--interactive or --breakpoint STATE asks the editor before steps), every
run recorded in the storage like reel run's. Each session runs in the
editor's working directory and its project. docs/acp.md says more.

stdout carries protocol frames only; diagnostics go to stderr.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runACPServe(cmd, &f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.storage, "storage", "", "record every session's runs in `DIR` (default: each session's project storage, $REEL_STORAGE, else the per-user storage)")
	fl.StringVar(&f.config, "config", "", "AWF's configuration `FILE` (.awf/config.yaml), read in place of the project's as $AWF_CONFIG_PATH is")
	fl.StringVar(&f.logLevel, "log-level", "info", "what goes to stderr: debug, info, warn or error")
	fl.BoolVar(&f.maskSecrets, "mask-secrets", false, "mask secret-looking environment values and key shapes in the transcripts and in what the editor is sent")
	return cmd
}

func runACPServe(cmd *cobra.Command, f *acpServeFlags) error {
	var level slog.Level
	if err := level.UnmarshalText([]byte(f.logLevel)); err != nil {
		return &exitError{code: exitUser, msg: fmt.Sprintf("--log-level %q: want debug, info, warn or error", f.logLevel)}
	}
	if f.config != "" {
		// AWF requires --config and reads its workflows_dir; reel reads
		// the file as the project's AWF configuration (inputs, notify).
		b, err := os.ReadFile(f.config)
		if err == nil {
			_, err = project.ParseConfig(b, f.config, filepath.Dir(f.config), false)
		}
		if err != nil {
			return &exitError{code: exitUser, msg: fmt.Sprintf("acp-serve: --config: %v", err)}
		}
		os.Setenv(project.EnvAWFConfig, f.config)
	}
	// The protocol owns stdout: whatever else would write there (a
	// library, a process inheriting it) writes to stderr instead.
	out, err := protocolOutput()
	if err != nil {
		return &exitError{code: exitSystem, msg: fmt.Sprintf("acp-serve: %v", err)}
	}
	defer out.Close()
	log := slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), &slog.HandlerOptions{Level: level}))
	ctx, stop := signalContext(cmd.Context())
	defer stop()
	return acpserve.Serve(ctx, cmd.InOrStdin(), out, acpserve.Options{
		NewEngine:   func(p *project.Project) *engine.Engine { return newEngine(p, f.storage, cmd.ErrOrStderr()) },
		MaskSecrets: f.maskSecrets,
		Version:     versionString(),
		Log:         log,
		OnEnd: func(storage, transcript string, prices *pricing.Table) {
			indexRun(cmd.Context(), storage, transcript, prices, log)
		},
	})
}

// indexRun adds a run that ended to the storage's run index, when the
// storage has one (as reel run does).
func indexRun(ctx context.Context, storage, transcript string, prices *pricing.Table, log *slog.Logger) {
	if _, err := os.Stat(index.Path(storage)); err != nil {
		return
	}
	err := checkIndex(storage)
	if err == nil {
		var ix *index.Index
		if ix, err = index.Open(context.WithoutCancel(ctx), storage, index.WithPrices(prices)); err == nil {
			if _, err = ix.Update(context.WithoutCancel(ctx), transcript); err == nil {
				err = ix.Sync(context.WithoutCancel(ctx))
			}
			ix.Close()
		}
	}
	if err != nil {
		log.Warn("run index not updated", "err", err)
	}
}
