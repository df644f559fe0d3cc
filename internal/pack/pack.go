// Package pack decides what a workflow pack is, where packs live and how
// they get there, as AWF has them (its docs/user-guide/workflow-packs.md):
//
//   - The layout: a directory holding manifest.yaml, workflows/NAME.yaml
//     for each workflow the manifest lists, and the prompts/ and scripts/
//     those workflows read, plus state.json once installed (its source
//     and whether it is enabled, in AWF's format).
//   - The manifest's rules: a name matching ^[a-z][a-z0-9-]*$ other than
//     the reserved local, global and env; a semantic version; an
//     awf_version constraint the AWF release reel follows satisfies; a
//     non-empty list of workflow names, each with its file. Names are the
//     guard against path traversal: no name can leave the pack.
//   - The places: the project's .awf/workflow-packs/NAME, else the global
//     ones (awfhome.Dirs.PackDirs); the first directory holding a name
//     wins, so a project's pack shadows a global one.
//   - Installing: from a GitHub release as AWF does it (the releases API,
//     the release's one .tar.gz asset verified against its checksums.txt),
//     from a local directory, or from a local .tar.gz archive; extracted
//     and checked beside the target and moved into place in one rename.
//
// Which workflow a name means (speckit/specify) is package catalog's
// decision; this package knows packs, not names.
package pack

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/Masterminds/semver/v3"
	"gopkg.in/yaml.v3"
)

// Files and directories of a pack.
const (
	ManifestFile = "manifest.yaml"
	StateFile    = "state.json"
	WorkflowsDir = "workflows"
	PromptsDir   = "prompts"
	ScriptsDir   = "scripts"
	// TemplatesDir holds step templates a pack's workflows use (reel's
	// addition: AWF looks for templates in the project and globally only).
	TemplatesDir = "templates"
)

// AWFVersion is the AWF release whose behaviour reel follows; a manifest's
// awf_version constraint is checked against it.
const AWFVersion = "0.11.0"

// maxManifest bounds manifest.yaml (AWF's limit: 1 MiB).
const maxManifest = 1 << 20

// nameRE is the rule for pack and workflow names (AWF's ValidateName).
var nameRE = regexp.MustCompile(`^[a-z][a-z0-9-]*$`)

// Reserved are the names no pack may take: AWF's HTTP API uses them as
// scopes beside pack names (/api/workflows/local/NAME).
var Reserved = []string{"local", "global", "env"}

// ErrNotFound is matched by the error for a pack no directory holds.
var ErrNotFound = errors.New("workflow pack not found")

// CheckName reports whether name is a valid pack or workflow name.
func CheckName(name string) error {
	if !nameRE.MatchString(name) {
		return fmt.Errorf("invalid name %q: must match ^[a-z][a-z0-9-]*$ (lowercase letters, digits and hyphens, starting with a letter)", name)
	}
	return nil
}

// Manifest is a pack's manifest.yaml.
type Manifest struct {
	Name        string            `yaml:"name" json:"name"`
	Version     string            `yaml:"version" json:"version"`
	Description string            `yaml:"description" json:"description,omitempty"`
	Author      string            `yaml:"author" json:"author,omitempty"`
	License     string            `yaml:"license" json:"license,omitempty"`
	AWFVersion  string            `yaml:"awf_version" json:"awf_version"`
	Workflows   []string          `yaml:"workflows" json:"workflows"`
	Plugins     map[string]string `yaml:"plugins" json:"plugins,omitempty"`
}

// ParseManifest reads a manifest's text. Keys it does not know are
// ignored, as AWF ignores them.
func ParseManifest(b []byte) (*Manifest, error) {
	if len(b) == 0 {
		return nil, errors.New("manifest.yaml is empty")
	}
	var m Manifest
	if err := yaml.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("manifest.yaml: %w", err)
	}
	return &m, nil
}

// ReadManifest reads and parses dir/manifest.yaml.
func ReadManifest(dir string) (*Manifest, error) {
	b, err := readLimited(filepath.Join(dir, ManifestFile), maxManifest)
	if err != nil {
		return nil, err
	}
	return ParseManifest(b)
}

// Check applies the manifest's rules to the pack rooted at dir: every
// problem, not only the first, joined in one error.
func (m *Manifest) Check(dir string) error {
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if err := CheckName(m.Name); err != nil {
		add("name: %v", err)
	} else if slices.Contains(Reserved, m.Name) {
		add("name: %q is reserved (local, global and env name scopes beside packs); rename the pack", m.Name)
	}
	if _, err := ParseVersion(m.Version); err != nil {
		add("version: %v", err)
	}
	if m.AWFVersion == "" {
		add("awf_version: missing (a constraint such as \">=0.5.0\")")
	} else if _, err := semver.NewConstraint(m.AWFVersion); err != nil {
		add("awf_version %q: %v", m.AWFVersion, err)
	}
	if len(m.Workflows) == 0 {
		add("workflows: the list is empty")
	}
	seen := map[string]bool{}
	for _, w := range m.Workflows {
		if err := CheckName(w); err != nil {
			add("workflows: %v", err)
			continue
		}
		if seen[w] {
			add("workflows: %q is listed twice", w)
		}
		seen[w] = true
		p := filepath.Join(dir, WorkflowsDir, w+".yaml")
		fi, err := os.Lstat(p)
		switch {
		case err != nil:
			add("workflows: %s not found", filepath.Join(WorkflowsDir, w+".yaml"))
		case !fi.Mode().IsRegular():
			add("workflows: %s is not a regular file", filepath.Join(WorkflowsDir, w+".yaml"))
		}
	}
	return errors.Join(errs...)
}

// CheckCompatible reports whether the AWF release reel follows satisfies
// the manifest's awf_version constraint, as AWF checks its own version
// when it installs a pack.
func (m *Manifest) CheckCompatible() error {
	c, err := semver.NewConstraint(m.AWFVersion)
	if err != nil {
		return fmt.Errorf("awf_version %q: %w", m.AWFVersion, err)
	}
	if !c.Check(semver.MustParse(AWFVersion)) {
		return fmt.Errorf("the pack needs AWF %s; reel follows AWF %s", m.AWFVersion, AWFVersion)
	}
	return nil
}

// ParseVersion parses a semantic version, with or without a leading v,
// as AWF's registry does (three numbers required).
func ParseVersion(s string) (*semver.Version, error) {
	if len(s) > 0 && s[0] == 'v' {
		s = s[1:]
	}
	v, err := semver.StrictNewVersion(s)
	if err != nil {
		return nil, fmt.Errorf("%q is not a semantic version (MAJOR.MINOR.PATCH)", s)
	}
	return v, nil
}

// Pack is an installed workflow pack.
type Pack struct {
	// Name is the pack's directory name, which is also its manifest's
	// name and the namespace of its workflows (NAME/workflow).
	Name string
	// Dir is the pack's root.
	Dir      string
	Manifest *Manifest
	// State is state.json; a pack without one (copied by hand) is
	// enabled and has no recorded source.
	State State
}

// Open reads the pack rooted at dir and checks it.
func Open(dir string) (*Pack, error) {
	m, err := ReadManifest(dir)
	if err != nil {
		return nil, fmt.Errorf("workflow pack %s: %w", dir, err)
	}
	if err := m.Check(dir); err != nil {
		return nil, fmt.Errorf("workflow pack %s: invalid manifest: %w", dir, err)
	}
	if base := filepath.Base(dir); base != m.Name {
		return nil, fmt.Errorf("workflow pack %s: the manifest names it %q, its directory %q", dir, m.Name, base)
	}
	st, err := ReadState(dir)
	if err != nil {
		return nil, fmt.Errorf("workflow pack %s: %w", dir, err)
	}
	return &Pack{Name: m.Name, Dir: dir, Manifest: m, State: st}, nil
}

// Workflow returns the file of the workflow the pack publishes under
// name: one its manifest lists.
func (p *Pack) Workflow(name string) (string, error) {
	if err := CheckName(name); err != nil {
		return "", fmt.Errorf("workflow pack %s: workflow %w", p.Name, err)
	}
	if !slices.Contains(p.Manifest.Workflows, name) {
		return "", fmt.Errorf("workflow pack %s has no workflow %q (its manifest lists %s)", p.Name, name, quoteList(p.Manifest.Workflows))
	}
	return filepath.Join(p.Dir, WorkflowsDir, name+".yaml"), nil
}

// Problem is a directory under a packs directory that is not a valid pack.
type Problem struct {
	Dir string
	Err error
}

// Discover lists the packs of the directories dirs, in order of
// precedence: a name found in an earlier directory shadows the same name
// later. Missing directories are no packs; a subdirectory that is not a
// valid pack is reported in problems, not returned.
func Discover(dirs []string) (packs []*Pack, problems []Problem) {
	seen := map[string]bool{}
	for _, d := range dirs {
		entries, err := os.ReadDir(d)
		if err != nil {
			if !errors.Is(err, os.ErrNotExist) {
				problems = append(problems, Problem{d, err})
			}
			continue
		}
		sort.Slice(entries, func(i, j int) bool { return entries[i].Name() < entries[j].Name() })
		for _, e := range entries {
			if !e.IsDir() || e.Name()[0] == '.' || seen[e.Name()] {
				continue
			}
			p, err := Open(filepath.Join(d, e.Name()))
			if err != nil {
				problems = append(problems, Problem{filepath.Join(d, e.Name()), err})
				continue
			}
			seen[p.Name] = true
			packs = append(packs, p)
		}
	}
	return packs, problems
}

// Find returns the pack called name from the first of dirs holding it.
// The name is checked before any path is built from it.
func Find(name string, dirs []string) (*Pack, error) {
	if err := CheckName(name); err != nil {
		return nil, fmt.Errorf("workflow pack: %w", err)
	}
	for _, d := range dirs {
		dir := filepath.Join(d, name)
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			continue
		}
		return Open(dir)
	}
	return nil, fmt.Errorf("%w: %q (looked in %s)", ErrNotFound, name, quoteList(dirs))
}

// readLimited reads a file of at most limit bytes.
func readLimited(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%s is larger than the %d byte limit", path, limit)
	}
	return b, nil
}

func quoteList(xs []string) string {
	if len(xs) == 0 {
		return "none"
	}
	return strings.Join(xs, ", ")
}
