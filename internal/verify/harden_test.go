package verify

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/reelhq/reel/transcript"
)

// A child_run_id that is not a canonical UUID is an error and is never
// followed, whatever file it names.
func TestChildRunIDOutsideTheStorageIsNotFollowed(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "storage", "transcripts")
	os.MkdirAll(dir, 0o700)
	// A transcript outside the storage that verify must not read: it is
	// malformed, so reading it would show in the report.
	outsideID := transcript.NewRunID()
	os.MkdirAll(filepath.Join(base, "x"), 0o700)
	os.WriteFile(filepath.Join(base, "x", outsideID+".jsonl"), []byte("not json\n"), 0o600)
	id := transcript.NewRunID()
	evil := "../../x/" + outsideID
	r, err := transcript.Create(dir, id, transcript.Options{})
	if err != nil {
		t.Fatal(err)
	}
	step := &transcript.StepPayload{Name: "w", Kind: transcript.KindWorkflow}
	r.Record(transcript.ExchangeEvent{Type: transcript.RunStarted, Payload: step})
	r.Close()
	// The recorder would refuse the id; a hostile file has it anyway.
	f, _ := os.OpenFile(r.Path(), os.O_APPEND|os.O_WRONLY, 0)
	fmt.Fprintf(f, `{"seq":2,"run_id":%q,"child_run_id":%q,"type":"step.call_workflow.started","path":"c","iteration":0,"timestamp":"2026-01-01T00:00:00.000000Z","payload":{"name":"c","kind":"call_workflow"}}`+"\n", id, evil)
	f.Close()
	rep := Paths([]string{dir}, Options{})
	var msgs []string
	for _, p := range append(rep.Problems, rep.Unreadable...) {
		msgs = append(msgs, p.String())
		if strings.Contains(p.File, filepath.Join(base, "x")) {
			t.Errorf("verify read a file outside the storage: %s", p)
		}
	}
	if len(rep.Files) != 1 || !strings.Contains(strings.Join(msgs, "\n"), "child_run_id") {
		t.Fatalf("files %+v, problems:\n%s", rep.Files, strings.Join(msgs, "\n"))
	}
}

func TestTornTailsAreReported(t *testing.T) {
	dir := t.TempDir()
	id := transcript.NewRunID()
	r, _ := transcript.Create(dir, id, transcript.Options{})
	r.Record(transcript.ExchangeEvent{Type: transcript.RunStarted, Payload: &transcript.StepPayload{Name: "w", Kind: transcript.KindWorkflow}})
	r.Close()
	f, _ := os.OpenFile(r.Path(), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"seq":2,"torn`)
	f.Close()
	r, err := transcript.Open(r.Path(), transcript.Options{})
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	// And one whose transcript is gone.
	os.WriteFile(filepath.Join(dir, transcript.NewRunID()+".jsonl.torn.1"), []byte("x"), 0o600)
	rep := Paths([]string{dir}, Options{})
	var got []string
	for _, p := range rep.Problems {
		got = append(got, p.String())
	}
	all := strings.Join(got, "\n")
	if !strings.Contains(all, ".jsonl.torn") || !strings.Contains(all, "14 bytes") || !strings.Contains(all, "not here") {
		t.Fatalf("problems:\n%s", all)
	}
	if rep.Violations() != 0 {
		t.Fatalf("torn tails are warnings, got violations:\n%s", all)
	}
}

// A file of millions of bad lines gives a bounded report in bounded memory.
func TestReportIsBoundedWhateverTheFileHolds(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, transcript.NewRunID()+".jsonl")
	os.WriteFile(p, []byte(strings.Repeat("{}\n", 1_000_000)), 0o600)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	rep := Paths([]string{p}, Options{})
	runtime.GC()
	runtime.ReadMemStats(&after)
	if n := len(rep.Problems); n > 100 {
		t.Fatalf("%d problems listed for one file", n)
	}
	joined := fmt.Sprint(rep.Problems)
	if !strings.Contains(joined, "more problems like this one") {
		t.Fatalf("no count of the rest: %s", joined)
	}
	if grown := int64(after.HeapAlloc) - int64(before.HeapAlloc); grown > 16<<20 {
		t.Fatalf("the report holds %d MiB", grown>>20)
	}
	runtime.KeepAlive(rep)
}

func TestFIFOIsUnreadableNotAHang(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, transcript.NewRunID()+".jsonl")
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	done := make(chan *Report, 1)
	go func() { done <- Paths([]string{dir}, Options{}) }()
	select {
	case rep := <-done:
		if len(rep.Unreadable) != 1 || !strings.Contains(rep.Unreadable[0].Message, "not a regular file") {
			t.Fatalf("unreadable: %+v", rep.Unreadable)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("verify blocked on a FIFO")
	}
}
