// Package launchtest sets up what the tests of the run launcher, and of
// the servers that start runs through it (reel serve's run API), start
// runs in: a project holding workflows, and the workflows that put a
// launcher to the test (one that fails until it is fixed, one that
// ignores SIGTERM).
package launchtest

import (
	"os"
	"path/filepath"
	"testing"
)

// Flaky fails at its second step until a file named ok is in the working
// directory: a run to resume.
const Flaky = `name: flaky
states:
  initial: first
  first:
    type: step
    command: echo one
    on_success: second
  second:
    type: step
    command: test -f ok
    on_success: done
  done:
    type: terminal
`

// Stubborn ignores SIGTERM and writes its shell's pid to stubborn.pid in
// the working directory, then sleeps a minute: a run whose cancel must
// kill.
const Stubborn = `name: stubborn
states:
  initial: wait
  wait:
    type: step
    command: trap '' TERM; echo $$ > stubborn.pid; sleep 60
    on_success: done
  done:
    type: terminal
`

// Project writes workflows (name to YAML) into a fresh project's
// .reel/workflows and returns the project's directory.
func Project(t testing.TB, workflows map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range workflows {
		p := filepath.Join(dir, ".reel", "workflows", name+".yaml")
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}
