package plugin

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/reelhq/reel/internal/safefile"
)

// StateFile is the name of AWF's plugin state file in its plugins
// directory ($XDG_DATA_HOME/awf/plugins/plugins.json): whether each plugin
// is enabled, its configuration, where it was installed from and the
// SHA-256 of its binary. reel reads and writes the same file, so that
// awf plugin disable and reel plugin disable mean the same.
const StateFile = "plugins.json"

// ProjectFile is a project's plugin file (.awf/plugins.yaml): per plugin
// name, enabled: and config: override the state file for runs in that
// project.
const ProjectFile = "plugins.yaml"

// Entry is one plugin's state, in AWF's JSON shape.
type Entry struct {
	Enabled    bool           `json:"enabled"`
	Config     map[string]any `json:"config,omitempty"`
	DisabledAt int64          `json:"disabled_at,omitempty"`
	SourceData map[string]any `json:"source_data,omitempty"`
	Checksum   string         `json:"checksum,omitempty"`
	ChecksumAt int64          `json:"checksum_at,omitempty"`
}

// Source is where an installed plugin came from (Entry.SourceData).
type Source struct {
	// Repository is owner/repo for a GitHub install, else the local
	// directory or archive it was installed from.
	Repository  string    `json:"repository"`
	Version     string    `json:"version"`
	InstalledAt time.Time `json:"installed_at"`
	UpdatedAt   time.Time `json:"updated_at"`
}

// State is the plugin state file and the project's overrides.
type State struct {
	path    string
	entries map[string]*Entry
	project map[string]projectEntry
	// projectPath is the project file read ("" when there is none).
	projectPath string
}

type projectEntry struct {
	Enabled *bool          `yaml:"enabled"`
	Config  map[string]any `yaml:"config"`
	line    int
}

// LoadState reads the state file at path (missing: every plugin enabled,
// nothing stored) and the project file projectFile ("" for none).
func LoadState(path, projectFile string) (*State, error) {
	s := &State{path: path, entries: map[string]*Entry{}, project: map[string]projectEntry{}}
	b, err := os.ReadFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return nil, fmt.Errorf("read plugin state: %w", err)
	case len(b) > 0:
		if err := json.Unmarshal(b, &s.entries); err != nil {
			return nil, fmt.Errorf("plugin state %s: %w", path, err)
		}
		for name, e := range s.entries {
			if e == nil {
				delete(s.entries, name)
			}
		}
	}
	if projectFile == "" {
		return s, nil
	}
	b, err = os.ReadFile(projectFile)
	if errors.Is(err, os.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read project plugins: %w", err)
	}
	if err := s.parseProject(b, projectFile); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *State) parseProject(b []byte, path string) error {
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if len(doc.Content) == 0 || doc.Content[0].Tag == "!!null" {
		s.projectPath = path
		return nil
	}
	top := doc.Content[0]
	if top.Kind != yaml.MappingNode {
		return fmt.Errorf("%s:%d: want a mapping of plugin names to {enabled, config}", path, top.Line)
	}
	for i := 0; i+1 < len(top.Content); i += 2 {
		k, v := top.Content[i], top.Content[i+1]
		var pe projectEntry
		if v.Kind != yaml.MappingNode {
			return fmt.Errorf("%s:%d: plugin %s: want a mapping with enabled and config", path, v.Line, k.Value)
		}
		for j := 0; j+1 < len(v.Content); j += 2 {
			if key := v.Content[j].Value; key != "enabled" && key != "config" {
				return fmt.Errorf("%s:%d: plugin %s: unknown key %q (known: enabled, config)", path, v.Content[j].Line, k.Value, key)
			}
		}
		if err := v.Decode(&pe); err != nil {
			return fmt.Errorf("%s:%d: plugin %s: %v", path, v.Line, k.Value, err)
		}
		pe.line = k.Line
		s.project[k.Value] = pe
	}
	s.projectPath = path
	return nil
}

// Path is the state file's path.
func (s *State) Path() string { return s.path }

// Enabled reports whether the plugin is enabled: by the project file when
// it says, else by the state file, else yes.
func (s *State) Enabled(name string) bool {
	if pe, ok := s.project[name]; ok && pe.Enabled != nil {
		return *pe.Enabled
	}
	if e, ok := s.entries[name]; ok {
		return e.Enabled
	}
	return true
}

// SetEnabled records the plugin enabled or disabled in the state file. It
// refuses when the project file decides instead.
func (s *State) SetEnabled(name string, on bool) error {
	if pe, ok := s.project[name]; ok && pe.Enabled != nil {
		return fmt.Errorf("plugin %s is enabled: %v by %s:%d; change it there", name, *pe.Enabled, s.projectPath, pe.line)
	}
	e := s.entry(name)
	e.Enabled, e.DisabledAt = on, 0
	if !on {
		e.DisabledAt = time.Now().Unix()
	}
	return nil
}

// Config is the configuration the state file and the project file give
// the plugin, the project file's keys winning.
func (s *State) Config(name string) map[string]any {
	out := map[string]any{}
	if e, ok := s.entries[name]; ok {
		for k, v := range e.Config {
			out[k] = v
		}
	}
	for k, v := range s.project[name].Config {
		out[k] = v
	}
	return out
}

// Checksum is the stored hex SHA-256 of the plugin's binary, "" when none.
func (s *State) Checksum(name string) string {
	if e, ok := s.entries[name]; ok {
		return e.Checksum
	}
	return ""
}

// SetChecksum stores the binary's checksum.
func (s *State) SetChecksum(name, sum string) {
	e := s.entry(name)
	e.Checksum, e.ChecksumAt = sum, time.Now().Unix()
}

// Source is where the plugin was installed from (nil when unknown).
func (s *State) Source(name string) *Source {
	e, ok := s.entries[name]
	if !ok || e.SourceData == nil {
		return nil
	}
	b, err := json.Marshal(e.SourceData)
	if err != nil {
		return nil
	}
	var src Source
	if json.Unmarshal(b, &src) != nil || src.Repository == "" {
		return nil
	}
	return &src
}

// SetSource records where the plugin was installed from.
func (s *State) SetSource(name string, src Source) {
	b, _ := json.Marshal(src)
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	s.entry(name).SourceData = m
}

// Remove forgets the plugin. keepConfig keeps its configuration (and its
// enabled state) for a later reinstall.
func (s *State) Remove(name string, keepConfig bool) {
	e, ok := s.entries[name]
	if !ok {
		return
	}
	if keepConfig && (len(e.Config) > 0 || !e.Enabled) {
		e.SourceData, e.Checksum, e.ChecksumAt = nil, "", 0
		return
	}
	delete(s.entries, name)
}

func (s *State) entry(name string) *Entry {
	e, ok := s.entries[name]
	if !ok {
		// AWF's new entries are enabled; an entry written without the
		// key would read as disabled, so it is always written.
		e = &Entry{Enabled: true}
		s.entries[name] = e
	}
	return e
}

// Save writes the state file atomically.
func (s *State) Save() error {
	b, err := json.MarshalIndent(s.entries, "", "  ")
	if err != nil {
		return fmt.Errorf("encode plugin state: %w", err)
	}
	if err := safefile.WriteFile(s.path, b); err != nil {
		return fmt.Errorf("save plugin state: %w", err)
	}
	return nil
}

// FileSHA256 is the hex SHA-256 of the file at path (a symlink followed).
func FileSHA256(path string) (string, error) {
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	}
	f, err := safefile.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("read %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
