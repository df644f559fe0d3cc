package engine

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

var (
	uuidRE     = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}`)
	timeRE     = regexp.MustCompile(`"time":"[^"]*"`)
	durJSONRE  = regexp.MustCompile(`"duration_ms":\d+`)
	durShownRE = regexp.MustCompile(`\((\d+ms|\d+\.\ds|[0-9hms]+)\)`)
)

// normalize blanks what differs between two runs of the same workflow:
// ids, timestamps and measured durations.
func normalize(b []byte) []byte {
	b = uuidRE.ReplaceAll(b, []byte("<id>"))
	b = timeRE.ReplaceAll(b, []byte(`"time":"<t>"`))
	b = durJSONRE.ReplaceAll(b, []byte(`"duration_ms":<d>`))
	return durShownRE.ReplaceAll(b, []byte("(<d>)"))
}

// docs/decisions.md §10: the audit trail and the display are the same with and
// without the transcript.
func TestAuditAndDisplayIdenticalWithoutTranscript(t *testing.T) {
	const body = `
name: coexist
inputs: [{name: who, default: world}]
states:
  initial: hello
  hello:
    type: step
    command: 'echo hello {{.inputs.who}} >&2'
    on_success: fan
  fan:
    type: parallel
    parallel: [loop, flaky]
    max_concurrent: 1
    on_success: sub
  loop:
    type: for_each
    items: '["a","b"]'
    body: [item]
  item: {type: step, command: 'echo item {{.loop.Item}}'}
  flaky:
    type: step
    command: 'exit 3'
    retry: {max_attempts: 2}
    continue_on_error: true
  sub:
    type: call_workflow
    workflow: child
    on_success: done
  done: {type: terminal, message: 'bye {{.inputs.who}}'}
`
	var displays, audits [][]byte
	for _, off := range []bool{false, true} {
		h := newHarness(t)
		h.write("child.yaml", "name: child\nstates:\n  initial: c\n  c: {type: step, command: 'echo child'}\n")
		h.e.NoTranscript = off
		rep := h.run(context.Background(), body, nil)
		if rep.Status != "success" {
			t.Fatalf("no-transcript=%v: %+v", off, rep)
		}
		if off != (rep.TranscriptPath == "") {
			t.Fatalf("no-transcript=%v but transcript path %q", off, rep.TranscriptPath)
		}
		entries, _ := os.ReadDir(filepath.Join(h.storage, "transcripts"))
		if off && len(entries) != 0 {
			t.Fatalf("--no-transcript wrote %d transcripts", len(entries))
		}
		audit, err := os.ReadFile(filepath.Join(h.storage, "audit.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		displays = append(displays, normalize(h.display.Bytes()))
		audits = append(audits, normalize(audit))
	}
	if !bytes.Equal(displays[0], displays[1]) {
		t.Fatalf("display differs:\n--- with transcript\n%s\n--- without\n%s", displays[0], displays[1])
	}
	if !bytes.Equal(audits[0], audits[1]) {
		t.Fatalf("audit differs:\n--- with transcript\n%s\n--- without\n%s", audits[0], audits[1])
	}
	// one start and one end per run and per step execution
	if n := bytes.Count(audits[0], []byte("\n")); n != 2*(2+10) {
		t.Fatalf("audit has %d entries:\n%s", n, audits[0])
	}
}
