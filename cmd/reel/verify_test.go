package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reelhq/reel/transcript"
)

// TestVerifyCommand runs the built binary on clean, broken, interrupted and
// unreadable transcripts and checks the exit status and the lines.
func TestVerifyCommand(t *testing.T) {
	dir := t.TempDir()
	storage := filepath.Join(dir, "storage")
	id := transcript.NewRunID()
	rec, err := transcript.Create(transcript.Dir(storage), id, transcript.Options{})
	if err != nil {
		t.Fatal(err)
	}
	step := &transcript.StepPayload{Name: "w", Kind: transcript.KindWorkflow}
	for _, e := range []transcript.ExchangeEvent{
		{Type: transcript.RunStarted, Payload: step},
		{Type: transcript.StepStarted, Path: "a", Payload: &transcript.StepPayload{Name: "a", Kind: transcript.KindCommand}},
		{Type: transcript.StepCompleted, Path: "a", Payload: &transcript.StepPayload{Name: "a", Kind: transcript.KindCommand}},
		{Type: transcript.RunCompleted, Payload: step},
	} {
		if _, err := rec.Record(e); err != nil {
			t.Fatal(err)
		}
	}
	rec.Close()

	// Clean: exit 0, whether given the storage root, the directory or the file.
	for _, arg := range []string{storage, transcript.Dir(storage), rec.Path()} {
		r := runBinary(t, dir, "verify", arg)
		if r.code != 0 || !strings.Contains(r.stdout, "ok: 1 transcript(s) verified") {
			t.Fatalf("verify %s: %d %q %q", arg, r.code, r.stdout, r.stderr)
		}
	}

	// Interrupted (no run.completed): a warning, still exit 0.
	data, _ := os.ReadFile(rec.Path())
	lines := strings.SplitAfter(string(data), "\n")
	cut := filepath.Join(dir, "cut")
	os.MkdirAll(cut, 0o700)
	os.WriteFile(filepath.Join(cut, id+".jsonl"), []byte(strings.Join(lines[:3], "")), 0o600)
	r := runBinary(t, dir, "verify", cut)
	if r.code != 0 || !strings.Contains(r.stdout, "warning: interrupted") {
		t.Fatalf("interrupted: %d %q", r.code, r.stdout)
	}

	// Broken: one file:line: problem per violation, exit 1; --json parses.
	bad := filepath.Join(dir, "bad")
	os.MkdirAll(bad, 0o700)
	badPath := filepath.Join(bad, id+".jsonl")
	broken := strings.Replace(string(data), `"seq":3,`, `"seq":7,`, 1)
	broken = strings.Replace(broken, `"type":"step.started"`, `"type":"step.paused"`, 1)
	os.WriteFile(badPath, []byte(broken), 0o644)
	r = runBinary(t, dir, "verify", badPath)
	if r.code != 1 {
		t.Fatalf("broken: exit %d, want 1: %q", r.code, r.stdout)
	}
	for _, want := range []string{
		badPath + ": mode is 0644, want 0600",
		badPath + `:2: unknown event type "step.paused"`,
		badPath + ":3: seq 7, want 3",
	} {
		if !strings.Contains(r.stdout, want+"\n") && !strings.Contains(r.stdout, want+" ") {
			t.Errorf("missing %q in:\n%s", want, r.stdout)
		}
	}
	r = runBinary(t, dir, "verify", "--json", badPath)
	var rep struct {
		Files    []map[string]any `json:"files"`
		Problems []struct {
			File    string `json:"file"`
			Line    int    `json:"line"`
			Problem string `json:"problem"`
		} `json:"problems"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil || r.code != 1 || len(rep.Problems) < 3 || rep.Problems[0].File != badPath {
		t.Fatalf("--json: %d %v %+v", r.code, err, rep)
	}

	// Unreadable: exit 2 and a message on stderr.
	r = runBinary(t, dir, "verify", filepath.Join(dir, "missing.jsonl"))
	if r.code != 2 || !strings.Contains(r.stderr, "cannot read") {
		t.Fatalf("missing file: %d %q", r.code, r.stderr)
	}
}

// TestVerifyEngineAndSampleRuns: the realistic sample runs used across the
// reading tests, children included, verify clean through the CLI.
func TestVerifyEngineAndSampleRuns(t *testing.T) {
	storage := sampleStorage(t)
	r := runBinary(t, storage, "verify", storage)
	if r.code != 0 {
		t.Fatalf("sample: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

func TestVersionCommand(t *testing.T) {
	out, _, err := runReel(t, t.Context(), "version")
	if err != nil || !strings.HasPrefix(out, "reel ") {
		t.Fatalf("version: %q %v", out, err)
	}
}
