package main

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/reelhq/reel/internal/exitcode"
	"github.com/reelhq/reel/internal/testfixtures"
)

// pendingOtherBranch lists the AWF fixtures that need a feature another
// branch of issue 10 adds; until it merges, the corpus tests skip them.
// The integrator empties the entries of a branch when merging it.
var pendingOtherBranch = map[string]string{}

// awfCorpus returns AWF's fixture directory and its validate verdicts
// (fixture name -> "valid" or "invalid"), or skips the test.
func awfCorpus(t *testing.T) (dir string, verdicts map[string]string) {
	t.Helper()
	root := filepath.Join(testfixtures.Root(t), "awf")
	f, err := os.Open(filepath.Join(root, "expected.tsv"))
	if err != nil {
		t.Skipf("AWF corpus not found: %v", err)
	}
	defer f.Close()
	verdicts = map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, v, ok := strings.Cut(sc.Text(), "\t")
		if !ok || name == "fixture" {
			continue
		}
		verdicts[name] = v
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(root, "fixtures"), verdicts
}

// newAWFProject lays out a project the way AWF's verdicts were taken: every
// workflow fixture in .awf/workflows/ (so that call_workflow finds its
// children), the scripts beside them (script_file paths are relative to
// the workflow), the templates and prompts in .awf/. It returns the
// project directory.
func newAWFProject(t testing.TB, fixtures string) string {
	t.Helper()
	return newAWFProjectAt(t, fixtures, t.TempDir())
}

var problemLineRE = regexp.MustCompile(`^[^:\s]+\.yaml:\d+:\d+: `)

// TestAWFValidateTable: over every workflow of AWF's corpus, reel validate
// gives AWF's verdict: exit 0 for the 82 AWF accepts, exit 2 (AWF's
// workflow error) for the 29 it refuses, each problem named as
// file:line:col.
func TestAWFValidateTable(t *testing.T) {
	fixtures, verdicts := awfCorpus(t)
	if len(verdicts) != 111 {
		t.Fatalf("expected.tsv holds %d verdicts, want 111", len(verdicts))
	}
	proj := newAWFProject(t, fixtures)
	agree, pending := 0, 0
	for name, want := range verdicts {
		t.Run(name, func(t *testing.T) {
			res := runBinary(t, proj, "validate", name)
			if why, ok := pendingOtherBranch[name]; ok && res.code != map[string]int{"valid": exitcode.OK, "invalid": exitcode.Workflow}[want] {
				pending++
				t.Skipf("pending: %s", why)
			}
			switch want {
			case "valid":
				if res.code != exitcode.OK {
					t.Fatalf("AWF accepts %s; reel validate exits %d:\n%s%s", name, res.code, res.stdout, res.stderr)
				}
				if !strings.HasSuffix(res.stdout, ": ok\n") {
					t.Errorf("stdout does not end with ok:\n%s", res.stdout)
				}
			case "invalid":
				if res.code != exitcode.Workflow {
					t.Fatalf("AWF refuses %s; reel validate exits %d (want %d):\n%s%s", name, res.code, exitcode.Workflow, res.stdout, res.stderr)
				}
				for _, line := range strings.Split(strings.TrimSpace(res.stdout), "\n") {
					if !problemLineRE.MatchString(line) {
						t.Errorf("problem without file:line:col: %q", line)
					}
				}
			default:
				t.Fatalf("verdict %q", want)
			}
			agree++
		})
	}
	t.Logf("reel validate agrees with AWF on %d of %d fixtures; %d pending another branch", agree, len(verdicts), pending)
}

// A bad flag or a wrong number of arguments is a user error (exit 1) for
// run, resume, validate and diagram, AWF's commands ("Invalid flag" in AWF's
// exit-code table, and what AWF's binary exits), while the reading
// commands keep exit 2, diff(1)'s "no answer". The real binary runs, so
// the status is the one a shell sees.
func TestAWFUsageErrorsExitOne(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"run"}, 1, "accepts 1 arg(s), received 0"},
		{[]string{"run", "a.yaml", "b.yaml"}, 1, "accepts 1 arg(s), received 2"},
		{[]string{"run", "a.yaml", "--no-such-flag"}, 1, "unknown flag: --no-such-flag"},
		{[]string{"validate"}, 1, "requires at least 1 arg(s)"},
		{[]string{"validate", "a.yaml", "--no-such-flag"}, 1, "unknown flag: --no-such-flag"},
		{[]string{"resume", "--no-such-flag"}, 1, "unknown flag: --no-such-flag"},
		{[]string{"resume", "a", "b"}, 1, "accepts at most 1 arg(s)"},
		{[]string{"diagram", "--no-such-flag"}, 1, "unknown flag: --no-such-flag"},
		{[]string{"tree", "--no-such-flag"}, 2, "unknown flag: --no-such-flag"},
	} {
		r := runBinary(t, dir, tc.args...)
		if r.code != tc.code || !strings.Contains(r.stderr, tc.msg) {
			t.Errorf("reel %s: exit %d, stderr %q; want exit %d and %q", strings.Join(tc.args, " "), r.code, r.stderr, tc.code, tc.msg)
		}
	}
}

// reel run says what loads but does nothing, as validate does: a state's
// when and loop (AWF ignores both; so does reel) are warnings on stderr
// with file:line:col before the run; the run goes on as in AWF, and
// --quiet leaves the warnings out.
func TestRunPrintsWorkflowWarnings(t *testing.T) {
	dir := t.TempDir()
	wf := filepath.Join(dir, "w.yaml")
	if err := os.WriteFile(wf, []byte(`name: w
states:
  initial: a
  a:
    type: step
    command: echo once
    loop:
      items: '["p","q"]'
    when: "false"
    on_success: done
  done:
    type: terminal
`), 0o644); err != nil {
		t.Fatal(err)
	}
	storage := filepath.Join(dir, "storage")
	r := runBinary(t, dir, "run", wf, "--storage", storage)
	for _, want := range []string{
		wf + `:7:5: warning: step state "a": "loop" is ignored`,
		wf + `:9:5: warning: step state "a": "when" is ignored`,
	} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	if r.code != 0 || strings.Count(r.stdout, "a │ once") != 1 {
		t.Errorf("exit %d, stdout:\n%s", r.code, r.stdout)
	}
	if r := runBinary(t, dir, "run", wf, "--storage", storage, "--quiet"); r.code != 0 || strings.Contains(r.stderr, "warning") {
		t.Errorf("--quiet: exit %d, stderr %q", r.code, r.stderr)
	}
}

// awfOwnWarn are reel's own differential workflows that load with a
// warning on purpose; every other one passes validate --strict, as every
// file AWF runs should when nothing in it is suspect (a for_each
// break_when reading loop.Item, a transition whose when is empty).
var awfOwnWarn = map[string]string{
	"awf-interplay.yaml":      "a state's when, which AWF ignores",
	"awf-missing-script.yaml": "a script_file that does not exist",
}

func TestAWFOwnWorkflowsValidateStrict(t *testing.T) {
	// the project the differential test runs them in: AWF's fixtures
	// (templates, scripts, prompts) and reel's own workflows
	fixtures, _ := awfCorpus(t)
	proj := newAWFProjectAt(t, fixtures, t.TempDir())
	copyTree(t, filepath.Join("testdata", "awfown"), filepath.Join(proj, ".awf", "workflows"))
	home := t.TempDir()
	for _, c := range awfCases {
		if !c.own {
			continue
		}
		for name, content := range c.files {
			writeFile(t, filepath.Join(proj, name), content, 0o644)
		}
		for name, content := range c.home {
			writeFile(t, filepath.Join(home, name), content, 0o644)
		}
	}
	env := append(os.Environ(), "REEL_STORAGE=", "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"),
		"XDG_DATA_HOME="+filepath.Join(home, ".local", "share"), "AWF_WORKFLOWS_PATH=")
	files, _ := filepath.Glob(filepath.Join("testdata", "awfown", "*.yaml"))
	for i, f := range files {
		files[i] = filepath.Join(proj, ".awf", "workflows", filepath.Base(f))
	}
	if len(files) < 20 {
		t.Fatalf("%d workflows in testdata/awfown", len(files))
	}
	// one validate for every file that must pass, one per file that warns
	var clean []string
	for _, f := range files {
		why, warns := awfOwnWarn[filepath.Base(f)]
		if !warns {
			clean = append(clean, f)
			continue
		}
		if r := runBinaryEnv(t, proj, env, "validate", "--strict", f); r.code != 2 || !strings.Contains(r.stdout+r.stderr, "warning") {
			t.Errorf("%s (%s): validate --strict exit %d, want 2 with a warning\n%s", filepath.Base(f), why, r.code, r.stderr)
		}
	}
	r := runBinaryEnv(t, proj, env, append([]string{"validate", "--strict"}, clean...)...)
	if r.code != 0 || strings.Contains(r.stderr+r.stdout, "warning") || strings.Count(r.stdout, ": ok") != len(clean) {
		t.Errorf("validate --strict of %d files: exit %d\n%s%s", len(clean), r.code, r.stdout, r.stderr)
	}
}
