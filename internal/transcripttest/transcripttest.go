// Package transcripttest writes realistic run transcripts with the real
// transcript Recorder, for the tests of the reading commands and of the
// converters to and from other formats, and checks and summarizes the
// transcripts those produce.
//
// The sample run exercises everything a reader must reconstruct: an agent
// step with prompt, system prompt, thinking, text and tool calls; command
// steps; a retried step; loop iterations; nested loops; parallel branches
// interleaving; a sub-workflow in a child transcript; a dangling tool call.
// Timestamps come from a fake clock so renderings are stable.
package transcripttest

import (
	"testing"
	"time"

	"github.com/reelhq/reel/transcript"
)

// Fixed run ids of the sample, so golden files stay stable.
const (
	RootID  = "11111111-1111-4111-8111-111111111111"
	ChildID = "22222222-2222-4222-8222-222222222222"
	// OtherID is a second run of the same workflow, for diff.
	OtherID = "33333333-3333-4333-8333-333333333333"
)

// Epoch is the sample's first timestamp.
var Epoch = time.Date(2026, 6, 8, 8, 14, 42, 0, time.UTC)

// Run records the events of one run into dir with a fake clock.
type Run struct {
	t   testing.TB
	rec *transcript.Recorder
	now time.Time
}

// NewRun creates the transcript of id in dir. parent is the parent run id of
// a child run, or "".
func NewRun(t testing.TB, dir, id, parent string, start time.Time) *Run {
	t.Helper()
	rec, err := transcript.Create(dir, id, transcript.Options{ParentRunID: parent})
	if err != nil {
		t.Fatalf("create transcript: %v", err)
	}
	return &Run{t: t, rec: rec, now: start}
}

// Recorder returns the underlying recorder.
func (r *Run) Recorder() *transcript.Recorder { return r.rec }

// Advance moves the fake clock.
func (r *Run) Advance(d time.Duration) { r.now = r.now.Add(d) }

// Now is the fake clock's time.
func (r *Run) Now() time.Time { return r.now }

// Event records e at the fake clock's time and advances it 10 ms.
func (r *Run) Event(e transcript.ExchangeEvent) {
	r.t.Helper()
	if e.Timestamp.IsZero() {
		e.Timestamp = r.now
	}
	if _, err := r.rec.Record(e); err != nil {
		r.t.Fatalf("record %s %s: %v", e.Type, e.Path, err)
	}
	r.now = r.now.Add(10 * time.Millisecond)
}

// Start records a step.started.
func (r *Run) Start(path string, iteration int, kind string, attempt int) {
	r.Event(transcript.ExchangeEvent{Type: transcript.StepStarted, Path: path, Iteration: iteration,
		Payload: &transcript.StepPayload{Name: lastSegment(path), Kind: kind, Attempt: attempt}})
}

// Complete records a step.completed.
func (r *Run) Complete(path string, iteration int, kind string, attempt int, errMsg string, result any) {
	r.Event(transcript.ExchangeEvent{Type: transcript.StepCompleted, Path: path, Iteration: iteration,
		Payload: &transcript.StepPayload{Name: lastSegment(path), Kind: kind, Attempt: attempt, Error: errMsg, Result: result}})
}

// Command records a whole command step.
func (r *Run) Command(path string, iteration, attempt int, command string, exit int, output, errMsg string) {
	r.Event(transcript.ExchangeEvent{Type: transcript.StepStarted, Path: path, Iteration: iteration,
		Payload: &transcript.StepPayload{Name: lastSegment(path), Kind: transcript.KindCommand, Command: command, Attempt: attempt}})
	r.Advance(200 * time.Millisecond)
	r.Complete(path, iteration, transcript.KindCommand, attempt, errMsg,
		transcript.CommandResult{ExitCode: exit, Output: output, DurationMS: 200})
}

// Agent records a whole agent step: the prompt pair, a reply with
// thinking, the tool calls (a tool with output "" and error "no result: …"
// is dangling) and a final text, and the step.completed with usage.
func (r *Run) Agent(path string, iteration int, prompt, system string, tools []Tool, reply string, usage transcript.Usage, cost float64) {
	r.Start(path, iteration, transcript.KindAgent, 0)
	blocks := []transcript.ContentBlock{{Type: transcript.BlockText, Fidelity: transcript.FidelityRouter, Text: prompt}}
	if system != "" {
		blocks = append(blocks, transcript.ContentBlock{Type: transcript.BlockText, Fidelity: transcript.FidelityRouter, Text: system})
	}
	r.Event(transcript.ExchangeEvent{Type: transcript.MessageUser, Path: path, Iteration: iteration,
		Payload: &transcript.MessagePayload{Role: "user", Blocks: blocks}})
	for _, tl := range tools {
		r.Advance(300 * time.Millisecond)
		r.Event(transcript.ExchangeEvent{Type: transcript.MessageAssistant, Path: path, Iteration: iteration,
			Payload: &transcript.MessagePayload{Role: "assistant", Blocks: []transcript.ContentBlock{
				{Type: transcript.BlockThinking, Fidelity: transcript.FidelityAgentEmitted, Thinking: "I should use " + tl.Name + "."},
				{Type: transcript.BlockToolUse, Fidelity: transcript.FidelityAgentEmitted, ToolName: tl.Name, ToolID: tl.ID, ToolInput: tl.Input},
			}}})
		fid := tl.Fidelity
		if fid == "" {
			fid = transcript.FidelityAgentEmitted
		}
		r.Event(transcript.ExchangeEvent{Type: transcript.ToolCall, Path: path, Iteration: iteration,
			Payload: &transcript.ToolPayload{Name: tl.Name, CallID: tl.ID, Input: tl.Input, Fidelity: fid}})
		if tl.Error != "" && tl.Output == nil {
			continue // dangling: closed at step end below
		}
		r.Advance(tl.Took)
		r.Event(transcript.ExchangeEvent{Type: transcript.ToolResult, Path: path, Iteration: iteration,
			Payload: &transcript.ToolPayload{Name: tl.Name, CallID: tl.ID, Input: tl.Input, Output: tl.Output, Error: tl.Error, Fidelity: fid}})
	}
	r.Advance(500 * time.Millisecond)
	r.Event(transcript.ExchangeEvent{Type: transcript.MessageAssistant, Path: path, Iteration: iteration,
		Payload: &transcript.MessagePayload{Role: "assistant", Blocks: []transcript.ContentBlock{
			{Type: transcript.BlockText, Fidelity: transcript.FidelityAgentEmitted, Text: reply},
		}}})
	for _, tl := range tools {
		if tl.Error != "" && tl.Output == nil {
			r.Event(transcript.ExchangeEvent{Type: transcript.ToolResult, Path: path, Iteration: iteration,
				Payload: &transcript.ToolPayload{Name: tl.Name, CallID: tl.ID, Input: tl.Input, Error: tl.Error, Fidelity: transcript.FidelityAgentEmitted}})
		}
	}
	c := cost
	r.Complete(path, iteration, transcript.KindAgent, 0, "", transcript.AgentResult{
		Output: reply, Provider: "claude", Model: "claude-sonnet-4", Usage: usage, CostUSD: &c, DurationMS: 1000, Turns: 1 + len(tools),
	})
}

// Tool is one invocation in Agent.
type Tool struct {
	Name, ID string
	Input    any
	Output   any
	Error    string
	Fidelity transcript.Fidelity
	Took     time.Duration
}

// Close closes the recorder.
func (r *Run) Close() {
	r.t.Helper()
	if err := r.rec.Close(); err != nil {
		r.t.Fatalf("close: %v", err)
	}
}

func lastSegment(p string) string {
	for i := len(p) - 1; i >= 0; i-- {
		if p[i] == '.' {
			return p[i+1:]
		}
	}
	return p
}

func usage(in, out, cache, reasoning int64) transcript.Usage {
	return transcript.Usage{InputTokens: in, OutputTokens: out, CacheReadTokens: cache, ReasoningTokens: reasoning, TotalTokens: in + out}
}

// Variant selects differences between two runs of the sample workflow.
type Variant struct {
	// ID is the run id (RootID when empty).
	ID string
	// ChildID is the sub-workflow's run id (ChildID when empty).
	ChildID string
	// Review is the reply of the first review iteration.
	Review string
	// LintFails makes the lint branch fail.
	LintFails bool
	// Interrupted stops the run inside the fix loop, as SIGKILL would.
	Interrupted bool
}

// Sample writes the sample run (and its child run) into a new temporary
// directory of its own and returns the root transcript's path: for tests
// that read the run and need nothing else beside it.
func Sample(t testing.TB, v Variant) string {
	t.Helper()
	return WriteSample(t, t.TempDir(), v)
}

// WriteSample writes the sample run (and its child run) into dir, the
// transcripts directory, and returns the root transcript's path.
func WriteSample(t testing.TB, dir string, v Variant) string {
	t.Helper()
	if v.ID == "" {
		v.ID = RootID
	}
	if v.ChildID == "" {
		v.ChildID = ChildID
	}
	if v.Review == "" {
		v.Review = "main.go looks fine."
	}
	r := NewRun(t, dir, v.ID, "", Epoch)
	wf := func(errMsg string, result any) *transcript.StepPayload {
		return &transcript.StepPayload{Name: "review-flow", Kind: transcript.KindWorkflow, Error: errMsg, Result: result}
	}
	r.Event(transcript.ExchangeEvent{Type: transcript.RunStarted, Payload: wf("", nil)})

	r.Agent("analyze", 0, "Find the bugs in main.go.", "You are a careful Go reviewer.", []Tool{
		{Name: "Read", ID: "toolu_01", Input: map[string]any{"path": "main.go"}, Output: "package main\n\nfunc main() {}\n", Took: 40 * time.Millisecond},
		{Name: "Bash", ID: "toolu_02", Input: map[string]any{"command": "go vet ./..."}, Output: "", Error: "exit status 1", Took: 900 * time.Millisecond, Fidelity: transcript.FidelityRouter},
	}, "Found 2 issues: the loop never ends and err is shadowed.", usage(1200, 300, 100, 50), 0.0123)

	// A flaky command, retried.
	r.Command("setup", 0, 1, "make deps", 2, "network down", "exit status 2")
	r.Command("setup", 0, 2, "make deps", 0, "ok", "")

	sampleLoops(r, v)
	sampleParallel(r, v)

	// A sub-workflow in its own transcript.
	r.Start("fix", 0, transcript.KindCallWorkflow, 0)
	r.Event(transcript.ExchangeEvent{Type: transcript.CallWorkflowStarted, Path: "fix", ChildRunID: v.ChildID,
		Payload: &transcript.StepPayload{Name: "fix", Kind: transcript.KindCallWorkflow}})
	c := NewRun(t, dir, v.ChildID, v.ID, r.Now())
	c.Event(transcript.ExchangeEvent{Type: transcript.RunStarted, Payload: &transcript.StepPayload{Name: "fixer", Kind: transcript.KindWorkflow}})
	c.Agent("patch", 0, "Fix the loop in main.go.", "", []Tool{
		{Name: "Edit", ID: "toolu_30", Input: map[string]any{"path": "main.go", "old": "for {", "new": "for i := 0; i < n; i++ {"}, Output: "edited", Took: 15 * time.Millisecond},
	}, "Fixed.", usage(800, 120, 0, 0), 0.004)
	if v.Interrupted {
		c.Start("verify", 0, transcript.KindCommand, 0)
		c.Close()
		r.Close()
		return r.rec.Path()
	}
	c.Command("verify", 0, 0, "go build ./...", 0, "", "")
	cost := 0.004
	c.Event(transcript.ExchangeEvent{Type: transcript.RunCompleted, Payload: &transcript.StepPayload{Name: "fixer", Kind: transcript.KindWorkflow,
		Result: transcript.RunResult{Status: "success", DurationMS: c.Now().Sub(r.Now()).Milliseconds(), Usage: usage(800, 120, 0, 0), CostUSD: &cost}}})
	c.Close()
	r.now = c.Now()
	r.Event(transcript.ExchangeEvent{Type: transcript.CallWorkflowCompleted, Path: "fix", ChildRunID: v.ChildID,
		Payload: &transcript.StepPayload{Name: "fix", Kind: transcript.KindCallWorkflow}})
	r.Complete("fix", 0, transcript.KindCallWorkflow, 0, "", nil)

	status, runErr, exit := "success", "", 0
	if v.LintFails {
		status, runErr, exit = "failure", "step build_all failed", 1
	}
	total := usage(1200+400+410+800, 300+80+80+120, 100, 50)
	runCost := 0.0123 + 0.002 + 0.002 + 0.004
	r.Event(transcript.ExchangeEvent{Type: transcript.RunCompleted, Payload: wf(runErr, transcript.RunResult{
		Status: status, ExitCode: exit, DurationMS: r.Now().Sub(Epoch).Milliseconds(), Usage: total, CostUSD: &runCost})})
	r.Close()
	return r.rec.Path()
}

// sampleLoops writes WriteSample's loops: a for_each over two files, whose
// second review leaves a tool without a result, and nested loops.
func sampleLoops(r *Run, v Variant) {
	// A for_each over two files.
	r.Start("each_file", 0, transcript.KindForEach, 0)
	reviews := []string{v.Review, "util.go has an unused import."}
	for i, reply := range reviews {
		tools := []Tool{{Name: "Read", ID: "toolu_1" + string(rune('0'+i)), Input: map[string]any{"path": []string{"main.go", "util.go"}[i]}, Output: "…", Took: 20 * time.Millisecond}}
		if i == 1 {
			tools = append(tools, Tool{Name: "Bash", ID: "toolu_19", Input: map[string]any{"command": "sleep 600"}, Error: "no result: step timed out"})
		}
		r.Agent("each_file.review", i, "Review the file.", "", tools, reply, usage(400+int64(i)*10, 80, 0, 0), 0.002)
		r.Command("each_file.fmt", i, 0, "gofmt -l .", 0, "", "")
	}
	r.Complete("each_file", 0, transcript.KindForEach, 0, "", nil)

	// Nested loops: outer for_each of two, inner while of 2 then 1.
	r.Start("outer", 0, transcript.KindForEach, 0)
	for o, n := range []int{2, 1} {
		r.Start("outer.inner", o, transcript.KindWhile, 0)
		for i := 0; i < n; i++ {
			r.Command("outer.inner.check", i, 0, "test -f done", 1, "", "")
		}
		r.Complete("outer.inner", o, transcript.KindWhile, 0, "", nil)
	}
	r.Complete("outer", 0, transcript.KindForEach, 0, "", nil)
}

// sampleParallel writes WriteSample's parallel block, its branches
// interleaved; lint fails in the LintFails variant.
func sampleParallel(r *Run, v Variant) {
	// Parallel branches, interleaved.
	r.Start("build_all", 0, transcript.KindParallel, 0)
	r.Event(transcript.ExchangeEvent{Type: transcript.StepStarted, Path: "build_all.lint",
		Payload: &transcript.StepPayload{Name: "lint", Kind: transcript.KindCommand, Command: "golangci-lint run"}})
	r.Event(transcript.ExchangeEvent{Type: transcript.StepStarted, Path: "build_all.test",
		Payload: &transcript.StepPayload{Name: "test", Kind: transcript.KindCommand, Command: "go test ./..."}})
	r.Advance(time.Second)
	r.Complete("build_all.test", 0, transcript.KindCommand, 0, "", transcript.CommandResult{ExitCode: 0, Output: "PASS\n"})
	r.Advance(time.Second)
	lintErr, lintExit := "", 0
	if v.LintFails {
		lintErr, lintExit = "exit status 1", 1
	}
	r.Complete("build_all.lint", 0, transcript.KindCommand, 0, lintErr, transcript.CommandResult{ExitCode: lintExit, Output: "main.go:3: unused\n"})
	r.Complete("build_all", 0, transcript.KindParallel, 0, lintErr, nil)
}
