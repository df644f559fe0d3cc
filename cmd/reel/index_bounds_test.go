package main

// The run index against what an attacker or an unlucky user puts in the
// storage (issue 26): a line of hundreds of megabytes, garbage in the
// database's pages, a symlink swapped in at index.db while readers run.
// Every case goes through the real binary and a real SQLite file.

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/reelhq/reel/internal/proctest"
	"github.com/reelhq/reel/transcript"
)

// writeLongLine writes a transcript whose third line, a step's output, is
// size bytes long, and whose fourth holds the word after.
func writeLongLine(t *testing.T, path, id string, size int, after string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	ev := func(seq int, typ, path, payload string) {
		fmt.Fprintf(w, `{"seq":%d,"run_id":%q,"type":%q,"path":%q,"iteration":0,"timestamp":"2026-06-08T08:14:4%d.000000Z","payload":%s}`+"\n", seq, id, typ, path, seq, payload)
	}
	ev(1, "run.started", "", `{"name":"long","kind":"workflow"}`)
	ev(2, "step.started", "big", `{"name":"big","kind":"command","command":"cat big"}`)
	fmt.Fprintf(w, `{"seq":3,"run_id":%q,"type":"step.completed","path":"big","iteration":0,"timestamp":"2026-06-08T08:14:43.000000Z","payload":{"name":"big","kind":"command","result":{"exit_code":0,"output":"`, id)
	block := []byte(strings.Repeat("lorem ipsum dolor sit amet hugeword ", 1<<15))
	for n := 0; n < size; n += len(block) {
		w.Write(block)
	}
	w.WriteString(`"}}}` + "\n")
	ev(4, "step.started", "small", `{"name":"small","kind":"command","command":"echo `+after+`"}`)
	ev(5, "run.completed", "", `{"name":"long","kind":"workflow","result":{"status":"success"}}`)
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// servedBinary is a reel serve started as a user starts it.
type servedBinary struct {
	url    string
	cmd    *exec.Cmd
	stderr *proctest.Buffer
}

// serveBinary starts reel serve on a free loopback port with args and
// waits until it listens; the server is stopped when the test ends.
func serveBinary(t *testing.T, limit time.Duration, args ...string) *servedBinary {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	srv := exec.CommandContext(ctx, reelBinary(t), append([]string{"serve", "--addr", "127.0.0.1:0"}, args...)...)
	srv.Env = append(os.Environ(), "REEL_STORAGE=", "REEL_TOKEN=")
	stdout, err := srv.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	s := &servedBinary{cmd: srv, stderr: &proctest.Buffer{}}
	srv.Stderr = s.stderr
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		srv.Process.Signal(os.Interrupt)
		srv.Wait()
		cancel()
	})
	sc := bufio.NewScanner(stdout)
	if !sc.Scan() {
		t.Fatalf("serve printed no address\n%s", s.stderr.String())
	}
	if s.url = regexp.MustCompile(`http://\S+/`).FindString(sc.Text()); s.url == "" {
		t.Fatalf("serve: %q", sc.Text())
	}
	go io.Copy(io.Discard, stdout)
	return s
}

// get fetches path from the server with the headers given as name, value
// pairs, and returns the status and body.
func (s *servedBinary) get(t *testing.T, path string, headers ...string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, s.url+strings.TrimPrefix(path, "/"), nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, body
}

// Issue 26, item 2: a transcript with one 300 MB line keeps every command
// that builds the index on the way (reel index, and on a fresh index runs,
// search, events --all, serve) under 200 MB, leaves the line out as the
// readers do, and still indexes what follows it.
func TestIndexStreamsLongLine(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a 300 MB transcript")
	}
	dir := t.TempDir()
	storage := filepath.Join(dir, "st")
	tdir := transcript.Dir(storage)
	os.MkdirAll(tdir, 0o700)
	id := transcript.NewRunID()
	writeLongLine(t, filepath.Join(tdir, id+".jsonl"), id, 300<<20, "afterword")
	const limit = 200 << 10 // KiB
	fresh := func() {
		for _, p := range []string{"", "-wal", "-shm"} {
			os.Remove(filepath.Join(storage, "index.db"+p))
		}
	}
	for _, c := range []struct {
		args []string
		want string
		code int
	}{
		{[]string{"index"}, "indexed 1 transcript(s)", 0},
		{[]string{"runs"}, id, 0},
		{[]string{"search", "afterword"}, "afterword", 0},
		{[]string{"search", "hugeword"}, "", 1}, // the line is left out, as every reader leaves it
		{[]string{"events", "--all", "--type", "step.started"}, "echo afterword", 1},
	} {
		fresh()
		res := runBounded(t, dir, 5*time.Minute, append(c.args, "--storage", storage)...)
		t.Logf("reel %s on a fresh index: peak RSS %d MB, %s, exit %d", strings.Join(c.args, " "), res.maxRSS>>10, res.elapsed.Round(time.Millisecond), res.code)
		if res.maxRSS > limit || res.code != c.code || !strings.Contains(res.stdout, c.want) {
			t.Errorf("reel %s: peak RSS %d MB (limit %d), exit %d (want %d), stdout lacks %q:\n%s\nstderr:\n%s",
				strings.Join(c.args, " "), res.maxRSS>>10, limit>>10, res.code, c.code, c.want, tailOf(res.stdout, 1000), tailOf(res.stderr, 1000))
		}
		if c.args[0] == "index" && !strings.Contains(res.stderr, "1 line(s) over the 16 MB line limit left out") {
			t.Errorf("reel index does not say it left the line out:\n%s", res.stderr)
		}
	}
	fresh()
	started := time.Now()
	s := serveBinary(t, 5*time.Minute, "--storage", storage)
	code, body := s.get(t, "/api/search?q=afterword")
	hwm := vmHWM(s.cmd.Process.Pid)
	t.Logf("reel serve on a fresh index: listening and answering a search after %s, peak RSS %d MB", time.Since(started).Round(time.Millisecond), hwm>>10)
	if code != http.StatusOK || !bytes.Contains(body, []byte(id)) || hwm > limit {
		t.Errorf("serve: search %d %.300s, peak RSS %d MB", code, body, hwm>>10)
	}
}

// damagePages writes garbage over part of every third page of the SQLite
// file at path from the third on, leaving its header whole: what a disk
// error or another program leaves.
func damagePages(t *testing.T, path string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	if st.Size() < 16<<10 {
		t.Fatalf("%s: %d bytes, too small to damage", path, st.Size())
	}
	garbage := bytes.Repeat([]byte{0xde, 0xad, 0xbe, 0xef, 0x00, 0x7f, 0x13}, 300)
	for off := int64(8 << 10); off < st.Size(); off += 12 << 10 {
		if _, err := f.WriteAt(garbage, off+100); err != nil {
			t.Fatal(err)
		}
	}
}

// Issue 26, item 7: garbage inside index.db's pages is found and the index
// rebuilt from the transcripts, as a truncated index already is, whichever
// command meets it, with a warning that says so.
func TestIndexRepairsDamagedPages(t *testing.T) {
	dir := t.TempDir()
	storage := filepath.Join(dir, "st")
	writeWordRuns(t, storage, 40, 64<<10)
	db := filepath.Join(storage, "index.db")
	if res := runBounded(t, dir, 5*time.Minute, "index", "--storage", storage); res.code != 0 {
		t.Fatalf("index: %d %s", res.code, res.stderr)
	}
	pristine, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	damaged := func() {
		t.Helper()
		for _, p := range []string{"-wal", "-shm"} {
			os.Remove(db + p)
		}
		if err := os.WriteFile(db, pristine, 0o600); err != nil {
			t.Fatal(err)
		}
		damagePages(t, db)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"runs", "--limit", "100"}, "words"},
		{[]string{"search", "--limit", "1", "a*"}, "step.completed"},
		{[]string{"index"}, "indexed 40 transcript(s)"},
	} {
		damaged()
		res := runBounded(t, dir, 5*time.Minute, append(c.args, "--storage", storage)...)
		// A search reads the pages it needs: it may miss the damage.
		told := strings.Contains(res.stderr, "the run index is damaged") && strings.Contains(res.stderr, "rebuilt from the transcripts")
		if res.code != 0 || !strings.Contains(res.stdout, c.want) || !told && c.args[0] != "search" {
			t.Errorf("reel %s on a damaged index: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(c.args, " "), res.code, tailOf(res.stdout, 500), tailOf(res.stderr, 500))
		}
		if c.args[0] == "runs" && strings.Count(res.stdout, "words") != 40 {
			t.Errorf("reel runs after the repair lists %d runs, want 40", strings.Count(res.stdout, "words"))
		}
	}
	// The server repairs it too, answering the request that met it.
	damaged()
	s := serveBinary(t, time.Minute, "--storage", storage)
	if code, body := s.get(t, "/api/runs?limit=100"); code != http.StatusOK || bytes.Count(body, []byte(`"workflow": "words"`)) != 40 || !strings.Contains(s.stderr.String(), "run index rebuilt") {
		t.Errorf("serve on a damaged index: %d %.300s\n%s", code, body, s.stderr)
	}
}

// Issue 26, item 6: index.db swapped for a symlink, thousands of times,
// while reel's readers and the indexer open it: the links' targets (an
// empty file, a file of text, a name that does not exist) are never
// written, created, or given another mode, and no -wal, -shm or -journal
// appears beside them.
func TestIndexNeverFollowsSwappedSymlink(t *testing.T) {
	dir := t.TempDir()
	storage := filepath.Join(dir, "st")
	writeWordRuns(t, storage, 8, 16<<10)
	if res := runBounded(t, dir, 5*time.Minute, "index", "--storage", storage); res.code != 0 {
		t.Fatalf("index: %d %s", res.code, res.stderr)
	}
	db := filepath.Join(storage, "index.db")
	victims := filepath.Join(dir, "victims")
	os.Mkdir(victims, 0o755)
	empty, text, missing := filepath.Join(victims, "empty"), filepath.Join(victims, "text"), filepath.Join(victims, "missing")
	os.WriteFile(empty, nil, 0o644)
	os.WriteFile(text, []byte("not a database\n"), 0o640)

	stop := make(chan struct{})
	flipped := make(chan int)
	go func() {
		n := 0
		targets := []string{empty, text, missing}
		for {
			select {
			case <-stop:
				flipped <- n
				return
			default:
			}
			// index.db out of the way, a link in its place, then back.
			os.Rename(db, db+".real")
			os.Symlink(targets[n%len(targets)], db+".link")
			os.Rename(db+".link", db)
			time.Sleep(time.Duration(n%3) * 50 * time.Microsecond)
			os.Rename(db+".real", db)
			n++
		}
	}()
	deadline := time.Now().Add(20 * time.Second)
	commands := [][]string{{"runs"}, {"index"}, {"search", "a*"}, {"runs", "--status", "success"}}
	runs, ok := 0, 0
	for i := 0; time.Now().Before(deadline) || i < 8; i++ {
		res := runBounded(t, dir, time.Minute, append(commands[i%len(commands)], "--storage", storage)...)
		runs++
		if res.code == 0 {
			ok++
		}
	}
	close(stop)
	n := <-flipped
	os.Remove(db + ".link")
	t.Logf("%d flips of index.db to a symlink during %d runs of the binary (%d succeeded, the others refused the link)", n, runs, ok)
	if n < 1000 {
		t.Errorf("only %d flips", n)
	}
	if st, err := os.Stat(empty); err != nil || st.Size() != 0 || st.Mode() != 0o644 {
		t.Errorf("the empty victim: %v, %v", st.Mode(), err)
	}
	if b, err := os.ReadFile(text); err != nil || string(b) != "not a database\n" {
		t.Errorf("the text victim holds %q (%v)", b, err)
	}
	if st, _ := os.Stat(text); st.Mode() != 0o640 {
		t.Errorf("the text victim's mode is %v", st.Mode())
	}
	names, _ := os.ReadDir(victims)
	if len(names) != 2 {
		var got []string
		for _, e := range names {
			got = append(got, e.Name())
		}
		t.Errorf("beside the victims: %v", got)
	}
	// The index still works once the flipping stops.
	os.Remove(db)
	os.Rename(db+".real", db)
	if res := runBounded(t, dir, time.Minute, "runs", "--storage", storage); res.code != 0 || strings.Count(res.stdout, "words") != 8 {
		t.Errorf("runs after the flips: %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
}
