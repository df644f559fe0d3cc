package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/reelhq/reel/internal/importer"
	"github.com/reelhq/reel/internal/normalize"
	"github.com/reelhq/reel/internal/runstatus"
	"github.com/reelhq/reel/transcript"
	"github.com/reelhq/reel/transcript/secrets"
	"github.com/spf13/cobra"
)

// importOptions are the flags of `reel import`.
type importOptions struct {
	from, outDir, storage string
	json, noVerifyIDs     bool
	maskSecrets           bool
}

func newImportCmd() *cobra.Command {
	var o importOptions
	formats := make([]string, 0, len(normalize.Formats()))
	for _, f := range normalize.Formats() {
		formats = append(formats, string(f))
	}
	cmd := &cobra.Command{
		Use:   "import --from FORMAT FILE|DIR...",
		Short: "Turn recorded agent sessions and provider streams into canonical transcripts",
		Long: `Import recordings made outside reel as canonical transcripts, one run per file:
run.started, one agent step with its messages, tool calls and usage, then
run.completed.

Formats (--from): auto, ` + strings.Join(formats, ", ") + `, and the
interop formats flowstudio and agentlog.

A directory is searched recursively for session files (for example
~/.claude/projects, ~/.codex/sessions or ~/.vibe/logs/session) and each
becomes its own run, named after its project (the agent's working
directory) and the session's title or first prompt. Transcripts go to
-o DIR, or to <storage>/transcripts.

A source's run id is derived from its path, and its content is
fingerprinted in the run's run.started event (result.import): importing
the same source again does nothing while it is unchanged, and replaces
the earlier import when it changed (a live session that grew). A summary
of the files, new, updated and unchanged runs and failures ends the output
(on stderr), and a progress bar shows on a terminal.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runImport(cmd.Context(), cmd, args, &o)
		},
	}
	cmd.Flags().StringVar(&o.from, "from", importer.Auto, "input format, or auto to detect it per file")
	cmd.Flags().StringVarP(&o.outDir, "output", "o", "", "write transcripts into DIR (default <storage>/transcripts)")
	cmd.Flags().StringVar(&o.storage, "storage", "", storageUsage)
	cmd.Flags().BoolVar(&o.json, "json", false, "print the imported runs as JSON")
	cmd.Flags().BoolVar(&o.noVerifyIDs, "no-verify-ids", false, "agentlog: do not recompute content ids")
	cmd.Flags().BoolVar(&o.maskSecrets, "mask-secrets", false, "mask secret-looking environment values and key shapes in the imported transcripts")
	return cmd
}

func runImport(ctx context.Context, cmd *cobra.Command, args []string, o *importOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if err := importer.CheckFormat(o.from); err != nil {
		return &exitError{code: 2, msg: fmt.Sprintf("import: %v", err)}
	}
	// storage is where the run index lives when the transcripts go to the
	// storage (no -o): the import brings it up to date as it ends.
	var storage string
	dir := o.outDir
	if dir == "" {
		var err error
		if storage, err = storageDir(o.storage); err != nil {
			return err
		}
		dir = transcript.Dir(storage)
	}
	var mask *secrets.Masker
	if o.maskSecrets {
		mask = secrets.NewMasker(os.Environ())
	}
	bar := &progress{w: cmd.ErrOrStderr()}
	runs, files, err := importer.Import(ctx, args, importer.Options{
		Format: o.from, Dir: dir, NoVerifyIDs: o.noVerifyIDs, Masker: mask, Progress: bar,
	})
	if err != nil {
		return err
	}
	if storage != "" {
		var written []string
		if !importer.IsInterop(o.from) {
			for _, r := range runs {
				if r.Error == "" && r.Transcript != "" {
					written = append(written, r.Transcript)
				}
			}
		}
		// No paths: an interop import's child runs too, the whole index.
		indexWritten(cmd, storage, written...)
	}
	return printImported(cmd, runs, files, o.json)
}

// printImported prints the outcome of an import of files sources: with
// --json exactly one JSON array of every source in order (failed and
// unchanged ones included), else one line per new or updated run on
// stdout, the failures and warnings on stderr, and a summary on stderr. It
// returns exit status 1 when any source failed.
func printImported(cmd *cobra.Command, runs []importer.Run, files int, asJSON bool) error {
	out := cmd.OutOrStdout()
	var t tally
	for i := range runs {
		t.count(runs[i])
	}
	if asJSON {
		if runs == nil {
			runs = []importer.Run{}
		}
		if err := writeJSON(out, runs); err != nil {
			return err
		}
	} else {
		for _, r := range runs {
			// Interop importers warn about the source, the provider
			// parsers about what the provider reported.
			interop := importer.IsInterop(r.Format)
			if interop {
				for _, w := range r.Warnings {
					fmt.Fprintf(cmd.ErrOrStderr(), "reel: import %s: warning: %s\n", r.File, w)
				}
			}
			if r.Error != "" {
				fmt.Fprintf(cmd.ErrOrStderr(), "reel: import %s: %s\n", r.File, r.Error)
				continue
			}
			if r.Outcome == importer.Unchanged {
				continue
			}
			fmt.Fprintln(out, importSummary(r))
			if !interop {
				for _, w := range r.Warnings {
					fmt.Fprintf(cmd.ErrOrStderr(), "reel: import %s: provider warning: %s\n", r.File, w)
				}
			}
		}
		noun := "files"
		if files == 1 {
			noun = "file"
		}
		fmt.Fprintf(cmd.ErrOrStderr(), "reel: import: %d %s: %s\n", files, noun, t)
	}
	if t.failed > 0 {
		return &exitError{code: 1}
	}
	return nil
}

// importSummary is the line that reports an imported run: its id,
// transcript, format and counts, and its status and skipped lines when
// there are any.
func importSummary(r importer.Run) string {
	line := fmt.Sprintf("%s  %s  %s  %d messages, %d tool calls", r.RunID, r.Transcript, r.Format, r.Messages, r.ToolCalls)
	if r.Outcome == importer.Updated {
		line += ", replaced the earlier import"
	}
	if r.Name != "" {
		line += "  " + strconv.Quote(r.Name)
	}
	if r.Status != "" && r.Status != runstatus.Success {
		line += ", status " + r.Status
	}
	if len(r.Skipped) > 0 {
		line += ", skipped: " + normalize.SkippedSummary(r.Skipped)
	}
	if n := len(r.ChildRunIDs); n > 0 {
		line += fmt.Sprintf(", %d child runs", n)
	}
	return line
}
