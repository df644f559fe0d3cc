package transcript

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

func stepEvent(i int) ExchangeEvent {
	return ExchangeEvent{Type: StepStarted, Path: "p" + strconv.Itoa(i%7), Iteration: i % 3, Payload: &StepPayload{Name: "s", Kind: KindCommand}}
}

// checkFile reads a transcript and checks seq is exactly 1..n in file order.
func checkFile(t *testing.T, path string, n int) []ExchangeEvent {
	t.Helper()
	evs, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != n {
		t.Fatalf("%d events in file, want %d", len(evs), n)
	}
	for i, e := range evs {
		if e.Seq != uint64(i+1) {
			t.Fatalf("line %d has seq %d", i+1, e.Seq)
		}
	}
	return evs
}

func TestRecorderFileProperties(t *testing.T) {
	storage := filepath.Join(t.TempDir(), "storage")
	id := NewRunID()
	r, err := Create(Dir(storage), id, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Path() != filepath.Join(storage, "transcripts", id+".jsonl") || r.RunID() != id {
		t.Fatalf("path %s", r.Path())
	}
	for _, d := range []string{storage, Dir(storage)} {
		st, err := os.Stat(d)
		if err != nil || st.Mode().Perm() != 0o700 {
			t.Fatalf("%s mode %v %v", d, st.Mode(), err)
		}
	}
	st, err := os.Stat(r.Path())
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("file mode %v %v", st.Mode(), err)
	}
	seq, err := r.Record(ExchangeEvent{Type: RunStarted, Payload: &StepPayload{Name: "w", Kind: KindWorkflow}})
	if err != nil || seq != 1 {
		t.Fatalf("record: %d %v", seq, err)
	}
	if r.LastSeq() != 1 {
		t.Fatal("LastSeq")
	}
	// Record returned, so the line is in the file already.
	data, _ := os.ReadFile(r.Path())
	if !bytes.HasSuffix(data, []byte("\n")) || !bytes.Contains(data, []byte(`"run_id":"`+id+`"`)) {
		t.Fatalf("file after Record: %q", data)
	}
	if _, err := r.Record(ExchangeEvent{RunID: NewRunID(), Type: RunCompleted}); !errors.Is(err, ErrInvalidEvent) {
		t.Fatalf("foreign run id: %v", err)
	}
	if _, err := r.Record(ExchangeEvent{Type: "bogus"}); !errors.Is(err, ErrInvalidEvent) {
		t.Fatalf("bogus type: %v", err)
	}
	if err := r.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Fatal("second Close:", err)
	}
	if _, err := r.Record(stepEvent(1)); !errors.Is(err, ErrClosed) {
		t.Fatalf("record after close: %v", err)
	}
	if err := r.Sync(); !errors.Is(err, ErrClosed) {
		t.Fatalf("sync after close: %v", err)
	}
	checkFile(t, r.Path(), 1)
}

func TestRunIDValidation(t *testing.T) {
	for i := 0; i < 100; i++ {
		if err := ValidRunID(NewRunID()); err != nil {
			t.Fatal(err)
		}
	}
	bad := []string{"", "../../etc/passwd", "550e8400-e29b-41d4-a716-44665544000/", "550E8400-E29B-41D4-A716-446655440000",
		"550e8400-e29b-11d4-a716-446655440000", "550e8400-e29b-41d4-c716-446655440000", "550e8400xe29b-41d4-a716-446655440000",
		"550e8400-e29b-41d4-a716-44665544000g"}
	dir := t.TempDir()
	for _, id := range bad {
		if ValidRunID(id) == nil {
			t.Errorf("%q accepted", id)
		}
		if _, err := Create(dir, id, Options{}); err == nil {
			t.Errorf("Create accepted %q", id)
		}
	}
	if _, err := Open(filepath.Join(dir, "notes.txt"), Options{}); err == nil {
		t.Error("Open accepted a non-transcript name")
	}
	if _, err := Open(filepath.Join(dir, "../x.jsonl"), Options{}); err == nil {
		t.Error("Open accepted a bad run id")
	}
}

func TestRecorderStampsEvents(t *testing.T) {
	fixed := time.Date(2026, 1, 2, 3, 4, 5, 6000, time.UTC)
	parent := NewRunID()
	r, err := Create(t.TempDir(), NewRunID(), Options{ParentRunID: parent, Now: func() time.Time { return fixed }})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	given := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	r.Record(stepEvent(0))
	r.Record(ExchangeEvent{Type: StepStarted, Timestamp: given, Payload: &StepPayload{Name: "x", Kind: "y"}})
	evs := checkFile(t, r.Path(), 2)
	if !evs[0].Timestamp.Equal(fixed) || !evs[1].Timestamp.Equal(given) {
		t.Fatalf("timestamps %v %v", evs[0].Timestamp, evs[1].Timestamp)
	}
	if evs[0].ParentRunID != parent || evs[0].RunID != r.RunID() {
		t.Fatalf("ids %+v", evs[0])
	}
}

// TestConcurrentRecording: 8+ goroutines, 100k events, seq 1..N in file
// order and every event present exactly once.
func TestConcurrentRecording(t *testing.T) {
	r, err := Create(t.TempDir(), NewRunID(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	const workers, per = 10, 10000
	var wg sync.WaitGroup
	seqs := make([][]uint64, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < per; i++ {
				seq, err := r.Record(ExchangeEvent{Type: StepStarted, Path: fmt.Sprintf("w%d", w), Iteration: i, Payload: &StepPayload{Name: "n", Kind: "command"}})
				if err != nil {
					t.Error(err)
					return
				}
				seqs[w] = append(seqs[w], seq)
			}
		}(w)
	}
	wg.Wait()
	r.Close()
	evs := checkFile(t, r.Path(), workers*per)
	next := make(map[string]int)
	for _, e := range evs {
		// Each producer's events appear in its own order.
		if e.Iteration != next[e.Path] {
			t.Fatalf("%s: iteration %d after %d", e.Path, e.Iteration, next[e.Path]-1)
		}
		next[e.Path]++
	}
	for w := range seqs {
		for i := 1; i < len(seqs[w]); i++ {
			if seqs[w][i] <= seqs[w][i-1] {
				t.Fatalf("worker %d got seq %d after %d", w, seqs[w][i], seqs[w][i-1])
			}
		}
	}
}

// TestSlowSubscriber is SC-005: a subscriber consuming at 10% of the
// producer's rate over 10k events never blocks the producer; the file is
// complete and monotonic; the drops are counted and warned about.
func TestSlowSubscriber(t *testing.T) {
	var logs bytes.Buffer
	var logMu sync.Mutex
	logger := slog.New(slog.NewTextHandler(writerFunc(func(p []byte) (int, error) {
		logMu.Lock()
		defer logMu.Unlock()
		return logs.Write(p)
	}), nil))
	r, err := Create(t.TempDir(), NewRunID(), Options{Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	slow := r.Subscribe()
	fast := r.Subscribe()
	const n = 10000
	produced := make(chan time.Duration)
	go func() {
		var worst time.Duration
		for i := 0; i < n; i++ {
			start := time.Now()
			if _, err := r.Record(stepEvent(i)); err != nil {
				t.Error(err)
			}
			if d := time.Since(start); d > worst {
				worst = d
			}
			// Producer rate: one event per 10µs of work.
			spin(10 * time.Microsecond)
		}
		produced <- worst
	}()
	var fastGot []uint64
	var fastDone = make(chan struct{})
	go func() {
		for e := range fast.C() {
			fastGot = append(fastGot, e.Seq)
		}
		close(fastDone)
	}()
	var slowGot []uint64
	slowDone := make(chan struct{})
	go func() {
		for e := range slow.C() {
			slowGot = append(slowGot, e.Seq)
			spin(100 * time.Microsecond) // 10% of the producer's rate
		}
		close(slowDone)
	}()
	var worst time.Duration
	select {
	case worst = <-produced:
	case <-time.After(60 * time.Second):
		t.Fatal("producer blocked: deadlock")
	}
	st := r.Stats()
	if st.Dropped == 0 || st.PerSubscriber[slow.ID()] == 0 || st.Subscribers != 2 {
		t.Fatalf("stats %+v: want drops for the slow subscriber", st)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	<-slowDone
	<-fastDone
	checkFile(t, r.Path(), n)
	if worst > 2*time.Second {
		t.Fatalf("a Record took %v: the producer was blocked", worst)
	}
	for i := 1; i < len(slowGot); i++ {
		if slowGot[i] <= slowGot[i-1] {
			t.Fatal("subscriber saw seq out of order")
		}
	}
	if uint64(len(slowGot))+st.PerSubscriber[slow.ID()] < n-1000 {
		t.Fatalf("slow got %d + dropped %d", len(slowGot), st.PerSubscriber[slow.ID()])
	}
	logMu.Lock()
	warnings := strings.Count(logs.String(), "too slow")
	logMu.Unlock()
	if warnings == 0 {
		t.Fatal("no drop warning logged")
	}
	// At most one warning per second per subscriber (plus one for the fast
	// one, should it ever fall behind).
	if elapsed := 1 + int(st.Dropped/1); warnings > 2*(1+elapsed) {
		t.Fatalf("%d warnings", warnings)
	}
	slow.Close()
	slow.Close() // idempotent after the recorder closed it
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

func spin(d time.Duration) {
	for start := time.Now(); time.Since(start) < d; {
	}
}

func TestSubscriberSeesWrittenEventsInOrder(t *testing.T) {
	r, _ := Create(t.TempDir(), NewRunID(), Options{SubscriberBuffer: 4})
	sub := r.Subscribe()
	for i := 0; i < 10; i++ {
		r.Record(stepEvent(i))
	}
	st := r.Stats()
	if st.PerSubscriber[sub.ID()] != 6 || st.Dropped != 6 {
		t.Fatalf("stats %+v, want 6 dropped with a buffer of 4", st)
	}
	for want := uint64(1); want <= 4; want++ {
		e := <-sub.C()
		if e.Seq != want {
			t.Fatalf("got seq %d want %d (drop-newest keeps the oldest)", e.Seq, want)
		}
		// Write-then-broadcast: anything received is already on disk.
		data, _ := os.ReadFile(r.Path())
		if !bytes.Contains(data, []byte(fmt.Sprintf(`{"seq":%d,`, e.Seq))) {
			t.Fatal("event broadcast before it was written")
		}
	}
	sub.Close()
	sub.Close()
	if _, ok := <-sub.C(); ok {
		t.Fatal("channel open after Close")
	}
	r.Record(stepEvent(11)) // no subscribers: nothing to drop
	if r.Stats().Dropped != 6 {
		t.Fatal("total drops must survive the subscription")
	}
	r.Close()
	late := r.Subscribe()
	if _, ok := <-late.C(); ok {
		t.Fatal("subscription to a closed recorder must be closed")
	}
}

func TestResumeAndTornTail(t *testing.T) {
	dir := t.TempDir()
	id := NewRunID()
	r, _ := Create(dir, id, Options{})
	for i := 0; i < 5; i++ {
		r.Record(stepEvent(i))
	}
	r.Close()
	path := r.Path()
	// A writer killed mid-line leaves a fragment without newline.
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"seq":6,"run_id":"` + id + `","type":"step.sta`)
	f.Close()
	r2, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if seq, _ := r2.Record(stepEvent(6)); seq != 6 {
		t.Fatalf("resumed at seq %d, want 6", seq)
	}
	r2.Close()
	checkFile(t, path, 6)
	torn, err := os.ReadFile(path + ".torn")
	if err != nil || !bytes.HasPrefix(torn, []byte(`{"seq":6,`)) {
		t.Fatalf("torn tail not kept: %q %v", torn, err)
	}
	// A final line with its newline but not valid JSON is torn too.
	f, _ = os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("{\"seq\":7,\x00garbage\n")
	f.Close()
	r3, err := Create(dir, id, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if seq, _ := r3.Record(stepEvent(7)); seq != 7 {
		t.Fatalf("resumed at %d", seq)
	}
	r3.Close()
	checkFile(t, path, 7)
	// Only the final line can be torn: a bad complete line before a torn
	// tail is damage, not a crash, and resuming refuses to guess.
	f, _ = os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("not json\n{\"seq\":9")
	f.Close()
	if _, err := Open(path, Options{}); err == nil || !strings.Contains(err.Error(), "not a valid event") {
		t.Fatalf("resumed over a damaged line: %v", err)
	}
	// An empty existing file resumes at 1.
	id2 := NewRunID()
	os.WriteFile(filepath.Join(dir, id2+".jsonl"), nil, 0o600)
	r4, err := Create(dir, id2, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if seq, _ := r4.Record(stepEvent(0)); seq != 1 {
		t.Fatal("empty file did not start at 1")
	}
	r4.Close()
}

func TestRecorderLimits(t *testing.T) {
	r, _ := Create(t.TempDir(), NewRunID(), Options{Limits: Limits{MaxLineSize: 512, MaxFileSize: 4000}})
	defer r.Close()
	big := ExchangeEvent{Type: StepStarted, Payload: &StepPayload{Name: strings.Repeat("x", 600), Kind: "command"}}
	_, err := r.Record(big)
	if !errors.Is(err, ErrLineTooLong) || !strings.Contains(err.Error(), "512") {
		t.Fatalf("line limit: %v", err)
	}
	n := 0
	for ; n < 100; n++ {
		if _, err = r.Record(stepEvent(n)); err != nil {
			break
		}
	}
	if !errors.Is(err, ErrFileTooLarge) || !strings.Contains(err.Error(), "limit 4000") {
		t.Fatalf("file limit: %v", err)
	}
	// What is open may still be closed, in the room kept for it; what is
	// not open may not: its start never made it into the file.
	if _, err := r.Record(ExchangeEvent{Type: StepCompleted, Path: "p0", Payload: &StepPayload{Name: "s", Kind: "command"}}); err != nil {
		t.Fatalf("step.completed after the limit: %v", err)
	}
	n++
	if _, err := r.Record(ExchangeEvent{Type: StepCompleted, Path: "never", Payload: &StepPayload{Name: "s", Kind: "command"}}); !errors.Is(err, ErrFileTooLarge) {
		t.Fatalf("step.completed of a step not in the file: %v", err)
	}
	// The limit stops the recording, not just one line: a later, smaller
	// event is refused too, so the file has no hole.
	small := ExchangeEvent{Type: MessageUser, Payload: &MessagePayload{Role: "user", Blocks: []ContentBlock{{Type: BlockText, Text: "x", Fidelity: FidelityRouter}}}}
	if _, err := r.Record(small); !errors.Is(err, ErrFileTooLarge) {
		t.Fatalf("event after the limit: %v", err)
	}
	// run.completed still fits in the room kept for it, to say why.
	end := ExchangeEvent{Type: RunCompleted, Payload: &StepPayload{Name: "wf", Kind: KindWorkflow, Error: "transcript size limit reached"}}
	if _, err := r.Record(end); err != nil {
		t.Fatalf("run.completed after the limit: %v", err)
	}
	// A refused event takes no seq: the file stays 1..n+1.
	checkFile(t, r.Path(), n+1)
	if st, _ := os.Stat(r.Path()); st.Size() > 4000 {
		t.Fatalf("file grew to %d", st.Size())
	}
}

func TestFsyncPolicies(t *testing.T) {
	for _, name := range []string{"none", "batch", "always", ""} {
		p, err := ParseFsyncPolicy(name)
		if err != nil {
			t.Fatal(err)
		}
		r, _ := Create(t.TempDir(), NewRunID(), Options{Fsync: p})
		r.Record(ExchangeEvent{Type: RunStarted})
		r.Record(stepEvent(1))
		r.Close()
		checkFile(t, r.Path(), 2)
	}
	if _, err := ParseFsyncPolicy("sometimes"); err == nil {
		t.Fatal("bad policy accepted")
	}
}

func TestFollowerBackfillsAndGoesLive(t *testing.T) {
	r, _ := Create(t.TempDir(), NewRunID(), Options{})
	r.Record(ExchangeEvent{Type: RunStarted})
	for i := 0; i < 20; i++ {
		r.Record(stepEvent(i))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for _, inProcess := range []bool{true, false} {
		var fl *Follower
		var err error
		if inProcess {
			fl, err = r.Follow(ctx, 10)
		} else {
			fl, err = Follow(ctx, r.Path(), 10, FollowOptions{Poll: 5 * time.Millisecond})
		}
		if err != nil {
			t.Fatal(err)
		}
		for want := uint64(10); want <= 21; want++ {
			e, err := fl.Next(ctx)
			if err != nil || e.Seq != want {
				t.Fatalf("backfill: seq %d err %v, want %d", e.Seq, err, want)
			}
		}
		fl.Close()
		fl.Close()
	}
	// Live: a producer writes 5000 events while the follower reads; the
	// follower sees every one even though the fan-out would drop.
	fl, err := r.Follow(ctx, 22)
	if err != nil {
		t.Fatal(err)
	}
	ext, err := Follow(ctx, r.Path(), 0, FollowOptions{Poll: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		for i := 0; i < 5000; i++ {
			r.Record(stepEvent(i))
		}
		r.Record(ExchangeEvent{Type: RunCompleted})
	}()
	want := uint64(22)
	for {
		e, err := fl.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil || e.Seq != want {
			t.Fatalf("live: seq %d err %v, want %d", e.Seq, err, want)
		}
		want++
	}
	if want != 5023 {
		t.Fatalf("follower stopped at %d", want)
	}
	n := 0
	for {
		_, err := ext.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != 5022 {
		t.Fatalf("file follower saw %d events", n)
	}
	r.Close()
	// A follower on a closed recorder with no run.completed ends at EOF.
	r2, _ := Create(t.TempDir(), NewRunID(), Options{})
	r2.Record(stepEvent(0))
	fl2, _ := r2.Follow(ctx, 0)
	go func() { time.Sleep(20 * time.Millisecond); r2.Close() }()
	if e, err := fl2.Next(ctx); err != nil || e.Seq != 1 {
		t.Fatal(err)
	}
	if _, err := fl2.Next(ctx); err != io.EOF {
		t.Fatalf("after close: %v", err)
	}
	// Context cancellation ends a wait.
	short, cancel2 := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel2()
	fl3, _ := Follow(context.Background(), r2.Path(), 5, FollowOptions{Poll: time.Millisecond})
	if _, err := fl3.Next(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("cancel: %v", err)
	}
	if _, err := Follow(ctx, filepath.Join(t.TempDir(), "missing.jsonl"), 0, FollowOptions{}); err == nil {
		t.Fatal("follow of a missing file")
	}
}

func TestFollowerPartialLines(t *testing.T) {
	dir := t.TempDir()
	id := NewRunID()
	path := filepath.Join(dir, id+".jsonl")
	line, _ := AppendEvent(nil, &ExchangeEvent{Seq: 1, RunID: id, Type: RunStarted, Timestamp: testTime})
	os.WriteFile(path, line[:10], 0o600)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	fl, _ := Follow(ctx, path, 0, FollowOptions{Poll: time.Millisecond, Limits: Limits{MaxLineSize: 300}})
	go func() {
		time.Sleep(10 * time.Millisecond)
		f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
		f.Write(line[10:])
		f.WriteString("\n{garbage}\n")
		f.WriteString(strings.Repeat("x", 1000) + "\n")
		done, _ := AppendEvent(nil, &ExchangeEvent{Seq: 2, RunID: id, Type: RunCompleted, Timestamp: testTime})
		f.Write(append(done, '\n'))
		f.Close()
	}()
	if e, err := fl.Next(ctx); err != nil || e.Seq != 1 {
		t.Fatalf("partial line: %v %v", e, err)
	}
	var le *LineError
	if _, err := fl.Next(ctx); !errors.As(err, &le) || le.Line != 2 {
		t.Fatalf("garbage: %v", err)
	}
	if _, err := fl.Next(ctx); !errors.Is(err, ErrLineTooLong) {
		t.Fatalf("long line: %v", err)
	}
	if e, err := fl.Next(ctx); err != nil || e.Type != RunCompleted {
		t.Fatalf("after long line: %v %v", e, err)
	}
	if _, err := fl.Next(ctx); err != io.EOF {
		t.Fatal(err)
	}
}

// TestCrashRecovery SIGKILLs a child process that records in a loop, then
// reopens, appends and checks the file, 20 times. Every event whose Record
// returned before the kill must be in the file.
func TestCrashRecovery(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	dir := t.TempDir()
	id := NewRunID()
	path := filepath.Join(dir, id+".jsonl")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewSource(1))
	total := uint64(0)
	for round := 0; round < 20; round++ {
		cmd := exec.Command(exe, "-test.run=^TestCrashChild$")
		cmd.Env = append(os.Environ(), "REEL_CRASH_CHILD="+path)
		out, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(out)
		var acked uint64
		deadline := time.Now().Add(time.Duration(5+rng.Intn(40)) * time.Millisecond)
		for sc.Scan() {
			if n, err := strconv.ParseUint(sc.Text(), 10, 64); err == nil {
				acked = n
			}
			if acked > total && time.Now().After(deadline) {
				break
			}
		}
		cmd.Process.Signal(syscall.SIGKILL)
		io.Copy(io.Discard, out)
		cmd.Wait()
		if acked == 0 {
			t.Fatalf("round %d: child acknowledged nothing", round)
		}
		r, err := Open(path, Options{})
		if err != nil {
			t.Fatalf("round %d: reopen: %v", round, err)
		}
		last := r.LastSeq()
		if last < acked {
			t.Fatalf("round %d: file ends at seq %d but Record had returned seq %d", round, last, acked)
		}
		if _, err := r.Record(ExchangeEvent{Type: StepCompleted, Path: "parent", Payload: &StepPayload{Name: "resume", Kind: "command"}}); err != nil {
			t.Fatal(err)
		}
		r.Close()
		total = last + 1
		checkFile(t, path, int(total))
	}
}

// TestCrashChild is the child side of TestCrashRecovery.
func TestCrashChild(t *testing.T) {
	path := os.Getenv("REEL_CRASH_CHILD")
	if path == "" {
		t.Skip("child process of TestCrashRecovery")
	}
	r, err := Open(path, Options{})
	if err != nil {
		fmt.Println("open:", err)
		os.Exit(3)
	}
	w := bufio.NewWriter(os.Stdout)
	payload := &MessagePayload{Role: "assistant", Blocks: []ContentBlock{{Type: BlockText, Fidelity: FidelityAgentEmitted, Text: strings.Repeat("lorem ipsum ", 500)}}}
	for i := 0; ; i++ {
		e := ExchangeEvent{Type: MessageAssistant, Path: "child", Iteration: i, Payload: payload}
		if i%3 == 0 {
			e = stepEvent(i)
		}
		seq, err := r.Record(e)
		if err != nil {
			fmt.Println("record:", err)
			os.Exit(3)
		}
		fmt.Fprintln(w, seq)
		w.Flush()
	}
}

// TestWriterHandOff forces the writer to give up its role after every
// write, so that producers waiting on a group must elect the next writer.
// Every Record must still return only once its line is written, with seq
// in file order.
func TestWriterHandOff(t *testing.T) {
	r, err := Create(t.TempDir(), NewRunID(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	r.maxRounds = 1
	const workers, per = 8, 3000
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < per; i++ {
				seq, err := r.Record(stepEvent(i))
				if err != nil {
					t.Error(err)
					return
				}
				if written := r.LastSeq(); written < seq {
					t.Errorf("Record returned seq %d with only %d written", seq, written)
					return
				}
			}
		}()
	}
	wg.Wait()
	r.mu.Lock()
	handOffs := r.handOffs
	r.mu.Unlock()
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	checkFile(t, r.Path(), workers*per)
	if handOffs == 0 {
		t.Fatal("the writer never handed its role on; the test did not exercise hand-off")
	}
	t.Logf("%d hand-offs", handOffs)
}

// TestWriteErrorFailsEveryProducer swaps the file for /dev/full, whose
// writes fail with ENOSPC: every producer waiting in a group must get the
// error rather than hang, and later calls get it too.
func TestWriteErrorFailsEveryProducer(t *testing.T) {
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Skipf("no /dev/full here: %v", err)
	}
	r, err := Create(t.TempDir(), NewRunID(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Record(stepEvent(0)); err != nil {
		t.Fatal(err)
	}
	r.mu.Lock()
	r.write = full.Write
	r.mu.Unlock()
	const workers = 8
	errs := make(chan error, workers*10)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 10; i++ {
				_, err := r.Record(stepEvent(i))
				errs <- err
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("producers still blocked 10 s after the write error")
	}
	close(errs)
	for err := range errs {
		if !errors.Is(err, syscall.ENOSPC) {
			t.Fatalf("Record after a failed write returned %v, want ENOSPC", err)
		}
	}
	if err := r.Close(); err != nil && !errors.Is(err, os.ErrClosed) {
		t.Logf("close: %v", err)
	}
}

// TestCloseDuringRecording closes the recorder while producers are in
// full flight: every Record either succeeds, with its line in the file, or
// returns ErrClosed; Close waits for the write under way.
func TestCloseDuringRecording(t *testing.T) {
	for round := 0; round < 20; round++ {
		r, err := Create(t.TempDir(), NewRunID(), Options{})
		if err != nil {
			t.Fatal(err)
		}
		r.maxRounds = 1 + round%3
		var ok atomic.Int64
		var wg sync.WaitGroup
		for w := 0; w < 8; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; ; i++ {
					_, err := r.Record(stepEvent(i))
					if errors.Is(err, ErrClosed) {
						return
					}
					if err != nil {
						t.Error(err)
						return
					}
					ok.Add(1)
				}
			}()
		}
		for ok.Load() < int64(100*(round+1)) {
			runtime.Gosched()
		}
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
		wg.Wait()
		checkFile(t, r.Path(), int(ok.Load()))
	}
}

// FormatRunID makes any 16 bytes a valid run id, the same one every time,
// and sets only the version and variant bits.
func TestFormatRunID(t *testing.T) {
	var zero, ones [16]byte
	for i := range ones {
		ones[i] = 0xff
	}
	for b, want := range map[[16]byte]string{
		zero: "00000000-0000-4000-8000-000000000000",
		ones: "ffffffff-ffff-4fff-bfff-ffffffffffff",
	} {
		got := FormatRunID(b)
		if got != want || FormatRunID(b) != got {
			t.Errorf("FormatRunID(%x) = %s, want %s", b, got, want)
		}
		if err := ValidRunID(got); err != nil {
			t.Errorf("FormatRunID(%x) = %s: %v", b, got, err)
		}
	}
	if err := ValidRunID(NewRunID()); err != nil {
		t.Error(err)
	}
}

// TestFollowerWakesOnWrite: a follower of a file another process appends to
// (no recorder of its own to signal it) sees each line when it is written,
// not at its next poll: with an hour's poll, every line arrives at once.
func TestFollowerWakesOnWrite(t *testing.T) {
	dir := t.TempDir()
	id := NewRunID()
	path := filepath.Join(dir, id+".jsonl")
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	fl, err := Follow(ctx, path, 0, FollowOptions{Poll: time.Hour, Stale: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer fl.Close()
	if fl.watch == nil {
		if runtime.GOOS == "linux" {
			t.Fatal("no inotify watch on the file: the follower polls")
		}
		t.Skipf("no file watch on %s: followers poll", runtime.GOOS)
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for seq := uint64(1); seq <= 5; seq++ {
		typ := StepStarted
		if seq == 1 {
			typ = RunStarted
		}
		line, err := AppendEvent(nil, &ExchangeEvent{Seq: seq, RunID: id, Type: typ, Path: "s", Timestamp: testTime, Payload: &StepPayload{Name: "s", Kind: KindCommand}})
		if err != nil {
			t.Fatal(err)
		}
		got := make(chan error, 1)
		go func() {
			e, err := fl.Next(ctx)
			if err == nil && e.Seq != seq {
				err = fmt.Errorf("got seq %d", e.Seq)
			}
			got <- err
		}()
		// The follower is waiting when the line lands.
		time.Sleep(20 * time.Millisecond)
		if _, err := f.Write(append(line, '\n')); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-got:
			if err != nil {
				t.Fatalf("seq %d: %v", seq, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("seq %d not seen 10s after it was written (the poll is an hour)", seq)
		}
	}
	if err := fl.Close(); err != nil {
		t.Fatal(err)
	}
}
