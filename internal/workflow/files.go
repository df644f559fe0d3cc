package workflow

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"text/template/parse"
)

// AWFPaths returns AWF's global directories, the values of the {{.awf.*}}
// template namespace, as AWF computes them from the environment
// (AWF_CONFIG_HOME, XDG_CONFIG_HOME, XDG_DATA_HOME, HOME).
func AWFPaths(getenv func(string) string) map[string]string {
	home := getenv("HOME")
	config := getenv("AWF_CONFIG_HOME")
	if config == "" {
		base := getenv("XDG_CONFIG_HOME")
		if base == "" {
			base = filepath.Join(home, ".config")
		}
		config = filepath.Join(base, "awf")
	}
	data := getenv("XDG_DATA_HOME")
	if data == "" {
		data = filepath.Join(home, ".local", "share")
	}
	data = filepath.Join(data, "awf")
	return map[string]string{
		"config_dir":    config,
		"data_dir":      data,
		"prompts_dir":   filepath.Join(config, "prompts"),
		"scripts_dir":   filepath.Join(config, "scripts"),
		"workflows_dir": filepath.Join(config, "workflows"),
		"skills_dir":    filepath.Join(config, "skills"),
		"roles_dir":     filepath.Join(config, "roles"),
		"plugins_dir":   filepath.Join(data, "plugins"),
	}
}

// File kinds a step reads at run time.
const (
	Scripts = "scripts" // script_file
	Prompts = "prompts" // prompt_file
)

// FileSearch says where a script_file or prompt_file is looked for.
type FileSearch struct {
	// Kind is Scripts or Prompts.
	Kind string
	// WorkflowFile is the file of the workflow that names the file.
	WorkflowFile string
	// ProjectDir is the project root ("" when unknown).
	ProjectDir string
	// Home is the user's home directory, for ~/ paths.
	Home string
	// AWF is the {{.awf.*}} namespace (see AWFPaths).
	AWF map[string]string
}

// ErrFileNotFound reports a script_file or prompt_file found nowhere.
var ErrFileNotFound = errors.New("file not found")

// Candidates lists, in order, the files path (a script_file or prompt_file
// value with its templates already resolved) may name, as AWF resolves
// them: an absolute path as is; ~/x in the home directory, then beside the
// workflow; a path under AWF's global scripts_dir or prompts_dir first in
// the project (AWF's local override, <workflow dir>/../scripts, then
// .reel/scripts and .awf/scripts of the project) and then globally; any
// other path relative to the workflow's directory.
func (fs FileSearch) Candidates(path string) []string {
	wfDir := "."
	if fs.WorkflowFile != "" {
		wfDir = filepath.Dir(fs.WorkflowFile)
	}
	var out []string
	add := func(p string) {
		for _, x := range out {
			if x == p {
				return
			}
		}
		out = append(out, p)
	}
	if global := fs.AWF[fs.Kind+"_dir"]; global != "" {
		if suffix, ok := strings.CutPrefix(path, global+string(filepath.Separator)); ok {
			add(filepath.Join(filepath.Dir(wfDir), fs.Kind, suffix))
			if fs.ProjectDir != "" {
				add(filepath.Join(fs.ProjectDir, ".reel", fs.Kind, suffix))
				add(filepath.Join(fs.ProjectDir, ".awf", fs.Kind, suffix))
			}
			add(path)
			return out
		}
	}
	switch {
	case strings.HasPrefix(path, "~/"):
		if fs.Home != "" {
			add(filepath.Join(fs.Home, path[2:]))
		}
		add(filepath.Join(wfDir, path[2:]))
	case filepath.IsAbs(path):
		add(path)
	default:
		add(filepath.Join(wfDir, path))
	}
	return out
}

// Resolve returns the first candidate that is a regular file. Not finding
// one is an error wrapping ErrFileNotFound that names every place looked.
func (fs FileSearch) Resolve(path string) (string, error) {
	cands := fs.Candidates(path)
	for _, c := range cands {
		fi, err := os.Stat(c)
		if err == nil && fi.Mode().IsRegular() {
			return c, nil
		}
		if err == nil && fi.IsDir() && len(cands) == 1 {
			return "", fmt.Errorf("%s is a directory, not a file", c)
		}
	}
	if len(cands) == 1 {
		return "", fmt.Errorf("%w: %s", ErrFileNotFound, cands[0])
	}
	return "", fmt.Errorf("%w: %s (looked in %s)", ErrFileNotFound, path, strings.Join(cands, ", "))
}

// checkFiles checks that a state's script_file or prompt_file exists when
// its path is known before the run: a literal, or a template that reads
// only the {{.awf.*}} directories.
func (l *loader) checkFiles(wf *Workflow, s *State) {
	for _, f := range []struct{ kind, what, path string }{{Scripts, "script_file", s.ScriptFile}, {Prompts, "prompt_file", s.PromptFile}} {
		if f.path == "" {
			continue
		}
		t, err := l.parseTemplate(f.path, s.Pos)
		if err != nil {
			l.errAt(s.Pos, "state %q: %s: bad template: %v", s.Name, f.what, cleanTemplateErr(err))
			continue
		}
		roots := t.fieldRoots()
		if len(roots) > 1 || len(roots) == 1 && !roots["awf"] {
			continue // known only at run time
		}
		awf := AWFPaths(os.Getenv)
		p, err := t.Execute(map[string]any{"awf": awf})
		if err != nil {
			continue
		}
		search := FileSearch{Kind: f.kind, WorkflowFile: wf.File, ProjectDir: l.opts.ProjectDir, Home: os.Getenv("HOME"), AWF: awf}
		if wf.File == "" && !filepath.IsAbs(p) {
			continue // parsed from bytes: nothing to resolve against
		}
		if _, err := search.Resolve(p); err != nil {
			if f.kind == Scripts && errors.Is(err, ErrFileNotFound) {
				// AWF's validate does not look for script files (its run
				// ends at the step, exit 1); reel says so without failing.
				l.warnAt(s.Pos, "state %q: %s: %v (the run will end there, exit 1, unless the file is created first)", s.Name, f.what, err)
				continue
			}
			l.errAt(s.Pos, "state %q: %s: %v", s.Name, f.what, err)
		}
	}
}

// fieldRoots returns the first names of the fields the template reads
// (awf for {{.awf.scripts_dir}}), and "$" when it reads the dot itself or
// a variable, where what is read cannot be told.
func (t *Template) fieldRoots() map[string]bool {
	roots := map[string]bool{}
	t.walk(func(n parse.Node) {
		switch n := n.(type) {
		case *parse.FieldNode:
			roots[n.Ident[0]] = true
		case *parse.DotNode, *parse.VariableNode, *parse.ChainNode:
			roots["$"] = true
		}
	})
	return roots
}
