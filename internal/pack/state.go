package pack

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// State is a pack's state.json, in AWF's format, so that AWF lists and
// updates what reel installed and the other way round.
type State struct {
	Name    string `json:"name"`
	Enabled bool   `json:"enabled"`
	Source  Source `json:"source_data"`
	// recorded is false when the pack has no state.json (installed by
	// copying its files): it is then enabled, with no known source.
	recorded bool
}

// Recorded reports whether the pack has a state.json.
func (s State) Recorded() bool { return s.recorded }

// Source is where an installed pack came from.
type Source struct {
	// Repository is the GitHub owner/repo it was installed from ("" for
	// a local install).
	Repository string `json:"repository"`
	// Version is the version installed.
	Version string `json:"version"`
	// Path is the local directory or archive it was installed from
	// (reel's key; AWF ignores it).
	Path        string    `json:"path,omitempty"`
	InstalledAt time.Time `json:"installed_at"`
	UpdatedAt   time.Time `json:"updated_at"`
}

// String is the source as a user wrote it: owner/repo, or the local path.
func (s Source) String() string {
	if s.Repository != "" {
		return s.Repository
	}
	return s.Path
}

// ReadState reads dir/state.json; a missing file is an enabled pack of
// unknown source.
func ReadState(dir string) (State, error) {
	b, err := readLimited(filepath.Join(dir, StateFile), maxManifest)
	if errors.Is(err, os.ErrNotExist) {
		return State{Enabled: true}, nil
	}
	if err != nil {
		return State{}, err
	}
	var s State
	if err := json.Unmarshal(b, &s); err != nil {
		return State{}, fmt.Errorf("%s: %w", StateFile, err)
	}
	s.recorded = true
	return s, nil
}

// writeState writes dir/state.json.
func writeState(dir string, s State) error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, StateFile), append(b, '\n'), 0o644)
}
