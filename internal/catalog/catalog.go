// Package catalog decides which workflow a name means and lists every
// workflow reel can run from a project, each with its scope, in AWF's
// order of precedence:
//
//	env     the directory $AWF_WORKFLOWS_PATH names
//	local   the project's .reel/workflows, then .awf/workflows
//	global  AWF's global workflows directory ($AWF_CONFIG_HOME, else
//	        $XDG_CONFIG_HOME/awf, else ~/.config/awf; then workflows/)
//	pack    PACK/WORKFLOW: a workflow an installed pack's manifest lists,
//	        the pack found in the project's .awf/workflow-packs before the
//	        global pack directories (awfhome.Dirs.PackDirs)
//
// A name found in an earlier place shadows it in later ones. A call_workflow
// inside a pack looks in its own pack first. A workflow file inside an
// installed pack is that pack's workflow however it was named (by
// PACK/WORKFLOW, by path, or by a resumed run's record), so its prompts,
// scripts and templates resolve in the pack.
package catalog

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/reelhq/reel/internal/awfhome"
	"github.com/reelhq/reel/internal/pack"
	"github.com/reelhq/reel/internal/workflow"
)

// Scopes: where a workflow comes from.
const (
	ScopeEnv    = "env"
	ScopeLocal  = "local"
	ScopeGlobal = "global"
	ScopePack   = "pack"
	// ScopeFile is a workflow named by a path outside every place above.
	ScopeFile = "file"
)

// Catalog finds workflows for one project and environment.
type Catalog struct {
	// ProjectDir is the project root ("" outside a project).
	ProjectDir string
	// Getenv reads the environment (os.Getenv when nil).
	Getenv func(string) string
}

func (c *Catalog) getenv(k string) string {
	if c.Getenv != nil {
		return c.Getenv(k)
	}
	return os.Getenv(k)
}

// Dir is a directory workflows are looked up in, and its scope.
type Dir struct {
	Path  string `json:"path"`
	Scope string `json:"scope"`
}

// Dirs lists the directories a workflow name is looked up in, in order.
func (c *Catalog) Dirs() []Dir {
	return c.places(awfhome.EnvWorkflows, "workflows", awfhome.FromEnv(c.getenv).Workflows())
}

// PromptDirs lists where an --input NAME=@prompts/PATH value is looked
// for, in order: $AWF_PROMPTS_PATH, the project's .reel/prompts and
// .awf/prompts, AWF's global prompts directory.
func (c *Catalog) PromptDirs() []Dir {
	return c.places(awfhome.EnvPrompts, "prompts", awfhome.FromEnv(c.getenv).Prompts())
}

// ScriptDirs and TemplateDirs list where a project workflow's
// {{.awf.scripts_dir}}/X and use_template resolve, in order (a pack's
// workflow looks in its pack first: workflow.FileSearch).
func (c *Catalog) ScriptDirs() []Dir {
	return c.places("", "scripts", awfhome.FromEnv(c.getenv).Scripts())
}

// TemplateDirs: see ScriptDirs.
func (c *Catalog) TemplateDirs() []Dir {
	return c.places("", "templates", awfhome.FromEnv(c.getenv).Templates())
}

// places lists the directories of one kind of file in order: the one the
// variable env names (when set), the project's .reel/KIND and
// .awf/KIND, then the global one.
func (c *Catalog) places(env, kind, global string) []Dir {
	var out []Dir
	if d := c.getenv(env); env != "" && d != "" {
		out = append(out, Dir{abs(d), ScopeEnv})
	}
	if c.ProjectDir != "" {
		out = append(out, Dir{filepath.Join(c.ProjectDir, ".reel", kind), ScopeLocal}, Dir{filepath.Join(c.ProjectDir, ".awf", kind), ScopeLocal})
	}
	if global != "" {
		out = append(out, Dir{global, ScopeGlobal})
	}
	return out
}

// LocalPacks is the project's packs directory, where `workflow install`
// puts a pack ("" outside a project).
func (c *Catalog) LocalPacks() string {
	if c.ProjectDir == "" {
		return ""
	}
	return filepath.Join(c.ProjectDir, ".awf", "workflow-packs")
}

// GlobalPacks is where `workflow install --global` puts a pack.
func (c *Catalog) GlobalPacks() string { return awfhome.FromEnv(c.getenv).Packs() }

// PackDirs lists the directories packs are looked up in, in order: the
// project's, then the global ones.
func (c *Catalog) PackDirs() []string {
	var out []string
	if l := c.LocalPacks(); l != "" {
		out = append(out, l)
	}
	for _, d := range awfhome.FromEnv(c.getenv).PackDirs() {
		if !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	return out
}

// Ref is a workflow a name resolved to.
type Ref struct {
	// File is the workflow file.
	File string
	// Scope is where it was found (Scope* constants).
	Scope string
	// Pack is the pack it belongs to (nil for other scopes).
	Pack *workflow.Pack
}

// NotFoundError is a name that resolved to no workflow. It matches
// workflow.ErrNotFound.
type NotFoundError struct {
	Ref string
	// Looked lists the directories and packs tried, in order.
	Looked []string
	// PackErr says why the pack part of a PACK/WORKFLOW name failed.
	PackErr error
}

func (e *NotFoundError) Error() string {
	msg := fmt.Sprintf("workflow not found: %q", e.Ref)
	if e.PackErr != nil && !errors.Is(e.PackErr, pack.ErrNotFound) {
		return msg + ": " + e.PackErr.Error()
	}
	return msg + " (looked in " + strings.Join(e.Looked, ", ") + ")"
}

func (e *NotFoundError) Unwrap() error { return workflow.ErrNotFound }

// Find resolves ref as `reel run REF` does: a path to a file (as given,
// or with .yaml or .yml added), then PACK/WORKFLOW, then a name in Dirs.
func (c *Catalog) Find(ref string) (Ref, error) {
	return c.find(ref, nil)
}

// FindFrom resolves ref as a call_workflow in from names it: in from's
// own pack first, then PACK/WORKFLOW, then $AWF_WORKFLOWS_PATH, then
// beside from's file, then the project's and the global workflows.
func (c *Catalog) FindFrom(ref string, from *workflow.Workflow) (Ref, error) {
	if from == nil {
		return c.find(ref, nil)
	}
	return c.find(ref, from)
}

func (c *Catalog) find(ref string, from *workflow.Workflow) (Ref, error) {
	nf := &NotFoundError{Ref: ref}
	if strings.TrimSpace(ref) == "" {
		return Ref{}, fmt.Errorf("%w: empty name", workflow.ErrNotFound)
	}
	tryFile := func(dir, p string) (Ref, bool) {
		if !slices.Contains(nf.Looked, dir) {
			nf.Looked = append(nf.Looked, dir)
		}
		for _, cand := range withExt(p) {
			if fi, err := os.Stat(cand); err == nil && fi.Mode().IsRegular() {
				return c.refOf(cand), true
			}
		}
		return Ref{}, false
	}
	if filepath.IsAbs(ref) {
		if r, ok := tryFile(ref, ref); ok {
			return r, nil
		}
		return Ref{}, nf
	}
	if from == nil {
		if r, ok := tryFile("the working directory", ref); ok {
			return r, nil
		}
	}
	if from != nil && from.Pack != nil && !strings.Contains(ref, "/") {
		if p, err := pack.Open(from.Pack.Dir); err == nil {
			if f, err := p.Workflow(ref); err == nil {
				return Ref{File: f, Scope: ScopePack, Pack: &workflow.Pack{Name: p.Name, Dir: p.Dir}}, nil
			}
		}
		nf.Looked = append(nf.Looked, "pack "+from.Pack.Name)
	}
	if name, wf, ok := strings.Cut(ref, "/"); ok {
		p, err := pack.Find(name, c.PackDirs())
		if err == nil && !p.State.Enabled {
			nf.PackErr = fmt.Errorf("workflow pack %s is disabled (its %s says enabled: false)", p.Name, pack.StateFile)
			return Ref{}, nf
		}
		if err == nil {
			f, err := p.Workflow(wf)
			if err != nil {
				nf.PackErr = err
				return Ref{}, nf
			}
			return Ref{File: f, Scope: ScopePack, Pack: &workflow.Pack{Name: p.Name, Dir: p.Dir}}, nil
		}
		// not a pack: maybe a workflow in a subdirectory
		nf.PackErr = err
		nf.Looked = append(nf.Looked, "pack "+name)
	}
	dirs := c.Dirs()
	if from != nil && from.File != "" {
		beside := Dir{filepath.Dir(from.File), ""}
		at := 0
		if len(dirs) > 0 && dirs[0].Scope == ScopeEnv {
			at = 1
		}
		dirs = slices.Insert(dirs, at, beside)
	}
	for _, d := range dirs {
		if r, ok := tryFile(d.Path, filepath.Join(d.Path, ref)); ok {
			return r, nil
		}
	}
	return Ref{}, nf
}

// withExt lists p, and p.yaml and p.yml when p has neither extension.
func withExt(p string) []string {
	if ext := filepath.Ext(p); ext == ".yaml" || ext == ".yml" {
		return []string{p}
	}
	return []string{p, p + ".yaml", p + ".yml"}
}

// refOf is the reference of a workflow file (kept as given): its scope,
// and its pack when it lies in an installed pack's workflows/.
func (c *Catalog) refOf(file string) Ref {
	if p := c.PackOf(file); p != nil {
		return Ref{File: file, Scope: ScopePack, Pack: p}
	}
	dir := filepath.Dir(abs(file))
	for _, d := range c.Dirs() {
		if dir == d.Path {
			return Ref{File: file, Scope: d.Scope}
		}
	}
	return Ref{File: file, Scope: ScopeFile}
}

// PackOf returns the pack a workflow file belongs to: a file
// PACKS/NAME/workflows/WORKFLOW.yaml of one of PackDirs whose NAME is a
// valid pack. It returns nil for any other file.
func (c *Catalog) PackOf(file string) *workflow.Pack {
	file = abs(file)
	wfDir := filepath.Dir(file)
	if filepath.Base(wfDir) != pack.WorkflowsDir {
		return nil
	}
	root := filepath.Dir(wfDir)
	if !slices.Contains(c.PackDirs(), filepath.Dir(root)) {
		return nil
	}
	p, err := pack.Open(root)
	if err != nil {
		return nil
	}
	return &workflow.Pack{Name: p.Name, Dir: p.Dir}
}

// Load loads the workflow r refers to with opts, in its pack, its
// call_workflow targets looked up as FindFrom will find them at run time.
func (c *Catalog) Load(r Ref, opts workflow.Options) (*workflow.Workflow, error) {
	opts.Pack = r.Pack
	if opts.FindWorkflow == nil {
		opts.FindWorkflow = c.findFile
	}
	return workflow.Load(r.File, opts)
}

// findFile is FindFrom as workflow.Options.FindWorkflow wants it.
func (c *Catalog) findFile(ref string, from *workflow.Workflow) (string, error) {
	r, err := c.FindFrom(ref, from)
	return r.File, err
}

// Options returns opts set to check call_workflow targets against the
// catalog.
func (c *Catalog) Options(opts workflow.Options) workflow.Options {
	opts.FindWorkflow = c.findFile
	if opts.ProjectDir == "" {
		opts.ProjectDir = c.ProjectDir
	}
	return opts
}

// Entry is one workflow reel can run here.
type Entry struct {
	// Name is what `reel run` takes: NAME, or PACK/WORKFLOW.
	Name  string `json:"name"`
	Scope string `json:"scope"`
	// Pack and Version are the pack's name and version (pack scope).
	Pack    string `json:"pack,omitempty"`
	Version string `json:"version,omitempty"`
	File    string `json:"file"`
	// ShadowedBy is the file `reel run NAME` picks instead, when another
	// place holds the same name first.
	ShadowedBy string `json:"shadowed_by,omitempty"`
}

// Problem is a pack that could not be read while listing.
type Problem = pack.Problem

// List returns every workflow of Dirs and of the enabled installed packs,
// in lookup order (shadowed ones included, marked), and the packs that
// could not be read. A workflows directory that cannot be read is an
// error.
func (c *Catalog) List() ([]Entry, []Problem, error) {
	out, err := ListDirs(c.Dirs())
	if err != nil {
		return nil, nil, err
	}
	packs, probs := pack.Discover(c.PackDirs())
	for _, p := range packs {
		if !p.State.Enabled {
			continue
		}
		names := slices.Clone(p.Manifest.Workflows)
		sort.Strings(names)
		for _, w := range names {
			f, _ := p.Workflow(w)
			out = append(out, Entry{Name: p.Name + "/" + w, Scope: ScopePack, Pack: p.Name, Version: p.Manifest.Version, File: f})
		}
	}
	return out, probs, nil
}

// ListDirs lists the workflow files (*.yaml, *.yml) of dirs, in order; a
// name an earlier directory holds is marked shadowed in later ones.
// Missing directories hold nothing; one that cannot be read is an error.
func ListDirs(dirs []Dir) ([]Entry, error) {
	var out []Entry
	first := map[string]string{}
	for _, d := range dirs {
		entries, err := os.ReadDir(d.Path)
		if err != nil {
			if !errors.Is(err, os.ErrNotExist) {
				return nil, fmt.Errorf("list workflows in %s: %w", d.Path, err)
			}
			continue
		}
		sort.Slice(entries, func(i, j int) bool { return entries[i].Name() < entries[j].Name() })
		for _, e := range entries {
			ext := filepath.Ext(e.Name())
			if e.IsDir() || ext != ".yaml" && ext != ".yml" {
				continue
			}
			en := Entry{Name: strings.TrimSuffix(e.Name(), ext), Scope: d.Scope, File: filepath.Join(d.Path, e.Name())}
			if prev, dup := first[en.Name]; dup {
				en.ShadowedBy = prev
			} else {
				first[en.Name] = en.File
			}
			out = append(out, en)
		}
	}
	return out, nil
}

func abs(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}

// PromptFile is a prompt file @prompts/NAME reads.
type PromptFile struct {
	// Name is the path below its prompts directory (what follows
	// @prompts/).
	Name    string    `json:"name"`
	Scope   string    `json:"source"`
	Path    string    `json:"path"`
	Size    int64     `json:"size"`
	ModTime time.Time `json:"mod_time"`
}

// Prompts lists the prompt files of PromptDirs, subdirectories included;
// a name an earlier directory holds hides the same name in later ones.
func (c *Catalog) Prompts() ([]PromptFile, []Problem) {
	var out []PromptFile
	var probs []Problem
	seen := map[string]bool{}
	for _, d := range c.PromptDirs() {
		err := filepath.WalkDir(d.Path, func(path string, e fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !e.Type().IsRegular() {
				return nil
			}
			rel, err := filepath.Rel(d.Path, path)
			if err != nil || seen[rel] {
				return err
			}
			fi, err := e.Info()
			if err != nil {
				return err
			}
			seen[rel] = true
			out = append(out, PromptFile{Name: filepath.ToSlash(rel), Scope: d.Scope, Path: path, Size: fi.Size(), ModTime: fi.ModTime()})
			return nil
		})
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			probs = append(probs, Problem{Dir: d.Path, Err: err})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, probs
}
