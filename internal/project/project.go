// Package project decides where a reel command works: the project it runs
// in (the nearest directory up from the working directory that holds a
// .reel/ or .awf/ directory, found the way git finds .git), the storage
// directory its runs go to, and the project configuration it reads.
//
// Storage is chosen in this order: the --storage flag; $REEL_STORAGE
// (docs/decisions.md §1: the flag and the variable override the default); the
// project's .reel/storage; and, outside any project, a per-user directory,
// $XDG_DATA_HOME/reel/storage (~/.local/share/reel/storage).
//
// Configuration comes from .reel/config.yaml and, for the keys reel shares
// with AWF (inputs, notify, telemetry, and the settings of AWF's plugins
// under plugins), from .awf/config.yaml, or the file
// $AWF_CONFIG_PATH names. Where both files set a key, .reel/config.yaml
// wins, key by key (an input default set in both takes reel's value).
// The prices key (reel's file only) overrides and extends the price table
// internal/pricing ships, for models it lacks or prices that changed.
package project

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/reelhq/reel/internal/pricing"
)

// EnvStorage names the environment variable that sets the storage directory
// when no --storage flag is given.
const EnvStorage = "REEL_STORAGE"

// Project is where a command runs.
type Project struct {
	// Root is the directory holding .reel/ or .awf/, or the working
	// directory when no project was found (Found is then false).
	Root string
	// Found reports whether a .reel/ or .awf/ directory was found.
	Found bool
	// Config is the merged project configuration (never nil).
	Config *Config
}

// Find walks up from wd to the nearest directory holding .reel/ or .awf/
// and reads its configuration. Outside any project, Root is wd and Config
// is what $AWF_CONFIG_PATH names, or empty.
func Find(wd string) (*Project, error) {
	abs, err := filepath.Abs(wd)
	if err != nil {
		return nil, fmt.Errorf("find project from %s: %w", wd, err)
	}
	p := &Project{Root: abs}
	for dir := abs; ; {
		if isDir(filepath.Join(dir, ".reel")) || isDir(filepath.Join(dir, ".awf")) {
			p.Root, p.Found = dir, true
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	cfg, err := LoadConfig(p.Root)
	if err != nil {
		return nil, err
	}
	p.Config = cfg
	return p, nil
}

// Storage picks the storage directory: flag, else $REEL_STORAGE, else the
// project's .reel/storage, else the per-user default.
func (p *Project) Storage(flag string) string {
	dir, _ := p.StorageFrom(flag)
	return dir
}

// StorageFrom is Storage and the rule that chose it: "--storage",
// "$REEL_STORAGE", "project" or "user".
func (p *Project) StorageFrom(flag string) (dir, rule string) {
	if flag != "" {
		return flag, "--storage"
	}
	if env := os.Getenv(EnvStorage); env != "" {
		return env, "$" + EnvStorage
	}
	if p.Found {
		return filepath.Join(p.Root, ".reel", "storage"), "project"
	}
	return UserStorage(), "user"
}

// UserStorage is the storage used outside any project:
// $XDG_DATA_HOME/reel/storage, or ~/.local/share/reel/storage. When no home
// directory is known it falls back to .reel/storage in the working directory.
func UserStorage() string {
	if d := os.Getenv("XDG_DATA_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "reel", "storage")
	}
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		return filepath.Join(".reel", "storage")
	}
	return filepath.Join(home, ".local", "share", "reel", "storage")
}

func isDir(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}

// Prices is the price table of the project: reel's own, with the entries
// of the configuration's prices key over it.
func (p *Project) Prices() *pricing.Table {
	return pricing.Default().With(p.Config.Prices)
}
