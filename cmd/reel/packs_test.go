package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// isolatedEnv is the environment of a test that installs or reads global
// places: HOME and the XDG directories below home, no AWF overrides, and
// the stand-in GitHub of packServer.
func isolatedEnv(t *testing.T, home string, extra ...string) []string {
	t.Helper()
	env := []string{"REEL_STORAGE=", "AWF_CONFIG_PATH=", "AWF_CONFIG_HOME=", "AWF_WORKFLOWS_PATH=", "AWF_PROMPTS_PATH=", "NO_COLOR=1",
		"HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"), "XDG_DATA_HOME=" + filepath.Join(home, ".local", "share"),
		"XDG_CACHE_HOME=" + filepath.Join(home, ".cache"), "GITHUB_API_URL=" + packServer(t).URL, "GITHUB_TOKEN=test-token", "GH_TOKEN="}
	return append(append(os.Environ(), env...), extra...)
}

// The workflow commands: install from the stand-in GitHub, a directory
// and an archive, locally and globally; list, info, run by PACK/WORKFLOW,
// list's pack entries, update, remove; and their refusals.
func TestWorkflowPackCommands(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	proj, home := filepath.Join(root, "proj"), filepath.Join(root, "home")
	os.MkdirAll(filepath.Join(proj, ".awf"), 0o755)
	env := isolatedEnv(t, home)
	run := func(args ...string) cliResult { t.Helper(); return runBinaryEnv(t, proj, env, args...) }

	res := run("workflow", "install", "acme/awf-workflow-kit")
	if res.code != 0 || !strings.Contains(res.stdout, "installed workflow pack kit 0.3.0 into .awf/workflow-packs/kit") {
		t.Fatalf("install: %+v", res)
	}
	if res := run("workflow", "install", "acme/awf-workflow-kit"); res.code != 1 || !strings.Contains(res.stderr, "[USER.INPUT.VALIDATION_FAILED]") || !strings.Contains(res.stderr, "already installed") {
		t.Fatalf("second install: %+v", res)
	}
	if res := run("workflow", "install", "acme/awf-workflow-kit", "--force"); res.code != 0 || !strings.Contains(res.stdout, "(was 0.3.0)") {
		t.Fatalf("--force: %+v", res)
	}
	if res := run("workflow", "install", "acme/awf-workflow-hi@1.2.0", "--global"); res.code != 0 || !strings.Contains(res.stdout, filepath.Join(home, ".local", "share", "awf", "workflow-packs", "hi")) {
		t.Fatalf("--global: %+v", res)
	}
	for args, want := range map[string]string{
		"acme/awf-workflow-hi@9.0.0": "release version 9.0.0 not found",
		"acme/awf-workflow-none":     "404",
		"https://github.com/acme/x":  "not a URL",
		"acme/awf-workflow-hi@>=1.0": "ranges are not accepted",
		"./nowhere":                  "no such file or directory",
	} {
		if res := run("workflow", "install", args); res.code != 1 || !strings.Contains(res.stderr, want) {
			t.Errorf("install %s: %+v, want %q", args, res, want)
		}
	}
	// from a directory and an archive, as AWF cannot
	src := filepath.Join("testdata", "awfpacks", "awf-workflow-hi")
	abs, _ := filepath.Abs(src)
	if res := run("workflow", "install", abs); res.code != 0 || !strings.Contains(res.stdout, "installed workflow pack hi 1.2.0 into .awf/workflow-packs/hi") {
		t.Fatalf("install a directory: %+v", res)
	}
	data, err := tarGz(abs, "hi-1.2.0/")
	if err != nil {
		t.Fatal(err)
	}
	arc := filepath.Join(root, "hi.tar.gz")
	os.WriteFile(arc, data, 0o644)
	if res := run("workflow", "install", arc, "--force"); res.code != 0 || !strings.Contains(res.stdout, "(was 1.2.0)") {
		t.Fatalf("install an archive: %+v", res)
	}

	res = run("workflow", "list", "--json")
	var rows []packListed
	if err := json.Unmarshal([]byte(res.stdout), &rows); err != nil {
		t.Fatalf("list --json: %v\n%+v", err, res)
	}
	var got []string
	for _, r := range rows {
		got = append(got, r.Name+" "+r.Version+" "+r.Source)
	}
	// the project's hi shadows the global one
	if strings.Join(got, "|") != "hi 1.2.0 "+arc+"|kit 0.3.0 acme/awf-workflow-kit" {
		t.Errorf("workflow list: %q", got)
	}
	res = run("workflow", "info", "kit")
	for _, want := range []string{"Pack:        kit", "Version:     0.3.0", "Source:      acme/awf-workflow-kit", "kit/make: Create a feature from a description", "AWF version: >=0.6.0"} {
		if !strings.Contains(res.stdout, want) {
			t.Errorf("info lacks %q:\n%s", want, res.stdout)
		}
	}
	if res := run("workflow", "info", "nope"); res.code != 1 || !strings.Contains(res.stderr, "[USER.INPUT.MISSING_FILE] workflow pack \"nope\" is not installed") {
		t.Errorf("info nope: %+v", res)
	}

	// run PACK/WORKFLOW: the pack's prompt and script
	if res := run("run", "hi/shout"); res.code != 0 || !strings.Contains(res.stdout, "A QUIET LINE") {
		t.Fatalf("run hi/shout: %+v", res)
	}
	if res := run("run", "hi/hi", "--help"); res.code != 0 || !strings.Contains(res.stdout, "who") {
		t.Errorf("run hi/hi --help: %+v", res)
	}
	if res := run("validate", "kit/make", "kit/init"); res.code != 0 {
		t.Errorf("validate kit/make: %+v", res)
	}
	if res := run("validate", "--pack", "kit"); res.code != 0 || strings.Count(res.stdout, ": ok\n") != 3 {
		t.Errorf("validate --pack kit: %+v", res)
	}
	if res := run("validate", "--dir", filepath.Join(".awf", "workflow-packs", "hi", "workflows")); res.code != 0 || strings.Count(res.stdout, ": ok\n") != 2 {
		t.Errorf("validate --dir: %+v", res)
	}
	if res := run("validate", "--pack", "nope"); res.code != 1 || !strings.Contains(res.stderr, "[USER.INPUT.MISSING_FILE]") {
		t.Errorf("validate --pack nope: %+v", res)
	}
	res = run("list")
	for _, want := range []string{"hi/hi", "pack 1.2.0", "kit/chain", "pack 0.3.0"} {
		if !strings.Contains(res.stdout, want) {
			t.Errorf("list lacks %q:\n%s", want, res.stdout)
		}
	}

	// update: the source has nothing newer
	if res := run("workflow", "update", "kit"); res.code != 0 || !strings.Contains(res.stdout, "kit is already at the latest version (0.3.0)") {
		t.Errorf("update: %+v", res)
	}
	if res := run("workflow", "update"); res.code != 1 || !strings.Contains(res.stderr, "pack name required (or use --all)") {
		t.Errorf("update without a name: %+v", res)
	}
	if res := run("workflow", "update", "--all"); res.code != 0 || !strings.Contains(res.stdout, "updated 0 pack(s)") {
		t.Errorf("update --all: %+v", res)
	}

	// remove: the project's hi, then the global one shows through
	if res := run("workflow", "remove", "hi"); res.code != 0 || !strings.Contains(res.stdout, "removed workflow pack hi from .awf/workflow-packs/hi") {
		t.Fatalf("remove: %+v", res)
	}
	if res := run("workflow", "info", "hi", "--json"); res.code != 0 || !strings.Contains(res.stdout, filepath.Join(home, ".local", "share", "awf", "workflow-packs", "hi")) {
		t.Errorf("the global hi: %+v", res)
	}

	// outside a project a local install is refused
	elsewhere := filepath.Join(root, "elsewhere")
	os.MkdirAll(elsewhere, 0o755)
	if res := runBinaryEnv(t, elsewhere, env, "workflow", "install", "acme/awf-workflow-kit"); res.code != 1 || !strings.Contains(res.stderr, "run reel init first") {
		t.Errorf("outside a project: %+v", res)
	}
}

// search asks GitHub for repositories with the awf-workflow topic.
func TestWorkflowSearch(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	srv := newSearchServer(t)
	env := append(isolatedEnv(t, home), "GITHUB_API_URL="+srv)
	res := runBinaryEnv(t, dir, env, "workflow", "search", "spec")
	if res.code != 0 || !strings.Contains(res.stdout, "acme/awf-workflow-kit") || !strings.Contains(res.stdout, "topic:awf-workflow spec") {
		t.Fatalf("search: %+v", res)
	}
	res = runBinaryEnv(t, dir, env, "workflow", "search", "--output=json")
	var repos []struct {
		FullName string `json:"full_name"`
		Stars    int    `json:"stargazers_count"`
	}
	if err := json.Unmarshal([]byte(res.stdout), &repos); err != nil || len(repos) != 1 || repos[0].Stars != 42 {
		t.Fatalf("search --output=json: %v %+v", err, res)
	}
}

// init writes AWF's layout, which both tools run; a second init leaves it.
func TestInit(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	proj, home := filepath.Join(root, "proj"), filepath.Join(root, "home")
	os.MkdirAll(proj, 0o755)
	env := isolatedEnv(t, home)
	res := runBinaryEnv(t, proj, env, "init")
	if res.code != 0 {
		t.Fatalf("init: %+v", res)
	}
	for _, f := range []struct {
		path string
		mode os.FileMode
	}{{".awf.yaml", 0o644}, {".awf/config.yaml", 0o644}, {".awf/workflows/example.yaml", 0o644}, {".awf/prompts/example.md", 0o644}, {".awf/scripts/example.sh", 0o755}} {
		fi, err := os.Stat(filepath.Join(proj, f.path))
		if err != nil || fi.Mode().Perm() != f.mode {
			t.Errorf("%s: %v %v", f.path, fi, err)
		}
	}
	if res := runBinaryEnv(t, proj, env, "run", "example"); res.code != 0 || !strings.Contains(res.stdout, "Hello from reel!") {
		t.Fatalf("run example: %+v", res)
	}
	if res := runBinaryEnv(t, proj, env, "validate", "example"); res.code != 0 {
		t.Fatalf("validate example: %+v", res)
	}
	os.WriteFile(filepath.Join(proj, ".awf", "config.yaml"), []byte("inputs:\n  mine: yes\n"), 0o644)
	if res := runBinaryEnv(t, proj, env, "init"); res.code != 0 || !strings.Contains(res.stdout, "already initialized") {
		t.Fatalf("second init: %+v", res)
	}
	if b, _ := os.ReadFile(filepath.Join(proj, ".awf", "config.yaml")); string(b) != "inputs:\n  mine: yes\n" {
		t.Errorf("init overwrote the config: %s", b)
	}
	if res := runBinaryEnv(t, proj, env, "init", "--force"); res.code != 0 || !strings.Contains(res.stdout, "created .awf/config.yaml") {
		t.Fatalf("init --force: %+v", res)
	}
	res = runBinaryEnv(t, proj, env, "init", "--global")
	if res.code != 0 {
		t.Fatalf("init --global: %+v", res)
	}
	for _, f := range []string{".config/awf/prompts/example.md", ".config/awf/scripts/example.sh"} {
		if _, err := os.Stat(filepath.Join(home, f)); err != nil {
			t.Error(err)
		}
	}
	if res := runBinaryEnv(t, proj, env, "init", "--global"); res.code != 0 || !strings.Contains(res.stdout, "already initialized") || !strings.Contains(res.stdout, "kept") {
		t.Fatalf("second init --global: %+v", res)
	}
}

// Errors carry AWF's codes: [CODE] message, details and hints in text,
// error_code in --format json; --no-hints drops the hints; reel error
// explains a code.
func TestErrorCodes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	env := isolatedEnv(t, home)
	writeFile(t, filepath.Join(dir, ".awf", "workflows", "bad.yaml"), "name: b\nstates:\n  initial: a\n  a: [\n", 0o644)
	writeFile(t, filepath.Join(dir, ".awf", "workflows", "typo.yaml"), "name: t\nstates:\n  initial: a\n  a:\n    type: step\n    command: 'true'\n    on_sucess: done\n  done:\n    type: terminal\n", 0o644)
	writeFile(t, filepath.Join(dir, ".awf", "workflows", "needs.yaml"), "name: n\ninputs:\n  - name: who\n    required: true\nstates:\n  initial: a\n  a:\n    type: step\n    command: echo {{.inputs.who}}\n    on_success: done\n  done:\n    type: terminal\n", 0o644)
	for _, c := range []struct {
		args []string
		code int
		want []string
	}{
		{[]string{"run", "nosuch"}, 1, []string{"reel: [USER.INPUT.MISSING_FILE] workflow not found: \"nosuch\"", "  Details:\n    path: nosuch", "  Hint: reel list shows the workflows reel can run here"}},
		{[]string{"run", "nosuch", "--no-hints"}, 1, []string{"[USER.INPUT.MISSING_FILE]"}},
		{[]string{"run", "bad"}, 2, []string{"[WORKFLOW.PARSE.YAML_SYNTAX]", "invalid YAML"}},
		{[]string{"run", "typo"}, 2, []string{"[WORKFLOW.PARSE.UNKNOWN_FIELD]", `(did you mean "on_success"?)`}},
		{[]string{"run", "needs"}, 1, []string{"[USER.INPUT.VALIDATION_FAILED] missing required input(s): who", "missing_inputs: [who]"}},
		{[]string{"validate", "bad"}, 2, []string{"[WORKFLOW.PARSE.YAML_SYNTAX] 1 problem(s)"}},
		{[]string{"run", "needs", "--input", "who=@prompts/none.md"}, 1, []string{"[USER.INPUT.MISSING_FILE]", `prompt "none.md" not found`}},
	} {
		res := runBinaryEnv(t, dir, env, c.args...)
		if res.code != c.code {
			t.Errorf("%v: exit %d, want %d\n%s", c.args, res.code, c.code, res.stderr)
		}
		for _, w := range c.want {
			if !strings.Contains(res.stderr, w) {
				t.Errorf("%v: stderr lacks %q:\n%s", c.args, w, res.stderr)
			}
		}
		if c.args[len(c.args)-1] == "--no-hints" && strings.Contains(res.stderr, "Hint:") {
			t.Errorf("--no-hints printed hints:\n%s", res.stderr)
		}
	}
	res := runBinaryEnv(t, dir, env, "run", "nosuch", "--format", "json")
	var j struct {
		Error     string         `json:"error"`
		Code      int            `json:"code"`
		ErrorCode string         `json:"error_code"`
		Details   map[string]any `json:"details"`
	}
	if err := json.Unmarshal([]byte(res.stderr), &j); err != nil || res.code != 1 || j.Code != 1 || j.ErrorCode != "USER.INPUT.MISSING_FILE" || j.Details["path"] != "nosuch" || !strings.HasPrefix(j.Error, "workflow not found") {
		t.Fatalf("--format json: %v %+v", err, res)
	}

	res = runBinaryEnv(t, dir, env, "error", "USER.INPUT.MISSING_FILE")
	for _, want := range []string{"Error code: USER.INPUT.MISSING_FILE (exit status 1)", "Description:", "Resolution:", "Related codes:\n  - USER.INPUT.INVALID_FORMAT"} {
		if res.code != 0 || !strings.Contains(res.stdout, want) {
			t.Errorf("error CODE lacks %q: %+v", want, res)
		}
	}
	res = runBinaryEnv(t, dir, env, "error", "workflow.validation", "-f", "json")
	var entries []struct {
		Code string `json:"code"`
	}
	if err := json.Unmarshal([]byte(res.stdout), &entries); err != nil || len(entries) != 4 {
		t.Errorf("error prefix --format json: %v %+v", err, res)
	}
	if res := runBinaryEnv(t, dir, env, "error"); res.code != 0 || strings.Count(res.stdout, "Resolution:") != 16 {
		t.Errorf("error: %d codes\n%s", strings.Count(res.stdout, "Resolution:"), res.stdout)
	}
	if res := runBinaryEnv(t, dir, env, "error", "NOPE.X"); res.code != 1 || !strings.Contains(res.stderr, "error code not found: NOPE.X") {
		t.Errorf("error NOPE.X: %+v", res)
	}
}

// config show names every place reel looks in and where AWF's
// directories come from.
func TestConfigShowPlaces(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	env := isolatedEnv(t, home, "AWF_WORKFLOWS_PATH="+filepath.Join(dir, "envflows"), "AWF_CONFIG_HOME="+filepath.Join(dir, "awfcfg"))
	os.MkdirAll(filepath.Join(dir, ".awf"), 0o755)
	res := runBinaryEnv(t, dir, env, "config", "show", "--json")
	var sc shownConfig
	if err := json.Unmarshal([]byte(res.stdout), &sc); err != nil {
		t.Fatalf("%v\n%+v", err, res)
	}
	var wd []string
	for _, d := range sc.WorkflowDirs {
		wd = append(wd, d.Scope+":"+d.Path)
	}
	want := "env:" + filepath.Join(dir, "envflows") + "|local:" + filepath.Join(dir, ".reel", "workflows") + "|local:" + filepath.Join(dir, ".awf", "workflows") + "|global:" + filepath.Join(dir, "awfcfg", "workflows")
	if strings.Join(wd, "|") != want {
		t.Errorf("workflow_dirs:\n got %s\nwant %s", strings.Join(wd, "|"), want)
	}
	if sc.PackDirs[0] != filepath.Join(dir, ".awf", "workflow-packs") || sc.AWF["scripts_dir"].From != "$AWF_CONFIG_HOME" || sc.AWF["data_dir"].From != "$XDG_DATA_HOME/awf" {
		t.Errorf("packs %v, awf %v", sc.PackDirs, sc.AWF)
	}
	if len(sc.PromptDirs) != 3 || sc.PromptDirs[2].Path != filepath.Join(dir, "awfcfg", "prompts") {
		t.Errorf("prompt_dirs %v", sc.PromptDirs)
	}
	res = runBinaryEnv(t, dir, env, "config", "show")
	for _, want := range []string{"workflows  " + filepath.Join(dir, "envflows") + " (env)", "packs      " + filepath.Join(dir, ".awf", "workflow-packs"), "scripts_dir = " + filepath.Join(dir, "awfcfg", "scripts") + "  # $AWF_CONFIG_HOME"} {
		if !strings.Contains(res.stdout, want) {
			t.Errorf("config show lacks %q:\n%s", want, res.stdout)
		}
	}
}

// reel list prompts lists what @prompts/ finds, local over global.
func TestListPrompts(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	env := isolatedEnv(t, home)
	writeFile(t, filepath.Join(dir, ".awf", "prompts", "a.md"), "local", 0o644)
	writeFile(t, filepath.Join(home, ".config", "awf", "prompts", "a.md"), "global", 0o644)
	writeFile(t, filepath.Join(home, ".config", "awf", "prompts", "team", "b.md"), "global b", 0o644)
	res := runBinaryEnv(t, dir, env, "list", "prompts", "-f", "json")
	var ps []struct{ Name, Source, Path string }
	if err := json.Unmarshal([]byte(res.stdout), &ps); err != nil || len(ps) != 2 || ps[0].Name != "a.md" || ps[0].Source != "local" || ps[1].Name != "team/b.md" || ps[1].Source != "global" {
		t.Fatalf("list prompts: %v %+v", err, res)
	}
}

// newSearchServer answers GitHub's repository search with one pack whose
// description is the query it was asked.
func newSearchServer(t *testing.T) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/search/repositories" {
			http.NotFound(w, r)
			return
		}
		json.NewEncoder(w).Encode(map[string]any{"items": []map[string]any{{"full_name": "acme/awf-workflow-kit", "description": r.URL.Query().Get("q"), "stargazers_count": 42}}})
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}
