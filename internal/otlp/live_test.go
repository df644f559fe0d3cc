package otlp_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reelhq/reel/internal/engine"
	"github.com/reelhq/reel/internal/otlp"
	"github.com/reelhq/reel/internal/otlptest"
	"github.com/reelhq/reel/internal/workflow"
	"github.com/reelhq/reel/transcript"
	"github.com/reelhq/reel/transcript/secrets"
)

// demoWorkflow loads the bundled demo: commands, a loop, a parallel block
// with a retried branch, a sub-workflow and an agent step replaying a
// recorded Claude Code stream.
func demoWorkflow(t *testing.T, e *engine.Engine) *workflow.Workflow {
	t.Helper()
	wf, err := workflow.Load(filepath.Join("..", "..", "examples", "demo.yaml"), e.LoadOptions())
	if err != nil {
		t.Fatal(err)
	}
	return wf
}

// liveRun runs wf with a live export to rcv and returns the stats.
func liveRun(t *testing.T, e *engine.Engine, wf *workflow.Workflow, cfg otlp.Config, getenv func(string) string) (*engine.Report, otlp.LiveStats) {
	t.Helper()
	ctx := context.Background()
	live, err := otlp.NewLive(ctx, cfg, getenv)
	if err != nil {
		t.Fatal(err)
	}
	e.OnRecorder = live.Attach
	rep, err := e.Run(ctx, wf, engine.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	return rep, live.Close(cctx)
}

// recordedRun reads a run's transcripts back as a batch export's input.
func recordedRun(t *testing.T, path string) otlp.Run {
	t.Helper()
	events := readRun(t, path)
	r := otlp.Run{Events: events, Children: map[string][]transcript.ExchangeEvent{}}
	for _, ev := range events {
		if ev.Type == transcript.CallWorkflowStarted {
			r.Children[ev.ChildRunID] = readRun(t, filepath.Join(filepath.Dir(path), ev.ChildRunID+".jsonl"))
		}
	}
	return r
}

func TestLiveAndBatchExportsGiveTheSameSpans(t *testing.T) {
	cleanEnv(t)
	for _, c := range []struct {
		name    string
		content bool
		mask    bool
	}{{"plain", false, false}, {"content-masked", true, true}} {
		t.Run(c.name, func(t *testing.T) {
			rcv := otlptest.NewGRPC(t)
			ep, _ := otlp.Resolve(rcv.Endpoint, "", env(nil))
			e := &engine.Engine{Storage: t.TempDir(), Display: io.Discard}
			if c.mask {
				e.Masker = secrets.NewMasker(os.Environ())
			}
			rep, st := liveRun(t, e, demoWorkflow(t, e), otlp.Config{Endpoint: ep, Version: "test", Content: c.content}, env(nil))
			if rep.Status != "success" {
				t.Fatalf("demo run: %s %s", rep.Status, rep.Error)
			}
			if st.Exported != st.Spans || st.Dropped+st.Failed+st.Lost != 0 || st.Unlinked != 0 {
				t.Fatalf("live stats %+v", st)
			}
			if want, _ := otlp.TraceID(rep.RunID); st.TraceID != want {
				t.Errorf("trace %s, want %s", st.TraceID, want)
			}
			live := rcv.Wait(t, int(st.Spans), 10*time.Second)
			checkTree(t, live)

			var masker *secrets.Masker
			if c.mask {
				masker = secrets.NewMasker(os.Environ())
			}
			batch := batchExport(t, otlp.Config{Content: c.content, Masker: masker}, recordedRun(t, rep.TranscriptPath))
			otlptest.Sort(live)
			otlptest.Sort(batch)
			if d := otlptest.Diff(live, batch); d != "" {
				t.Fatalf("live and batch exports differ:\n%s", d)
			}
			names := map[string]int{}
			for _, s := range live {
				names[s.Name]++
			}
			for _, n := range []string{"invoke_workflow demo", "invoke_workflow summarize", "invoke_agent review", "execute_tool Read", "for_each each_file", "parallel checks", "call_workflow summary"} {
				if names[n] != 1 {
					t.Errorf("%d spans named %q, want 1 (all: %v)", names[n], n, names)
				}
			}
			if names["command each_file.inspect"] != 3 {
				t.Errorf("%d loop iterations exported, want 3", names["command each_file.inspect"])
			}
		})
	}
}

// A subscriber that cannot keep up loses events from the fan-out; the live
// export reads them back from the file and still exports the batch
// export's spans.
func TestLiveExportBackfillsWhatTheFanOutDropped(t *testing.T) {
	cleanEnv(t)
	rcv := otlptest.NewGRPC(t)
	ep, _ := otlp.Resolve(rcv.Endpoint, "", env(nil))
	ctx := context.Background()
	live, err := otlp.NewLive(ctx, otlp.Config{Endpoint: ep, Version: "test", Content: true}, env(map[string]string{"OTEL_BSP_MAX_QUEUE_SIZE": "100000"}))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	id := transcript.NewRunID()
	rec, err := transcript.Create(dir, id, transcript.Options{SubscriberBuffer: 1})
	if err != nil {
		t.Fatal(err)
	}
	live.Attach(rec, "")
	record := func(e transcript.ExchangeEvent) {
		if _, err := rec.Record(e); err != nil {
			t.Fatal(err)
		}
	}
	record(transcript.ExchangeEvent{Type: transcript.RunStarted, Payload: &transcript.StepPayload{Name: "flood", Kind: transcript.KindWorkflow}})
	record(transcript.ExchangeEvent{Type: transcript.StepStarted, Path: "each", Payload: &transcript.StepPayload{Name: "each", Kind: transcript.KindForEach}})
	for i := 0; i < 3000; i++ {
		p := "each.ask"
		record(transcript.ExchangeEvent{Type: transcript.StepStarted, Path: p, Iteration: i, Payload: &transcript.StepPayload{Name: "ask", Kind: transcript.KindAgent}})
		record(transcript.ExchangeEvent{Type: transcript.ToolCall, Path: p, Iteration: i, Payload: &transcript.ToolPayload{Name: "Read", CallID: fmt.Sprint("c", i), Input: map[string]any{"path": "main.go"}, Fidelity: transcript.FidelityRouter}})
		record(transcript.ExchangeEvent{Type: transcript.ToolResult, Path: p, Iteration: i, Payload: &transcript.ToolPayload{Name: "Read", CallID: fmt.Sprint("c", i), Output: "package main", Fidelity: transcript.FidelityRouter}})
		record(transcript.ExchangeEvent{Type: transcript.StepCompleted, Path: p, Iteration: i, Payload: &transcript.StepPayload{Name: "ask", Kind: transcript.KindAgent,
			Result: transcript.AgentResult{Provider: "claude", Model: "m", Usage: transcript.Usage{InputTokens: 3, OutputTokens: 1}}}})
	}
	record(transcript.ExchangeEvent{Type: transcript.StepCompleted, Path: "each", Payload: &transcript.StepPayload{Name: "each", Kind: transcript.KindForEach}})
	record(transcript.ExchangeEvent{Type: transcript.RunCompleted, Payload: &transcript.StepPayload{Name: "flood", Kind: transcript.KindWorkflow, Result: transcript.RunResult{Status: "success"}}})
	dropped := rec.Stats().Dropped
	rec.Close()
	cctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	st := live.Close(cctx)
	if dropped == 0 {
		t.Fatal("the fan-out dropped nothing with a buffer of 1: the test proves nothing")
	}
	if st.Backfilled < dropped || st.Lost != 0 || st.Exported != st.Spans || st.Spans != 2+2*3000 {
		t.Fatalf("fan-out dropped %d; live stats %+v", dropped, st)
	}
	got := rcv.Wait(t, int(st.Spans), 20*time.Second)
	want := batchExport(t, otlp.Config{Content: true}, otlp.Run{Events: readRun(t, rec.Path())})
	otlptest.Sort(got)
	otlptest.Sort(want)
	if d := otlptest.Diff(got, want); d != "" {
		t.Fatalf("backfilled live export differs from the batch export:\n%s", d)
	}
}

// steps writes a workflow of n command steps.
func steps(t *testing.T, n int) *workflow.Workflow {
	t.Helper()
	var b strings.Builder
	b.WriteString("name: many\nstates:\n  initial: s0\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "  s%d:\n    type: step\n    command: \"true\"\n", i)
		if i+1 < n {
			fmt.Fprintf(&b, "    on_success: s%d\n", i+1)
		}
	}
	p := filepath.Join(t.TempDir(), "many.yaml")
	os.WriteFile(p, []byte(b.String()), 0o644)
	wf, err := workflow.Load(p, workflow.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return wf
}

// A collector that takes seconds per request neither slows the run nor
// makes it fail: what the queue cannot hold is dropped and counted, what
// is still unsent at the flush deadline is counted as failed.
func TestSlowCollectorNeverSlowsTheRun(t *testing.T) {
	cleanEnv(t)
	rcv := otlptest.NewGRPC(t)
	rcv.SetDelay(3 * time.Second)
	ep, _ := otlp.Resolve(rcv.Endpoint, "", env(nil))
	ctx := context.Background()
	live, err := otlp.NewLive(ctx, otlp.Config{Endpoint: ep, Version: "test"}, env(map[string]string{
		"OTEL_BSP_MAX_QUEUE_SIZE": "4", "OTEL_BSP_MAX_EXPORT_BATCH_SIZE": "1", "OTEL_BSP_SCHEDULE_DELAY": "1",
	}))
	if err != nil {
		t.Fatal(err)
	}
	e := &engine.Engine{Storage: t.TempDir(), Display: io.Discard, OnRecorder: live.Attach}
	start := time.Now()
	rep, err := e.Run(ctx, steps(t, 30), engine.RunOptions{})
	took := time.Since(start)
	if err != nil || rep.Status != "success" {
		t.Fatalf("run: %v %+v", err, rep)
	}
	if took > 2500*time.Millisecond {
		t.Errorf("the run took %s with a collector answering in 3s: it waited for the export", took)
	}
	cctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	defer cancel()
	closeStart := time.Now()
	st := live.Close(cctx)
	if d := time.Since(closeStart); d > 2*time.Second {
		t.Errorf("Close took %s past a 500ms deadline", d)
	}
	if st.Spans != 31 || st.Dropped == 0 || st.Failed == 0 || st.Exported+st.Dropped+st.Failed != st.Spans {
		t.Errorf("stats %+v: want 31 spans, some dropped and some failed, every one accounted for", st)
	}
}

func TestAbsentCollectorIsReportedNotFatal(t *testing.T) {
	cleanEnv(t)
	t.Setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "200")
	ep, _ := otlp.Resolve("127.0.0.1:1", "", env(nil))
	e := &engine.Engine{Storage: t.TempDir(), Display: io.Discard}
	rep, st := liveRun(t, e, steps(t, 3), otlp.Config{Endpoint: ep}, env(nil))
	if rep.Status != "success" || rep.RecordError != nil {
		t.Fatalf("run %+v", rep)
	}
	if st.Spans != 4 || st.Failed != 4 || st.Err == nil || !strings.Contains(st.Err.Error(), "connection refused") {
		t.Errorf("stats %+v, want 4 failed spans and connection refused", st)
	}
}

// A resumed transcript continues its ids: the live export of the second
// attempt gives the spans the batch export of the whole file gives for it.
func TestLiveExportOfAResumedRun(t *testing.T) {
	cleanEnv(t)
	dir := t.TempDir()
	id := transcript.NewRunID()
	first, err := transcript.Create(dir, id, transcript.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	rec := func(r *transcript.Recorder, e transcript.ExchangeEvent) {
		if _, err := r.Record(e); err != nil {
			t.Fatal(err)
		}
	}
	wf := func(attempt int) *transcript.StepPayload {
		return &transcript.StepPayload{Name: "resumable", Kind: transcript.KindWorkflow, Attempt: attempt}
	}
	cmd := func(name string) *transcript.StepPayload {
		return &transcript.StepPayload{Name: name, Kind: transcript.KindCommand}
	}
	rec(first, transcript.ExchangeEvent{Type: transcript.RunStarted, Timestamp: at(0), Payload: wf(0)})
	rec(first, transcript.ExchangeEvent{Type: transcript.StepStarted, Path: "a", Timestamp: at(1), Payload: cmd("a")})
	rec(first, transcript.ExchangeEvent{Type: transcript.StepCompleted, Path: "a", Timestamp: at(2), Payload: cmd("a")})
	rec(first, transcript.ExchangeEvent{Type: transcript.StepStarted, Path: "b", Timestamp: at(3), Payload: cmd("b")})
	first.Close() // killed inside b

	rcv := otlptest.NewGRPC(t)
	ep, _ := otlp.Resolve(rcv.Endpoint, "", env(nil))
	ctx := context.Background()
	live, err := otlp.NewLive(ctx, otlp.Config{Endpoint: ep, Version: "test"}, env(nil))
	if err != nil {
		t.Fatal(err)
	}
	second, err := transcript.Open(filepath.Join(dir, id+".jsonl"), transcript.Options{})
	if err != nil {
		t.Fatal(err)
	}
	live.Attach(second, "")
	rec(second, transcript.ExchangeEvent{Type: transcript.RunStarted, Timestamp: at(10), Payload: wf(2)})
	rec(second, transcript.ExchangeEvent{Type: transcript.StepStarted, Path: "b", Timestamp: at(11), Payload: cmd("b")})
	rec(second, transcript.ExchangeEvent{Type: transcript.StepCompleted, Path: "b", Timestamp: at(12), Payload: cmd("b")})
	rec(second, transcript.ExchangeEvent{Type: transcript.RunCompleted, Timestamp: at(13), Payload: &transcript.StepPayload{Name: "resumable", Kind: transcript.KindWorkflow, Attempt: 2, Result: transcript.RunResult{Status: "success"}}})
	second.Close()
	st := live.Close(ctx)
	// The interrupted attempt's open step b and its run span end when the
	// resume starts; the resumed attempt adds its run span and b again.
	if st.Spans != 4 || st.Exported != 4 {
		t.Fatalf("stats %+v, want 4 spans", st)
	}
	got := rcv.Wait(t, 4, 10*time.Second)
	all := batchExport(t, otlp.Config{}, otlp.Run{Events: readRun(t, second.Path())})
	if len(all) != 5 {
		t.Fatalf("batch export of the resumed file: %d spans, want 5", len(all))
	}
	byID := map[string]otlptest.Span{}
	for _, s := range all {
		byID[s.SpanID] = s
	}
	for _, s := range got {
		w, ok := byID[s.SpanID]
		if !ok {
			t.Errorf("live span %s %s (%s) is not in the batch export", s.SpanID, s.Name, s.Attrs["reel.step.status"])
			continue
		}
		if d := otlptest.Diff([]otlptest.Span{s}, []otlptest.Span{w}); d != "" {
			t.Error(d)
		}
	}
}

// A run's span counts its sub-workflows' cost and tokens, those reel prices
// from the table included (an agent whose provider reports tokens only),
// as reel tree does: live as in batch, to the same figure.
func TestRunSpanCountsItsChildRuns(t *testing.T) {
	cleanEnv(t)
	dir := t.TempDir()
	write := func(name, body string, mode os.FileMode) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), mode); err != nil {
			t.Fatal(err)
		}
	}
	// Gemini CLI's stream-json: tokens and the model, no cost
	write("gemini.sh", "#!/bin/sh\ncat <<'EOF'\n"+
		`{"type":"init","timestamp":"2026-11-27T12:51:36.905Z","session_id":"s1","model":"gemini-2.5-pro"}`+"\n"+
		`{"type":"message","timestamp":"2026-11-27T12:51:38.921Z","role":"assistant","content":"done","delta":true}`+"\n"+
		`{"type":"result","timestamp":"2026-11-27T12:51:38.991Z","status":"success","stats":{"total_tokens":128000,"input_tokens":120000,"output_tokens":8000,"cached":0,"input":120000,"duration_ms":2088,"tool_calls":0}}`+"\nEOF\n", 0o755)
	write("child.yaml", "name: child\nstates:\n  initial: ask\n"+
		"  ask: {type: agent, provider: gemini, prompt: hi, options: {command: ./gemini.sh}, on_success: done}\n"+
		"  done: {type: terminal, status: success}\n", 0o644)
	write("parent.yaml", "name: parent\nstates:\n  initial: sub\n"+
		"  sub: {type: call_workflow, call_workflow: {workflow: child.yaml}, on_success: done}\n"+
		"  done: {type: terminal, status: success}\n", 0o644)
	rcv := otlptest.NewGRPC(t)
	ep, _ := otlp.Resolve(rcv.Endpoint, "", env(nil))
	e := &engine.Engine{Storage: t.TempDir(), Display: io.Discard}
	wf, err := workflow.Load(filepath.Join(dir, "parent.yaml"), e.LoadOptions())
	if err != nil {
		t.Fatal(err)
	}
	rep, st := liveRun(t, e, wf, otlp.Config{Endpoint: ep, Version: "test"}, env(nil))
	if rep.Status != "success" {
		t.Fatalf("run: %s %s", rep.Status, rep.Error)
	}
	live := rcv.Wait(t, int(st.Spans), 10*time.Second)
	batch := batchExport(t, otlp.Config{}, recordedRun(t, rep.TranscriptPath))
	otlptest.Sort(live)
	otlptest.Sort(batch)
	if d := otlptest.Diff(live, batch); d != "" {
		t.Fatalf("live and batch exports differ:\n%s", d)
	}
	runs := map[string]otlptest.Span{}
	for _, s := range live {
		if strings.HasPrefix(s.Name, "invoke_workflow ") {
			runs[s.Name] = s
		}
	}
	parent, child := runs["invoke_workflow parent"], runs["invoke_workflow child"]
	// gemini-2.5-pro's table price of 120k in, 8k out
	cost, ok := child.Attrs["reel.usage.cost_usd"].(float64)
	if !ok || cost <= 0 {
		t.Fatalf("the child's span has no cost: %v", child.Attrs)
	}
	if got := parent.Attrs["reel.usage.cost_usd"]; got != cost {
		t.Errorf("the parent's span costs %v, want its child's %v", got, cost)
	}
	if got := parent.Attrs["reel.usage.total_tokens"]; got != int64(128000) {
		t.Errorf("the parent's span counts %v tokens, want 128000", got)
	}
}
