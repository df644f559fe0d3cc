package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/reelhq/reel/transcript"
)

// writeGarbage writes a transcript of about size bytes, a run.started and
// then lines of every kind a reader cannot use: text, random bytes, JSON
// that is no event, events with a broken envelope. It returns the lines
// written. A block of 1 MiB is made once and written again and again: the
// test binary runs under the race detector, where making every line would
// cost more than the readers under test.
func writeGarbage(t *testing.T, path, id string, size int) int {
	t.Helper()
	var block bytes.Buffer
	rng := rand.New(rand.NewPCG(7, 26))
	raw := make([]byte, 120)
	perBlock := 0
	for block.Len() < 1<<20 {
		switch perBlock % 4 {
		case 0:
			fmt.Fprintf(&block, "stack trace line %d: something went wrong in the agent, nothing to read here at all", perBlock)
		case 1:
			for i := range raw {
				raw[i] = byte(rng.IntN(255) + 1)
				if raw[i] == '\n' {
					raw[i] = ' '
				}
			}
			block.Write(raw)
		case 2:
			fmt.Fprintf(&block, `{"level":"info","msg":"not an event","n":%d,"pad":"%s"}`, perBlock, strings.Repeat("x", 40))
		case 3:
			fmt.Fprintf(&block, `{"seq":%d,"type":"step.started","path":17,"timestamp":"nope","payload":{}}`, perBlock)
		}
		block.WriteByte('\n')
		perBlock++
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(f, `{"seq":1,"run_id":%q,"type":"run.started","path":"","iteration":0,"timestamp":"2026-06-08T08:14:42.000000Z","payload":{"name":"garbage","kind":"workflow"}}`+"\n", id)
	lines := 1
	for n := 0; n < size; n += block.Len() {
		if _, err := f.Write(block.Bytes()); err != nil {
			t.Fatal(err)
		}
		lines += perBlock
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return lines
}

// warningCount finds the count a page states.
var warningCount = regexp.MustCompile(`⚠ (\d+) warnings while reading`)

// Issue 26, item 3: a 200 MB garbage transcript gives a run page and an
// html replay of a few kilobytes that state how many warnings there were,
// through the real binary and the real server, in bounded memory.
func TestGarbageTranscriptPagesAreBounded(t *testing.T) {
	dir := t.TempDir()
	storage := filepath.Join(dir, "st")
	tdir := transcript.Dir(storage)
	os.MkdirAll(tdir, 0o700)
	id := transcript.NewRunID()
	lines := writeGarbage(t, filepath.Join(tdir, id+".jsonl"), id, 200<<20)
	want := fmt.Sprintf("⚠ %d warnings while reading", lines-1)
	const limit = 5 << 20

	out := filepath.Join(dir, "replay.html")
	res := runBounded(t, dir, 5*time.Minute, "replay", "--format", "html", "-o", out, "--storage", storage, id)
	page, err := os.ReadFile(out)
	if err != nil {
		t.Fatalf("replay: exit %d, %v\n%s", res.code, err, tailOf(res.stderr, 2000))
	}
	t.Logf("replay --format html of %d lines (200 MB): %d bytes, %s, peak RSS %d MB; stderr %d bytes", lines, len(page), res.elapsed.Round(time.Millisecond), res.maxRSS>>10, len(res.stderr))
	if res.code != 1 || len(page) > limit || !bytes.Contains(page, []byte(want)) || len(res.stderr) > 64<<10 {
		t.Errorf("replay: exit %d, %d bytes, states the count %v (%s)\nstderr:\n%s", res.code, len(page), bytes.Contains(page, []byte(want)), warningCount.Find(page), tailOf(res.stderr, 2000))
	}

	// The server, as a user starts it.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	srv := exec.CommandContext(ctx, reelBinary(t), "serve", "--addr", "127.0.0.1:0", "--storage", storage)
	srv.Env = append(os.Environ(), "REEL_STORAGE=")
	stdout, err := srv.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	srv.Stderr = &stderr
	started := time.Now()
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		srv.Process.Signal(os.Interrupt)
		srv.Wait()
	}()
	sc := bufio.NewScanner(stdout)
	if !sc.Scan() {
		t.Fatalf("serve printed no address\n%s", stderr.String())
	}
	url := regexp.MustCompile(`http://\S+/`).FindString(sc.Text())
	if url == "" {
		t.Fatalf("serve: %q", sc.Text())
	}
	go io.Copy(io.Discard, stdout)
	t.Logf("serve: listening after %s (the index reads the file first)", time.Since(started).Round(time.Millisecond))
	start := time.Now()
	resp, err := http.Get(url + "runs/" + id)
	if err != nil {
		t.Fatal(err)
	}
	page, err = io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("serve: run page %d bytes in %s, server peak RSS %d MB", len(page), time.Since(start).Round(time.Millisecond), vmHWM(srv.Process.Pid)>>10)
	if resp.StatusCode != http.StatusOK || len(page) > limit || !bytes.Contains(page, []byte(want)) {
		t.Errorf("run page: %s, %d bytes, states the count %v (%s)", resp.Status, len(page), bytes.Contains(page, []byte(want)), warningCount.Find(page))
	}
}
