// The interop formats: other transcript systems' runs (Flow Studio run
// directories, Shadow .agentlog files).

package importer

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/reelhq/reel/internal/agentlog"
	"github.com/reelhq/reel/internal/flowstudio"
)

// interop imports paths in an interop format (Agentlog: directories are
// searched for .agentlog files) and returns one Run per source, failed
// ones carrying Error; its error is for when the import cannot go on.
func (im *importer) interop(ctx context.Context, format string, paths []string) ([]Run, error) {
	if len(paths) == 0 {
		return nil, fmt.Errorf("import --from %s: name at least one %s", format, map[string]string{
			FlowStudio: "Flow Studio run directory", Agentlog: ".agentlog file"}[format])
	}
	if format == Agentlog {
		expanded, err := agentlogFiles(paths)
		if err != nil {
			return nil, fmt.Errorf("import: %w", err)
		}
		paths = expanded
	}
	runs := make([]Run, 0, len(paths))
	for _, path := range paths {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		runs = append(runs, im.interopSource(format, path))
	}
	return runs, nil
}

// interopSource imports one interop source.
func (im *importer) interopSource(format, path string) Run {
	r := Run{File: path, Format: format}
	src, err := identify(path, format)
	if err != nil {
		r.Error = err.Error()
		return r
	}
	outcome, prior, err := check(im.o.Dir, src)
	if err == nil && outcome == Unchanged {
		r.Outcome, r.RunID, r.Transcript, r.ChildRunIDs = outcome, src.RunID(), filepath.Join(im.o.Dir, src.RunID()+".jsonl"), prior.ChildRunIDs
		return r
	}
	var t tree
	var warnings []string
	if err == nil {
		t, warnings, err = readInterop(format, path, im.o.NoVerifyIDs)
	}
	if err == nil {
		r.RunID = src.RunID()
		r.Transcript, r.ChildRunIDs, err = im.write(src, prior, t)
		r.Outcome = outcome
	}
	r.Warnings = warnings
	if err != nil {
		r.Error = err.Error()
		r.RunID, r.Transcript, r.ChildRunIDs = "", "", nil
		return r
	}
	r.Messages, r.ToolCalls, r.Status = t.counts()
	return r
}

// readInterop converts one source into transcript events.
func readInterop(format, path string, noVerifyIDs bool) (tree, []string, error) {
	switch format {
	case FlowStudio:
		res, err := flowstudio.Import(path, flowstudio.Options{})
		if err != nil {
			return tree{}, nil, err
		}
		return tree{Ref: res.ReelRunID, Events: res.Events, Children: res.Children}, res.Warnings, nil
	default:
		recs, err := agentlog.ReadFile(path, agentlog.ReadOptions{AcceptIDMismatch: noVerifyIDs})
		if err != nil {
			if errors.Is(err, agentlog.ErrIDMismatch) {
				err = fmt.Errorf("%w (--no-verify-ids accepts such records)", err)
			}
			return tree{}, nil, err
		}
		name := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
		res, err := agentlog.ToTranscript(recs, name)
		if err != nil {
			return tree{}, nil, fmt.Errorf("convert %s: %w", path, err)
		}
		return tree{Events: res.Events}, res.Warnings, nil
	}
}
