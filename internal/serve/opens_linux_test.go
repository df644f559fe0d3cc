package serve

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"unsafe"

	"github.com/reelhq/reel/internal/transcripttest"
	"github.com/reelhq/reel/transcript"
)

// opens counts, with inotify, the opens of each file in dir while fn runs:
// what the kernel saw, whoever in the process opened them.
func opens(t *testing.T, dir string, fn func()) map[string]int {
	t.Helper()
	fd, err := syscall.InotifyInit1(syscall.IN_CLOEXEC | syscall.IN_NONBLOCK)
	if err != nil {
		t.Skipf("inotify: %v", err)
	}
	defer syscall.Close(fd)
	if _, err := syscall.InotifyAddWatch(fd, dir, syscall.IN_OPEN); err != nil {
		t.Fatal(err)
	}
	fn()
	count := map[string]int{}
	buf := make([]byte, 64<<10)
	for {
		n, err := syscall.Read(fd, buf)
		if err == syscall.EAGAIN || n <= 0 {
			return count
		}
		if err != nil {
			t.Fatal(err)
		}
		for off := 0; off+syscall.SizeofInotifyEvent <= n; {
			ev := (*syscall.InotifyEvent)(unsafe.Pointer(&buf[off]))
			name := buf[off+syscall.SizeofInotifyEvent : off+syscall.SizeofInotifyEvent+int(ev.Len)]
			for len(name) > 0 && name[len(name)-1] == 0 {
				name = name[:len(name)-1]
			}
			count[string(name)]++
			off += syscall.SizeofInotifyEvent + int(ev.Len)
		}
	}
}

func get(t *testing.T, url string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", url, resp.Status)
	}
}

// A run page reads each transcript once: the run's and its sub-workflow's,
// for the tree, the timeline and the conversation alike, and the run's
// state is probed on the file the read has open.
func TestRunPageReadsEachTranscriptOnce(t *testing.T) {
	storage := t.TempDir()
	dir := transcript.Dir(storage)
	transcripttest.WriteSample(t, dir, transcripttest.Variant{})
	interrupted := "55555555-5555-4555-8555-555555555555"
	transcripttest.WriteSample(t, dir, transcripttest.Variant{ID: interrupted, ChildID: "66666666-6666-4666-8666-666666666666", Interrupted: true})
	_, url := start(t, storage, Options{})
	get(t, url+"/") // the index is built and in step
	want := func(got map[string]int, ids ...string) {
		t.Helper()
		delete(got, "") // the directory itself
		for _, id := range ids {
			if got[id+".jsonl"] != 1 {
				t.Errorf("%s.jsonl opened %d times, want once (all opens: %v)", id, got[id+".jsonl"], got)
			}
		}
		if len(got) != len(ids) {
			t.Errorf("opened %v, want %v alone", got, ids)
		}
	}
	want(opens(t, dir, func() { get(t, url+"/runs/"+transcripttest.RootID) }), transcripttest.RootID, transcripttest.ChildID)
	// An interrupted run's live overview (what its page reloads): the
	// probe for a live writer uses the read's own descriptor.
	child := "66666666-6666-4666-8666-666666666666"
	if _, err := os.Stat(filepath.Join(dir, child+".jsonl")); err != nil {
		t.Fatal(err)
	}
	want(opens(t, dir, func() { get(t, url+"/runs/"+interrupted+"/overview") }), interrupted, child)
}
