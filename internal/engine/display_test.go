package engine

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/reelhq/reel/internal/golden"
)

// The display of a sequential workflow, durations blanked, is golden
// (testdata/display.golden; regenerate with -update).
func TestDisplayGolden(t *testing.T) {
	h := newHarness(t)
	h.write("child.yaml", "name: child\nstates:\n  initial: c\n  c: {type: step, command: 'echo from child'}\n")
	rep := h.run(context.Background(), `
name: show
states:
  initial: hello
  hello:
    type: step
    command: 'printf "line one\nline two\nno newline"'
    on_success: each
  each:
    type: for_each
    items: '["a","b"]'
    body: [item]
    on_complete: flaky
  item: {type: step, command: 'echo item {{.loop.Item}} >&2'}
  flaky:
    type: step
    command: 'echo trying; exit 2'
    retry: {max_attempts: 2}
    on_failure: sub
  sub: {type: call_workflow, workflow: child, on_success: end}
  end: {type: terminal, status: failure, message: 'gave up after {{.states.flaky.ExitCode}}'}
`, nil)
	if rep.ExitCode != 3 {
		t.Fatalf("report %+v", rep)
	}
	got := normalize(h.display.Bytes())
	golden.Check(t, filepath.Join("testdata", "display.golden"), got)
}
