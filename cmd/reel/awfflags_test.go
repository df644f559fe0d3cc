package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reelhq/reel/internal/index"
)

// AWF's command lines, as its documentation writes them, run under reel.
func TestAWFCommandLines(t *testing.T) {
	dir := t.TempDir()
	wfs := filepath.Join(dir, ".awf", "workflows")
	writeFile(t, filepath.Join(wfs, "deploy.yaml"), `
name: deploy
inputs: [{name: env, required: true}]
states:
  initial: ship
  ship: {type: step, command: 'echo shipping {{.inputs.env}}; echo checked >&2', on_success: done}
  done: {type: terminal}
`, 0o644)
	writeFile(t, filepath.Join(wfs, "typo.yaml"), `
name: typo
states:
  initial: a
  a: {type: step, command: 'echo a', on_success: dnoe}
  done: {type: terminal}
`, 0o644)
	writeFile(t, filepath.Join(wfs, "flaky.yaml"), `
name: flaky
states:
  initial: try
  try: {type: step, command: 'test -f fixed && echo fine', on_success: done}
  done: {type: terminal}
`, 0o644)

	type check func(t *testing.T, res cliResult)
	exit := func(code int) check {
		return func(t *testing.T, res cliResult) {
			if res.code != code {
				t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", res.code, code, res.stdout, res.stderr)
			}
		}
	}
	stdout := func(want string, yes bool) check {
		return func(t *testing.T, res cliResult) {
			if strings.Contains(res.stdout, want) != yes {
				t.Errorf("stdout has %q: %v, want %v\n%s", want, !yes, yes, res.stdout)
			}
		}
	}
	stderr := func(want string, yes bool) check {
		return func(t *testing.T, res cliResult) {
			if strings.Contains(res.stderr, want) != yes {
				t.Errorf("stderr has %q: %v, want %v\n%s", want, !yes, yes, res.stderr)
			}
		}
	}
	isJSON := func(field, want string) check {
		return func(t *testing.T, res cliResult) {
			var v any
			if err := json.Unmarshal([]byte(res.stdout), &v); err != nil {
				t.Fatalf("stdout is not JSON: %v\n%s", err, res.stdout)
			}
			if field == "" {
				return
			}
			if m, _ := v.(map[string]any); m[field] != want {
				t.Errorf("%s = %v, want %q\n%s", field, m[field], want, res.stdout)
			}
		}
	}
	equals := func(want string) check {
		return func(t *testing.T, res cliResult) {
			if res.stdout != want {
				t.Errorf("stdout %q, want %q", res.stdout, want)
			}
		}
	}
	// in order: the status, history and resume cases read the runs before
	// them
	for _, c := range []struct {
		args   string
		checks []check
	}{
		{"run deploy --input env=prod --output streaming", []check{exit(0), stdout("ship │ shipping prod", true), stdout("ship │ checked", true)}},
		{"run deploy --input env=prod --output buffered", []check{exit(0), stdout("ship │ shipping prod", true)}},
		{"run deploy -i env=prod -o silent", []check{exit(0), stdout("✔ ship", true), stdout("│", false)}},
		{"run deploy --input env=prod --format json", []check{exit(0), isJSON("status", "success")}},
		{"run deploy -i env=prod -f json -o streaming", []check{exit(0), isJSON("status", "success")}},
		{"run deploy -i env=prod -f quiet", []check{exit(0), equals(""), stderr("run ", false)}},
		{"run deploy -i env=prod -f table --verbose --skip-plugins --no-hints", []check{exit(0), stdout("ship │ shipping prod", true)}},
		{"run deploy -i env=prod -o bogus", []check{exit(1), stderr("invalid output mode: bogus (valid: silent, streaming, buffered)", true)}},
		{"run deploy -i env=prod -f bogus", []check{exit(1), stderr("invalid output format: bogus (valid: text, json, table, quiet)", true)}},
		{"run deploy -i env=prod -f json -q", []check{exit(1), stderr("exclude each other", true)}},
		{"run deploy -i env=prod -f json -f quiet", []check{exit(1), stderr("exclude each other", true)}},
		{"status --latest -f quiet", []check{exit(0), equals("success\n")}},
		{"status --latest -f json", []check{exit(0), isJSON("status", "success")}},
		{"list -f quiet", []check{exit(0), equals("deploy\nflaky\ntypo\n")}},
		{"list -f json", []check{exit(0), isJSON("", "")}},
		{"list -f table", []check{exit(0), stdout("NAME", true), stdout("deploy", true)}},
		{"validate deploy --verbose --skip-plugins", []check{exit(0), stdout("deploy.yaml: ok", true)}},
		{"validate deploy -f json", []check{exit(0), stdout(`"valid": true`, true)}},
		{"validate typo", []check{exit(2), stdout(`unknown state "dnoe" (did you mean "done"?)`, true)}},
		{"validate typo --no-hints", []check{exit(2), stdout(`unknown state "dnoe"`, true), stdout("did you mean", false)}},
		{"validate typo --no-hints -f json", []check{exit(2), stdout(`unknown state \"dnoe\"`, true), stdout("did you mean", false)}},
		{"run typo --no-hints", []check{exit(2), stderr(`unknown state "dnoe"`, true), stderr("did you mean", false)}},
		{"run flaky -o silent", []check{exit(3)}},
		{"resume-list", []check{exit(0), stdout("flaky", true), stdout("deploy", false)}},
		{"resume --latest -o buffered -f json --verbose", []check{exit(3), isJSON("status", "failure")}},
	} {
		t.Run(c.args, func(t *testing.T) {
			res := runBinary(t, dir, strings.Fields(c.args)...)
			for _, ch := range c.checks {
				ch(t, res)
			}
		})
	}
	writeFile(t, filepath.Join(dir, "fixed"), "", 0o644)
	res := runBinary(t, dir, "resume", "--latest", "-o", "buffered", "--format", "json")
	if res.code != 0 {
		t.Fatalf("resume after the fix: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	if res := runBinary(t, dir, "status", "--latest", "-f", "quiet"); res.stdout != "success\n" {
		t.Errorf("status after the resume: %q", res.stdout)
	}

	// awf history: seven runs of deploy, flaky's one run resumed to success
	res = runBinary(t, dir, "history", "--stats", "-f", "json")
	var tally index.Tally
	if err := json.Unmarshal([]byte(res.stdout), &tally); err != nil || res.code != 0 {
		t.Fatalf("history --stats: exit %d, %v\n%s%s", res.code, err, res.stdout, res.stderr)
	}
	if tally.Runs != 8 || tally.ByStatus["success"] != 8 || tally.ByStatus["failure"] != 0 || tally.AvgDurationMS <= 0 {
		t.Errorf("history --stats: %+v", tally)
	}
	flaky := runBinary(t, dir, "status", "--latest", "--json")
	var at struct {
		RunID string `json:"run_id"`
	}
	json.Unmarshal([]byte(flaky.stdout), &at)
	if res := runBinary(t, dir, "history", "-w", "flaky", "-s", "completed", "-n", "5", "-f", "quiet"); res.stdout != at.RunID+"\n" {
		t.Errorf("history -w flaky -s completed -f quiet: %q, want the run id %s\n%s", res.stdout, at.RunID, res.stderr)
	}
	if res := runBinary(t, dir, "history", "-s", "failed", "-f", "quiet"); res.code != 0 || res.stdout != "" {
		t.Errorf("history -s failed: exit %d, %q", res.code, res.stdout)
	}
	if res := runBinary(t, dir, "history", "--stats"); !strings.Contains(res.stdout, "success       8\n") {
		t.Errorf("history --stats:\n%s", res.stdout)
	}
}

// awf resume --from current|previous: the state the run stopped in (a
// plain resume) and the state before it, run again with what follows.
func TestResumeFromAWFKeywords(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "wf.yaml"), `
name: keywords
states:
  initial: prep
  prep: {type: step, command: 'echo prep >> ran.txt', on_success: check}
  check: {type: step, command: 'echo check >> ran.txt; test -f fixed', on_success: report}
  report: {type: step, command: 'echo report >> ran.txt'}
`, 0o644)
	writeFile(t, filepath.Join(dir, "first.yaml"), `
name: first
states:
  initial: only
  only: {type: step, command: 'exit 4'}
`, 0o644)
	ran := func() string {
		b, _ := os.ReadFile(filepath.Join(dir, "ran.txt"))
		return strings.Join(strings.Fields(string(b)), " ")
	}
	if res := runBinary(t, dir, "run", "wf.yaml"); res.code != 3 {
		t.Fatalf("run: %+v", res)
	}
	if res := runBinary(t, dir, "resume", "--latest", "--from", "previous"); res.code != 3 || ran() != "prep check prep check" {
		t.Fatalf("--from previous: exit %d, ran %q\n%s", res.code, ran(), res.stderr)
	}
	writeFile(t, filepath.Join(dir, "fixed"), "", 0o644)
	if res := runBinary(t, dir, "resume", "--latest", "--from", "current"); res.code != 0 || ran() != "prep check prep check check report" {
		t.Fatalf("--from current: exit %d, ran %q\n%s", res.code, ran(), res.stderr)
	}
	if res := runBinary(t, dir, "run", "first.yaml"); res.code != 3 {
		t.Fatalf("run first: %+v", res)
	}
	if res := runBinary(t, dir, "resume", "--latest", "--from", "previous"); res.code != 1 || !strings.Contains(res.stderr, "only, where the run stopped, is the first state it ran") {
		t.Fatalf("--from previous at the first state: %+v", res)
	}
}
