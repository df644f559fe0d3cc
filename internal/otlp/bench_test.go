package otlp_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/reelhq/reel/internal/benchratio"
	"github.com/reelhq/reel/internal/otlp"
	"github.com/reelhq/reel/internal/otlptest"
	"github.com/reelhq/reel/internal/transcripttest"
	"github.com/reelhq/reel/transcript"
)

// stdlibExport is the baseline: what an exporter written with the
// standard library alone would do with the same file: decode every line
// with encoding/json, turn each step and tool pair into a JSON span, and
// POST them in batches of 512 to a loopback HTTP server.
func stdlibExport(path, url string) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	type ev struct {
		Type      string          `json:"type"`
		Path      string          `json:"path"`
		Iteration int             `json:"iteration"`
		Timestamp time.Time       `json:"timestamp"`
		Payload   json.RawMessage `json:"payload"`
	}
	open := map[string]ev{}
	var batch []map[string]any
	sent := 0
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		body, err := json.Marshal(batch)
		if err != nil {
			return err
		}
		resp, err := http.Post(url, "application/json", bytes.NewReader(body))
		if err != nil {
			return err
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		sent += len(batch)
		batch = batch[:0]
		return nil
	}
	for sc.Scan() {
		var e ev
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return sent, err
		}
		var p map[string]any
		if err := json.Unmarshal(e.Payload, &p); err != nil {
			return sent, err
		}
		key := fmt.Sprint(e.Path, "/", e.Iteration, "/", p["call_id"])
		switch e.Type {
		case "step.started", "tool.call", "run.started":
			open[key] = e
		case "step.completed", "tool.result", "run.completed":
			s := open[key]
			delete(open, key)
			batch = append(batch, map[string]any{"name": e.Type, "path": e.Path, "iteration": e.Iteration, "start": s.Timestamp, "end": e.Timestamp, "attributes": p})
			if len(batch) == 512 {
				if err := flush(); err != nil {
					return sent, err
				}
			}
		}
	}
	if err := flush(); err != nil {
		return sent, err
	}
	return sent, sc.Err()
}

// BenchmarkBatchExport100k reads a 100,000-event run and exports it to an
// in-process OTLP/gRPC receiver (target: under 2 s), beside the stdlib
// baseline above.
func BenchmarkBatchExport100k(b *testing.B) {
	for _, k := range []string{"OTEL_RESOURCE_ATTRIBUTES", "OTEL_SERVICE_NAME", "OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TIMEOUT"} {
		b.Setenv(k, "")
	}
	path := transcripttest.WriteLoopRun(b, b.TempDir(), 100000/5)
	rcv := otlptest.NewGRPC(b)
	rcv.CountOnly = true
	ep, err := otlp.Resolve(rcv.Endpoint, "", func(string) string { return "" })
	if err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.Copy(io.Discard, r.Body) }))
	defer srv.Close()
	ctx := context.Background()
	spans := 0
	reel := benchratio.Run(b, func() {
		events, err := transcript.ReadFile(path)
		if err != nil || len(events) < 100000 {
			b.Fatalf("read: %v (%d events)", err, len(events))
		}
		bt, err := otlp.NewBatch(ctx, otlp.Config{Endpoint: ep, Version: "bench"})
		if err != nil {
			b.Fatal(err)
		}
		if spans, err = bt.Export(ctx, otlp.Run{Events: events}); err != nil {
			b.Fatal(err)
		}
		bt.Shutdown(ctx)
	}, func() {
		if _, err := stdlibExport(path, srv.URL); err != nil {
			b.Fatal(err)
		}
	})
	b.StopTimer()
	if spans != 40002 {
		b.Fatalf("%d spans, want 40002", spans)
	}
	per := reel / time.Duration(b.N)
	b.ReportMetric(per.Seconds(), "s/100k-events")
	b.ReportMetric(float64(spans)/per.Seconds(), "spans/s")
}

// recordCommandRun records what the engine records for BenchmarkEngineOverhead's
// run (internal/engine): 200 command steps in sequence, each a step.started
// and a step.completed with its result, between run.started and
// run.completed. rec is closed.
func recordCommandRun(b *testing.B, rec *transcript.Recorder) {
	record := func(e transcript.ExchangeEvent) {
		if _, err := rec.Record(e); err != nil {
			b.Fatal(err)
		}
	}
	record(transcript.ExchangeEvent{Type: transcript.RunStarted, Payload: &transcript.StepPayload{Name: "bench", Kind: transcript.KindWorkflow}})
	for i := 0; i < 200; i++ {
		p := fmt.Sprint("s", i)
		record(transcript.ExchangeEvent{Type: transcript.StepStarted, Path: p, Payload: &transcript.StepPayload{Name: p, Kind: transcript.KindCommand, Command: "true"}})
		record(transcript.ExchangeEvent{Type: transcript.StepCompleted, Path: p, Payload: &transcript.StepPayload{Name: p, Kind: transcript.KindCommand,
			Result: transcript.CommandResult{ExitCode: 0, DurationMS: 1}}})
	}
	record(transcript.ExchangeEvent{Type: transcript.RunCompleted, Payload: &transcript.StepPayload{Name: "bench", Kind: transcript.KindWorkflow, Result: transcript.RunResult{Status: "success"}}})
	if err := rec.Close(); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkLiveExportRun measures the live export's own cost for one
// 200-step command run, the run of BenchmarkEngineOverhead, without the
// engine or its processes: the exporter created, attached to the run's
// recorder, every span mapped, built by the SDK and sent over OTLP/gRPC to
// a loopback receiver, and the export flushed. The baseline is the same
// recording with no export; export-ms/run is the difference, the most the
// export can add to a run (when nothing of it overlaps the run), to set
// against BenchmarkEngineOverhead's run time for the 5% budget.
func BenchmarkLiveExportRun(b *testing.B) {
	for _, k := range []string{"OTEL_RESOURCE_ATTRIBUTES", "OTEL_SERVICE_NAME", "OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TIMEOUT", "OTEL_BSP_SCHEDULE_DELAY"} {
		b.Setenv(k, "")
	}
	rcv := otlptest.NewGRPC(b)
	rcv.CountOnly = true
	ep, err := otlp.Resolve(rcv.Endpoint, "", func(string) string { return "" })
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	ctx := context.Background()
	var with, without time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		rec, err := transcript.Create(dir, transcript.NewRunID(), transcript.Options{})
		if err != nil {
			b.Fatal(err)
		}
		recordCommandRun(b, rec)
		t1 := time.Now()
		live, err := otlp.NewLive(ctx, otlp.Config{Endpoint: ep}, func(string) string { return "" })
		if err != nil {
			b.Fatal(err)
		}
		rec, err = transcript.Create(dir, transcript.NewRunID(), transcript.Options{})
		if err != nil {
			b.Fatal(err)
		}
		live.Attach(rec, "")
		recordCommandRun(b, rec)
		if st := live.Close(ctx); st.Exported != 201 || st.Lost > 0 {
			b.Fatalf("live export: %+v", st)
		}
		without += t1.Sub(t0)
		with += time.Since(t1)
	}
	b.StopTimer()
	per := float64(with-without) / float64(b.N)
	b.ReportMetric(per/1e6, "export-ms/run")
	b.ReportMetric(per/201/1e3, "export-µs/span")
	b.ReportMetric(float64(without)/float64(with), "x-vs-stdlib")
}
