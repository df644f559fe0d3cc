package runs

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/reelhq/reel/internal/rawjson"
	"github.com/reelhq/reel/internal/safefile"
	"github.com/reelhq/reel/transcript"
)

// Store finds runs in one storage directory.
type Store struct {
	// Dir is the transcripts directory, <storage>/transcripts.
	Dir string
	// Options are given to every run the store opens. A Warnings list set
	// here is shared by all of them: leave it nil where runs are read
	// concurrently (each run then keeps its own).
	Options Options
}

// NewStore returns the store of the storage directory storage.
func NewStore(storage string, opts Options) *Store {
	return &Store{Dir: transcript.Dir(storage), Options: opts}
}

// ErrNotFound is returned when no transcript matches a reference.
var ErrNotFound = errors.New("no such run")

// Find opens the run a reference names: an existing file path, a run id,
// or a unique prefix of a run id stored in the store.
func (s *Store) Find(ref string) (*Run, error) {
	p, err := s.resolve(ref)
	if err != nil {
		return nil, err
	}
	return Open(p, s.Options), nil
}

// ID opens the run id, and nothing else: no prefix, no path. It is for ids
// that come from outside (a URL), where a path must not reach a file.
func (s *Store) ID(id string) (*Run, error) {
	if err := transcript.ValidRunID(id); err != nil {
		return nil, fmt.Errorf("%q is not a run id", id)
	}
	p := filepath.Join(s.Dir, id+".jsonl")
	if _, err := os.Stat(p); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("run %s: %w in %s", id, ErrNotFound, s.Dir)
		}
		return nil, fmt.Errorf("run %s: %w", id, err)
	}
	return Open(p, s.Options), nil
}

func (s *Store) resolve(ref string) (string, error) {
	if ref == "" {
		return "", fmt.Errorf("empty run reference")
	}
	if looksLikePath(ref) {
		if _, err := os.Stat(ref); err != nil {
			return "", fmt.Errorf("transcript %s: %w", ref, err)
		}
		return ref, nil
	}
	if transcript.ValidRunID(ref) == nil {
		p := filepath.Join(s.Dir, ref+".jsonl")
		if _, err := os.Stat(p); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return "", fmt.Errorf("run %s: %w in %s", ref, ErrNotFound, s.Dir)
			}
			return "", fmt.Errorf("run %s: %w", ref, err)
		}
		return p, nil
	}
	for _, c := range ref {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || c == '-') {
			if _, err := os.Stat(ref); err == nil {
				return ref, nil
			}
			return "", fmt.Errorf("%q is neither a transcript file nor a run id (prefix)", ref)
		}
	}
	ids, err := s.IDs()
	if err != nil {
		return "", err
	}
	var matches []string
	for _, id := range ids {
		if strings.HasPrefix(id, ref) {
			matches = append(matches, id)
		}
	}
	switch len(matches) {
	case 0:
		if _, err := os.Stat(ref); err == nil {
			return ref, nil
		}
		return "", fmt.Errorf("run prefix %s: %w in %s", ref, ErrNotFound, s.Dir)
	case 1:
		return filepath.Join(s.Dir, matches[0]+".jsonl"), nil
	}
	shown := matches
	if len(shown) > 5 {
		shown = shown[:5]
	}
	return "", fmt.Errorf("run prefix %s is ambiguous: %d runs match (%s…)", ref, len(matches), strings.Join(shown, ", "))
}

func looksLikePath(ref string) bool {
	return strings.ContainsRune(ref, filepath.Separator) || strings.ContainsRune(ref, '/') ||
		strings.HasSuffix(ref, ".jsonl") || strings.HasPrefix(ref, ".")
}

// IDs lists the run ids with a transcript in the store, sorted.
func (s *Store) IDs() ([]string, error) {
	entries, err := os.ReadDir(s.Dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("no transcripts: %s does not exist (set --storage or REEL_STORAGE, or run reel inside a project)", s.Dir)
		}
		return nil, fmt.Errorf("list transcripts in %s: %w", s.Dir, err)
	}
	ids := make([]string, 0, len(entries))
	for _, e := range entries {
		id, ok := strings.CutSuffix(e.Name(), ".jsonl")
		if !ok || e.IsDir() || transcript.ValidRunID(id) != nil {
			continue
		}
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids, nil
}

// All opens every run in the store, sorted by run id.
func (s *Store) All() ([]*Run, error) {
	ids, err := s.IDs()
	if err != nil {
		return nil, err
	}
	all := make([]*Run, len(ids))
	for i, id := range ids {
		all[i] = Open(filepath.Join(s.Dir, id+".jsonl"), s.Options)
	}
	return all, nil
}

// Latest opens the most recently written transcript of a top-level run:
// child runs started by call_workflow (whose events carry parent_run_id)
// are passed over, since they are reached through their parent.
func (s *Store) Latest() (*Run, error) {
	ids, err := s.IDs()
	if err != nil {
		return nil, err
	}
	type cand struct {
		path string
		mod  int64
	}
	cands := make([]cand, 0, len(ids))
	for _, id := range ids {
		p := filepath.Join(s.Dir, id+".jsonl")
		st, err := os.Stat(p)
		if err != nil || !st.Mode().IsRegular() {
			continue // a FIFO or device named like a run is no run
		}
		cands = append(cands, cand{p, st.ModTime().UnixNano()})
	}
	sort.SliceStable(cands, func(i, j int) bool { return cands[i].mod > cands[j].mod })
	for _, c := range cands {
		if !isChild(c.path) {
			return Open(c.path, s.Options), nil
		}
	}
	return nil, fmt.Errorf("no runs in %s: %w", s.Dir, ErrNotFound)
}

// isChild reports whether the transcript's first event names a parent run.
// Only the start of the first line is read: parent_run_id comes before the
// payload in every line reel writes.
func isChild(path string) bool {
	f, err := safefile.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	line, err := bufio.NewReaderSize(f, 64<<10).ReadSlice('\n')
	if err != nil && len(line) == 0 {
		return false
	}
	v, ok, _ := rawjson.Field(line, "parent_run_id")
	if !ok {
		return false
	}
	id, _ := rawjson.String(v)
	return id != ""
}
