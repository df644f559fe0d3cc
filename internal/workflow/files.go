package workflow

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/template/parse"

	"github.com/reelhq/reel/internal/awfhome"
)

// File kinds a step reads at run time.
const (
	Scripts = "scripts" // script_file
	Prompts = "prompts" // prompt_file
)

// FileSearch says where the files a workflow names are looked for: a
// script_file or prompt_file, and the paths under AWF's global scripts
// and prompts directories its commands hold.
type FileSearch struct {
	// WorkflowFile is the file of the workflow that names the file.
	WorkflowFile string
	// ProjectDir is the project root ("" when unknown).
	ProjectDir string
	// Home is the user's home directory, for ~/ paths.
	Home string
	// AWF is the .awf template namespace (awfhome.Dirs.Namespace).
	AWF map[string]string
	// Pack is the pack the workflow belongs to (nil outside one).
	Pack *Pack
}

// ErrFileNotFound reports a script_file or prompt_file found nowhere.
var ErrFileNotFound = errors.New("file not found")

// Candidates lists, in order, the files path (a script_file or
// prompt_file value of kind Scripts or Prompts, its templates already
// resolved) may name, as AWF resolves them: an absolute path as is; ~/x
// in the home directory, then beside the workflow; a path under AWF's
// global scripts_dir or prompts_dir first where it is overridden (see
// overrides) and then globally; any other path relative to the
// workflow's directory.
func (fs FileSearch) Candidates(kind, path string) []string {
	var out []string
	add := func(p string) {
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	if suffix, ok := fs.underGlobal(kind, path); ok {
		for _, d := range fs.overrides(kind) {
			add(filepath.Join(d, suffix))
		}
		add(path)
		return out
	}
	wfDir := fs.workflowDir()
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

func (fs FileSearch) workflowDir() string {
	if fs.WorkflowFile == "" {
		return "."
	}
	return filepath.Dir(fs.WorkflowFile)
}

// underGlobal returns the part of path below AWF's global directory of
// kind, when path is there.
func (fs FileSearch) underGlobal(kind, path string) (string, bool) {
	global := fs.AWF[kind+"_dir"]
	if global == "" {
		return "", false
	}
	return strings.CutPrefix(path, global+string(filepath.Separator))
}

// overrides lists the directories searched, in order, before AWF's global
// directory of kind. For a pack's workflow: the project's
// .reel/KIND/PACK and .awf/KIND/PACK (the user's override), then the
// pack's own KIND/. For any other: <workflow dir>/../KIND (AWF's local
// override: .awf/KIND for a workflow in .awf/workflows), then, for a
// workflow inside the project, the project's .reel/KIND and .awf/KIND. A
// global workflow's override is AWF's global directory itself, so, as in
// AWF, it reads the global files whatever project it runs in.
func (fs FileSearch) overrides(kind string) []string {
	var out []string
	if fs.Pack != nil {
		if fs.ProjectDir != "" {
			out = append(out, filepath.Join(fs.ProjectDir, ".reel", kind, fs.Pack.Name), filepath.Join(fs.ProjectDir, ".awf", kind, fs.Pack.Name))
		}
		return append(out, filepath.Join(fs.Pack.Dir, kind))
	}
	out = append(out, filepath.Join(filepath.Dir(fs.workflowDir()), kind))
	if fs.ProjectDir != "" && within(fs.ProjectDir, fs.workflowDir()) {
		out = append(out, filepath.Join(fs.ProjectDir, ".reel", kind), filepath.Join(fs.ProjectDir, ".awf", kind))
	}
	return out
}

// within reports whether path lies in dir (both made absolute).
func within(dir, path string) bool {
	d, err1 := filepath.Abs(dir)
	p, err2 := filepath.Abs(path)
	if err1 != nil || err2 != nil {
		return false
	}
	rel, err := filepath.Rel(d, p)
	return err == nil && filepath.IsLocal(rel)
}

// Resolve returns the first candidate that is a regular file. Not finding
// one is an error wrapping ErrFileNotFound that names every place looked.
func (fs FileSearch) Resolve(kind, path string) (string, error) {
	cands := fs.Candidates(kind, path)
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

// pathEnd are the characters that end a path inside a command.
const pathEnd = " \t\n\"'|&;)`"

// Rewrite replaces, in a rendered command or dir, each path below AWF's
// global scripts or prompts directory with the first override that exists
// (see overrides), as AWF does after rendering a command: so
// "{{.awf.scripts_dir}}/setup.sh" runs a pack's own scripts/setup.sh, or
// the project's .awf/scripts/setup.sh. A path is read up to a blank, a
// quote, |, &, ;, ) or a backquote; one found in no override is left
// alone (the global file, or a command that fails as it would). A value
// that is exactly the global directory becomes the first override
// directory that exists.
func (fs FileSearch) Rewrite(s string) string {
	for _, kind := range []string{Scripts, Prompts} {
		global := fs.AWF[kind+"_dir"]
		if global == "" || !strings.Contains(s, global) {
			continue
		}
		if s == global {
			for _, d := range fs.overrides(kind) {
				if _, err := os.Stat(d); err == nil {
					s = d
					break
				}
			}
			continue
		}
		prefix := global + string(filepath.Separator)
		var b strings.Builder
		rest := s
		for {
			i := strings.Index(rest, prefix)
			if i < 0 {
				b.WriteString(rest)
				break
			}
			b.WriteString(rest[:i])
			tail := rest[i+len(prefix):]
			n := strings.IndexAny(tail, pathEnd)
			if n < 0 {
				n = len(tail)
			}
			suffix := tail[:n]
			found := ""
			if suffix != "" {
				for _, d := range fs.overrides(kind) {
					if _, err := os.Stat(filepath.Join(d, suffix)); err == nil {
						found = filepath.Join(d, suffix)
						break
					}
				}
			}
			if found == "" {
				found = prefix + suffix
			}
			b.WriteString(found)
			rest = tail[n:]
		}
		s = b.String()
	}
	return s
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
		dirs := awfhome.FromEnv(nil)
		awf := dirs.Namespace(packName(wf.Pack))
		p, err := t.Execute(map[string]any{"awf": awf})
		if err != nil {
			continue
		}
		search := FileSearch{WorkflowFile: wf.File, ProjectDir: l.opts.ProjectDir, Home: dirs.Home, AWF: awf, Pack: wf.Pack}
		if wf.File == "" && !filepath.IsAbs(p) {
			continue // parsed from bytes: nothing to resolve against
		}
		if _, err := search.Resolve(f.kind, p); err != nil {
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

// packName is the name of pack, "" for none.
func packName(p *Pack) string {
	if p == nil {
		return ""
	}
	return p.Name
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
