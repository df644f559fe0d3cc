package otlp

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"maps"
	"os"
	"sync"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/reelhq/reel/internal/pricing"
	"github.com/reelhq/reel/internal/runs"
	"github.com/reelhq/reel/transcript"
)

// Live exports runs while they run. Attach it to every run's recorder (the
// engine's OnRecorder hook); it subscribes and maps events on goroutines
// of its own, and a bounded queue feeds the exporter, so a slow or absent
// collector never slows or fails the run: spans it cannot take are
// counted, and Close reports them.
//
// Events the recorder's fan-out dropped (a slow subscriber) are read back
// from the transcript file, from the gap's seq on, so the live spans are
// the batch export's spans.
type Live struct {
	pipe    *pipeline
	q       *queue
	content bool
	prices  *pricing.Table
	wg      sync.WaitGroup

	mu      sync.Mutex
	traces  map[string]trace.TraceID // run id → its top-level run's trace
	links   map[string]trace.SpanID  // child run id → its call_workflow step's span
	pending map[string]*span         // child run spans waiting for their link
	backed  uint64
	lost    uint64
	readErr error
	first   string // the first top-level run attached
}

// NewLive starts a live export to cfg.Endpoint. The OTEL_BSP_* variables
// size its queue and batches; getenv reads them (os.Getenv when nil).
func NewLive(ctx context.Context, cfg Config, getenv func(string) string) (*Live, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	qo, err := queueOptionsFromEnv(getenv)
	if err != nil {
		return nil, err
	}
	exp, err := newExporter(ctx, cfg.Endpoint)
	if err != nil {
		return nil, err
	}
	return newLive(ctx, cfg, exp, qo)
}

func newLive(ctx context.Context, cfg Config, exp sdktrace.SpanExporter, qo queueOptions) (*Live, error) {
	res, err := newResource(ctx, cfg)
	if err != nil {
		exp.Shutdown(ctx)
		return nil, err
	}
	q := newQueue(exp, qo)
	return &Live{
		pipe: newPipeline(res, q, cfg.Version), q: q, content: cfg.Content, prices: cfg.prices(),
		traces: map[string]trace.TraceID{}, links: map[string]trace.SpanID{}, pending: map[string]*span{},
	}, nil
}

// Attach subscribes to rec, the recorder of a run whose parent (the run
// whose call_workflow step started it) is parentRunID, "" for a top-level
// run. Call it before the run records its first event; for a resumed
// transcript, the events already in the file are read first so the ids
// continue where they stopped.
func (l *Live) Attach(rec *transcript.Recorder, parentRunID string) {
	runID := rec.RunID()
	l.mu.Lock()
	tid, ok := l.traces[parentRunID]
	if !ok {
		// A top-level run, or a child whose parent is not attached: the
		// trace is named after the oldest run known.
		top := runID
		if parentRunID != "" {
			top = parentRunID
		}
		tid, _ = TraceID(top)
	}
	l.traces[runID] = tid
	if parentRunID == "" && l.first == "" {
		l.first = runID
	}
	l.mu.Unlock()

	sub := rec.Subscribe()
	child := parentRunID != ""
	m, err := newMapper(runID, tid, l.content, func(s *span) { l.emit(runID, child, s) })
	if err != nil {
		sub.Close()
		l.noteReadErr(err)
		return
	}
	m.onChild = l.link
	m.prices = l.prices
	m.childFigures = childFigures(rec.Path(), l.prices)
	f := &feed{rec: rec, m: m}
	if last := rec.LastSeq(); last > 0 {
		// Resumed: the spans that ended before were exported by the run
		// that wrote them; replay their events without emitting so the
		// occurrences and open steps continue.
		emit := m.emit
		m.emit = func(*span) {}
		l.backfill(context.Background(), f, last)
		m.emit = emit
	}
	l.wg.Add(1)
	go l.consume(sub, f)
}

// childFigures gives the figures of the child runs of the run whose
// transcript is at path, for its span (family.of), reading each child's
// transcripts, its own children's included, when the span ends: by then
// the child has finished, or was kept from an earlier attempt.
func childFigures(path string, prices *pricing.Table) func(string) (figures, bool) {
	fam := newFamily(map[string][]transcript.ExchangeEvent{}, prices)
	return func(id string) (figures, bool) {
		if _, ok := fam.children[id]; !ok {
			c, err := runs.Open(path, runs.Options{}).Child(id)
			if err != nil {
				return figures{}, false
			}
			cf, err := c.ReadFamily()
			if err != nil {
				return figures{}, false
			}
			fam.children[id] = cf.Events
			maps.Copy(fam.children, cf.Children)
		}
		return fam.of(id)
	}
}

// feed is one run's events: its subscription, and the transcript file
// for what the subscription missed.
type feed struct {
	rec *transcript.Recorder
	m   *mapper
	// file reads the transcript; it stays open and positioned between
	// gaps, so that every gap costs only the lines since the previous one.
	file *following
}

// following is a pull over a run's transcript being followed.
type following struct {
	next   func() (*runs.Record, error, bool)
	stop   func()
	cancel context.CancelFunc
}

func (fl *following) close() {
	fl.cancel()
	fl.stop()
}

func (l *Live) consume(sub *transcript.Subscription, f *feed) {
	defer l.wg.Done()
	defer func() {
		if f.file != nil {
			f.file.close()
		}
	}()
	ctx := context.Background()
	m := f.m
	for ev := range sub.C() {
		if ev.Seq > m.seq+1 {
			l.backfill(ctx, f, ev.Seq-1)
		}
		if ev.Seq != 0 && ev.Seq <= m.seq {
			continue
		}
		m.event(&ev)
	}
	// The recorder closed: anything the fan-out dropped at the very end
	// is in the file.
	if last := f.rec.LastSeq(); last > m.seq {
		l.backfill(ctx, f, last)
	}
	m.finish()
}

// backfill maps the events after m.seq up to seq upTo from the transcript
// file.
func (l *Live) backfill(ctx context.Context, f *feed, upTo uint64) {
	m := f.m
	if f.file == nil {
		fctx, cancel := context.WithCancel(ctx)
		next, stop := iter.Pull2(runs.Open(f.rec.Path(), runs.Options{}).Follow(fctx, m.seq+1))
		f.file = &following{next: next, stop: stop, cancel: cancel}
	}
	for m.seq < upTo {
		ev, err := l.nextWritten(f.file)
		if err != nil {
			l.noteLost(upTo-m.seq, err)
			f.file.close()
			f.file = nil
			return
		}
		if ev.Seq <= m.seq {
			continue // the subscription delivered it
		}
		m.event(ev)
		l.mu.Lock()
		l.backed++
		l.mu.Unlock()
	}
}

// nextWritten reads the next event already in the file. Everything up to
// the gap was written before it was broadcast, so reaching the end of the
// file early means the file lost lines: waiting longer than followWait for
// it ends the follow.
func (l *Live) nextWritten(fl *following) (*transcript.ExchangeEvent, error) {
	late := time.AfterFunc(followWait, fl.cancel)
	rec, err, ok := fl.next()
	late.Stop()
	if !ok || errors.Is(err, context.Canceled) {
		return nil, fmt.Errorf("the transcript ends before the events the fan-out dropped")
	}
	if err != nil {
		return nil, err
	}
	ev := *rec.Event()
	return &ev, nil
}

// followWait bounds the wait for a line that should already be written.
const followWait = 2 * time.Second

func (l *Live) noteLost(n uint64, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lost += n
	l.readErr = err
}

func (l *Live) noteReadErr(err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.readErr = err
}

// emit records a finished span. A child run's own span waits for the link
// to its call_workflow step, which the parent's goroutine may not have
// mapped yet.
func (l *Live) emit(runID string, child bool, s *span) {
	if s.runRoot && child && !s.parent.IsValid() {
		l.mu.Lock()
		id, ok := l.links[runID]
		if !ok {
			l.pending[runID] = s
			l.mu.Unlock()
			return
		}
		l.mu.Unlock()
		s.parent = id
	}
	l.pipe.record(s)
}

func (l *Live) link(child string, id trace.SpanID) {
	l.mu.Lock()
	l.links[child] = id
	s := l.pending[child]
	delete(l.pending, child)
	l.mu.Unlock()
	if s != nil {
		s.parent = id
		l.pipe.record(s)
	}
}

// LiveStats is what became of a live export.
type LiveStats struct {
	// TraceID is the first top-level run's trace.
	TraceID trace.TraceID
	// Spans is how many spans the runs produced; Exported reached the
	// collector; Dropped found the queue full; Failed were in exports
	// that failed (Err is the last error) or were still queued at the
	// flush deadline.
	Spans, Exported, Dropped, Failed uint64
	Err                              error
	// Backfilled counts events the recorder's fan-out dropped that were
	// read back from the transcript; Lost those that could not be (ReadErr
	// says why), whose spans are missing or incomplete.
	Backfilled, Lost uint64
	ReadErr          error
	// Unlinked counts child runs whose calling step was never seen; their
	// spans are exported as roots of the trace.
	Unlinked int
}

// Close waits for the attached runs' events (their recorders must be
// closed, as the engine does when a run ends), then sends what is queued,
// waiting at most until ctx ends (AWF flushes within 5 seconds).
func (l *Live) Close(ctx context.Context) LiveStats {
	done := make(chan struct{})
	go func() { l.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
	}
	l.mu.Lock()
	pending := l.pending
	l.pending = map[string]*span{}
	l.mu.Unlock()
	for _, s := range pending {
		l.pipe.record(s)
	}
	l.pipe.tp.Shutdown(ctx)
	qs := l.q.stats()
	l.mu.Lock()
	defer l.mu.Unlock()
	st := LiveStats{
		Spans: qs.ended, Exported: qs.exported, Dropped: qs.dropped, Failed: qs.failed, Err: qs.err,
		Backfilled: l.backed, Lost: l.lost, ReadErr: l.readErr, Unlinked: len(pending),
	}
	if l.first != "" {
		st.TraceID = l.traces[l.first]
	}
	return st
}
