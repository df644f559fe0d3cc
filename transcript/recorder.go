package transcript

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// FsyncPolicy says when the recorder asks the kernel to flush to stable
// storage. Every policy hands each line to the kernel before Record
// returns, so a killed process loses nothing; fsync adds protection against
// a machine crash.
type FsyncPolicy int

const (
	// FsyncNone never calls fsync (the default).
	FsyncNone FsyncPolicy = iota
	// FsyncBatch calls fsync on writes that hold a lifecycle boundary
	// (run.started, step.completed, run.completed) and otherwise at most
	// once a second, so the durable record trails by at most a second.
	FsyncBatch
	// FsyncAlways calls fsync after every write, before Record returns.
	// Group commit shares one fsync among the lines of a write.
	FsyncAlways
)

// ParseFsyncPolicy reads "none", "batch" or "always".
func ParseFsyncPolicy(s string) (FsyncPolicy, error) {
	switch s {
	case "", "none":
		return FsyncNone, nil
	case "batch":
		return FsyncBatch, nil
	case "always":
		return FsyncAlways, nil
	}
	return FsyncNone, fmt.Errorf("unknown fsync policy %q (want none, batch or always)", s)
}

// Options configure a Recorder. The zero value is ready to use.
type Options struct {
	Fsync  FsyncPolicy
	Limits Limits
	// SubscriberBuffer is each subscriber's channel capacity (default 256).
	SubscriberBuffer int
	// ParentRunID is stamped on every event that does not set one: the run
	// that invoked this one through call_workflow.
	ParentRunID string
	// Masker, when set, masks secrets in every event before it is written
	// or broadcast (package secrets has one).
	Masker Masker
	// Logger receives drop warnings. Nil discards them.
	Logger *slog.Logger
	// Now stamps events that have no timestamp (default time.Now).
	Now func() time.Time
}

// A Masker removes secrets from an event before a Recorder writes it. It
// may replace e.Payload but must not modify what the payload points to:
// the caller's values stay as they were. The secrets package provides one
// that masks secret-named environment values and credential shapes.
type Masker interface {
	MaskEvent(e *ExchangeEvent)
}

// Dir returns the transcripts directory of a storage root.
func Dir(storage string) string { return filepath.Join(storage, "transcripts") }

// NewRunID returns a random UUID version 4 in canonical form.
func NewRunID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(fmt.Sprintf("crypto/rand: %v", err)) // never fails on supported platforms
	}
	return FormatRunID(b)
}

// FormatRunID returns the run id made of the 16 bytes b: b with the UUID
// version 4 and variant bits set, in the canonical 8-4-4-4-12 form. Other
// bytes than random ones give ids that are stable for their source: an
// importer hashing what it imports gets the same run id every time.
func FormatRunID(b [16]byte) string {
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	const hex = "0123456789abcdef"
	out := make([]byte, 0, 36)
	for i, c := range b {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			out = append(out, '-')
		}
		out = append(out, hex[c>>4], hex[c&0xf])
	}
	return string(out)
}

// ValidRunID checks that id is a canonical lowercase UUID version 4, which
// also guarantees it is safe as a file name.
func ValidRunID(id string) error {
	if len(id) != 36 {
		return fmt.Errorf("run id %q is not a canonical UUID", id)
	}
	for i := 0; i < 36; i++ {
		c := id[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return fmt.Errorf("run id %q is not a canonical UUID", id)
			}
			continue
		}
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return fmt.Errorf("run id %q is not a canonical lowercase UUID", id)
		}
	}
	if id[14] != '4' {
		return fmt.Errorf("run id %q is not a version 4 UUID", id)
	}
	switch id[19] {
	case '8', '9', 'a', 'b':
	default:
		return fmt.Errorf("run id %q does not have the RFC 4122 variant", id)
	}
	return nil
}

// Recorder appends events to one run's transcript file.
//
// Record is safe for concurrent use. Seq and file position are assigned
// together under one lock, so seq reads 1, 2, 3, … in file order however
// many goroutines record at once. Lines are group-committed: while one
// goroutine is in write(2), the others queue complete lines behind it, and
// the next writer hands them all to the kernel in a single write. Record
// returns only after the write holding its line returned.
type Recorder struct {
	path   string
	runID  string
	opts   Options
	limits Limits

	// created is set when this recorder made the file; torn is the tail
	// it recovered.
	created bool
	torn    TornTail

	mu      sync.Mutex
	f       *os.File
	write   func([]byte) (int, error) // f.Write; tests inject failures
	seq     uint64                    // last seq assigned
	written uint64                    // last seq handed to the kernel
	size    int64                     // bytes in the file, including queued lines
	onDisk  int64                     // bytes in the file: complete lines only
	queue   []byte                    // complete lines waiting for the next write
	spare   []byte
	qevents []ExchangeEvent // events in queue, for broadcast
	sevents []ExchangeEvent
	next    *commitGroup // the group the queued lines will be written in
	writing bool
	// inWrite is the group in write(2) and inWriteUpTo its last seq: a
	// producer woken by a hand-off may find its line there.
	inWrite     *commitGroup
	inWriteUpTo uint64
	unused      *commitGroup // a written group nobody waited on, for reuse
	// idle is signalled when the writer gives up its role while Close
	// waits for it, and when Close is done.
	idle    *sync.Cond
	closing bool // Close began: no new lines
	closed  bool // Close finished: file closed
	// maxRounds is maxWriterRounds; handOffs counts hand-overs (tests
	// lower the one and read the other).
	maxRounds int
	handOffs  int
	// inflight counts Record calls under way, to tell whether waiting a
	// moment before a write can gather more lines into it.
	inflight atomic.Int64
	// queueSync is set when a queued line is a lifecycle boundary.
	queueSync bool
	lastSync  time.Time
	err       error // sticky write error
	// full is set when a line would pass the file limit: from then on
	// only closing events, which the reserve keeps room for, are accepted,
	// for what opens shows open, and none once hardFull says one did not
	// fit.
	full     error
	hardFull bool
	opens    openSet
	// notify is closed and replaced after a write when notifyWanted says
	// a follower is waiting on it.
	notify       chan struct{}
	notifyWanted bool

	fan fanOut
}

var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

// Create opens the transcript of runID in dir (dir/<runID>.jsonl), creating
// dir with mode 0700 and the file with mode 0600. An existing transcript is
// resumed as by Open, with the same refusals.
func Create(dir, runID string, opts Options) (*Recorder, error) {
	if err := ValidRunID(runID); err != nil {
		return nil, fmt.Errorf("create transcript: %w", err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create transcript directory %s: %w", dir, err)
	}
	return open(filepath.Join(dir, runID+".jsonl"), runID, opts)
}

// Open resumes an existing transcript (or creates it). Its name must be
// <run-id>.jsonl. Seq continues from the last complete line; a torn final
// line is moved out of the file into <path>.torn (or <path>.torn.1, .2 …
// when earlier recoveries saved theirs, which are never overwritten), and
// the returned recorder's TornTail reports it.
//
// A symlink at path, or anything but a regular file, is refused without
// blocking. While a Recorder is open it holds an exclusive flock(2) on the
// file (on Unix): opening a transcript another recorder holds fails with
// ErrLocked, and Writing tells readers the run is live.
func Open(path string, opts Options) (*Recorder, error) {
	base := filepath.Base(path)
	runID, ok := cutSuffix(base, ".jsonl")
	if !ok {
		return nil, fmt.Errorf("open transcript %s: name is not <run-id>.jsonl", path)
	}
	if err := ValidRunID(runID); err != nil {
		return nil, fmt.Errorf("open transcript %s: %w", path, err)
	}
	return open(path, runID, opts)
}

func cutSuffix(s, suffix string) (string, bool) {
	if len(s) > len(suffix) && s[len(s)-len(suffix):] == suffix {
		return s[:len(s)-len(suffix)], true
	}
	return s, false
}

func open(path, runID string, opts Options) (*Recorder, error) {
	limits := opts.Limits.withDefaults()
	if opts.SubscriberBuffer <= 0 {
		opts.SubscriberBuffer = 256
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	// openForWriting takes the writer's lock before the tail is looked
	// at: a torn line of a live writer is not torn, only unfinished.
	f, created, err := openForWriting(path)
	if err != nil {
		return nil, err
	}
	lastSeq, size, torn, err := recoverTail(f, path, limits)
	if err != nil {
		f.Close()
		return nil, err
	}
	r := &Recorder{
		path:    path,
		runID:   runID,
		opts:    opts,
		limits:  limits,
		f:       f,
		created: created,
		torn:    torn,
		seq:     lastSeq,
		written: lastSeq,
		size:    size,
		onDisk:  size,
		notify:  make(chan struct{}),
	}
	r.write = f.Write
	// What a resumed file holds open is not known: at the limit, its
	// recording stops at once.
	r.opens.unknown = size > 0
	r.next = newCommitGroup()
	r.idle = sync.NewCond(&r.mu)
	r.maxRounds = maxWriterRounds
	r.fan.init(opts.SubscriberBuffer, opts.Logger)
	return r, nil
}

// TornTail describes a torn final line that resuming a transcript moved out
// of the file.
type TornTail struct {
	// Path is where the line was saved: <transcript>.torn, or .torn.N when
	// earlier recoveries saved theirs.
	Path string
	// Size is the line's length in bytes.
	Size int
}

// TornTail reports the torn final line this recorder moved out of the file
// when it opened it, if there was one.
func (r *Recorder) TornTail() (TornTail, bool) {
	return r.torn, r.torn.Path != ""
}

// recoverTail finds the last complete line's seq and moves a torn final
// line out of the file, so that a resumed transcript stays valid JSONL.
func recoverTail(f *os.File, path string, limits Limits) (lastSeq uint64, size int64, torn TornTail, err error) {
	st, err := f.Stat()
	if err != nil {
		return 0, 0, torn, fmt.Errorf("stat transcript %s: %w", path, err)
	}
	size = st.Size()
	// Walk back from the end over whole lines until one decodes.
	end := size
	var tail []byte
	for end > 0 {
		start, line, err := lastLine(f, end, limits.MaxLineSize)
		if err != nil {
			return 0, 0, torn, fmt.Errorf("read transcript %s: %w", path, err)
		}
		complete := end == size && len(line) > 0 && line[len(line)-1] == '\n' || end < size
		if complete {
			if ev, derr := DecodeEvent(line); derr == nil || errors.Is(derr, ErrUnknownEventType) || errors.Is(derr, ErrUnknownBlockType) {
				lastSeq = ev.Seq
				break
			}
		}
		if end != size {
			// A malformed line before a good tail is not ours to move:
			// it is reported by verify, and seq continues from it.
			return 0, 0, torn, fmt.Errorf("transcript %s: line ending at byte %d is not a valid event; repair it before resuming", path, end)
		}
		tail = append(line[:0:0], line...)
		end = start
	}
	if tail != nil {
		name, err := saveTorn(path, tail)
		if err != nil {
			return 0, 0, torn, fmt.Errorf("save torn tail of %s: %w", path, err)
		}
		if err := f.Truncate(end); err != nil {
			return 0, 0, torn, fmt.Errorf("truncate torn tail of %s: %w", path, err)
		}
		torn = TornTail{Path: name, Size: len(tail)}
		size = end
	}
	return lastSeq, size, torn, nil
}

// lastLine returns the line that ends at end (including its newline if
// any) and where it starts.
func lastLine(f *os.File, end int64, maxLine int) (int64, []byte, error) {
	const chunk = 64 << 10
	var buf []byte
	pos := end
	for {
		n := int64(chunk)
		if pos < n {
			n = pos
		}
		pos -= n
		b := make([]byte, n)
		if _, err := f.ReadAt(b, pos); err != nil && err != io.EOF {
			return 0, nil, err
		}
		buf = append(b, buf...)
		// Skip the newline that terminates the line itself.
		search := buf
		if len(search) > 0 && search[len(search)-1] == '\n' && pos+int64(len(buf)) == end {
			search = search[:len(search)-1]
		}
		if i := bytes.LastIndexByte(search, '\n'); i >= 0 {
			return pos + int64(i) + 1, buf[i+1:], nil
		}
		if pos == 0 {
			return 0, buf, nil
		}
		if len(buf) > maxLine+1 {
			return pos, buf, nil
		}
	}
}

// Path is the transcript file's path.
func (r *Recorder) Path() string { return r.path }

// RunID is the run the transcript belongs to.
func (r *Recorder) RunID() string { return r.runID }

// LastSeq is the seq of the last event handed to the kernel.
func (r *Recorder) LastSeq() uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.written
}

// Record stamps e (Seq; RunID, ParentRunID and Timestamp when unset),
// appends it to the file and broadcasts it to subscribers. It returns the
// assigned seq once write(2) has returned.
func (r *Recorder) Record(e ExchangeEvent) (uint64, error) {
	if e.RunID == "" {
		e.RunID = r.runID
	} else if e.RunID != r.runID {
		return 0, fmt.Errorf("record: %w: run_id %q in the transcript of %q", ErrInvalidEvent, e.RunID, r.runID)
	}
	if e.ParentRunID == "" {
		e.ParentRunID = r.opts.ParentRunID
	}
	if e.Timestamp.IsZero() {
		e.Timestamp = r.opts.Now()
	}
	if r.opts.Masker != nil {
		r.opts.Masker.MaskEvent(&e)
	}
	r.inflight.Add(1)
	defer r.inflight.Add(-1)
	bp := bufPool.Get().(*[]byte)
	body, err := appendEventBody((*bp)[:0], &e)
	if err != nil {
		*bp = body
		bufPool.Put(bp)
		return 0, fmt.Errorf("record %s: %w", e.Type, err)
	}
	seq, err := r.commit(&e, body)
	if cap(body) <= 64<<10 {
		*bp = body
		bufPool.Put(bp)
	}
	return seq, err
}

func (r *Recorder) commit(e *ExchangeEvent, body []byte) (uint64, error) {
	// {"seq": + up to 20 digits + body + newline
	lineLen := len(`{"seq":`) + 20 + len(body) + 1
	r.mu.Lock()
	if r.closing {
		r.mu.Unlock()
		return 0, ErrClosed
	}
	if r.err != nil {
		err := r.err
		r.mu.Unlock()
		return 0, err
	}
	if r.full != nil && (r.hardFull || !closing(e.Type) || !r.opens.has(e)) {
		// After the limit, an event closing something the file does not
		// show open would leave a close without its open.
		err := r.full
		r.mu.Unlock()
		return 0, fmt.Errorf("record %s: %w", e.Type, err)
	}
	if lineLen > r.limits.MaxLineSize {
		r.mu.Unlock()
		return 0, fmt.Errorf("record %s: %w: %d bytes, limit %d", e.Type, ErrLineTooLong, lineLen, r.limits.MaxLineSize)
	}
	if err := r.checkSize(e.Type, int64(lineLen)); err != nil {
		r.mu.Unlock()
		return 0, fmt.Errorf("record %s: %w", e.Type, err)
	}
	r.seq++
	seq := r.seq
	e.Seq = seq
	before := len(r.queue)
	r.queue = append(r.queue, `{"seq":`...)
	r.queue = strconv.AppendUint(r.queue, seq, 10)
	r.queue = append(r.queue, body...)
	r.queue = append(r.queue, '\n')
	r.size += int64(len(r.queue) - before)
	switch e.Type {
	case RunStarted, RunCompleted, StepCompleted:
		r.queueSync = true
	}
	r.opens.track(e)
	if r.fan.active() {
		r.qevents = append(r.qevents, *e)
	}
	for {
		if !r.writing {
			r.writeQueue(seq)
			err := r.err
			ok := r.written >= seq
			r.mu.Unlock()
			if !ok {
				return 0, err
			}
			return seq, nil
		}
		// Another goroutine is writing. Wait on the group that holds this
		// line: the one in write(2) already, or the next. It is closed once
		// written, or when its writer hands the role on; one channel close
		// wakes the whole group without the lock.
		g := r.next
		if r.inWrite != nil && seq <= r.inWriteUpTo {
			g = r.inWrite
		}
		g.taken = true
		r.mu.Unlock()
		<-g.done
		if !g.handOff {
			if g.err != nil {
				return 0, g.err
			}
			return seq, nil
		}
		r.mu.Lock()
		if r.written >= seq {
			r.mu.Unlock()
			return seq, nil
		}
		if r.err != nil {
			err := r.err
			r.mu.Unlock()
			return 0, err
		}
	}
}

// commitGroup is the lines of one write(2). Their producers wait for done
// to close.
type commitGroup struct {
	done chan struct{}
	// handOff is set when done closed without a write because the writer
	// gave up its role; the producers then compete to take it.
	handOff bool
	err     error // the write's error, if any
	// taken is set when a producer waits on the group. A group written
	// with nobody waiting (a lone producer writes its own line) is not
	// closed but kept for the next write, saving a channel per write.
	taken bool
}

func newCommitGroup() *commitGroup { return &commitGroup{done: make(chan struct{})} }

// maxWriterRounds bounds how many writes one producer performs for others
// before it hands the role on, so that its own Record returns in bounded
// time under sustained load.
const maxWriterRounds = 64

// writeQueue takes the writer's role (r.mu held, no writer active) and
// writes queued lines until the line with seq mine is written and the
// queue is empty, or the round limit is reached. While it is in write(2)
// other producers queue the next group behind it; staying the writer
// costs one system call per group, handing over costs a wake-up.
func (r *Recorder) writeQueue(mine uint64) {
	r.writing = true
	for round := 0; r.err == nil && len(r.queue) > 0; round++ {
		if round >= r.maxRounds && r.written >= mine {
			// Hand the role to the producers waiting on the next group.
			g := r.next
			r.next = newCommitGroup()
			g.handOff = true
			r.handOffs++
			r.setIdle()
			close(g.done)
			return
		}
		r.flushLocked()
	}
	r.setIdle()
	if r.err != nil {
		// Nobody will write the queued lines: fail their producers.
		g := r.next
		r.next = newCommitGroup()
		g.err = r.err
		close(g.done)
	}
}

func (r *Recorder) setIdle() {
	r.writing = false
	if r.closing {
		r.idle.Broadcast()
	}
}

// flushLocked writes the queued lines in one write(2), dropping the lock
// while in the kernel so other producers can queue the next group.
func (r *Recorder) flushLocked() {
	if r.inflight.Load() > int64(r.seq-r.written) {
		// Other producers are encoding right now: give them the processor
		// for a moment so their lines join this write instead of each
		// paying for a write(2) of its own. A lone producer never waits.
		r.mu.Unlock()
		runtime.Gosched()
		r.mu.Lock()
	}
	batch, upTo, evs, g := r.queue, r.seq, r.qevents, r.next
	r.queue, r.spare = r.spare[:0], nil
	r.qevents, r.sevents = r.sevents[:0], nil
	next := r.unused
	if next == nil {
		next = newCommitGroup()
	}
	r.next, r.unused, r.inWrite, r.inWriteUpTo = next, nil, g, upTo
	doSync := false
	switch r.opts.Fsync {
	case FsyncAlways:
		doSync = true
	case FsyncBatch:
		doSync = r.queueSync || time.Since(r.lastSync) >= time.Second
	}
	r.queueSync = false
	r.mu.Unlock()
	n, err := r.write(batch)
	if err == nil && n != len(batch) {
		err = io.ErrShortWrite
	}
	if err == nil && doSync {
		if err = r.f.Sync(); err == nil {
			r.lastSync = time.Now()
		}
	}
	r.mu.Lock()
	if n == len(batch) {
		r.onDisk += int64(n)
	} else if n > 0 {
		// A full disk or an I/O error cut the write short: cut the file
		// back to its last complete line, so the transcript keeps every
		// line that was whole and no fragment.
		if terr := r.f.Truncate(r.onDisk); terr != nil {
			err = fmt.Errorf("%w (and cutting the partial line failed: %v)", err, terr)
		}
	}
	if err != nil {
		r.err = fmt.Errorf("write transcript %s: %w", r.path, err)
		g.err = r.err
	} else {
		r.written = upTo
		// Write-then-broadcast: subscribers see only what is on disk, in
		// seq order, because broadcasting happens here under the lock.
		for i := range evs {
			r.fan.broadcast(evs[i])
		}
	}
	if g.taken || g.err != nil {
		close(g.done)
	} else {
		// Nobody can take g from now on: its lines are written, and a
		// producer only waits on a group holding an unwritten line.
		r.unused = g
	}
	if cap(batch) <= 1<<20 {
		r.spare = batch[:0]
	}
	clear(evs)
	r.sevents = evs[:0]
	if r.notifyWanted {
		r.notifyWanted = false
		close(r.notify)
		r.notify = make(chan struct{})
	}
}

// Subscribe registers a live subscriber. It receives every event written
// after this call, unless its buffer is full, in which case events are
// dropped for it (drop-newest) and counted; it can detect the gap from seq
// and backfill with Follow.
func (r *Recorder) Subscribe() *Subscription {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.fan.add()
	if r.closed {
		s.Close()
	}
	return s
}

// Stats reports subscriber drops.
func (r *Recorder) Stats() FanOutStats {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.fan.stats()
}

// Sync flushes the file to stable storage.
func (r *Recorder) Sync() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return ErrClosed
	}
	return r.f.Sync()
}

// Close makes later Record calls fail with ErrClosed, writes the lines
// already queued, then closes the file and every subscriber. It is
// idempotent; a concurrent second Close returns once the first is done.
func (r *Recorder) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closing {
		for !r.closed {
			r.idle.Wait()
		}
		return nil
	}
	// From here on Record refuses new lines; the ones already queued are
	// written before the file is closed.
	r.closing = true
	for r.writing || len(r.queue) > 0 && r.err == nil {
		if r.writing {
			r.idle.Wait()
			continue
		}
		// Lines left by a writer that handed its role on.
		r.writeQueue(r.seq)
	}
	r.closed = true
	r.idle.Broadcast()
	r.fan.closeAll()
	close(r.notify)
	r.notify = make(chan struct{})
	if r.created && r.onDisk == 0 {
		// Not even run.started went in (a full disk, say): an empty file
		// would only puzzle readers. It is removed while still locked.
		os.Remove(r.path)
	}
	if err := r.f.Close(); err != nil {
		return fmt.Errorf("close transcript %s: %w", r.path, err)
	}
	return nil
}

// openSet tracks the steps, sub-workflow calls and tool calls the file
// shows open, so that past the file limit only what closes one of them
// goes in.
type openSet struct {
	steps   map[openKey]int32
	calls   map[string]struct{}
	unknown bool // resumed: what the file held open before is not tracked
}

type openKey struct {
	t    EventType
	path string
	iter int
}

func (o *openSet) track(e *ExchangeEvent) {
	switch e.Type {
	case StepStarted, CallWorkflowStarted:
		if o.steps == nil {
			o.steps = map[openKey]int32{}
		}
		o.steps[openKey{e.Type, e.Path, e.Iteration}]++
	case StepCompleted, CallWorkflowCompleted:
		k := openKey{opener(e.Type), e.Path, e.Iteration}
		if n := o.steps[k]; n > 1 {
			o.steps[k] = n - 1
		} else {
			delete(o.steps, k)
		}
	case ToolCall:
		if p, ok := e.Payload.(*ToolPayload); ok && p != nil {
			if o.calls == nil {
				o.calls = map[string]struct{}{}
			}
			o.calls[p.CallID] = struct{}{}
		}
	case ToolResult:
		if p, ok := e.Payload.(*ToolPayload); ok && p != nil {
			delete(o.calls, p.CallID)
		}
	}
}

// has reports whether the closing event e closes something open.
func (o *openSet) has(e *ExchangeEvent) bool {
	switch e.Type {
	case StepCompleted, CallWorkflowCompleted:
		return o.steps[openKey{opener(e.Type), e.Path, e.Iteration}] > 0
	case ToolResult:
		p, ok := e.Payload.(*ToolPayload)
		if !ok || p == nil {
			return false
		}
		_, open := o.calls[p.CallID]
		return open
	}
	return true
}

func opener(t EventType) EventType {
	if t == CallWorkflowCompleted {
		return CallWorkflowStarted
	}
	return StepStarted
}

// closingReserve is the room kept below the file limit for the events
// that close a run stopped by it (an eighth of the limit, at most 1 MiB).
const closingReserve = 1 << 20

// closing reports whether events of type t close something open: they are
// what the room below the file limit is kept for.
func closing(t EventType) bool {
	switch t {
	case RunCompleted, StepCompleted, CallWorkflowCompleted, ToolResult:
		return true
	}
	return false
}

// checkSize applies the file limit to a line of n bytes and type t (r.mu
// held). The recording stops at the limit, not just the line: a
// transcript with a hole in it would read as complete. Events that close
// what is open (step.completed, tool.result, run.completed …) still go in
// while the room kept below the limit for them lasts, so the run can end
// its record saying why; once one does not fit, nothing more does, and the
// file reads as interrupted.
func (r *Recorder) checkSize(t EventType, n int64) error {
	max := r.limits.MaxFileSize
	soft := max - min(closingReserve, max/8)
	size := r.size + n
	if closing(t) && !r.opens.unknown {
		if size > max {
			r.hardFull = true
			err := fmt.Errorf("%w: %s would pass %d bytes", ErrFileTooLarge, r.path, max)
			if r.full == nil {
				r.full = err
			}
			return err
		}
		if size > soft && r.full == nil {
			r.full = fmt.Errorf("%w: %s reached %d bytes (limit %d less %d kept for closing events)",
				ErrFileTooLarge, r.path, soft, max, max-soft)
		}
		return nil
	}
	if size > soft {
		err := fmt.Errorf("%w: %s would pass %d bytes (limit %d less %d kept for closing events)",
			ErrFileTooLarge, r.path, soft, max, max-soft)
		if r.opens.unknown {
			// A resumed file's open steps are not known: stop at once.
			r.hardFull = true
		}
		if r.full == nil {
			r.full = err
		}
		return err
	}
	return nil
}

// Follow returns a follower over this recorder's file starting at fromSeq
// that wakes on every write instead of polling.
func (r *Recorder) Follow(ctx context.Context, fromSeq uint64) (*Follower, error) {
	return Follow(ctx, r.path, fromSeq, FollowOptions{Limits: r.limits, wake: r})
}
