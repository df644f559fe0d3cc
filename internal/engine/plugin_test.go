package engine

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reelhq/reel/internal/exitcode"
	"github.com/reelhq/reel/internal/plugin"
	"github.com/reelhq/reel/internal/plugin/plugintest"
	"github.com/reelhq/reel/transcript"
)

// pluginHarness is a harness whose engine hosts reel's test plugins.
func pluginHarness(t *testing.T, config map[string]map[string]any, names ...string) *harness {
	h := newHarness(t)
	h.e.PluginHost = plugintest.Open(t, plugin.Options{Config: config}, names...)
	return h
}

// Every state that runs, nested ones included, is a step to event
// subscribers; terminal states are not; a retried state is one step with
// step.retrying between its attempts.
func TestPluginLifecycleEvents(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "events.log")
	h := pluginHarness(t, map[string]map[string]any{"recorder": {"log": log}}, "recorder")
	h.e.PluginHost.StartSubscribers(context.Background())
	rep := h.run(context.Background(), `name: ev
states:
  initial: both
  both:
    type: parallel
    parallel: [left, right]
    on_success: each
  left:
    type: step
    command: "true"
  right:
    type: step
    command: "true"
  each:
    type: for_each
    items: '["a", "b"]'
    body: [item]
    on_complete: flaky
  item:
    type: step
    command: echo {{.loop.Item}}
  flaky:
    type: step
    command: 'test -f `+filepath.Join(dir, "done")+` || { touch `+filepath.Join(dir, "done")+`; exit 3; }'
    retry:
      max_attempts: 3
      initial_delay: 1ms
    on_success: end
  end:
    type: terminal
`, nil)
	if rep.Status != "success" {
		t.Fatalf("run: %+v", rep)
	}
	h.e.PluginHost.Close()
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if !strings.Contains(l, "source=core") {
			continue
		}
		f := strings.Fields(l)
		got = append(got, f[0]+" "+strings.TrimPrefix(f[1], "step=")+" "+strings.TrimPrefix(f[5], "attempt=")+" "+strings.TrimPrefix(f[6], "path="))
	}
	// the branches run at once: their order is not fixed
	norm := strings.Join(got, "\n")
	norm = strings.NewReplacer("right  both.right", "BRANCH", "left  both.left", "BRANCH").Replace(norm)
	want := strings.Join([]string{
		"workflow.started   ",
		"step.started both  ",
		"step.started BRANCH", "step.started BRANCH", "step.completed BRANCH", "step.completed BRANCH",
		"step.completed both  ",
		"step.started each  ",
		"step.started item  each.item", "step.completed item  each.item",
		"step.started item  each.item", "step.completed item  each.item",
		"step.completed each  ",
		"step.started flaky  ",
		"step.retrying flaky 1 ",
		"step.completed flaky  ",
		"workflow.completed   ",
	}, "\n")
	if norm != want {
		t.Errorf("events:\n%s\nwant\n%s", norm, want)
	}
}

// A plugin that cannot serve the state ends the run there (on_failure is
// not followed); an operation that fails, or an input the schema refuses,
// fails the state like any step.
func TestPluginOperationOutcomes(t *testing.T) {
	h := pluginHarness(t, nil, "echo", "steps")
	rep := h.run(context.Background(), `name: ops
states:
  initial: refused
  refused:
    type: operation
    operation: echo.fail
    inputs:
      reason: nope
    on_failure: bad_input
  bad_input:
    type: operation
    operation: echo.echo
    inputs:
      text: x
      repeat: "{{.states.refused.Status}}"
    on_failure: exit
  exit:
    type: steps.exit
    config:
      code: 6
    on_failure: unknown
  unknown:
    type: operation
    operation: echo.shout
    on_failure: never
  never:
    type: terminal
`, nil)
	if rep.Status != "failure" || rep.ExitCode != exitcode.User || !strings.Contains(rep.Error, `state unknown: plugin echo has no operation "shout"`) {
		t.Errorf("report: %+v", rep)
	}
	got := map[string]*transcript.StepPayload{}
	for _, ev := range readAll(t, rep.TranscriptPath) {
		if ev.Type == transcript.StepCompleted {
			got[ev.Step().Name] = ev.Step()
		}
	}
	for name, want := range map[string]string{
		"refused":   "echo.fail: refused: nope",
		"bad_input": `echo.echo: inputs: repeat: want an integer, got "failed"`,
		"exit":      "steps.exit: exit code 6: exiting 6",
		"unknown":   `plugin echo has no operation "shout" (it has: echo, fail, emit)`,
	} {
		if got[name] == nil || got[name].Error != want {
			t.Errorf("%s: %+v, want error %q", name, got[name], want)
		}
	}
	if got["never"] != nil {
		t.Error("on_failure of an unknown operation was followed")
	}
	var res plugin.OperationResult
	if err := transcript.DecodeResult(got["refused"].Result, &res); err != nil || res.Plugin != "echo" || res.Success || res.Inputs["reason"] != "nope" {
		t.Errorf("refused's result: %+v %v", res, err)
	}
}
