package runs

import (
	"errors"
	"fmt"
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
	s := NewStore(storage, Options{})
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
		got, err := s.resolve(ref)
		if strings.HasPrefix(want, "/") {
			if err != nil || got != want {
				t.Errorf("Resolve(%q) = %q, %v; want %q", ref, got, err, want)
			}
		} else if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Resolve(%q) = %q, %v; want error with %q", ref, got, err, want)
		}
	}
	if _, err := s.Find("cccc"); !errors.Is(err, ErrNotFound) {
		t.Errorf("not found: %v", err)
	}
	if r, err := s.Find("aaaaaaaa-0000-4000-8000-000000000001"); err != nil || r.Path != a {
		t.Errorf("Find = %v, %v", r, err)
	}
	latest, err := s.Latest()
	if err != nil || latest.Path != b {
		t.Errorf("Latest = %v, %v; want the newest top-level run %q", latest, err, b)
	}
	all, err := s.All()
	if err != nil || len(all) != 3 {
		t.Errorf("All = %v, %v", all, err)
	}
	if _, err := NewStore(filepath.Join(storage, "none"), Options{}).Latest(); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("missing storage: %v", err)
	}
	// ID takes a whole run id and nothing else.
	if r, err := s.ID("aaaaaaaa-0000-4000-8000-000000000002"); err != nil || r.Path != b {
		t.Errorf("ID = %v, %v", r, err)
	}
	for _, bad := range []string{"aaaa", a, "../x", "cccccccc-0000-4000-8000-000000000009"} {
		if _, err := s.ID(bad); err == nil {
			t.Errorf("ID(%q) accepted", bad)
		}
	}
}

// A child is stored beside its parent under a validated id; the chain of
// links is bounded by MaxDepth and may not come back on itself.
func TestChildAndParent(t *testing.T) {
	r := Open("/s/transcripts/x.jsonl", Options{})
	c, err := r.Child("aaaaaaaa-0000-4000-8000-000000000001")
	if err != nil || c.Path != "/s/transcripts/aaaaaaaa-0000-4000-8000-000000000001.jsonl" || c.Depth() != 1 || c.Warnings() != r.Warnings() {
		t.Errorf("Child = %+v, %v", c, err)
	}
	for _, bad := range []string{"../../etc/passwd", "", "AAAAAAAA-0000-4000-8000-000000000001", "a/b"} {
		if _, err := r.Child(bad); err == nil {
			t.Errorf("Child(%q) accepted", bad)
		}
		if _, err := r.Parent(bad); err == nil {
			t.Errorf("Parent(%q) accepted", bad)
		}
	}
	a := Open("/s/t/aaaaaaaa-0000-4000-8000-000000000001.jsonl", Options{})
	b, err := a.Child("bbbbbbbb-0000-4000-8000-000000000002")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Child("aaaaaaaa-0000-4000-8000-000000000001"); !errors.Is(err, ErrCycle) {
		t.Errorf("a cycle: %v", err)
	}
	if _, err := b.Parent("aaaaaaaa-0000-4000-8000-000000000001"); !errors.Is(err, ErrCycle) {
		t.Errorf("back up the chain: %v", err)
	}
	deep := a
	for i := range MaxDepth {
		if deep, err = deep.Child(fmt.Sprintf("cccccccc-0000-4000-8000-%012d", i)); err != nil {
			t.Fatalf("depth %d: %v", i+1, err)
		}
	}
	if _, err := deep.Child("dddddddd-0000-4000-8000-000000000001"); !errors.Is(err, ErrTooDeep) {
		t.Errorf("past MaxDepth: %v", err)
	}
}
