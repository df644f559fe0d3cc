package verify

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reelhq/reel/transcript"
)

// attempts writes one transcript from a list of events, each given as a
// type, a path and a step payload (nil: a tool event on call_id path).
type attempts struct {
	t    *testing.T
	r    *transcript.Recorder
	path string
}

func newAttempts(t *testing.T) *attempts {
	r, err := transcript.Create(t.TempDir(), transcript.NewRunID(), transcript.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return &attempts{t: t, r: r, path: r.Path()}
}

func (a *attempts) add(typ transcript.EventType, path string, p any) *attempts {
	a.t.Helper()
	if _, err := a.r.Record(transcript.ExchangeEvent{Type: typ, Path: path, Payload: p}); err != nil {
		a.t.Fatal(err)
	}
	return a
}

func runP(attempt int) *transcript.StepPayload {
	return &transcript.StepPayload{Name: "w", Kind: transcript.KindWorkflow, Attempt: attempt}
}

func stepP(name string) *transcript.StepPayload {
	return &transcript.StepPayload{Name: name, Kind: transcript.KindCommand}
}

func (a *attempts) check(want ...string) {
	a.t.Helper()
	a.r.Close()
	rep := Paths([]string{a.path}, Options{})
	var got []string
	for _, p := range rep.Problems {
		if !p.Warning {
			got = append(got, p.Message)
		}
	}
	if len(got) != len(want) {
		a.t.Fatalf("problems %q, want %q", got, want)
	}
	for i := range want {
		if !strings.Contains(got[i], want[i]) {
			a.t.Fatalf("problem %q, want %q", got[i], want[i])
		}
	}
}

// A resumed run's file: the interrupted attempt leaves a step and a tool
// call open; the resume, numbered, runs to run.completed.
func TestResumedRunIsValid(t *testing.T) {
	a := newAttempts(t).
		add(transcript.RunStarted, "", runP(0)).
		add(transcript.StepStarted, "a", stepP("a")).
		add(transcript.ToolCall, "a", &transcript.ToolPayload{Name: "Read", CallID: "c1", Fidelity: transcript.FidelityRouter}).
		add(transcript.RunStarted, "", runP(2)).
		add(transcript.StepStarted, "a", stepP("a")).
		add(transcript.StepCompleted, "a", stepP("a")).
		add(transcript.RunCompleted, "", &transcript.StepPayload{Name: "w", Kind: transcript.KindWorkflow, Attempt: 2, Error: "x"}).
		// a failed run resumed once more
		add(transcript.RunStarted, "", runP(3)).
		add(transcript.StepStarted, "b", stepP("b")).
		add(transcript.StepCompleted, "b", stepP("b")).
		add(transcript.RunCompleted, "", runP(3))
	a.check()
}

func TestResumedRunViolations(t *testing.T) {
	newAttempts(t).
		add(transcript.RunStarted, "", runP(0)).
		add(transcript.RunStarted, "", runP(0)).
		add(transcript.RunCompleted, "", runP(0)).
		check("run.started again without attempt 2")
	newAttempts(t).
		add(transcript.RunStarted, "", runP(0)).
		add(transcript.RunCompleted, "", runP(0)).
		add(transcript.StepStarted, "a", stepP("a")).
		check("step.started after run.completed", "step a (iteration 0) started 1 more time(s)")
	// a completed attempt closes what it opened, and so must the resumed
	// one: the open step of the first completed attempt is reported
	newAttempts(t).
		add(transcript.RunStarted, "", runP(0)).
		add(transcript.StepStarted, "a", stepP("a")).
		add(transcript.RunCompleted, "", runP(0)).
		add(transcript.RunStarted, "", runP(2)).
		add(transcript.StepStarted, "b", stepP("b")).
		add(transcript.RunCompleted, "", runP(2)).
		check("step a (iteration 0) started 1 more time(s)", "step b (iteration 0) started 1 more time(s)")
	newAttempts(t).
		add(transcript.RunStarted, "", runP(2)).
		add(transcript.RunCompleted, "", runP(2)).
		check("first run.started has attempt 2", "run.completed of attempt 2 closes attempt 1")
	newAttempts(t).
		add(transcript.RunStarted, "", runP(0)).
		add(transcript.RunStarted, "", runP(2)).
		add(transcript.RunCompleted, "", runP(3)).
		check("run.completed of attempt 3 closes attempt 2")
}

// A transcript with no events at all is a run stopped before its first
// one: a warning, not a violation.
func TestEmptyTranscriptIsAWarning(t *testing.T) {
	// What a run killed between creating its file and writing run.started
	// leaves (a recorder closed without writing removes the file itself).
	p := filepath.Join(t.TempDir(), transcript.NewRunID()+".jsonl")
	if err := os.WriteFile(p, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	rep := Paths([]string{p}, Options{})
	if rep.Violations() != 0 || len(rep.Problems) != 1 || !rep.Problems[0].Warning {
		t.Fatalf("%+v", rep.Problems)
	}
}
