package rerun

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/reelhq/reel/transcript"
)

// script writes a transcript from compact event descriptions.
type script struct {
	t   *testing.T
	rec *transcript.Recorder
}

func newScript(t *testing.T) *script {
	t.Helper()
	r, err := transcript.Create(t.TempDir(), transcript.NewRunID(), transcript.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return &script{t: t, rec: r}
}

func (s *script) ev(typ transcript.EventType, path string, iter int, p any) *script {
	s.t.Helper()
	if _, err := s.rec.Record(transcript.ExchangeEvent{Type: typ, Path: path, Iteration: iter, Payload: p}); err != nil {
		s.t.Fatal(err)
	}
	return s
}

func (s *script) start(attempt int, in *transcript.RunInput) *script {
	p := &transcript.StepPayload{Name: "wf", Kind: transcript.KindWorkflow, Attempt: attempt}
	if in != nil {
		p.Input = *in
	}
	return s.ev(transcript.RunStarted, "", 0, p)
}

func (s *script) step(path string, iter, attempt int, errMsg string, complete bool) *script {
	s.ev(transcript.StepStarted, path, iter, &transcript.StepPayload{Name: path, Kind: transcript.KindCommand, Attempt: attempt})
	if complete {
		s.ev(transcript.StepCompleted, path, iter, &transcript.StepPayload{Name: path, Kind: transcript.KindCommand, Attempt: attempt, Error: errMsg,
			Result: transcript.CommandResult{Output: path + "-out"}})
	}
	return s
}

func (s *script) end(status, errMsg string) *script {
	return s.ev(transcript.RunCompleted, "", 0, &transcript.StepPayload{Name: "wf", Kind: transcript.KindWorkflow, Error: errMsg,
		Result: transcript.RunResult{Status: status, ExitCode: 1, Outputs: map[string]any{"o": "v"}}})
}

func (s *script) load() *Run {
	s.t.Helper()
	path := s.rec.Path()
	s.rec.Close()
	r, err := Load(path, Options{Exchange: true})
	if err != nil {
		s.t.Fatal(err)
	}
	return r
}

func paths(xs []*Execution) []string {
	var out []string
	for _, x := range xs {
		out = append(out, x.Path)
	}
	return out
}

func TestSingleAttempt(t *testing.T) {
	r := newScript(t).start(0, &transcript.RunInput{Inputs: map[string]any{"n": 1}}).
		step("a", 0, 0, "", true).
		step("b", 0, 1, "exit status 1", true). // retried: passed by attempt 2
		step("b", 0, 2, "", true).
		step("c", 0, 0, "exit status 2", true). // handled: d started after it
		step("d", 0, 0, "", true).
		step("e", 0, 0, "exit status 3", true). // the failure that ended the run
		end("failure", "state e failed").load()
	if r.Status != "failure" || r.Attempts() != 1 || r.Input().Inputs["n"] != 1.0 || r.Result.Outputs["o"] != "v" {
		t.Fatalf("run %+v", r)
	}
	var reusable []string
	for _, x := range r.Executions {
		if x.Reusable() {
			reusable = append(reusable, x.Path)
		}
	}
	if want := []string{"a", "b", "b", "c", "d"}; !slices.Equal(reusable, want) {
		t.Fatalf("reusable %v, want %v", reusable, want)
	}
	vs := r.Visits()[Key{"b", 0}]
	if len(vs) != 1 || len(vs[0].Executions) != 2 || !vs[0].Last().Succeeded() {
		t.Fatalf("retry visit %+v", vs)
	}
}

// Attempts merge: the second keeps what its run.started names, the third
// what its own names, from both before it.
func TestAttemptsMerge(t *testing.T) {
	s := newScript(t).start(0, &transcript.RunInput{}).
		step("a", 0, 0, "", true). // ordinal 1
		step("b", 0, 0, "", true). // 2
		step("c", 0, 0, "", false) // 3, cut short
	// attempt 2 keeps a only (b's state changed, say) and runs b and c
	s.start(2, &transcript.RunInput{Reused: [][2]int{{1, 1}}}).
		step("b", 0, 0, "", true). // 4
		step("c", 0, 0, "", false) // 5, cut short again
	r := s.load()
	if r.Attempts() != 2 || r.Status != "interrupted" || len(r.Spans) != 2 {
		t.Fatalf("spans %+v status %s", r.Spans, r.Status)
	}
	if got := paths(r.Executions); !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Fatalf("executions %v", got)
	}
	if r.Executions[1].Ordinal != 4 || r.Span(r.Executions[1]).Attempt != 2 {
		t.Fatalf("b from attempt %d, ordinal %d", r.Span(r.Executions[1]).Attempt, r.Executions[1].Ordinal)
	}
	// attempt 3 names both a (attempt 1) and b (attempt 2)
	s2 := newScript(t).start(0, &transcript.RunInput{}).step("a", 0, 0, "", true).step("b", 0, 0, "", false)
	s2.start(2, &transcript.RunInput{Reused: [][2]int{{1, 1}}}).step("b", 0, 0, "", true).step("c", 0, 0, "", false)
	s2.start(3, &transcript.RunInput{Reused: [][2]int{{1, 1}, {3, 3}}}).step("c", 0, 0, "", true).end("success", "")
	r = s2.load()
	if got := paths(r.Executions); !slices.Equal(got, []string{"a", "b", "c"}) || r.Status != "success" || r.Attempts() != 3 {
		t.Fatalf("three attempts: %v %s", got, r.Status)
	}
}

// Exchange events hang under the agent step that was open at their path.
func TestExchange(t *testing.T) {
	s := newScript(t).start(0, nil)
	s.ev(transcript.StepStarted, "ask", 0, &transcript.StepPayload{Name: "ask", Kind: transcript.KindAgent})
	s.ev(transcript.MessageUser, "ask", 0, &transcript.MessagePayload{Role: "user", Blocks: []transcript.ContentBlock{
		{Type: transcript.BlockText, Fidelity: transcript.FidelityRouter, Text: "the prompt"},
		{Type: transcript.BlockText, Fidelity: transcript.FidelityRouter, Text: "the system"}}})
	s.ev(transcript.ToolCall, "ask", 0, &transcript.ToolPayload{Name: "Read", CallID: "c1", Input: map[string]any{}, Fidelity: transcript.FidelityAgentEmitted})
	s.ev(transcript.StepCompleted, "ask", 0, &transcript.StepPayload{Name: "ask", Kind: transcript.KindAgent, Result: transcript.AgentResult{Output: "hi"}})
	r := s.load()
	x := r.Executions[0]
	p, sys, ok := x.Prompt()
	if len(x.Exchange) != 2 || p != "the prompt" || sys != "the system" || !ok {
		t.Fatalf("exchange %d, prompt %q %q", len(x.Exchange), p, sys)
	}
}

// Ranges and InRanges agree with a plain set, for any set of ordinals.
func TestRangesProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 500 {
		set := map[int]bool{}
		var ords []int
		for i := 1; i <= 60; i++ {
			if rng.IntN(3) > 0 {
				set[i] = true
				ords = append(ords, i)
			}
		}
		rs := Ranges(ords)
		for i := range len(rs) {
			if rs[i][0] > rs[i][1] || i > 0 && rs[i][0] <= rs[i-1][1]+1 {
				t.Fatalf("ranges not disjoint and apart: %v", rs)
			}
		}
		for i := 0; i <= 61; i++ {
			if InRanges(rs, i) != set[i] {
				t.Fatalf("InRanges(%v, %d) = %v", rs, i, !set[i])
			}
		}
	}
}

func TestLoadRefusesEmpty(t *testing.T) {
	s := newScript(t)
	path := s.rec.Path()
	s.rec.Close()
	if _, err := Load(path, Options{}); err == nil {
		t.Fatal("an empty transcript loaded")
	}
}
