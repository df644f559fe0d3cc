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
	"github.com/reelhq/reel/internal/importstore"
	"github.com/reelhq/reel/internal/safefile"
	"github.com/reelhq/reel/transcript"
	"github.com/reelhq/reel/transcript/secrets"
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
// files; each becomes one canonical transcript (plus one per child run a
// reel export carried), written with the recorder into --out or the
// storage's transcripts directory. One line per run is printed (run id,
// transcript path, source), or with --json one array, warnings go to
// stderr, and a source that cannot be imported is reported and makes the
// exit status 1 after the others are done.
func importInterop(ctx context.Context, cmd *cobra.Command, format string, paths []string, o *importOptions) (handled bool, err error) {
	if format != formatFlowStudio && format != formatAgentlog {
		return false, nil
	}
	runs, err := importInteropRuns(ctx, format, paths, o)
	if err != nil {
		return true, err
	}
	return true, printImported(cmd, runs, len(runs), o)
}

// importInteropRuns imports paths in an interop format and returns one
// importedRun per source, failed ones carrying Error; it returns an error
// only when the whole command cannot go on.
func importInteropRuns(ctx context.Context, format string, paths []string, o *importOptions) ([]importedRun, error) {
	if len(paths) == 0 {
		return nil, &exitError{code: 2, msg: fmt.Sprintf("import --from %s: name at least one %s", format, map[string]string{
			formatFlowStudio: "Flow Studio run directory", formatAgentlog: ".agentlog file"}[format])}
	}
	dir := o.outDir
	if dir == "" {
		storage, err := storageDir(o.storage)
		if err != nil {
			return nil, err
		}
		dir = transcript.Dir(storage)
	}
	if format == formatAgentlog {
		expanded, err := agentlogFiles(paths)
		if err != nil {
			return nil, fmt.Errorf("import: %w", err)
		}
		paths = expanded
	}
	runs := make([]importedRun, 0, len(paths))
	for _, path := range paths {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		r := importedRun{File: path, Format: format}
		src, err := importstore.Identify(path, format)
		if err != nil {
			r.Error = err.Error()
			runs = append(runs, r)
			continue
		}
		outcome, prior, err := importstore.Check(dir, src)
		if err == nil && outcome == importstore.Unchanged {
			r.Outcome, r.RunID, r.Transcript, r.ChildRunIDs = outcome, src.RunID(), filepath.Join(dir, src.RunID()+".jsonl"), prior.ChildRunIDs
			runs = append(runs, r)
			continue
		}
		var tree importTree
		var warnings []string
		if err == nil {
			tree, warnings, err = readInterop(format, path, o.noVerifyIDs)
		}
		if err == nil {
			var ids []string
			r.RunID, r.Transcript, ids, err = recordImportTree(dir, src, prior, tree, o.masker())
			r.ChildRunIDs = ids
			r.Outcome = outcome
		}
		r.Warnings = warnings
		if err != nil {
			r.Error = err.Error()
		} else {
			countImported(&r, tree.Events)
			for _, c := range tree.Children {
				var cr importedRun
				countImported(&cr, c.Events)
				r.Messages += cr.Messages
				r.ToolCalls += cr.ToolCalls
			}
		}
		runs = append(runs, r)
	}
	return runs, nil
}

// printImported prints the outcome of an import of files sources: with
// --json exactly one JSON array of every source in order (failed and
// unchanged ones included), else one line per new or updated run on
// stdout, the failures and warnings on stderr, and a summary on stderr. It
// returns exit status 1 when any source failed.
func printImported(cmd *cobra.Command, runs []importedRun, files int, o *importOptions) error {
	out := cmd.OutOrStdout()
	var t tally
	for i := range runs {
		runs[i].Name = o.masker().MaskString(runs[i].Name)
		t.count(runs[i])
	}
	if o.json {
		if runs == nil {
			runs = []importedRun{}
		}
		if err := writeJSON(out, runs); err != nil {
			return err
		}
	} else {
		for _, r := range runs {
			// Interop importers warn about the source, the provider
			// parsers about what the provider reported.
			interop := r.Format == formatFlowStudio || r.Format == formatAgentlog
			if interop {
				for _, w := range r.Warnings {
					fmt.Fprintf(cmd.ErrOrStderr(), "reel: import %s: warning: %s\n", r.File, w)
				}
			}
			if r.Error != "" {
				fmt.Fprintf(cmd.ErrOrStderr(), "reel: import %s: %s\n", r.File, r.Error)
				continue
			}
			if r.Outcome == importstore.Unchanged {
				continue
			}
			fmt.Fprintln(out, r.summary())
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

// importTree is one imported source: the run's events and those of the
// child runs it carried, whose ChildRunID/parent links use the source's
// own run ids (ref), replaced by fresh ones when recorded.
type importTree struct {
	Ref      string
	Events   []transcript.ExchangeEvent
	Children []flowstudio.ChildRun
}

// readInterop converts one source into transcript events.
func readInterop(format, path string, noVerifyIDs bool) (importTree, []string, error) {
	switch format {
	case formatFlowStudio:
		res, err := flowstudio.Import(path, flowstudio.Options{})
		if err != nil {
			return importTree{}, nil, err
		}
		return importTree{Ref: res.ReelRunID, Events: res.Events, Children: res.Children}, res.Warnings, nil
	default:
		recs, err := agentlog.ReadFile(path, agentlog.ReadOptions{AcceptIDMismatch: noVerifyIDs})
		if err != nil {
			if errors.Is(err, agentlog.ErrIDMismatch) {
				err = fmt.Errorf("%w (--no-verify-ids accepts such records)", err)
			}
			return importTree{}, nil, err
		}
		name := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
		res, err := agentlog.ToTranscript(recs, name)
		if err != nil {
			return importTree{}, nil, fmt.Errorf("convert %s: %w", path, err)
		}
		return importTree{Events: res.Events}, res.Warnings, nil
	}
}

// recordImportTree writes the run and its child runs with the transcript
// recorder, every child beside its parent (runs.Run.Child) with
// parent_run_id set and the parent's call_workflow events naming it in
// child_run_id. Run ids derive from the source (importstore), so a second
// import of a changed source replaces the first: the runs are written
// into a stage and moved into dir together, or not at all.
func recordImportTree(dir string, src importstore.Source, prior *importstore.Source, tree importTree, m *secrets.Masker) (runID, path string, childIDs []string, err error) {
	ids := map[string]string{}
	runID = src.RunID()
	if tree.Ref != "" {
		ids[tree.Ref] = runID
	}
	for _, c := range tree.Children {
		if _, dup := ids[c.RunID]; dup || c.RunID == "" {
			return "", "", nil, fmt.Errorf("child run %q listed twice or without an id", c.RunID)
		}
		ids[c.RunID] = src.ChildRunID(c.RunID)
		childIDs = append(childIDs, ids[c.RunID])
	}
	src.ChildRunIDs = childIDs
	st, err := importstore.NewStage(dir)
	if err != nil {
		return "", "", nil, err
	}
	defer func() {
		if err != nil {
			st.Abort()
		}
	}()
	path, err = recordImport(st.Dir(), runID, "", tree.Events, ids, src.Result(), m)
	if err != nil {
		return "", "", nil, err
	}
	for _, c := range tree.Children {
		parent, ok := ids[c.ParentRunID]
		if !ok {
			return "", "", nil, fmt.Errorf("child run %s: parent run %q is not in the import", c.RunID, c.ParentRunID)
		}
		if _, err := recordImport(st.Dir(), ids[c.RunID], parent, c.Events, ids, nil, m); err != nil {
			return "", "", nil, fmt.Errorf("child run %s: %w", c.RunID, err)
		}
	}
	if err := st.Commit(prior, childIDs); err != nil {
		return "", "", nil, err
	}
	return runID, st.Final(path), childIDs, nil
}

// recordImport writes events as the run runID with the transcript
// recorder, mapping child run ids through ids; source, when set, goes into
// run.started's result (the import's source, see importstore).
func recordImport(dir, runID, parentRunID string, events []transcript.ExchangeEvent, ids map[string]string, source any, m *secrets.Masker) (string, error) {
	rec, err := transcript.Create(dir, runID, transcript.Options{ParentRunID: parentRunID, Masker: m})
	if err != nil {
		return "", fmt.Errorf("create transcript: %w", err)
	}
	for i, e := range events {
		e.Seq, e.RunID, e.ParentRunID = 0, "", ""
		if e.ChildRunID != "" {
			id, ok := ids[e.ChildRunID]
			if !ok {
				err = fmt.Errorf("%s event names child run %s, which the import does not hold", e.Type, e.ChildRunID)
			}
			e.ChildRunID = id
		}
		if i == 0 && source != nil && e.Type == transcript.RunStarted {
			if sp := e.Step(); sp != nil && sp.Result == nil {
				c := *sp
				c.Result = source
				e.Payload = &c
			}
		}
		if err == nil {
			_, err = rec.Record(e)
		}
		if err != nil {
			rec.Close()
			os.Remove(rec.Path())
			return "", fmt.Errorf("record %s event: %w", e.Type, err)
		}
	}
	if err := rec.Close(); err != nil {
		return "", fmt.Errorf("close transcript: %w", err)
	}
	return rec.Path(), nil
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
	f, err := safefile.Open(path)
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
