package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/reelhq/reel/internal/importstore"
	"github.com/reelhq/reel/internal/normalize"
	"github.com/reelhq/reel/internal/runstatus"
	"github.com/reelhq/reel/internal/safefile"
	"github.com/reelhq/reel/transcript"
	"github.com/reelhq/reel/transcript/secrets"
	"github.com/spf13/cobra"
)

// importOptions are the flags of `reel import`, shared with the interop
// importers (Flow Studio, agentlog).
type importOptions struct {
	from, outDir, storage string
	json, noVerifyIDs     bool
	maskSecrets           bool
	mask                  *secrets.Masker
}

// masker is the masker --mask-secrets asks for, or nil.
func (o *importOptions) masker() *secrets.Masker {
	if !o.maskSecrets {
		return nil
	}
	if o.mask == nil {
		o.mask = secrets.NewMasker(os.Environ())
	}
	return o.mask
}

// importedRun is one line of `reel import` output.
type importedRun struct {
	File   string `json:"file"`
	Format string `json:"format"`
	// Outcome is new, updated (the source changed since its earlier
	// import, which this one replaced) or unchanged (nothing was written).
	Outcome    importstore.Outcome `json:"outcome,omitempty"`
	RunID      string              `json:"run_id,omitempty"`
	Name       string              `json:"name,omitempty"`
	Transcript string              `json:"transcript,omitempty"`
	Status     string              `json:"status,omitempty"`
	Messages   int                 `json:"messages"`
	ToolCalls  int                 `json:"tool_calls"`
	Skipped    map[string]int      `json:"skipped,omitempty"`
	Warnings   []string            `json:"warnings,omitempty"`
	// ChildRunIDs are the child runs imported with the run (a Flow Studio
	// export of a run with call_workflow steps).
	ChildRunIDs []string `json:"child_run_ids,omitempty"`
	Error       string   `json:"error,omitempty"`
}

// summary is the line that reports an imported run: its id, transcript,
// format and counts, and its status and skipped lines when there are any.
func (r importedRun) summary() string {
	line := fmt.Sprintf("%s  %s  %s  %d messages, %d tool calls", r.RunID, r.Transcript, r.Format, r.Messages, r.ToolCalls)
	if r.Outcome == importstore.Updated {
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
	cmd.Flags().StringVar(&o.from, "from", "auto", "input format, or auto to detect it per file")
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
	// storage is where the run index lives when the transcripts go to the
	// storage (no -o): the import brings it up to date as it ends.
	var storage string
	if o.outDir == "" {
		var err error
		if storage, err = storageDir(o.storage); err != nil {
			return err
		}
	}
	if o.from != "auto" {
		handled, err := importInterop(ctx, cmd, o.from, args, o)
		if handled && err == nil && storage != "" {
			indexWritten(cmd, storage)
		}
		if handled || err != nil {
			return err
		}
		if _, err := normalize.ParseFormat(o.from); err != nil {
			return &exitError{code: 2, msg: fmt.Sprintf("import: %v", err)}
		}
	}
	dir := o.outDir
	if dir == "" {
		dir = transcript.Dir(storage)
	}

	var runs []importedRun
	files := 0
	for _, arg := range args {
		if o.from == "auto" {
			// Interop sources (a Flow Studio run directory, an .agentlog
			// file) are recognized by their shape before anything else.
			if interop := detectInteropFormat(arg); interop != "" {
				sub := *o
				sub.from = interop
				got, err := importInteropRuns(ctx, interop, []string{arg}, &sub)
				if err != nil {
					return err
				}
				files++
				runs = append(runs, got...)
				continue
			}
		}
		st, err := os.Stat(arg)
		if err != nil {
			files++
			runs = append(runs, importedRun{File: arg, Format: o.from, Error: err.Error()})
			continue
		}
		if !st.IsDir() {
			files++
			r, err := importPath(ctx, cmd, arg, dir, o, true)
			if err != nil {
				return err
			}
			if r != nil {
				runs = append(runs, *r)
			}
			continue
		}
		found, err := sessionFiles(arg, o.from)
		if err != nil {
			return fmt.Errorf("import: list %s: %w", arg, err)
		}
		bar := newProgress(cmd.ErrOrStderr(), len(found))
		var t tally
		for i, f := range found {
			if err := ctx.Err(); err != nil {
				bar.done()
				return err
			}
			r, err := importPath(ctx, cmd, f, dir, o, false)
			if err != nil {
				bar.done()
				return err
			}
			if r != nil { // nil: not a recording, passed over
				files++
				runs = append(runs, *r)
				t.count(*r)
			}
			bar.set(i+1, t)
		}
		bar.done()
	}
	if storage != "" {
		var written []string
		for _, r := range runs {
			if r.Error == "" && r.Transcript != "" {
				written = append(written, r.Transcript)
			}
		}
		indexWritten(cmd, storage, written...)
	}
	return printImported(cmd, runs, files, o)
}

// sessionFiles lists the recordings under dir, in a stable order.
func sessionFiles(dir, from string) ([]string, error) {
	var files []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != dir && strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir
			}
			if path != dir && from == "auto" && detectInteropFormat(path) != "" {
				files = append(files, path) // a Flow Studio run directory
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		ext := strings.ToLower(filepath.Ext(path))
		switch normalize.Format(from) {
		case normalize.GeminiSession:
			if ext == ".json" {
				files = append(files, path)
			}
		case normalize.OpenAIChatStream, normalize.AnthropicSSE:
			if ext == ".jsonl" || ext == ".json" || ext == ".sse" || ext == ".txt" {
				files = append(files, path)
			}
		case "auto":
			if ext == ".jsonl" || ext == ".json" || ext == ".sse" || ext == ".txt" || ext == ".agentlog" {
				files = append(files, path)
			}
		default:
			if ext == ".jsonl" {
				files = append(files, path)
			}
		}
		return nil
	})
	sort.Strings(files)
	return files, err
}

// importPath imports one file. explicit is false for files found in a
// directory: with --from auto those that are not recordings are passed over
// silently rather than reported as errors.
func importPath(ctx context.Context, cmd *cobra.Command, path, dir string, o *importOptions, explicit bool) (*importedRun, error) {
	format := normalize.Format(o.from)
	if o.from == "auto" {
		var f normalize.Format
		ok := false
		interop := detectInteropFormat(path)
		if interop == "" {
			var err error
			if f, ok, err = detectFile(path); err != nil {
				return &importedRun{File: path, Format: o.from, Error: err.Error()}, nil
			}
		}
		if !ok {
			if interop != "" {
				sub := *o
				sub.from = interop
				got, err := importInteropRuns(ctx, interop, []string{path}, &sub)
				if err != nil {
					return nil, err
				}
				if len(got) == 1 {
					return &got[0], nil
				}
				return &importedRun{File: path, Format: interop, Error: fmt.Sprintf("%d runs where one was expected", len(got))}, nil
			}
			if !explicit {
				return nil, nil
			}
			return &importedRun{File: path, Format: o.from, Error: "cannot detect the format; name it with --from"}, nil
		}
		format = f
	}
	r, err := importFile(path, format, dir, o)
	if err != nil {
		return &importedRun{File: path, Format: string(format), Error: err.Error()}, nil
	}
	return r, nil
}

func detectFile(path string) (normalize.Format, bool, error) {
	f, err := safefile.Open(path)
	if err != nil {
		return "", false, err
	}
	defer f.Close()
	head := make([]byte, 64<<10)
	n, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return "", false, fmt.Errorf("read %s: %w", path, err)
	}
	format, ok := normalize.Detect(head[:n])
	return format, ok, nil
}
