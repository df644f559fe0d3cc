package index

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/reelhq/reel/internal/transcripttest"
	"github.com/reelhq/reel/transcript"
)

// An imported recording without times (runs.Untimed) is listed by the
// time its events carry, with no start, last event or duration in JSON,
// and its unknown duration counts in no mean.
func TestUntimedRun(t *testing.T) {
	storage := t.TempDir()
	dir := transcript.Dir(storage)
	const id = "55555555-5555-4555-8555-555555555555"
	at := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
	r := transcripttest.NewRun(t, dir, id, "", at)
	wf := func(result any) *transcript.StepPayload {
		return &transcript.StepPayload{Name: "import:capture.sse", Kind: transcript.KindWorkflow, Result: result}
	}
	r.Event(transcript.ExchangeEvent{Type: transcript.RunStarted, Payload: wf(map[string]any{"import": map[string]any{"format": "anthropic-sse", "untimed": true}})})
	r.Event(transcript.ExchangeEvent{Type: transcript.RunCompleted, Timestamp: at, Payload: wf(transcript.RunResult{Status: "success", DurationMS: 9000})})
	r.Close()
	timed := transcripttest.NewRun(t, dir, famRoot, "", at.AddDate(1, 0, 0))
	timed.Event(transcript.ExchangeEvent{Type: transcript.RunStarted, Payload: wf(nil)})
	timed.Event(transcript.ExchangeEvent{Type: transcript.RunCompleted, Payload: wf(transcript.RunResult{Status: "success", DurationMS: 4000})})
	timed.Close()

	ix := openIndex(t, storage)
	ctx := context.Background()
	page, err := ix.List(ctx, Filter{})
	if err != nil || len(page.Runs) != 2 || page.Runs[1].RunID != id {
		t.Fatalf("list: %+v %v: want the untimed run last, by its time", page, err)
	}
	u := page.Runs[1]
	if !u.Untimed || u.DurationMS != 0 || !u.Started.Equal(at) {
		t.Errorf("untimed run: %+v", u)
	}
	var got map[string]any
	b, _ := json.Marshal(u)
	if json.Unmarshal(b, &got) != nil || got["untimed"] != true || got["started"] != nil || got["last_event"] != nil || got["duration_ms"] != nil || got["run_id"] != id {
		t.Errorf("untimed run's JSON: %s", b)
	}
	b, _ = json.Marshal(page.Runs[0])
	got = nil
	if json.Unmarshal(b, &got) != nil || got["untimed"] != nil || got["started"] == nil || got["duration_ms"] != 4000.0 {
		t.Errorf("timed run's JSON: %s", b)
	}
	o, err := ix.Outcomes(ctx, Filter{})
	if err != nil || o.Total != 2 || o.MeanDurationMS != 4000 {
		t.Errorf("outcomes %+v %v: want the mean of the timed run alone", o, err)
	}
	if tally := TallyRuns(page.Runs); tally.AvgDurationMS != 4000 {
		t.Errorf("tally: average %d ms, want 4000", tally.AvgDurationMS)
	}
}
