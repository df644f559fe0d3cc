package runs

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"testing"

	"github.com/reelhq/reel/internal/benchratio"
	"github.com/reelhq/reel/internal/runstatus"
	"github.com/reelhq/reel/transcript"
)

func put(t testing.TB, r *transcript.Recorder, typ transcript.EventType, p any) {
	t.Helper()
	if _, err := r.Record(transcript.ExchangeEvent{Type: typ, Payload: p}); err != nil {
		t.Fatal(err)
	}
}

func started(attempt int) *transcript.StepPayload {
	return &transcript.StepPayload{Name: "wf", Kind: transcript.KindWorkflow, Attempt: attempt}
}

func completed(status string, attempt int) *transcript.StepPayload {
	p := &transcript.StepPayload{Name: "wf", Kind: transcript.KindWorkflow, Attempt: attempt,
		Result: transcript.RunResult{Status: status, ExitCode: 3, DurationMS: 1500, Usage: transcript.Usage{TotalTokens: 42}}}
	if status != runstatus.Success {
		p.Error = "it broke"
	}
	return p
}

// Every status, from the same kind of file a run leaves.
func TestSummarize(t *testing.T) {
	dir := t.TempDir()
	r, err := transcript.Create(dir, transcript.NewRunID(), transcript.Options{})
	if err != nil {
		t.Fatal(err)
	}
	path := r.Path()
	put(t, r, transcript.RunStarted, started(0))
	check := func(want string, attempts int) Summary {
		t.Helper()
		s, err := Open(path, Options{}).Summarize()
		if err != nil || s.Status != want || s.Workflow != "wf" || s.Attempts != attempts {
			t.Fatalf("Summarize: %v %+v, want %s", err, s, want)
		}
		return s
	}
	check(runstatus.Running, 0)
	put(t, r, transcript.RunCompleted, completed(runstatus.Failure, 0))
	s := check(runstatus.Failure, 0)
	if *s.ExitCode != 3 || s.Tokens != 42 || s.DurationMS != 1500 || s.Error != "it broke" {
		t.Fatalf("summary %+v", s)
	}
	put(t, r, transcript.RunStarted, started(2))
	check(runstatus.Running, 0)
	r.Close()
	check(runstatus.Interrupted, 0)
	// a torn final line is passed over
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0o600)
	f.WriteString(`{"seq":4,"run_id":"x","type":"run.comp`)
	f.Close()
	check(runstatus.Interrupted, 0)
	os.Truncate(path, int64(len(mustRead(t, path))-len(`{"seq":4,"run_id":"x","type":"run.comp`)))
	r, err = transcript.Open(path, transcript.Options{})
	if err != nil {
		t.Fatal(err)
	}
	put(t, r, transcript.RunCompleted, completed(runstatus.Success, 2))
	r.Close()
	s = check(runstatus.Success, 2)
	if s.Started.IsZero() {
		t.Fatal("no start")
	}
	empty := dir + "/" + transcript.NewRunID() + ".jsonl"
	os.WriteFile(empty, nil, 0o600)
	if _, err := Open(empty, Options{}).Summarize(); err == nil {
		t.Fatal("an empty transcript summarized")
	}
}

func mustRead(t *testing.T, p string) []byte {
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// BenchmarkSummarize summarizes a 100k-event run against the plain way: decode
// every line with encoding/json to find the first and the last.
func BenchmarkSummarize(b *testing.B) {
	dir := b.TempDir()
	r, err := transcript.Create(dir, transcript.NewRunID(), transcript.Options{})
	if err != nil {
		b.Fatal(err)
	}
	put(b, r, transcript.RunStarted, started(0))
	for i := range 100000 {
		r.Record(transcript.ExchangeEvent{Type: transcript.StepStarted, Path: fmt.Sprint("s", i%50), Payload: &transcript.StepPayload{Name: "s", Kind: transcript.KindCommand, Command: "echo hello world"}})
	}
	put(b, r, transcript.RunCompleted, completed(runstatus.Success, 0))
	r.Close()
	path := r.Path()
	benchratio.Run(b, func() {
		if s, err := Open(path, Options{}).Summarize(); err != nil || s.Status != runstatus.Success {
			b.Fatal(err)
		}
	}, func() {
		if st := stdlibSummary(b, path); st != runstatus.Success {
			b.Fatal(st)
		}
	})
}

func stdlibSummary(b *testing.B, path string) string {
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	status := runstatus.Interrupted
	for sc.Scan() {
		var ev struct {
			Type    string `json:"type"`
			Payload struct {
				Result struct {
					Status string `json:"status"`
				} `json:"result"`
			} `json:"payload"`
		}
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			b.Fatal(err)
		}
		switch ev.Type {
		case "run.started":
			status = runstatus.Interrupted
		case "run.completed":
			status = ev.Payload.Result.Status
		}
	}
	return status
}
