// Package importer turns recordings made outside reel into canonical
// transcripts: agent session logs and provider streams (the formats of
// internal/normalize) and the interop formats of other transcript systems
// (Flow Studio runs, Shadow .agentlog files).
//
// It decides what a source is (its format, detected or named), what its
// run is called and which run id it gets, and whether an import is new,
// an update of an earlier import of the same source, or unchanged; and it
// writes every imported run, with its child runs, through one writer.
//
// An imported run's id is derived from its source's absolute path
// (symlinks resolved), so importing a file again always addresses the same
// run, and a user's links to it keep working. The source's fingerprint (its
// size and SHA-256) is recorded in the run's run.started payload, under
// result.import; an import whose source has the same fingerprint does
// nothing, and one whose source changed (a live session that grew)
// replaces the earlier transcripts, atomically, through a staging
// directory beside them. A staging directory that an import killed
// before it could clean up left behind is removed by the next import and
// by Sweep, never one a live import holds.
//
// The command (reel import) keeps the flags, the progress bar and the
// printing.
package importer

import (
	"context"
	"fmt"
	"os"

	"github.com/reelhq/reel/internal/normalize"
	"github.com/reelhq/reel/transcript/secrets"
)

// Format names beside normalize's: auto detects each source's format, and
// the interop formats are other transcript systems'.
const (
	Auto       = "auto"
	FlowStudio = "flowstudio"
	Agentlog   = "agentlog"
)

// IsInterop reports whether format is an interop format (FlowStudio,
// Agentlog) rather than an agent's or a provider's.
func IsInterop(format string) bool { return format == FlowStudio || format == Agentlog }

// Options say what to import and where.
type Options struct {
	// Format is Auto (also when empty), one of normalize.Formats, or an
	// interop format.
	Format string
	// Dir is the transcripts directory the runs are written into.
	Dir string
	// NoVerifyIDs accepts .agentlog records whose content ids do not
	// match their content.
	NoVerifyIDs bool
	// Masker, when set, masks secrets in what is written and in Run.Name.
	Masker *secrets.Masker
	// Progress, when set, hears how the import of a directory goes.
	Progress Progress
}

// Progress hears how the import of a directory of recordings goes.
type Progress interface {
	// Begin: total files were found.
	Begin(total int)
	// Imported: the nth file is done; r is nil when the file was passed
	// over (not a recording).
	Imported(n int, r *Run)
	// End: the directory is done, or the import stopped.
	End()
}

// Run is what the import of one source did (reel import --json prints
// one per source).
type Run struct {
	File   string `json:"file"`
	Format string `json:"format"`
	// Outcome is new, updated (the source changed since its earlier
	// import, which this one replaced) or unchanged (nothing was written).
	Outcome    Outcome        `json:"outcome,omitempty"`
	RunID      string         `json:"run_id,omitempty"`
	Name       string         `json:"name,omitempty"`
	Transcript string         `json:"transcript,omitempty"`
	Status     string         `json:"status,omitempty"`
	Messages   int            `json:"messages"`
	ToolCalls  int            `json:"tool_calls"`
	Skipped    map[string]int `json:"skipped,omitempty"`
	Warnings   []string       `json:"warnings,omitempty"`
	// ChildRunIDs are the child runs imported with the run (a Flow Studio
	// export of a run with call_workflow steps, a Claude Code session's
	// subagents).
	ChildRunIDs []string `json:"child_run_ids,omitempty"`
	// Error says why the source could not be imported.
	Error string `json:"error,omitempty"`
}

// CheckFormat reports an error unless format is Auto, one of
// normalize.Formats or an interop format.
func CheckFormat(format string) error {
	if format == "" || format == Auto || IsInterop(format) {
		return nil
	}
	_, err := normalize.ParseFormat(format)
	return err
}

// Import imports each path into o.Dir: a recording, a directory searched
// recursively for recordings (with Format auto, files that are not
// recordings are passed over), or an interop source. It returns one Run
// per source, in order, those that failed carrying Error, and the number
// of sources it looked at; its error is for when the import cannot go on
// (an unknown format, ctx done, a directory that cannot be listed).
//
// An import killed before it cleaned up left its staging directory
// behind: Import sweeps them first.
func Import(ctx context.Context, paths []string, o Options) (runs []Run, files int, err error) {
	if err := CheckFormat(o.Format); err != nil {
		return nil, 0, err
	}
	if o.Format == "" {
		o.Format = Auto
	}
	// A stage left behind is harmless but for the space it takes: one
	// that cannot be removed does not stop the import.
	Sweep(o.Dir)
	im := &importer{o: o}
	if IsInterop(o.Format) {
		runs, err := im.interop(ctx, o.Format, paths)
		return runs, len(runs), err
	}
	for _, path := range paths {
		if o.Format == Auto {
			// Interop sources (a Flow Studio run directory, an .agentlog
			// file) are recognized by their shape before anything else.
			if format := detectInterop(path); format != "" {
				got, err := im.interop(ctx, format, []string{path})
				if err != nil {
					return nil, 0, err
				}
				files++
				runs = append(runs, got...)
				continue
			}
		}
		st, err := os.Stat(path)
		if err != nil {
			files++
			runs = append(runs, Run{File: path, Format: o.Format, Error: err.Error()})
			continue
		}
		if !st.IsDir() {
			files++
			r, err := im.file(ctx, path, true)
			if err != nil {
				return nil, 0, err
			}
			if r != nil {
				runs = append(runs, *r)
			}
			continue
		}
		got, n, err := im.dir(ctx, path)
		if err != nil {
			return nil, 0, err
		}
		runs = append(runs, got...)
		files += n
	}
	return runs, files, nil
}

// importer is one Import's options.
type importer struct {
	o Options
}

// dir imports the recordings found under path.
func (im *importer) dir(ctx context.Context, path string) (runs []Run, files int, err error) {
	found, err := sessionFiles(path, im.o.Format)
	if err != nil {
		return nil, 0, fmt.Errorf("import: list %s: %w", path, err)
	}
	// a session's subagents are imported with it, as its child runs
	found = dropSubagentLogs(found)
	if p := im.o.Progress; p != nil {
		p.Begin(len(found))
		defer p.End()
	}
	for i, f := range found {
		if err := ctx.Err(); err != nil {
			return nil, 0, err
		}
		r, err := im.file(ctx, f, false)
		if err != nil {
			return nil, 0, err
		}
		if r != nil { // nil: not a recording, passed over
			files++
			runs = append(runs, *r)
		}
		if p := im.o.Progress; p != nil {
			p.Imported(i+1, r)
		}
	}
	return runs, files, nil
}

// Sweep removes the staging directories in dir (a transcripts directory)
// that imports killed before they could clean up left behind, and returns
// how many it removed. A staging directory a live import holds is left
// alone.
func Sweep(dir string) (int, error) { return sweep(dir) }
