package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/reelhq/reel/internal/rerun"
	"github.com/reelhq/reel/transcript"
)

// replayWorkflow has agent steps at the top, in a loop and in a
// sub-workflow; its prompts read command output, so a changed command
// changes a prompt.
const replayWorkflow = `
name: replayable
inputs: [{name: topic, default: "main.go"}]
outputs:
  - {name: review, from: 'states.review.Output'}
  - {name: report, from: 'states.report.Output'}
  - {name: sub, from: 'states.sub.Data.verdict'}
states:
  initial: facts
  facts: {type: step, command: 'echo "{{.inputs.topic}} has 3 functions"', on_success: review}
  review:
    type: agent
    provider: claude
    prompt: 'Review {{.inputs.topic}}. Facts: {{.states.facts.Output}}'
    system_prompt: You are terse.
    options: {command: ./fake-claude}
    on_success: each
  each: {type: for_each, items: '["a","b"]', body: [ask], on_complete: sub}
  ask:
    type: agent
    provider: claude
    prompt: 'Part {{.loop.Item}} of {{.inputs.topic}}'
    options: {command: ./fake-claude}
  sub: {type: call_workflow, workflow: replaychild, inputs: {topic: '{{.inputs.topic}}'}, on_success: report}
  report: {type: step, command: 'echo "{{.states.review.TokensUsed}} tokens: {{.states.ask.Output}}"'}
`

const replayChild = `
name: replaychild
inputs: [{name: topic, required: true}]
outputs: [{name: verdict, from: 'states.judge.Output'}]
states:
  initial: judge
  judge:
    type: agent
    provider: claude
    prompt: 'Judge {{.inputs.topic}}'
    options: {command: ./fake-claude}
`

// replayDir writes the workflow and a fake claude that counts its calls in
// calls.log and replays the bundled recorded Claude Code session.
func replayDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	rec, err := filepath.Abs("../../examples/recordings/claude-review.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	// Each call numbers its tool ids, as a real agent's are unique.
	writeFile(t, filepath.Join(dir, "fake-claude"), `#!/bin/sh
log="$(dirname "$0")/calls.log"
echo called >> "$log"
n=$(wc -l < "$log" | tr -d ' ')
exec sed "s/toolu_01DemoRead/toolu_call$n/g" `+rec+"\n", 0o755)
	writeFile(t, filepath.Join(dir, "wf.yaml"), replayWorkflow, 0o644)
	writeFile(t, filepath.Join(dir, "replaychild.yaml"), replayChild, 0o644)
	return dir
}

func calls(t *testing.T, dir string) int {
	b, err := os.ReadFile(filepath.Join(dir, "calls.log"))
	if os.IsNotExist(err) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), "called\n")
}

// exchange is what an agent step's message and tool events said, per step
// execution, without envelope.
func exchange(t *testing.T, path string) map[string][]string {
	t.Helper()
	rec, err := rerun.Load(path, rerun.Options{Exchange: true})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, x := range rec.Executions {
		for _, ev := range x.Exchange {
			b, err := json.Marshal(ev.Payload)
			if err != nil {
				t.Fatal(err)
			}
			k := x.Path + "#" + string(rune('0'+x.Iteration))
			out[k] = append(out[k], string(ev.Type)+" "+string(b))
		}
	}
	return out
}

func TestRunReplayFrom(t *testing.T) {
	dir := replayDir(t)
	storage := filepath.Join(dir, "st")
	live := runBinary(t, dir, "run", "wf.yaml", "--storage", storage, "--json")
	want := runOutputs(t, live)
	var liveSum runJSON
	json.Unmarshal([]byte(live.stdout), &liveSum)
	if n := calls(t, dir); n != 4 {
		t.Fatalf("the live run called the agent %d times, want 4", n)
	}
	os.Remove(filepath.Join(dir, "calls.log"))

	res := runBinary(t, dir, "run", "wf.yaml", "--storage", storage, "--json", "--replay-from", liveSum.RunID[:8])
	got := runOutputs(t, res)
	if n := calls(t, dir); n != 0 {
		t.Fatalf("the replayed run called the agent %d times", n)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("replayed outputs %v, want %v", got, want)
	}
	var sum runJSON
	json.Unmarshal([]byte(res.stdout), &sum)
	if sum.ReplayedFrom != liveSum.RunID || sum.Usage != liveSum.Usage {
		t.Fatalf("summary %+v, live %+v", sum, liveSum)
	}
	if res := runBinary(t, dir, "verify", storage); res.code != 0 {
		t.Fatalf("verify: %+v", res)
	}
	// The same messages and tool calls, fidelity included, step by step.
	livePath := filepath.Join(transcript.Dir(storage), liveSum.RunID+".jsonl")
	if a, b := exchange(t, livePath), exchange(t, sum.Transcript); !reflect.DeepEqual(a, b) {
		t.Fatalf("exchange differs:\nlive %v\nreplay %v", a, b)
	}
	evs, err := transcript.ReadFile(sum.Transcript)
	if err != nil {
		t.Fatal(err)
	}
	agents := 0
	for _, ev := range evs {
		if ev.Type == transcript.StepCompleted && ev.Step().Kind == transcript.KindAgent {
			var ar transcript.AgentResult
			transcript.DecodeResult(ev.Step().Result, &ar)
			if ar.ReplayedFrom != liveSum.RunID {
				t.Fatalf("agent result %s lacks replayed_from", ev.Path)
			}
			agents++
		}
		if ev.Type == transcript.RunStarted {
			var in transcript.RunInput
			transcript.DecodeResult(ev.Step().Input, &in)
			if in.ReplayFrom != liveSum.RunID {
				t.Fatalf("run.started input %+v", in)
			}
		}
	}
	if agents != 3 {
		t.Fatalf("%d agent steps in the replayed parent, want 3", agents)
	}

	// A prompt that drifted fails its step with a diff of the prompts.
	drift := runBinary(t, dir, "run", "wf.yaml", "--storage", storage, "--replay-from", liveSum.RunID, "--input", "topic=engine.go")
	if drift.code == 0 || !strings.Contains(drift.stdout, "-Review main.go. Facts: main.go has 3 functions") ||
		!strings.Contains(drift.stdout, "+Review engine.go. Facts: engine.go has 3 functions") || !strings.Contains(drift.stdout, "--allow-prompt-drift") {
		t.Fatalf("drift: exit %d\n%s\n%s", drift.code, drift.stdout, drift.stderr)
	}
	allowed := runBinary(t, dir, "run", "wf.yaml", "--storage", storage, "--replay-from", liveSum.RunID, "--input", "topic=engine.go", "--allow-prompt-drift", "--json")
	runOutputs(t, allowed)
	if n := calls(t, dir); n != 0 {
		t.Fatalf("drifting replays called the agent %d times", n)
	}
	// A replay of a replay is a replay of the same replies.
	again := runBinary(t, dir, "run", "wf.yaml", "--storage", storage, "--json", "--replay-from", sum.RunID)
	if got := runOutputs(t, again); !reflect.DeepEqual(got, want) {
		t.Fatalf("replay of a replay: %v", got)
	}
	if res := runBinary(t, dir, "run", "wf.yaml", "--storage", storage, "--allow-prompt-drift"); res.code != exitUser {
		t.Fatalf("--allow-prompt-drift alone: %+v", res)
	}
	if res := runBinary(t, dir, "run", "wf.yaml", "--storage", storage, "--replay-from", "ffffffff"); res.code != exitUser || strings.Contains(res.stderr, "transcript ") {
		t.Fatalf("unknown --replay-from: %+v", res)
	}
}

// A replay that stopped (here: a command step failed before the agent
// steps) resumes as a replay: the agent steps still take the recorded
// replies, with no provider call, and the outputs are the recording's.
func TestResumeOfAReplayKeepsReplaying(t *testing.T) {
	dir := replayDir(t)
	storage := filepath.Join(dir, "st")
	gate := filepath.Join(dir, "gate")
	writeFile(t, gate, "", 0o644)
	gated := strings.Replace(replayWorkflow, `facts: {type: step, command: 'echo "{{.inputs.topic}} has 3 functions"'`,
		`facts: {type: step, command: 'test -e `+gate+` && echo "{{.inputs.topic}} has 3 functions"'`, 1)
	writeFile(t, filepath.Join(dir, "wf.yaml"), gated, 0o644)
	live := runBinary(t, dir, "run", "wf.yaml", "--storage", storage, "--json")
	want := runOutputs(t, live)
	var liveSum runJSON
	json.Unmarshal([]byte(live.stdout), &liveSum)
	os.Remove(filepath.Join(dir, "calls.log"))

	os.Remove(gate)
	res := runBinary(t, dir, "run", "wf.yaml", "--storage", storage, "--json", "--replay-from", liveSum.RunID)
	var failed runJSON
	if err := json.Unmarshal([]byte(res.stdout), &failed); err != nil || failed.Status != "failure" {
		t.Fatalf("the gated replay: %v %+v\n%s", err, failed, res.stderr)
	}
	writeFile(t, gate, "", 0o644)
	resumed := runBinary(t, dir, "resume", failed.RunID, "--json", "--storage", storage)
	if got := runOutputs(t, resumed); !reflect.DeepEqual(got, want) {
		t.Fatalf("resumed replay outputs %v, want %v", got, want)
	}
	if n := calls(t, dir); n != 0 {
		t.Fatalf("the resumed replay called the agent %d times", n)
	}
	var sum runJSON
	json.Unmarshal([]byte(resumed.stdout), &sum)
	if sum.ReplayedFrom != liveSum.RunID {
		t.Fatalf("resumed summary: replayed_from %q, want %s", sum.ReplayedFrom, liveSum.RunID)
	}
	if res := runBinary(t, dir, "verify", storage); res.code != 0 {
		t.Fatalf("verify: %+v", res)
	}
	// The recording gone, the resume is refused rather than calling the
	// provider.
	os.Remove(filepath.Join(dir, "gate"))
	again := runBinary(t, dir, "run", "wf.yaml", "--storage", storage, "--json", "--replay-from", liveSum.RunID)
	var f2 runJSON
	json.Unmarshal([]byte(again.stdout), &f2)
	os.Rename(filepath.Join(transcript.Dir(storage), liveSum.RunID+".jsonl"), filepath.Join(dir, "moved.jsonl"))
	writeFile(t, gate, "", 0o644)
	if res := runBinary(t, dir, "resume", f2.RunID, "--storage", storage); res.code != exitUser || !strings.Contains(res.stderr, "replays run "+liveSum.RunID) {
		t.Fatalf("resume of a replay whose recording is gone: %+v", res)
	}
	if n := calls(t, dir); n != 0 {
		t.Fatalf("the refused resume called the agent %d times", n)
	}
}
