package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/reelhq/reel/internal/agentlog"
	"github.com/reelhq/reel/internal/flowstudio"
	"github.com/reelhq/reel/internal/runstore"
	"github.com/reelhq/reel/transcript"
	"github.com/spf13/cobra"
)

// The interop formats: other transcript systems reel imports and exports.
const (
	formatFlowStudio = "flowstudio"
	formatAgentlog   = "agentlog"
)

// importInterop handles `reel import --from FORMAT` for the formats of other
// transcript systems (Flow Studio, Shadow .agentlog). It reports handled =
// false for formats it does not own.
//
// --from flowstudio takes run directories, --from agentlog takes .agentlog
// files; each becomes one canonical transcript, written with the recorder
// into --out or the storage's transcripts directory. One line per run is
// printed (run id, transcript path, source), warnings go to stderr, and a
// source that cannot be imported is reported and makes the exit status 1
// after the others are done.
func importInterop(ctx context.Context, cmd *cobra.Command, format string, paths []string, o *importOptions) (handled bool, err error) {
	if format != formatFlowStudio && format != formatAgentlog {
		return false, nil
	}
	if len(paths) == 0 {
		return true, &exitError{code: 2, msg: fmt.Sprintf("import --from %s: name at least one %s", format, map[string]string{
			formatFlowStudio: "Flow Studio run directory", formatAgentlog: ".agentlog file"}[format])}
	}
	dir := o.outDir
	if dir == "" {
		dir = transcript.Dir(runstore.StorageDir(o.storage))
	}
	if format == formatAgentlog {
		expanded, err := agentlogFiles(paths)
		if err != nil {
			return true, fmt.Errorf("import: %w", err)
		}
		paths = expanded
	}
	var runs []importedRun
	failed := 0
	for _, path := range paths {
		if err := ctx.Err(); err != nil {
			return true, err
		}
		r := importedRun{File: path, Format: format}
		events, warnings, err := readInterop(format, path, o.noVerifyIDs)
		if err == nil {
			r.RunID, r.Transcript, err = recordImport(dir, events)
		}
		r.Warnings = warnings
		if err != nil {
			r.Error = err.Error()
			failed++
		} else {
			countImported(&r, events)
		}
		runs = append(runs, r)
	}
	out := cmd.OutOrStdout()
	if o.json {
		if err := writeJSON(out, runs); err != nil {
			return true, err
		}
	} else {
		for _, r := range runs {
			for _, w := range r.Warnings {
				fmt.Fprintf(cmd.ErrOrStderr(), "reel: import %s: warning: %s\n", r.File, w)
			}
			if r.Error != "" {
				fmt.Fprintf(cmd.ErrOrStderr(), "reel: import %s: %s\n", r.File, r.Error)
				continue
			}
			fmt.Fprintln(out, r.summary())
		}
	}
	if failed > 0 {
		return true, &exitError{code: 1}
	}
	return true, nil
}

// agentlogFiles replaces each directory in paths (a Shadow store's
// traces/, say) by the .agentlog files under it, sorted.
func agentlogFiles(paths []string) ([]string, error) {
	var out []string
	for _, p := range paths {
		if !interopIsDir(p) {
			out = append(out, p)
			continue
		}
		var found []string
		err := filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.IsDir() && strings.HasSuffix(path, ".agentlog") {
				found = append(found, path)
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("list %s: %w", p, err)
		}
		if len(found) == 0 {
			return nil, fmt.Errorf("no .agentlog files under %s", p)
		}
		sort.Strings(found)
		out = append(out, found...)
	}
	return out, nil
}

// readInterop converts one source into transcript events.
func readInterop(format, path string, noVerifyIDs bool) ([]transcript.ExchangeEvent, []string, error) {
	switch format {
	case formatFlowStudio:
		res, err := flowstudio.Import(path, flowstudio.Options{})
		if err != nil {
			return nil, nil, err
		}
		return res.Events, res.Warnings, nil
	default:
		recs, err := agentlog.ReadFile(path, agentlog.ReadOptions{AcceptIDMismatch: noVerifyIDs})
		if err != nil {
			if errors.Is(err, agentlog.ErrIDMismatch) {
				err = fmt.Errorf("%w (--no-verify-ids accepts such records)", err)
			}
			return nil, nil, err
		}
		name := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
		res, err := agentlog.ToTranscript(recs, name)
		if err != nil {
			return nil, nil, fmt.Errorf("convert %s: %w", path, err)
		}
		return res.Events, res.Warnings, nil
	}
}

// recordImport writes events as a new run with the transcript recorder.
func recordImport(dir string, events []transcript.ExchangeEvent) (runID, path string, err error) {
	rec, err := transcript.Create(dir, transcript.NewRunID(), transcript.Options{})
	if err != nil {
		return "", "", fmt.Errorf("create transcript: %w", err)
	}
	for _, e := range events {
		e.Seq, e.RunID = 0, ""
		if _, err := rec.Record(e); err != nil {
			rec.Close()
			os.Remove(rec.Path())
			return "", "", fmt.Errorf("record %s event: %w", e.Type, err)
		}
	}
	if err := rec.Close(); err != nil {
		return "", "", fmt.Errorf("close transcript: %w", err)
	}
	return rec.RunID(), rec.Path(), nil
}

func countImported(r *importedRun, events []transcript.ExchangeEvent) {
	for i := range events {
		switch events[i].Type {
		case transcript.MessageUser, transcript.MessageAssistant:
			r.Messages++
		case transcript.ToolCall:
			r.ToolCalls++
		case transcript.RunCompleted:
			var rr transcript.RunResult
			if sp := events[i].Step(); sp != nil && transcript.DecodeResult(sp.Result, &rr) == nil {
				r.Status = rr.Status
			}
		}
	}
}

// detectInteropFormat names the interop format of path for --from auto, or
// returns "" when path is not one: "flowstudio" for a directory holding a
// Flow Studio run (meta.json with a run id, or events.jsonl, or a flow
// directory with llm/ or receipts/), "agentlog" for a file named .agentlog
// or whose first line is a Shadow metadata record.
func detectInteropFormat(path string) string {
	st, err := os.Stat(path)
	if err != nil {
		return ""
	}
	if st.IsDir() {
		if interopIsFile(filepath.Join(path, "events.jsonl")) || interopIsFile(filepath.Join(path, "meta.json")) && interopIsFile(filepath.Join(path, "spec.json")) {
			return formatFlowStudio
		}
		entries, err := os.ReadDir(path)
		if err != nil {
			return ""
		}
		for _, e := range entries {
			if e.IsDir() && interopIsDir(filepath.Join(path, e.Name(), "receipts")) {
				return formatFlowStudio
			}
		}
		return ""
	}
	if strings.HasSuffix(path, ".agentlog") {
		return formatAgentlog
	}
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	head := make([]byte, 4096)
	n, _ := f.Read(head)
	line, _, _ := strings.Cut(string(head[:n]), "\n")
	var env struct {
		Version string          `json:"version"`
		ID      string          `json:"id"`
		Kind    string          `json:"kind"`
		Payload json.RawMessage `json:"payload"`
	}
	if json.Unmarshal([]byte(line), &env) == nil && env.Version == agentlog.Version && env.Kind == agentlog.KindMetadata &&
		strings.HasPrefix(env.ID, agentlog.IDPrefix) && len(env.Payload) > 0 {
		return formatAgentlog
	}
	return ""
}

func interopIsFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

func interopIsDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}
