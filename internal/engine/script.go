package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"strings"

	"github.com/reelhq/reel/internal/exitcode"
	"github.com/reelhq/reel/internal/workflow"
	"github.com/reelhq/reel/transcript"
)

// maxStepFile bounds a script_file or prompt_file, as AWF does.
const maxStepFile = 1 << 20

// stepScript is what a step runs: its resolved command, or the resolved
// content of its script_file.
type stepScript struct {
	text string
	// file is the script_file's path ("" for a command).
	file string
	// shebang marks a script_file that starts with #!: it runs as its own
	// executable, so the kernel picks its interpreter (AWF ADR 014).
	shebang bool
}

// script returns what a step runs: its command, or its script_file read
// and resolved as a template.
func (r *run) script(st *workflow.State, data map[string]any) (stepScript, error) {
	if st.Command != nil {
		s, err := st.Command.Execute(data)
		if err != nil {
			return stepScript{}, fmt.Errorf("command: %w", err)
		}
		return stepScript{text: r.files().Rewrite(s)}, nil
	}
	body, path, err := r.readStepFile(workflow.Scripts, "script_file", st.ScriptFile, data)
	if err != nil {
		return stepScript{}, err
	}
	t, err := workflow.ParseTemplate(body)
	if err != nil {
		return stepScript{}, fmt.Errorf("script_file %s: %w", path, err)
	}
	text, err := t.Execute(data)
	if err != nil {
		return stepScript{}, fmt.Errorf("script_file %s: %w", path, err)
	}
	text = r.files().Rewrite(text)
	return stepScript{text: text, file: path, shebang: strings.HasPrefix(text, "#!")}, nil
}

// stepDir renders a step's dir, rewritten as commands are (a dir under
// AWF's global scripts or prompts directory becomes its override).
func (r *run) stepDir(st *workflow.State, data map[string]any) (string, error) {
	dir, err := st.Dir.Execute(data)
	if err != nil || dir == "" {
		return dir, err
	}
	return r.files().Rewrite(dir), nil
}

// files is where the workflow's files are looked for: beside it, in its
// pack, in the project, globally.
func (r *run) files() workflow.FileSearch {
	return workflow.FileSearch{WorkflowFile: r.wf.File, ProjectDir: r.e.ProjectDir, Home: r.getenv("HOME"), AWF: r.awf, Pack: r.wf.Pack}
}

// readStepFile reads a script_file or prompt_file: raw is resolved as a
// template (with AWF's {{.awf.*}} directories available) and looked up as
// AWF looks it up (workflow.FileSearch).
func (r *run) readStepFile(kind, what, raw string, data map[string]any) (content, path string, err error) {
	t, err := workflow.ParseTemplate(raw)
	if err != nil {
		return "", "", fmt.Errorf("%s %q: %w", what, raw, err)
	}
	if _, ok := data[workflow.NSAWF]; !ok {
		data = maps.Clone(data)
		data[workflow.NSAWF] = r.awf
	}
	name, err := t.Execute(data)
	if err != nil {
		return "", "", fmt.Errorf("%s: %w", what, err)
	}
	path, err = r.files().Resolve(kind, name)
	if err != nil {
		return "", "", &stepFileError{fmt.Errorf("%s: %w", what, err)}
	}
	f, err := os.Open(path)
	if err != nil {
		return "", "", &stepFileError{fmt.Errorf("%s: %w", what, err)}
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.IsDir() {
		return "", "", &stepFileError{fmt.Errorf("%s %s: is a directory", what, path)}
	}
	b, err := io.ReadAll(io.LimitReader(f, maxStepFile+1))
	if err != nil {
		return "", "", &stepFileError{fmt.Errorf("%s %s: %w", what, path, err)}
	}
	if len(b) > maxStepFile {
		return "", "", &stepFileError{fmt.Errorf("%s %s: larger than the %d byte limit", what, path, maxStepFile)}
	}
	return string(b), path, nil
}

// stepFileError is a script_file or prompt_file that cannot be read
// (missing, unreadable, a directory, too large).
type stepFileError struct{ err error }

func (e *stepFileError) Error() string { return e.err.Error() }
func (e *stepFileError) Unwrap() error { return e.err }

// unrenderable is the outcome of a step whose command, script or prompt
// could not be prepared. A script_file or prompt_file that cannot be read
// is a user error, as in AWF: at the top level it ends the run with exit
// status 1, past on_failure and retries (AWF's docs and its run agree);
// inside a loop body or a parallel branch the state fails and its block
// handles the failure, as AWF's blocks do. Any other error (a template
// that does not render) fails the state, which follows its on_failure.
func unrenderable(sc scope, err error) outcome {
	o := fail("%v", err)
	var fe *stepFileError
	if !errors.As(err, &fe) {
		return o
	}
	o.final = true
	if sc.prefix == "" {
		o.end = &ending{status: "failure", exitCode: exitcode.User, message: o.err}
	}
	return o
}

func (r *run) getenv(key string) string {
	s, _ := r.env[key].(string)
	return s
}

// runScript runs a step's script: a command or a script_file without a
// shebang with the shell, a script_file with one as an executable of its
// own, written to a private temporary file for the run of the step.
func (r *run) runScript(ctx context.Context, path string, s stepScript, dir string, limit deadline) (transcript.CommandResult, outcome) {
	if !s.shebang {
		return r.shell(ctx, path, s.text, dir, limit)
	}
	if interp := shebangInterpreter(s.text); filepath.IsAbs(interp) {
		if fi, err := os.Stat(interp); err != nil || fi.IsDir() {
			o := fail("script_file %s: interpreter %s not found", s.file, interp)
			o.exitCode = 127
			return transcript.CommandResult{ExitCode: 127, Stderr: o.err}, o
		}
	}
	f, err := os.CreateTemp("", "reel-script-*")
	if err == nil {
		defer os.Remove(f.Name())
		_, err = f.WriteString(s.text)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err == nil {
		err = os.Chmod(f.Name(), 0o700)
	}
	if err != nil {
		o := fail("script_file %s: write a temporary copy to run: %v", s.file, err)
		return transcript.CommandResult{ExitCode: 1, Stderr: o.err}, o
	}
	return r.process(ctx, path, []string{f.Name()}, dir, limit)
}

// shebangInterpreter returns the interpreter a #! line names.
func shebangInterpreter(script string) string {
	line, _, _ := strings.Cut(strings.TrimPrefix(script, "#!"), "\n")
	fields := strings.Fields(line)
	if len(fields) == 0 {
		return ""
	}
	return fields[0]
}
