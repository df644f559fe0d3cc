// Where an imported run is kept, and whether an import is new, an update
// of an earlier import of the same source, or unchanged.

package importer

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/reelhq/reel/internal/runs"
	"github.com/reelhq/reel/internal/safefile"
	"github.com/reelhq/reel/transcript"
)

// Source is an import's source, as recorded in its run's run.started
// payload (result.import).
type Source struct {
	// Path is the source's absolute path, symlinks resolved.
	Path   string `json:"path"`
	Format string `json:"format"`
	// Size and SHA256 fingerprint the content: of the file, or of a
	// directory's regular files (names and contents, in name order).
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
	// ChildRunIDs are the child runs imported with the run (a Flow Studio
	// export of a run with sub-workflows).
	ChildRunIDs []string `json:"child_run_ids,omitempty"`
	// Untimed is set when the recording gave none of its events a time
	// (a provider stream, Codex exec JSON): they all carry the source
	// file's modification time, and readers show no start or duration
	// (runs.Untimed reads it).
	Untimed bool `json:"untimed,omitempty"`
}

// Identify resolves path and fingerprints its content.
func identify(path, format string) (Source, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return Source{}, fmt.Errorf("import source %s: %w", path, err)
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	src := Source{Path: abs, Format: format}
	h := sha256.New()
	st, err := os.Stat(abs)
	if err != nil {
		return Source{}, fmt.Errorf("import source %s: %w", path, err)
	}
	if !st.IsDir() {
		if src.Size, err = hashFile(h, abs); err != nil {
			return Source{}, err
		}
	} else {
		var files []string
		err := filepath.WalkDir(abs, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.Type().IsRegular() {
				files = append(files, p)
			}
			return nil
		})
		if err != nil {
			return Source{}, fmt.Errorf("import source %s: %w", path, err)
		}
		sort.Strings(files)
		for _, f := range files {
			rel, _ := filepath.Rel(abs, f)
			n, err := hashNamedFile(h, filepath.ToSlash(rel), f)
			if err != nil {
				return Source{}, err
			}
			src.Size += n
		}
	}
	src.SHA256 = hex.EncodeToString(h.Sum(nil))
	return src, nil
}

// hashNamedFile hashes one file of a set under its name, delimited so
// that no two sets of names and contents hash alike, and returns its size.
func hashNamedFile(h io.Writer, name, path string) (int64, error) {
	fmt.Fprintf(h, "%s\x00", name)
	n, err := hashFile(h, path)
	if err != nil {
		return 0, err
	}
	fmt.Fprintf(h, "\x00%d\x00", n)
	return n, nil
}

func hashFile(h io.Writer, path string) (int64, error) {
	f, err := safefile.Open(path)
	if err != nil {
		return 0, fmt.Errorf("import source %s: %w", path, err)
	}
	defer f.Close()
	n, err := io.Copy(h, f)
	if err != nil {
		return 0, fmt.Errorf("import source %s: %w", path, err)
	}
	return n, nil
}

// RunID is the run id of the source's import: a UUID v4 in form, derived
// from the path, so the same source always imports as the same run.
func (s Source) RunID() string { return derivedID("reel-import\x00" + s.Path) }

// ChildRunID is the run id of the child run ref (the source's own name for
// it) imported with the source.
func (s Source) ChildRunID(ref string) string {
	return derivedID("reel-import\x00" + s.Path + "\x00child\x00" + ref)
}

func derivedID(key string) string {
	sum := sha256.Sum256([]byte(key))
	return transcript.FormatRunID([16]byte(sum[:16]))
}

// Same reports whether a and b hold the same content.
func (s Source) Same(o Source) bool { return s.Size == o.Size && s.SHA256 == o.SHA256 }

// Result is run.started's result for the source's run.
func (s Source) Result() any { return map[string]Source{"import": s} }

// Imported tells whether the run whose run.started is ev came from reel
// import, and returns the source it names. Imports made before sources
// were recorded name no source (src is nil) and are named import:<file>.
func Imported(ev *transcript.ExchangeEvent) (src *Source, ok bool) {
	sp := ev.Step()
	if ev.Type != transcript.RunStarted || sp == nil {
		return nil, false
	}
	var r struct {
		Import *Source `json:"import"`
	}
	if sp.Result != nil && transcript.DecodeResult(sp.Result, &r) == nil && r.Import != nil {
		return r.Import, true
	}
	return nil, strings.HasPrefix(sp.Name, "import:")
}

// Outcome is what an import of a source did.
type Outcome string

// Outcomes.
const (
	New       Outcome = "new"
	Updated   Outcome = "updated"
	Unchanged Outcome = "unchanged"
)

// priorSource returns the source recorded by the earlier import of runID in dir,
// or nil when there is none (or its transcript records no source: it is
// then replaced like a changed one).
func priorSource(dir, runID string) (*Source, error) {
	ev, err := runs.Open(filepath.Join(dir, runID+".jsonl"), runs.Options{}).First()
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return nil, fmt.Errorf("earlier import %s: %w", runID, err)
	}
	if err != nil || ev.Type != transcript.RunStarted {
		return &Source{}, nil
	}
	var r struct {
		Import *Source `json:"import"`
	}
	if sp := ev.Step(); sp == nil || transcript.DecodeResult(sp.Result, &r) != nil || r.Import == nil {
		return &Source{}, nil
	}
	return r.Import, nil
}

// check tells what importing src into dir would do, and returns the
// earlier import's source when there is one.
func check(dir string, src Source) (Outcome, *Source, error) {
	prior, err := priorSource(dir, src.RunID())
	if err != nil {
		return "", nil, err
	}
	switch {
	case prior == nil:
		return New, nil, nil
	case prior.Same(src) && prior.Format == src.Format:
		return Unchanged, prior, nil
	}
	return Updated, prior, nil
}
