package runstore

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reelhq/reel/transcript"
)

func record(t *testing.T, dir, id, parent string, mod time.Time) string {
	t.Helper()
	rec, err := transcript.Create(dir, id, transcript.Options{ParentRunID: parent})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rec.Record(transcript.ExchangeEvent{Type: transcript.RunStarted, Payload: &transcript.StepPayload{Name: "w", Kind: "workflow"}}); err != nil {
		t.Fatal(err)
	}
	rec.Close()
	os.Chtimes(rec.Path(), mod, mod)
	return rec.Path()
}

func TestResolve(t *testing.T) {
	storage := t.TempDir()
	s := New(storage)
	now := time.Now()
	a := record(t, s.Dir, "aaaaaaaa-0000-4000-8000-000000000001", "", now.Add(-3*time.Hour))
	b := record(t, s.Dir, "aaaaaaaa-0000-4000-8000-000000000002", "", now.Add(-2*time.Hour))
	record(t, s.Dir, "bbbbbbbb-0000-4000-8000-000000000003", "aaaaaaaa-0000-4000-8000-000000000002", now) // newest, but a child
	os.WriteFile(filepath.Join(s.Dir, "notes.txt"), nil, 0o600)
	os.WriteFile(filepath.Join(s.Dir, "not-a-uuid.jsonl"), nil, 0o600)

	for ref, want := range map[string]string{
		"aaaaaaaa-0000-4000-8000-000000000001":  a,
		"aaaaaaaa-0000-4000-8000-000000000002":  b,
		"aaaaaaaa-0000-4000-8000-0000000000":    "ambiguous",
		"aaaaaaaa-0000-4000-8000-000000000001x": "neither",
		"bbbb":                                  filepath.Join(s.Dir, "bbbbbbbb-0000-4000-8000-000000000003.jsonl"),
		"cccc":                                  "no such run",
		"cccccccc-0000-4000-8000-000000000009":  "no such run",
		a:                                       a,
		filepath.Join(storage, "missing.jsonl"): "no such file",
		"":                                      "empty",
	} {
		got, err := s.Resolve(ref)
		if strings.HasPrefix(want, "/") {
			if err != nil || got != want {
				t.Errorf("Resolve(%q) = %q, %v; want %q", ref, got, err, want)
			}
		} else if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Resolve(%q) = %q, %v; want error with %q", ref, got, err, want)
		}
	}
	if _, err := s.Resolve("cccc"); !errors.Is(err, ErrNotFound) {
		t.Errorf("not found: %v", err)
	}
	latest, err := s.Latest()
	if err != nil || latest != b {
		t.Errorf("Latest = %q, %v; want the newest top-level run %q", latest, err, b)
	}
	all, err := s.All()
	if err != nil || len(all) != 3 {
		t.Errorf("All = %q, %v", all, err)
	}
	if _, err := New(filepath.Join(storage, "none")).Latest(); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("missing storage: %v", err)
	}
}

func TestChildPath(t *testing.T) {
	p, err := ChildPath("/s/transcripts/x.jsonl", "aaaaaaaa-0000-4000-8000-000000000001")
	if err != nil || p != "/s/transcripts/aaaaaaaa-0000-4000-8000-000000000001.jsonl" {
		t.Errorf("ChildPath = %q, %v", p, err)
	}
	for _, bad := range []string{"../../etc/passwd", "", "AAAAAAAA-0000-4000-8000-000000000001", "a/b"} {
		if _, err := ChildPath("/s/t/x.jsonl", bad); err == nil {
			t.Errorf("ChildPath(%q) accepted", bad)
		}
	}
}
