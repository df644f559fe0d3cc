package main

// The fault-injection suite: the reel binary against what a hostile or
// unlucky user meets. FIFOs where files should be, symlinks planted where
// reel writes, a disk that is full (a real tmpfs, when one can be mounted
// here), files of garbage, runs killed with SIGKILL at random points.
// Every case must end in bounded time, lose nothing that was written
// whole, and say what happened.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/reelhq/reel/internal/fulldisk"
	"github.com/reelhq/reel/internal/verify"
	"github.com/reelhq/reel/transcript"
)

// faultResult is a finished run of the binary and what it cost.
type faultResult struct {
	cliResult
	maxRSS  int64 // KiB
	elapsed time.Duration
}

// runBounded runs the reel binary in dir and fails the test if it has not
// ended after limit.
func runBounded(t *testing.T, dir string, limit time.Duration, args ...string) faultResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, reelBinary(t), args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "REEL_STORAGE=")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// The child's own peak, from /proc: its rusage would count the test
	// process too (os/exec starts children with vfork, and the kernel
	// carries the parent's high-water mark across exec).
	hwm := make(chan int64, 1)
	stop := make(chan struct{})
	go func() {
		var peak int64
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			if kb := vmHWM(cmd.Process.Pid); kb > peak {
				peak = kb
			}
			select {
			case <-stop:
				hwm <- peak
				return
			case <-tick.C:
			}
		}
	}()
	err := cmd.Wait()
	close(stop)
	res := faultResult{cliResult: cliResult{out.String(), errb.String(), 0}, elapsed: time.Since(start), maxRSS: <-hwm}
	if ctx.Err() != nil {
		t.Fatalf("reel %s did not end within %s (it hangs)\nstderr:\n%s", strings.Join(args, " "), limit, errb.String())
	}
	if ee, ok := err.(*exec.ExitError); ok {
		res.code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return res
}

// vmHWM reads a process's peak resident set size in KiB (0 when gone).
func vmHWM(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			var kb int64
			fmt.Sscan(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), &kb)
			return kb
		}
	}
	return 0
}

// Every reader given a FIFO, as a path or named like a run in the
// storage, refuses it at once instead of blocking.
func TestFaultFIFOs(t *testing.T) {
	dir := t.TempDir()
	storage := filepath.Join(dir, "st")
	tdir := transcript.Dir(storage)
	os.MkdirAll(tdir, 0o700)
	id := transcript.NewRunID()
	fifo := filepath.Join(tdir, id+".jsonl")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	loose := filepath.Join(dir, "loose.jsonl")
	syscall.Mkfifo(loose, 0o600)
	for _, args := range [][]string{
		{"verify", storage}, {"verify", fifo},
		{"runs", "--storage", storage},
		{"stats", "--all", "--storage", storage},
		{"tree", "--latest", "--storage", storage}, {"tree", id, "--storage", storage}, {"tree", loose},
		{"events", "--latest", "--storage", storage}, {"events", loose},
		{"replay", loose}, {"tools", loose}, {"tail", loose}, {"tail", "-f", loose}, {"diff", loose, loose},
		{"export", loose, "--to", "flowstudio", filepath.Join(dir, "out")},
		{"import", "--from", "claude", loose, "--storage", storage},
		{"import", "--from", "auto", loose, "--storage", storage},
		{"import", "--from", "agentlog", loose, "--storage", storage},
	} {
		res := runBounded(t, dir, 15*time.Second, args...)
		if args[0] == "runs" || args[0] == "stats" {
			// Listing commands name the file and go on.
			if !strings.Contains(res.stderr, "not a regular file") {
				t.Errorf("reel %v: stderr does not name the FIFO:\n%s", args, res.stderr)
			}
			continue
		}
		if res.code == 0 && !strings.Contains(res.stdout+res.stderr, "not a regular file") {
			t.Errorf("reel %v: exit 0 and no word about the FIFO\nstdout:\n%s\nstderr:\n%s", args, res.stdout, res.stderr)
		}
	}
}

// A file of nothing but garbage lines: every reader stays within memory
// that does not grow with the file, and prints a bounded, summarised list
// of warnings.
func TestFaultGarbageIsBounded(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, transcript.NewRunID()+".jsonl")
	os.WriteFile(p, bytes.Repeat([]byte("{}\n"), 2_500_000), 0o600) // 7.5 MB, 2.5M lines
	for _, args := range [][]string{
		{"verify", p}, {"tree", p}, {"replay", p}, {"tools", p}, {"diff", p, p}, {"events", p}, {"stats", p}, {"tail", p},
	} {
		res := runBounded(t, dir, 5*time.Minute, args...)
		if res.code == 0 {
			t.Errorf("reel %v: exit 0 on a file of garbage", args)
		}
		if n := strings.Count(res.stderr, "\n") + strings.Count(res.stdout, "\n"); n > 200 {
			t.Errorf("reel %v: %d lines of output", args, n)
		}
		if res.maxRSS > 100<<10 {
			t.Errorf("reel %v: %d MiB of memory for a 7.5 MB file", args, res.maxRSS>>10)
		}
		t.Logf("reel %s: %d MiB, %s", args[0], res.maxRSS>>10, res.elapsed.Round(time.Millisecond))
	}
}

// replay paces only on a terminal: written to /dev/null (a character
// device, not a terminal) it runs at once.
func TestFaultReplayToDevNullIsNotPaced(t *testing.T) {
	dir := t.TempDir()
	id := transcript.NewRunID()
	r, err := transcript.Create(dir, id, transcript.Options{})
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	step := &transcript.StepPayload{Name: "w", Kind: transcript.KindWorkflow}
	r.Record(transcript.ExchangeEvent{Type: transcript.RunStarted, Timestamp: at, Payload: step})
	for i := 0; i < 20; i++ {
		at = at.Add(time.Hour)
		r.Record(transcript.ExchangeEvent{Type: transcript.MessageUser, Path: "s", Timestamp: at,
			Payload: &transcript.MessagePayload{Role: "user", Blocks: []transcript.ContentBlock{{Type: transcript.BlockText, Text: "hi", Fidelity: transcript.FidelityRouter}}}})
	}
	r.Record(transcript.ExchangeEvent{Type: transcript.RunCompleted, Timestamp: at, Payload: step})
	r.Close()
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	cmd := exec.Command(reelBinary(t), "replay", r.Path())
	cmd.Stdout = null
	start := time.Now()
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("replay to /dev/null took %s: it was paced as on a terminal", d)
	}
}

// A run killed with SIGKILL at a random point leaves transcripts reel
// verify accepts (interrupted, not invalid) and an audit trail whose next
// entries start on a fresh line; tail -f notices the dead writer.
func TestFaultSIGKILLAtRandomPoints(t *testing.T) {
	dir := t.TempDir()
	storage := filepath.Join(dir, "st")
	wf := loopWorkflow(t, dir, "busy")
	rng := rand.New(rand.NewSource(time.Now().UnixNano()))
	for round := 0; round < 8; round++ {
		cmd := exec.Command(reelBinary(t), "run", wf, "--storage", storage)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "REEL_STORAGE=")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		delay := time.Duration(20+rng.Intn(600)) * time.Millisecond
		time.Sleep(delay)
		cmd.Process.Kill()
		cmd.Wait()
		t.Logf("round %d: killed after %s", round, delay)
	}
	rep := verify.Paths([]string{storage}, verify.Options{})
	if rep.Violations() > 0 || len(rep.Unreadable) > 0 {
		t.Fatalf("verify after SIGKILLs: %v %v", rep.Problems, rep.Unreadable)
	}
	// tail -f on a killed run says the writer is gone and exits 1.
	res := runBounded(t, dir, 30*time.Second, "tail", "-f", "--latest", "--storage", storage)
	if res.code != 1 || !strings.Contains(res.stderr, "writer is gone") {
		t.Fatalf("tail -f on a killed run: exit %d\n%s", res.code, res.stderr)
	}
	// A run that completes after the kills writes whole audit entries.
	done := filepath.Join(dir, "done.yaml")
	writeFile(t, done, "name: quick\nstates:\n  initial: d\n  d: {type: terminal}\n", 0o644)
	if res := runBounded(t, dir, time.Minute, "run", done, "--storage", storage); res.code != 0 {
		t.Fatalf("run after the kills: %d\n%s", res.code, res.stderr)
	}
	entries := auditLines(t, storage)
	last := entries[len(entries)-1]
	if last["workflow"] != "quick" || last["event"] != "workflow.completed" {
		t.Fatalf("last audit entry %v", last)
	}
}

// loopWorkflow writes a workflow named name that prints a line in each of
// 10,000 iterations: long enough to be killed, or to fill a small disk.
func loopWorkflow(t *testing.T, dir, name string) string {
	wf := filepath.Join(dir, name+".yaml")
	writeFile(t, wf, `name: `+name+`
states:
  initial: each
  each:
    type: while
    while: loop.Index < 10000
    max_iterations: 10000
    body: [say]
    on_success: done
  say:
    type: step
    command: 'echo "{{ .loop.Index }} a line of output to record, long enough to fill a small disk"'
  done:
    type: terminal
`, 0o644)
	return wf
}

// auditLines parses the audit trail; a torn line may only be followed by
// a line of its own.
func auditLines(t *testing.T, storage string) []map[string]any {
	t.Helper()
	f, err := os.Open(filepath.Join(storage, "audit.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var e map[string]any
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Logf("torn audit line %q", sc.Text())
			continue
		}
		out = append(out, e)
	}
	return out
}

// A disk that fills during a run: the run fails with exit status 4 and
// says why, the transcript keeps every complete line, and readers accept
// it. A run started on a full disk leaves no empty transcript.
func TestFaultFullDisk(t *testing.T) {
	dir := t.TempDir()
	storage := fulldisk.Mount(t, 96<<10)
	wf := loopWorkflow(t, dir, "fill")
	res := runBounded(t, dir, 2*time.Minute, "run", wf, "--storage", storage)
	if res.code != 4 || !strings.Contains(res.stdout, "fill failure") || !strings.Contains(res.stdout, "no space left on device") ||
		!strings.Contains(res.stderr, "recording failed") {
		t.Fatalf("run on a filling disk: exit %d\nstdout tail:\n%s\nstderr:\n%s", res.code, tailOf(res.stdout, 400), res.stderr)
	}
	files, _ := filepath.Glob(filepath.Join(transcript.Dir(storage), "*.jsonl"))
	if len(files) != 1 {
		t.Fatalf("transcripts %v", files)
	}
	data, _ := os.ReadFile(files[0])
	if len(data) == 0 || data[len(data)-1] != '\n' {
		t.Fatalf("transcript ends in a fragment")
	}
	if res := runBounded(t, dir, time.Minute, "verify", storage); res.code != 0 {
		t.Fatalf("verify: %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	// Now a run on a disk full from the start.
	os.Remove(files[0])
	fulldisk.Fill(t, storage)
	res = runBounded(t, dir, time.Minute, "run", wf, "--storage", storage)
	if res.code != 4 {
		t.Fatalf("run on a full disk: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	entries, _ := os.ReadDir(transcript.Dir(storage))
	for _, e := range entries {
		if info, _ := e.Info(); info.Size() == 0 {
			t.Fatalf("empty transcript left behind: %s", e.Name())
		}
	}
	if res := runBounded(t, dir, time.Minute, "runs", "--storage", storage); strings.Contains(res.stderr, "EOF") {
		t.Fatalf("runs chokes: %s", res.stderr)
	}
}

func tailOf(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// Symlinks planted where reel writes are refused or replaced, never
// followed; exports are private and do not overwrite unless told to.
func TestFaultSymlinksAndExportTargets(t *testing.T) {
	dir := t.TempDir()
	storage := filepath.Join(dir, "st")
	os.MkdirAll(storage, 0o700)
	victim := filepath.Join(dir, "victim")
	os.WriteFile(victim, []byte("precious\n"), 0o644)
	os.Symlink(victim, filepath.Join(storage, "audit.jsonl"))
	wf := filepath.Join(dir, "ok.yaml")
	writeFile(t, wf, "name: ok\nstates:\n  initial: s\n  s: {type: step, command: 'true', on_success: d}\n  d: {type: terminal}\n", 0o644)
	res := runBounded(t, dir, time.Minute, "run", wf, "--storage", storage)
	if res.code != 4 || !strings.Contains(res.stderr, "symlink") {
		t.Fatalf("run with a symlinked audit trail: exit %d\n%s", res.code, res.stderr)
	}
	if b, _ := os.ReadFile(victim); string(b) != "precious\n" {
		t.Fatalf("victim written through the symlink: %q", b)
	}
	os.Remove(filepath.Join(storage, "audit.jsonl"))
	res = runBounded(t, dir, time.Minute, "run", wf, "--storage", storage)
	if res.code != 0 {
		t.Fatalf("run: %d\n%s", res.code, res.stderr)
	}
	// Export into a directory where the names it writes are planted
	// symlinks.
	out := filepath.Join(dir, "fs")
	os.MkdirAll(out, 0o755)
	os.Symlink(victim, filepath.Join(out, "meta.json.tmp"))
	latest := strings.TrimSpace(strings.Split(runBounded(t, dir, time.Minute, "runs", "--json", "--storage", storage).stdout, "\"run_id\": \"")[1][:36])
	res = runBounded(t, dir, time.Minute, "export", latest, "--to", "flowstudio", out, "--storage", storage)
	if res.code == 0 || !strings.Contains(res.stderr, "--force") {
		t.Fatalf("export into a non-empty directory: exit %d\n%s", res.code, res.stderr)
	}
	os.Symlink(victim, filepath.Join(out, "meta.json"))
	res = runBounded(t, dir, time.Minute, "export", latest, "--to", "flowstudio", out, "--force", "--storage", storage)
	if res.code != 0 {
		t.Fatalf("export --force: %d\n%s", res.code, res.stderr)
	}
	if b, _ := os.ReadFile(victim); string(b) != "precious\n" {
		t.Fatalf("victim overwritten by export: %q", b)
	}
	filepath.Walk(out, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.Mode()&os.ModeSymlink != 0 {
			return nil
		}
		want := os.FileMode(0o600)
		if info.IsDir() {
			want = 0o700
			if p == out {
				return nil // the user made it
			}
		}
		if info.Mode().Perm() != want {
			t.Errorf("%s: mode %v, want %v", p, info.Mode().Perm(), want)
		}
		return nil
	})
	// agentlog: an existing trace is not replaced without --force.
	ag := filepath.Join(dir, "ag")
	if res := runBounded(t, dir, time.Minute, "export", latest, "--to", "agentlog", ag, "--storage", storage); res.code != 0 {
		t.Fatalf("export agentlog: %d %s", res.code, res.stderr)
	}
	if res := runBounded(t, dir, time.Minute, "export", latest, "--to", "agentlog", ag, "--storage", storage); res.code == 0 || !strings.Contains(res.stderr, "--force") {
		t.Fatalf("second export agentlog: %d %s", res.code, res.stderr)
	}
	traces, _ := filepath.Glob(filepath.Join(ag, "*.agentlog"))
	for _, tr := range traces {
		if st, _ := os.Stat(tr); st.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v", tr, st.Mode().Perm())
		}
	}
}

// Empty and garbage transcripts are reported as what they are.
func TestFaultEmptyAndGarbageTranscripts(t *testing.T) {
	dir := t.TempDir()
	storage := filepath.Join(dir, "st")
	tdir := transcript.Dir(storage)
	os.MkdirAll(tdir, 0o700)
	empty := filepath.Join(tdir, transcript.NewRunID()+".jsonl")
	os.WriteFile(empty, nil, 0o600)
	res := runBounded(t, dir, time.Minute, "runs", "--storage", storage)
	if !strings.Contains(res.stdout, "(no events)") || strings.Contains(res.stdout+res.stderr, "EOF") || strings.Contains(res.stdout, "1970") {
		t.Fatalf("runs on an empty transcript:\n%s%s", res.stdout, res.stderr)
	}
	for _, args := range [][]string{{"tree", empty}, {"replay", empty}, {"tools", empty}, {"tail", empty}} {
		res := runBounded(t, dir, time.Minute, args...)
		if res.code == 0 || !strings.Contains(res.stderr, "empty transcript") || strings.Contains(res.stdout, "(unnamed)") {
			t.Errorf("reel %v on an empty transcript: exit %d\nstdout:\n%s\nstderr:\n%s", args, res.code, res.stdout, res.stderr)
		}
	}
	garbage := filepath.Join(dir, "garbage.jsonl")
	os.WriteFile(garbage, []byte("this is not\na transcript\n"), 0o600)
	if res := runBounded(t, dir, time.Minute, "tail", garbage); res.code == 0 || !strings.Contains(res.stderr, "no transcript event") {
		t.Fatalf("tail on garbage: exit %d\n%s", res.code, res.stderr)
	}
	if res := runBounded(t, dir, time.Minute, "tail", "-f", garbage); res.code == 0 {
		t.Fatalf("tail -f on garbage: exit 0")
	}
}
