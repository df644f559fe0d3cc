package shadowstore

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	"github.com/reelhq/reel/internal/agentlog"
	"github.com/reelhq/reel/internal/testfixtures"
	"github.com/reelhq/reel/transcript"
)

// reelTrace records a small run with the real Recorder and exports it.
func reelTrace(t *testing.T) ([]agentlog.Record, string, time.Time) {
	t.Helper()
	start := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	rec, err := transcript.Create(t.TempDir(), transcript.NewRunID(), transcript.Options{Now: func() time.Time { return start }})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range []transcript.ExchangeEvent{
		{Type: transcript.RunStarted, Payload: &transcript.StepPayload{Name: "review", Kind: transcript.KindWorkflow}},
		{Type: transcript.StepStarted, Path: "ask", Payload: &transcript.StepPayload{Name: "ask", Kind: transcript.KindAgent}},
		{Type: transcript.MessageUser, Path: "ask", Payload: &transcript.MessagePayload{Role: "user", Blocks: []transcript.ContentBlock{{Type: transcript.BlockText, Fidelity: transcript.FidelityRouter, Text: "hi"}}}},
		{Type: transcript.MessageAssistant, Path: "ask", Payload: &transcript.MessagePayload{Role: "assistant", Blocks: []transcript.ContentBlock{{Type: transcript.BlockText, Fidelity: transcript.FidelityAgentEmitted, Text: "hello"}}}},
		{Type: transcript.StepCompleted, Path: "ask", Payload: &transcript.StepPayload{Name: "ask", Kind: transcript.KindAgent, Result: transcript.AgentResult{Usage: transcript.Usage{InputTokens: 3, OutputTokens: 1, TotalTokens: 4}}}},
		{Type: transcript.RunCompleted, Payload: &transcript.StepPayload{Name: "review", Kind: transcript.KindWorkflow}},
	} {
		if _, err := rec.Record(e); err != nil {
			t.Fatal(err)
		}
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	events, err := transcript.ReadFile(rec.Path())
	if err != nil {
		t.Fatal(err)
	}
	recs, err := agentlog.FromTranscript(events, agentlog.ExportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return recs, rec.RunID(), start
}

func TestPut(t *testing.T) {
	recs, runID, start := reelTrace(t)
	demo, err := agentlog.ReadFile(filepath.Join(testfixtures.Dir(t, "agentlog"), "demo-baseline.agentlog"), agentlog.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	project := t.TempDir()
	traces := [][]agentlog.Record{recs, demo}
	paths, err := Put(context.Background(), project, traces)
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range paths {
		want, _ := StorePath(project, traces[i][0].ID)
		hex := traces[i][0].ID[len(agentlog.IDPrefix):]
		if p != want || p != filepath.Join(project, ".shadow", "traces", hex[:2], hex[2:]+".agentlog") {
			t.Fatalf("stored at %s, want %s", p, want)
		}
		got, err := agentlog.ReadFile(p, agentlog.ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(traces[i]) || got[0].ID != traces[i][0].ID {
			t.Fatalf("%s holds another trace", p)
		}
	}
	db, err := sql.Open("sqlite", IndexPath(project))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var id, root string
	var created int64
	var tag sql.NullString
	if err := db.QueryRow(`SELECT t.id, t.created_at, t.session_tag, t.root_record_id FROM traces t JOIN tags g ON g.trace_id = t.id WHERE g.key = 'reel.run_id' AND g.value = ?`, runID).
		Scan(&id, &created, &tag, &root); err != nil {
		t.Fatal(err)
	}
	if id != recs[0].ID || root != id || tag.String != "review" || created != start.UnixMilli() {
		t.Errorf("traces row %s %d %v %s", id, created, tag, root)
	}
	var n int
	if err := db.QueryRow(`SELECT COUNT(*) FROM traces t JOIN tags g ON g.trace_id = t.id WHERE t.session_tag = 'demo' AND g.key = 'config' AND g.value = 'a'`).Scan(&n); err != nil || n != 1 {
		t.Errorf("demo trace rows %d, %v", n, err)
	}
	var mode string
	if err := db.QueryRow(`PRAGMA journal_mode`).Scan(&mode); err != nil || mode != "wal" {
		t.Errorf("journal_mode %q, %v", mode, err)
	}
	// Storing again replaces the rows instead of adding any.
	if _, err := Put(context.Background(), project, [][]agentlog.Record{recs}); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow(`SELECT COUNT(*) FROM traces`).Scan(&n); err != nil || n != 2 {
		t.Errorf("traces after re-store: %d, %v", n, err)
	}
	if err := db.QueryRow(`SELECT COUNT(*) FROM tags WHERE trace_id = ?`, recs[0].ID).Scan(&n); err != nil || n != 2 {
		t.Errorf("tags of the reel trace: %d, %v", n, err)
	}
}

func TestPutErrors(t *testing.T) {
	if _, err := Put(context.Background(), t.TempDir(), [][]agentlog.Record{nil}); err == nil {
		t.Error("an empty trace was stored")
	}
	bad := []agentlog.Record{{ID: "sha256:xyz", Kind: agentlog.KindMetadata, TS: "2026-01-01T00:00:00.000Z", Payload: []byte(`{}`)}}
	if _, err := Put(context.Background(), t.TempDir(), [][]agentlog.Record{bad}); err == nil {
		t.Error("a trace with a malformed id was stored")
	}
	if _, err := StorePath(".", "md5:00"); err == nil {
		t.Error("StorePath accepted a non-sha256 id")
	}
}
