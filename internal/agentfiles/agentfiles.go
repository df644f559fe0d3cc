// Package agentfiles finds the skills and roles that agent steps name, the
// way AWF lays them out, and renders them into prompts.
//
// A skill is a directory holding SKILL.md (agentskills.io): its Markdown
// body, front matter stripped, goes ahead of the step's prompt in a
// <skill_content> block that also names the directory and lists the other
// files in it. A role is a directory holding AGENTS.md (agents.md): its
// body becomes the system prompt, ahead of the step's own system_prompt.
//
// Names are looked up in order, first match wins. Skills: $AWF_SKILLS_PATH
// (a path list that replaces all the others), then <project>/.awf/skills,
// <project>/.agents/skills, <project>/.claude/skills,
// AWF's global skills directory ($AWF_CONFIG_HOME/skills, else
// $XDG_CONFIG_HOME/awf/skills, default ~/.config/awf/skills),
// ~/.agents/skills, ~/.claude/skills. Roles: $AWF_ROLES_PATH, then
// <project>/.awf/roles, <project>/.agents/roles, $XDG_CONFIG_HOME/awf/roles,
// ~/.agents/roles. A reference holding a path separator or starting with
// ".", "~" or "/" is a path instead, relative to the workflow file's
// directory ("~/" is the home directory).
package agentfiles

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/reelhq/reel/internal/awfhome"
)

// File names inside a skill or role directory.
const (
	SkillFile = "SKILL.md"
	RoleFile  = "AGENTS.md"
)

// maxFileSize bounds what is read of a SKILL.md or AGENTS.md: they go into
// every prompt, and a file this large is the wrong file.
const maxFileSize = 4 << 20

// ErrNotFound is matched by the error for a skill or role no search
// directory holds.
var ErrNotFound = errors.New("not found")

// Finder looks skills and roles up for one project.
type Finder struct {
	// ProjectDir is the project root holding .awf/, .agents/ and .claude/;
	// "" leaves the project directories out.
	ProjectDir string
	// Env supplies AWF_SKILLS_PATH, AWF_ROLES_PATH, XDG_CONFIG_HOME and
	// HOME; nil means the process environment.
	Env []string
}

func (f *Finder) getenv(name string) string {
	if f.Env == nil {
		return os.Getenv(name)
	}
	v := ""
	for _, kv := range f.Env {
		if k, val, ok := strings.Cut(kv, "="); ok && k == name {
			v = val
		}
	}
	return v
}

func (f *Finder) home() string {
	if h := f.getenv("HOME"); h != "" {
		return h
	}
	h, _ := os.UserHomeDir()
	return h
}

// dirs returns the search directories of kind ("skills" or "roles").
func (f *Finder) dirs(kind, override string, project, home []string) []string {
	if v := f.getenv(override); v != "" {
		var out []string
		for _, d := range filepath.SplitList(v) {
			if d != "" {
				out = append(out, f.expand(d, ""))
			}
		}
		return out
	}
	var out []string
	if f.ProjectDir != "" {
		for _, p := range project {
			out = append(out, filepath.Join(f.ProjectDir, p, kind))
		}
	}
	h := f.home()
	if cfg := awfhome.FromEnv(f.getenv).Config; cfg != "" {
		out = append(out, filepath.Join(cfg, kind))
	}
	if h != "" {
		for _, p := range home {
			out = append(out, filepath.Join(h, p, kind))
		}
	}
	return out
}

// SkillDirs lists where skill names are looked up, in order.
func (f *Finder) SkillDirs() []string {
	return f.dirs("skills", "AWF_SKILLS_PATH", []string{".awf", ".agents", ".claude"}, []string{".agents", ".claude"})
}

// RoleDirs lists where role names are looked up, in order.
func (f *Finder) RoleDirs() []string {
	return f.dirs("roles", "AWF_ROLES_PATH", []string{".awf", ".agents"}, []string{".agents"})
}

// IsPath reports whether a skill or role reference is a path rather than a
// name.
func IsPath(ref string) bool {
	return ref != "" && (strings.ContainsAny(ref, `/\`) || ref[0] == '.' || ref[0] == '~')
}

// expand resolves a path reference against base: "~" and "~/…" are the
// home directory, a relative path is taken from base.
func (f *Finder) expand(ref, base string) string {
	switch {
	case ref == "~":
		return f.home()
	case strings.HasPrefix(ref, "~/"):
		return filepath.Join(f.home(), ref[2:])
	case filepath.IsAbs(ref) || base == "":
		return filepath.Clean(ref)
	}
	return filepath.Join(base, ref)
}

// NotFoundError says where a skill or role was looked for.
type NotFoundError struct {
	Kind     string // "skill" or "role"
	Name     string
	Searched []string
	// Missing names a directory that exists but lacks its SKILL.md or
	// AGENTS.md, the likely mistake.
	Missing string
}

func (e *NotFoundError) Error() string {
	file := SkillFile
	if e.Kind == "role" {
		file = RoleFile
	}
	if e.Missing != "" {
		return fmt.Sprintf("%s %q: directory %s has no %s", e.Kind, e.Name, e.Missing, file)
	}
	if len(e.Searched) == 0 {
		return fmt.Sprintf("%s %q not found (no search directories)", e.Kind, e.Name)
	}
	return fmt.Sprintf("%s %q not found (looked for %s/%s in %s)", e.Kind, e.Name, e.Name, file, strings.Join(e.Searched, ", "))
}

func (e *NotFoundError) Unwrap() error { return ErrNotFound }

// present checks that the reference ref (a path) reaches its file,
// naming the directory when it exists without it.
func present(kind, ref, file string) error {
	if fi, err := os.Stat(file); err == nil && fi.Mode().IsRegular() {
		return nil
	}
	dir := filepath.Dir(file)
	nf := &NotFoundError{Kind: kind, Name: ref, Searched: []string{dir}}
	if fi, err := os.Stat(dir); err == nil && fi.IsDir() {
		nf.Missing = dir
	}
	return nf
}

// find returns the first directory dir/name holding file.
func find(kind, name, file string, dirs []string) (string, error) {
	if name == "" || strings.ContainsAny(name, `/\`) || strings.Contains(name, "..") {
		return "", fmt.Errorf("%s name %q: a name must not be empty nor hold a path separator or \"..\" (write a path starting with ./ for a directory)", kind, name)
	}
	missing := ""
	for _, d := range dirs {
		dir := filepath.Join(d, name)
		if fi, err := os.Stat(filepath.Join(dir, file)); err == nil && fi.Mode().IsRegular() {
			return dir, nil
		}
		if fi, err := os.Stat(dir); err == nil && fi.IsDir() && missing == "" {
			missing = dir
		}
	}
	return "", &NotFoundError{Kind: kind, Name: name, Searched: dirs, Missing: missing}
}

// readBody reads path and strips its front matter.
func readBody(path string) (string, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	if fi.Size() > maxFileSize {
		return "", fmt.Errorf("%s: %d bytes exceeds the %d byte limit", path, fi.Size(), maxFileSize)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(StripFrontMatter(string(b))), nil
}

// StripFrontMatter removes a leading YAML front matter block (between
// "---" lines) and returns the body, trimmed; text without one is returned
// as it is.
func StripFrontMatter(s string) string {
	t := strings.ReplaceAll(s, "\r\n", "\n")
	rest, ok := strings.CutPrefix(t, "---\n")
	if !ok {
		return s
	}
	if _, body, found := strings.Cut(rest, "\n---\n"); found {
		return strings.TrimSpace(body)
	}
	if strings.HasSuffix(rest, "\n---") || rest == "---" {
		return "" // front matter and nothing else
	}
	return s
}

// Skill is one loaded skill.
type Skill struct {
	Name string
	// Dir is the skill directory, absolute.
	Dir     string
	Content string
	// Resources are the other files of the directory, relative to it and
	// sorted (.git and node_modules left out, at most four levels deep).
	Resources []string
}

// Skill loads the skill called name from the first search directory that
// has it.
func (f *Finder) Skill(name string) (*Skill, error) {
	dir, err := find("skill", name, SkillFile, f.SkillDirs())
	if err != nil {
		return nil, err
	}
	return loadSkill(dir)
}

// SkillAt loads the skill in directory ref (absolute, "~/…", or relative
// to base, the workflow file's directory).
func (f *Finder) SkillAt(ref, base string) (*Skill, error) {
	dir := f.expand(ref, base)
	if err := present("skill", ref, filepath.Join(dir, SkillFile)); err != nil {
		return nil, err
	}
	return loadSkill(dir)
}

func loadSkill(dir string) (*Skill, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("skill %s: %w", dir, err)
	}
	content, err := readBody(filepath.Join(abs, SkillFile))
	if err != nil {
		return nil, fmt.Errorf("skill %s: %w", filepath.Base(abs), err)
	}
	return &Skill{Name: filepath.Base(abs), Dir: abs, Content: content, Resources: resources(abs)}, nil
}

// resources lists the files of a skill directory besides SKILL.md.
func resources(dir string) []string {
	var out []string
	_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // an unreadable corner does not hide the rest
		}
		rel, rerr := filepath.Rel(dir, path)
		if rerr != nil || rel == "." {
			return nil
		}
		if d.IsDir() {
			if d.Name() == ".git" || d.Name() == "node_modules" || strings.Count(rel, string(filepath.Separator)) >= 4 {
				return filepath.SkipDir
			}
			return nil
		}
		if rel != SkillFile {
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	slices.Sort(out)
	return out
}

// Render returns the skill as the block that goes ahead of a prompt.
func (s *Skill) Render() string {
	var b strings.Builder
	fmt.Fprintf(&b, "<skill_content name=%q>\n", s.Name)
	b.WriteString(s.Content)
	fmt.Fprintf(&b, "\n\nSkill directory: %s\nRelative paths in this skill are relative to the skill directory.", s.Dir)
	if len(s.Resources) > 0 {
		b.WriteString("\n\n<skill_resources>\n")
		for _, r := range s.Resources {
			fmt.Fprintf(&b, "<file>%s</file>\n", r)
		}
		b.WriteString("</skill_resources>")
	}
	b.WriteString("\n</skill_content>")
	return b.String()
}

// WithSkills returns prompt preceded by the rendered skills, in order,
// separated by blank lines; prompt itself when there are none.
func WithSkills(skills []*Skill, prompt string) string {
	if len(skills) == 0 {
		return prompt
	}
	parts := make([]string, 0, len(skills)+1)
	for _, s := range skills {
		parts = append(parts, s.Render())
	}
	return strings.Join(append(parts, prompt), "\n\n")
}

// Role is one loaded role.
type Role struct {
	Name string
	// File is the AGENTS.md read, absolute.
	File    string
	Content string
}

// Role loads the role ref: a name looked up in the role directories, or a
// path (to the directory or to its AGENTS.md) relative to base.
func (f *Finder) Role(ref, base string) (*Role, error) {
	if !IsPath(ref) {
		dir, err := find("role", ref, RoleFile, f.RoleDirs())
		if err != nil {
			return nil, err
		}
		return loadRole(filepath.Join(dir, RoleFile))
	}
	p := f.expand(ref, base)
	file := p
	if filepath.Base(p) != RoleFile {
		file = filepath.Join(p, RoleFile)
	}
	if err := present("role", ref, file); err != nil {
		return nil, err
	}
	return loadRole(file)
}

func loadRole(file string) (*Role, error) {
	abs, err := filepath.Abs(file)
	if err != nil {
		return nil, fmt.Errorf("role %s: %w", file, err)
	}
	content, err := readBody(abs)
	if err != nil {
		return nil, fmt.Errorf("role %s: %w", filepath.Base(filepath.Dir(abs)), err)
	}
	return &Role{Name: filepath.Base(filepath.Dir(abs)), File: abs, Content: content}, nil
}

// SystemPrompt composes a step's system prompt: the role's content, then
// the step's own system_prompt, separated by a blank line; either may be
// empty.
func SystemPrompt(role *Role, inline string) string {
	if role == nil || role.Content == "" {
		return inline
	}
	if inline == "" {
		return role.Content
	}
	return role.Content + "\n\n" + inline
}
