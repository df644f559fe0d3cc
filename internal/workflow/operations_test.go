package workflow

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reelhq/reel/internal/awfhome"
)

func TestOperationValidation(t *testing.T) {
	for _, c := range []struct{ state, want string }{
		{"{type: operation, operation: http.request, inputs: {url: 'http://x'}}", ""},
		{"{type: operation, operation: github.get_issue, inputs: {number: 3, repo: o/r, fields: [title]}}", ""},
		{"{type: operation, operation: github.create_pr, inputs: {title: t, head: h, base: main, draft: true}, timeout: 30}", ""},
		{"{type: operation, operation: notify.send, inputs: {message: hi}}", ""},
		{"{type: operation, operation: notify.send, inputs: {backend: '{{.inputs.b}}', message: hi}}", ""},
		// AWF accepts an operation it has no provider for at validate
		// time (a plugin may provide it) and fails at run time
		{"{type: operation, operation: noop}", ""},
		{"{type: operation, operation: slack.send, inputs: {anything: 1}}", ""},
		// operation: shell is the default of a step (AWF)
		{"{type: step, command: 'true', operation: shell}", ""},
		{"{type: step, command: 'true', operation: github.get_issue}", ""}, // AWF ignores it; reel warns (TestAWFOnlyFieldsWarn)
		{"{type: operation}", `operation state "a" is missing operation`},
		{"{type: operation, operation: http.request}", `operation "http.request" of state "a" needs inputs.url`},
		{"{type: operation, operation: github.get_isue, inputs: {number: 1}}", `unknown operation "github.get_isue" (built-in: `},
		{"{type: operation, operation: github.get_isue, inputs: {number: 1}}", `(did you mean "github.get_issue"?)`},
		{"{type: operation, operation: github.add_labels, inputs: {number: 1}}", `operation "github.add_labels" of state "a" needs inputs.labels`},
		{"{type: operation, operation: github.add_comment, inputs: {number: 1, body: b, title: t}}", `unknown input "title" (inputs of github.add_comment: number, body, repo)`},
		{"{type: operation, operation: notify.send, inputs: {backend: slack, message: m}}", `backend "slack" is not one of desktop, webhook`},
		{"{type: operation, operation: notify.send, inputs: {backend: webhook, message: m}}", "the webhook backend needs inputs.webhook_url"},
		{"{type: operation, operation: notify.send, inputs: {message: m, priority: urgent}}", `priority "urgent" is not one of low, default, high`},
		{"{type: operation, operation: github.batch, inputs: {strategy: all, operations: []}}", `strategy "all" is not one of all_succeed, any_succeed, best_effort`},
		{"{type: operation, operation: github.batch, inputs: {operations: [{name: github.add_labels, number: 1, labels: [x]}, {name: github.add_labels, inputs: {number: 2, labels: [y]}}]}}", ""},
		{"{type: operation, operation: github.batch, inputs: {operations: [{name: github.add_labels, number: 1}]}}", "operations[0] (github.add_labels) needs inputs.labels"},
		{"{type: operation, operation: github.batch, inputs: {operations: [{name: github.add_labels, number: 1, inputs: {labels: [x]}}]}}", "operations[0] gives inputs both under inputs and beside name"},
		{"{type: operation, operation: github.batch, inputs: {operations: [{name: http.request, url: x}]}}", `operations[0]: name "http.request" is not a github operation`},
		{"{type: operation, operation: github.batch, inputs: {operations: [{name: github.batch, operations: []}]}}", "operations[0]: a batch cannot contain a batch"},
		{"{type: operation, operation: github.batch, inputs: {operations: [{number: 1}]}}", "operations[0] has no name"},
		{"{type: operation, operation: github.batch, inputs: {operations: 3}}", "operations must be a list of operations"},
		{"{type: operation, operation: github.get_pr, inputs: {number: 1}, capture: {stdout: pr}, retry: {max_attempts: 2}}", ""},
	} {
		src := "name: x\nstates:\n  initial: a\n  a: " + c.state + "\n"
		_, err := Parse([]byte(src), "f.yaml", Options{})
		if c.want == "" {
			if err != nil {
				t.Errorf("%s: %v", c.state, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s:\n got %v\nwant %s", c.state, err, c.want)
		}
	}
}

func TestFileSearch(t *testing.T) {
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	awf := awfhome.FromEnv(func(k string) string { return map[string]string{"HOME": home}[k] }).Namespace("")

	wfFile := filepath.Join(dir, ".awf", "workflows", "w.yaml")
	fs := FileSearch{WorkflowFile: wfFile, ProjectDir: dir, Home: home, AWF: awf}
	global := filepath.Join(awf["scripts_dir"], "x", "y.sh")
	for path, want := range map[string][]string{
		"rel.sh":    {filepath.Join(dir, ".awf", "workflows", "rel.sh")},
		"/abs/a.sh": {"/abs/a.sh"},
		"~/t.sh":    {filepath.Join(home, "t.sh"), filepath.Join(dir, ".awf", "workflows", "t.sh")},
		global:      {filepath.Join(dir, ".awf", "scripts", "x", "y.sh"), filepath.Join(dir, ".reel", "scripts", "x", "y.sh"), global},
	} {
		if got := fs.Candidates(Scripts, path); strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("%s:\n got %q\nwant %q", path, got, want)
		}
	}
	// AWF's local override, then the global file
	if _, err := fs.Resolve(Scripts, global); !errors.Is(err, ErrFileNotFound) || !strings.Contains(err.Error(), "looked in") {
		t.Fatalf("missing: %v", err)
	}
	os.MkdirAll(filepath.Dir(global), 0o755)
	os.WriteFile(global, []byte("echo global"), 0o644)
	if p, err := fs.Resolve(Scripts, global); err != nil || p != global {
		t.Fatalf("global: %q %v", p, err)
	}
	local := filepath.Join(dir, ".reel", "scripts", "x", "y.sh")
	os.MkdirAll(filepath.Dir(local), 0o755)
	os.WriteFile(local, []byte("echo local"), 0o644)
	if p, err := fs.Resolve(Scripts, global); err != nil || p != local {
		t.Fatalf("local override: %q %v", p, err)
	}
	os.MkdirAll(filepath.Join(dir, ".awf", "workflows", "d.sh"), 0o755)
	if _, err := fs.Resolve(Scripts, "d.sh"); err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Fatalf("directory: %v", err)
	}
}

// A pack's workflow finds a global path first in the user's override
// (.reel/KIND/PACK, .awf/KIND/PACK), then in the pack, then globally.
func TestFileSearchPack(t *testing.T) {
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	awf := awfhome.FromEnv(func(k string) string { return map[string]string{"HOME": home}[k] }).Namespace("kit")
	packDir := filepath.Join(dir, ".awf", "workflow-packs", "kit")
	fs := FileSearch{WorkflowFile: filepath.Join(packDir, "workflows", "w.yaml"), ProjectDir: dir, Home: home, AWF: awf, Pack: &Pack{Name: "kit", Dir: packDir}}
	global := filepath.Join(awf["prompts_dir"], "a", "p.md")
	want := []string{
		filepath.Join(dir, ".reel", "prompts", "kit", "a", "p.md"),
		filepath.Join(dir, ".awf", "prompts", "kit", "a", "p.md"),
		filepath.Join(packDir, "prompts", "a", "p.md"),
		global,
	}
	if got := fs.Candidates(Prompts, global); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("candidates:\n got %q\nwant %q", got, want)
	}
	for i := len(want) - 1; i >= 0; i-- {
		os.MkdirAll(filepath.Dir(want[i]), 0o755)
		os.WriteFile(want[i], []byte("x"), 0o644)
		if p, err := fs.Resolve(Prompts, global); err != nil || p != want[i] {
			t.Fatalf("with %s: %q %v", want[i], p, err)
		}
	}
}

// Rewrite puts the override of a global scripts or prompts path into a
// rendered command, path by path, as AWF rewrites commands; a path no
// override holds stays as written.
func TestFileSearchRewrite(t *testing.T) {
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	awf := awfhome.FromEnv(func(k string) string { return map[string]string{"HOME": home}[k] }).Namespace("kit")
	packDir := filepath.Join(dir, "packs", "kit")
	for _, f := range []string{"scripts/run.sh", "prompts/templates/a.md"} {
		os.MkdirAll(filepath.Dir(filepath.Join(packDir, f)), 0o755)
		os.WriteFile(filepath.Join(packDir, f), []byte("x"), 0o755)
	}
	os.MkdirAll(filepath.Join(dir, ".awf", "scripts", "kit"), 0o755)
	os.WriteFile(filepath.Join(dir, ".awf", "scripts", "kit", "mine.sh"), []byte("x"), 0o755)
	fs := FileSearch{WorkflowFile: filepath.Join(packDir, "workflows", "w.yaml"), ProjectDir: dir, Home: home, AWF: awf, Pack: &Pack{Name: "kit", Dir: packDir}}
	sd, pd := awf["scripts_dir"], awf["prompts_dir"]
	for in, want := range map[string]string{
		`eval "` + sd + `/run.sh $ARGS"`:            `eval "` + packDir + `/scripts/run.sh $ARGS"`,
		sd + "/run.sh a; " + sd + "/mine.sh\n":      packDir + "/scripts/run.sh a; " + dir + "/.awf/scripts/kit/mine.sh\n",
		`T="` + pd + `/templates"` + "\ncp $T/a.md": `T="` + packDir + `/prompts/templates"` + "\ncp $T/a.md",
		sd + "/absent.sh | " + sd + "/run.sh":       sd + "/absent.sh | " + packDir + "/scripts/run.sh",
		sd:                                          dir + "/.awf/scripts/kit",
		"echo " + sd + "/":                          "echo " + sd + "/",
	} {
		if got := fs.Rewrite(in); got != want {
			t.Errorf("%s:\n got %s\nwant %s", in, got, want)
		}
	}
}

func TestValidateChecksStepFiles(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "config"))
	write := func(p, body string) {
		os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755)
		os.WriteFile(filepath.Join(dir, p), []byte(body), 0o644)
	}
	write(".awf/workflows/scripts/here.sh", "echo here")
	write(".awf/scripts/shared.sh", "echo shared")
	write(".awf/prompts/review.md", "Review {{.inputs.f}}")
	body := func(states string) string {
		return "name: w\ninputs: [{name: f}]\nstates:\n  initial: a\n" + states
	}
	for _, c := range []struct{ states, want string }{
		{"  a: {type: step, script_file: scripts/here.sh}\n", ""},
		{"  a: {type: step, script_file: '{{.awf.scripts_dir}}/shared.sh'}\n", ""},
		{"  a: {type: step, script_file: '{{.inputs.f}}.sh'}\n", ""},
		{"  a: {type: agent, provider: claude, prompt_file: '{{.awf.prompts_dir}}/review.md'}\n", ""},
		{"  a: {type: step, script_file: scripts/gone.sh}\n", "file not found: " + filepath.Join(dir, ".awf", "workflows", "scripts", "gone.sh")},
		{"  a: {type: step, script_file: '{{.awf.scripts_dir}}/gone.sh'}\n", "script_file: file not found: " + filepath.Join(dir, "config", "awf", "scripts", "gone.sh") + " (looked in "},
		{"  a: {type: agent, provider: claude, prompt_file: '{{.awf.prompts_dir}}/x.md'}\n", `state "a": prompt_file: file not found`},
		{"  a: {type: step, script_file: '{{.awf.scripts_dir'}\n", `state "a": script_file: bad template`},
	} {
		os.WriteFile(filepath.Join(dir, ".awf", "workflows", "w.yaml"), []byte(body(c.states)), 0o644)
		wf, err := Load(filepath.Join(dir, ".awf", "workflows", "w.yaml"), Options{ProjectDir: dir})
		if c.want == "" {
			if err != nil || len(wf.Warnings) > 0 {
				t.Errorf("%s: %v %v", c.states, err, wf.Warnings)
			}
			continue
		}
		// A missing script is a warning (AWF's validate does not look for
		// it); a missing prompt an error (AWF's does).
		got := fmt.Sprint(err)
		if err == nil {
			got = wf.Warnings.Error()
			if !strings.Contains(c.states, "script_file") || !strings.HasSuffix(got, "(the run will end there, exit 1, unless the file is created first)") || !strings.Contains(got, ": warning: ") {
				t.Errorf("%s: no error, warnings %q", c.states, got)
			}
		}
		if !strings.Contains(got, c.want) {
			t.Errorf("%s:\n got %v\nwant %s", c.states, got, c.want)
		}
	}
}
