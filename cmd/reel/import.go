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
	"strings"
	"time"

	"github.com/reelhq/reel/internal/normalize"
	"github.com/reelhq/reel/transcript"
	"github.com/spf13/cobra"
)

// importOptions are the flags of `reel import`, shared with the interop
// importers (Flow Studio, agentlog).
type importOptions struct {
	from, outDir, storage string
	json, noVerifyIDs     bool
}

// importedRun is one line of `reel import` output.
type importedRun struct {
	File       string         `json:"file"`
	Format     string         `json:"format"`
	RunID      string         `json:"run_id,omitempty"`
	Transcript string         `json:"transcript,omitempty"`
	Status     string         `json:"status,omitempty"`
	Messages   int            `json:"messages"`
	ToolCalls  int            `json:"tool_calls"`
	Skipped    map[string]int `json:"skipped,omitempty"`
	Warnings   []string       `json:"warnings,omitempty"`
	// ChildRunIDs are the child runs imported with the run (a Flow Studio
	// export of a run with call_workflow steps).
	ChildRunIDs []string `json:"child_run_ids,omitempty"`
	Error       string   `json:"error,omitempty"`
}

// summary is the line that reports an imported run: its id, transcript,
// format and counts, and its status and skipped lines when there are any.
func (r importedRun) summary() string {
	line := fmt.Sprintf("%s  %s  %s  %d messages, %d tool calls", r.RunID, r.Transcript, r.Format, r.Messages, r.ToolCalls)
	if r.Status != "" && r.Status != "success" {
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
becomes its own run.
Transcripts go to -o DIR, or to <storage>/transcripts.`,
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
	return cmd
}

func runImport(ctx context.Context, cmd *cobra.Command, args []string, o *importOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if o.from != "auto" {
		handled, err := importInterop(ctx, cmd, o.from, args, o)
		if handled || err != nil {
			return err
		}
		if _, err := normalize.ParseFormat(o.from); err != nil {
			return &exitError{code: 2, msg: fmt.Sprintf("import: %v", err)}
		}
	}
	dir := o.outDir
	if dir == "" {
		storage, err := storageDir(o.storage)
		if err != nil {
			return err
		}
		dir = transcript.Dir(storage)
	}

	var runs []importedRun
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
				runs = append(runs, got...)
				continue
			}
		}
		st, err := os.Stat(arg)
		if err != nil {
			runs = append(runs, importedRun{File: arg, Format: o.from, Error: err.Error()})
			continue
		}
		if !st.IsDir() {
			r, err := importPath(ctx, cmd, arg, dir, o, true)
			if err != nil {
				return err
			}
			if r != nil {
				runs = append(runs, *r)
			}
			continue
		}
		files, err := sessionFiles(arg, o.from)
		if err != nil {
			return fmt.Errorf("import: list %s: %w", arg, err)
		}
		bar := newProgress(cmd.ErrOrStderr(), len(files))
		for i, f := range files {
			if err := ctx.Err(); err != nil {
				bar.done()
				return err
			}
			r, err := importPath(ctx, cmd, f, dir, o, false)
			if err != nil {
				bar.done()
				return err
			}
			if r != nil {
				runs = append(runs, *r)
			}
			bar.set(i + 1)
		}
		bar.done()
	}

	return printImported(cmd, runs, o.json)
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
	r, err := importFile(path, format, dir)
	if err != nil {
		return &importedRun{File: path, Format: string(format), Error: err.Error()}, nil
	}
	return r, nil
}

func detectFile(path string) (normalize.Format, bool, error) {
	f, err := os.Open(path)
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

// importFile normalizes one recording and writes it as a transcript.
func importFile(path string, format normalize.Format, dir string) (*importedRun, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var events []transcript.ExchangeEvent
	p, err := normalize.NewParser(format, func(ev transcript.ExchangeEvent) error {
		events = append(events, ev)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if _, err := io.Copy(p, f); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	res, err := p.Close("recording ended")
	if err != nil {
		return nil, err
	}
	if len(events) == 0 && !res.IsError && res.Agent.Usage.TotalTokens == 0 && len(res.Warnings) == 0 &&
		res.Agent.SessionID == "" && res.Agent.Model == "" {
		msg := fmt.Sprintf("no %s content found", format)
		if len(res.Agent.Skipped) > 0 {
			msg += " (skipped: " + normalize.SkippedSummary(res.Agent.Skipped) + ")"
		}
		return nil, errors.New(msg)
	}
	return writeImported(path, format, dir, events, res, time.Now)
}

// writeImported records the run around the normalized events. Events the
// provider gave no time carry the previous event's time, so the transcript
// stays in the provider's timeline; before the first provider time they get
// the first one, and a recording without any time gets the import time.
func writeImported(path string, format normalize.Format, dir string, events []transcript.ExchangeEvent, res *normalize.Result, now func() time.Time) (*importedRun, error) {
	var first, last time.Time
	for _, ev := range events {
		if !ev.Timestamp.IsZero() {
			if first.IsZero() {
				first = ev.Timestamp
			}
			if ev.Timestamp.After(last) {
				last = ev.Timestamp
			}
		}
	}
	if first.IsZero() {
		first = now()
		last = first
	}
	runID := transcript.NewRunID()
	rec, err := transcript.Create(dir, runID, transcript.Options{})
	if err != nil {
		return nil, fmt.Errorf("create transcript: %w", err)
	}
	name := "import:" + filepath.Base(path)
	const stepPath = "agent"
	record := func(ev transcript.ExchangeEvent) error {
		_, err := rec.Record(ev)
		return err
	}
	out := &importedRun{File: path, Format: string(format), RunID: runID, Transcript: rec.Path()}
	status, exitCode := "success", 0
	if res.IsError {
		status, exitCode = "failure", 1
	}
	duration := res.Agent.DurationMS
	if duration == 0 {
		duration = last.Sub(first).Milliseconds()
	}
	err = func() error {
		if err := record(transcript.ExchangeEvent{Type: transcript.RunStarted, Timestamp: first,
			Payload: &transcript.StepPayload{Name: name, Kind: transcript.KindWorkflow}}); err != nil {
			return err
		}
		if err := record(transcript.ExchangeEvent{Type: transcript.StepStarted, Path: stepPath, Timestamp: first,
			Payload: &transcript.StepPayload{Name: stepPath, Kind: transcript.KindAgent}}); err != nil {
			return err
		}
		ts := first
		for _, ev := range events {
			if ev.Timestamp.IsZero() {
				ev.Timestamp = ts
			} else {
				ts = ev.Timestamp
			}
			ev.Path = stepPath
			switch ev.Type {
			case transcript.MessageUser, transcript.MessageAssistant:
				out.Messages++
			case transcript.ToolCall:
				out.ToolCalls++
			}
			if err := record(ev); err != nil {
				return err
			}
		}
		errMsg := ""
		if res.IsError {
			errMsg = res.Error
		}
		if err := record(transcript.ExchangeEvent{Type: transcript.StepCompleted, Path: stepPath, Timestamp: last,
			Payload: &transcript.StepPayload{Name: stepPath, Kind: transcript.KindAgent, Error: errMsg, Result: res.Agent}}); err != nil {
			return err
		}
		return record(transcript.ExchangeEvent{Type: transcript.RunCompleted, Timestamp: last,
			Payload: &transcript.StepPayload{Name: name, Kind: transcript.KindWorkflow, Error: errMsg, Result: transcript.RunResult{
				Status: status, ExitCode: exitCode, DurationMS: duration, Usage: res.Agent.Usage, CostUSD: res.Agent.CostUSD,
			}}})
	}()
	if cerr := rec.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("write transcript %s: %w", rec.Path(), err)
	}
	out.Status = status
	out.Skipped = res.Agent.Skipped
	out.Warnings = res.Warnings
	return out, nil
}

// progress draws a one-line bar on a terminal once an import has taken more
// than a second; elsewhere it draws nothing.
type progress struct {
	w     io.Writer
	tty   bool
	total int
	start time.Time
	drawn bool
}

func newProgress(w io.Writer, total int) *progress {
	p := &progress{w: w, total: total, start: time.Now()}
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			p.tty = true
		}
	}
	return p
}

func (p *progress) set(n int) {
	if !p.tty || p.total == 0 || time.Since(p.start) < time.Second {
		return
	}
	const width = 30
	filled := width * n / p.total
	fmt.Fprintf(p.w, "\rimporting [%s%s] %d/%d", strings.Repeat("=", filled), strings.Repeat(" ", width-filled), n, p.total)
	p.drawn = true
}

func (p *progress) done() {
	if p.drawn {
		fmt.Fprint(p.w, "\r\033[K")
	}
}
