package main

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reelhq/reel/internal/runstatus"
	"github.com/reelhq/reel/transcript"
)

// reel runs as history, through the binary: newest first, filtered by
// workflow, status, --since and --until (times and durations), cut by
// --limit, as a table or JSON; bad filter values are errors that say what
// is wanted.
func TestRunsHistoryFilters(t *testing.T) {
	dir := t.TempDir()
	storage := filepath.Join(dir, "st")
	now := time.Now().UTC().Truncate(time.Second)
	type spec struct {
		workflow, status string
		ago              time.Duration
	}
	specs := []spec{
		{"build", runstatus.Success, 72 * time.Hour},
		{"build", runstatus.Failure, 48 * time.Hour},
		{"deploy", runstatus.Success, 30 * time.Hour},
		{"deploy", runstatus.Cancelled, 5 * time.Hour},
		{"build", runstatus.Success, 2 * time.Hour},
		{"build", runstatus.Interrupted, 30 * time.Minute},
	}
	ids := make([]string, len(specs))
	for i, s := range specs {
		at := now.Add(-s.ago)
		ids[i] = transcript.NewRunID()
		rec, err := transcript.Create(transcript.Dir(storage), ids[i], transcript.Options{Now: func() time.Time { return at }})
		if err != nil {
			t.Fatal(err)
		}
		evs := []transcript.ExchangeEvent{{Type: transcript.RunStarted, Payload: &transcript.StepPayload{Name: s.workflow, Kind: transcript.KindWorkflow}}}
		if s.status != runstatus.Interrupted {
			evs = append(evs, transcript.ExchangeEvent{Type: transcript.RunCompleted, Payload: &transcript.StepPayload{Name: s.workflow, Kind: transcript.KindWorkflow, Result: transcript.RunResult{Status: s.status}}})
		}
		for _, e := range evs {
			if _, err := rec.Record(e); err != nil {
				t.Fatal(err)
			}
		}
		rec.Close()
	}
	// want lists the runs (indexes into specs) newest first.
	want := func(idx ...int) []string {
		var out []string
		for _, i := range idx {
			out = append(out, ids[i])
		}
		return out
	}
	for _, c := range []struct {
		args []string
		want []string
	}{
		{nil, want(5, 4, 3, 2, 1, 0)},
		{[]string{"--workflow", "deploy"}, want(3, 2)},
		{[]string{"--status", "success"}, want(4, 2, 0)},
		{[]string{"--status", "interrupted"}, want(5)},
		{[]string{"--workflow", "build", "--status", "failure"}, want(1)},
		{[]string{"--since", "24h"}, want(5, 4, 3)},
		{[]string{"--until", "24h"}, want(2, 1, 0)},
		{[]string{"--since", now.Add(-50 * time.Hour).Format(time.RFC3339), "--until", "3h"}, want(3, 2, 1)},
		{[]string{"--limit", "2"}, want(5, 4)},
		{[]string{"--workflow", "build", "--limit", "3"}, want(5, 4, 1)},
	} {
		res := runBinary(t, dir, append([]string{"runs", "--json", "--storage", storage}, c.args...)...)
		var got []runRow
		if err := json.Unmarshal([]byte(res.stdout), &got); err != nil || res.code != 0 {
			t.Fatalf("runs %v: exit %d %v\n%s%s", c.args, res.code, err, res.stdout, res.stderr)
		}
		var gotIDs []string
		for _, r := range got {
			gotIDs = append(gotIDs, r.RunID)
		}
		if !slices.Equal(gotIDs, c.want) {
			t.Errorf("runs %v:\n got %v\nwant %v", c.args, gotIDs, c.want)
		}
		// The table lists the same runs in the same order.
		table := runBinary(t, dir, append([]string{"runs", "--storage", storage}, c.args...)...)
		lines := strings.Split(strings.TrimSpace(table.stdout), "\n")
		if len(lines) != len(c.want)+1 {
			t.Errorf("runs %v table: %d lines\n%s", c.args, len(lines), table.stdout)
			continue
		}
		for i, id := range c.want {
			if !strings.HasPrefix(lines[i+1], id) {
				t.Errorf("runs %v table line %d: %q, want %s", c.args, i+2, lines[i+1], id)
			}
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--status", "incomplete"}, "want one of success, failure, cancelled, interrupted, running"},
		{[]string{"--since", "yesterday"}, "is not a time"},
		{[]string{"--limit", "-1"}, "--limit must be 0 (all) or more"},
	} {
		res := runBinary(t, dir, append([]string{"runs", "--storage", storage}, c.args...)...)
		if res.code != exitTrouble || !strings.Contains(res.stderr, c.want) {
			t.Errorf("runs %v: exit %d\n%s", c.args, res.code, res.stderr)
		}
	}
}
