package otlp

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/reelhq/reel/internal/pricing"
	"github.com/reelhq/reel/transcript"
)

// Run is a recorded run to export: its events and those of the child runs
// its call_workflow steps started.
type Run struct {
	Events []transcript.ExchangeEvent
	// Children holds child runs' events by run id; a child the events name
	// but Children lacks is left out.
	Children map[string][]transcript.ExchangeEvent
	// Link places a child run exported without its parent in the parent's
	// trace (see ChildLink). Zero for a top-level run.
	Link Link
}

// Link is where a child run's span hangs: its top-level run's trace and
// the span of the call_workflow step that started it.
type Link struct {
	Trace trace.TraceID
	Span  trace.SpanID
}

// ChildLink finds, in the events of parent (itself placed by parentLink,
// zero for a top-level run), the link of the child run childRunID.
func ChildLink(parent []transcript.ExchangeEvent, parentLink Link, childRunID string) (Link, bool) {
	if len(parent) == 0 {
		return Link{}, false
	}
	tid := parentLink.Trace
	if !tid.IsValid() {
		var err error
		if tid, err = TraceID(parent[0].RunID); err != nil {
			return Link{}, false
		}
	}
	m, err := newMapper(parent[0].RunID, tid, false, func(*span) {})
	if err != nil {
		return Link{}, false
	}
	var l Link
	found := false
	m.onChild = func(child string, id trace.SpanID) {
		if child == childRunID && !found {
			l, found = Link{tid, id}, true
		}
	}
	for i := range parent {
		m.event(&parent[i])
	}
	return l, found
}

// DefaultChunk is how many spans one batch export request carries, the
// OpenTelemetry batch processor's default batch size.
const DefaultChunk = 512

// Batch exports recorded runs. Spans go out in requests of Chunk spans,
// each waiting for the collector, so a failing collector stops the export
// with its error instead of losing spans silently. One goroutine sends
// while the next request's spans are being mapped.
type Batch struct {
	exp  sdktrace.SpanExporter
	buf  *spanBuffer
	pipe *pipeline
	cfg  Config
	// Chunk is the number of spans per export request (DefaultChunk).
	Chunk int
	// Progress, when set, is called after every request with the spans
	// sent so far, from the sending goroutine.
	Progress func(sent int)
	sent     atomic.Int64
}

// NewBatch connects an exporter to cfg.Endpoint (lazily: a collector that
// is down shows in the first Export).
func NewBatch(ctx context.Context, cfg Config) (*Batch, error) {
	exp, err := newExporter(ctx, cfg.Endpoint)
	if err != nil {
		return nil, err
	}
	return newBatch(ctx, cfg, exp)
}

func newBatch(ctx context.Context, cfg Config, exp sdktrace.SpanExporter) (*Batch, error) {
	res, err := newResource(ctx, cfg)
	if err != nil {
		exp.Shutdown(ctx)
		return nil, err
	}
	buf := &spanBuffer{}
	return &Batch{exp: exp, buf: buf, pipe: newPipeline(res, buf, cfg.Version), cfg: cfg, Chunk: DefaultChunk}, nil
}

// Export sends r (and its children) and returns how many spans it sent.
func (b *Batch) Export(ctx context.Context, r Run) (int, error) {
	if len(r.Events) == 0 {
		return 0, fmt.Errorf("export: no events")
	}
	before := b.sent.Load()
	tid := r.Link.Trace
	if !tid.IsValid() {
		var err error
		if tid, err = TraceID(r.Events[0].RunID); err != nil {
			return 0, err
		}
	}
	s := b.startSender(ctx)
	fam := newFamily(r.Children, b.cfg.prices())
	err := b.exportRun(ctx, s, r.Events, tid, r.Link.Span, fam, 0)
	if err == nil {
		err = b.handOver(s, true)
	}
	if serr := s.finish(); err == nil {
		err = serr
	}
	clear(b.buf.spans)
	b.buf.spans = b.buf.spans[:0]
	return int(b.sent.Load() - before), err
}

// sender sends requests on its own goroutine, at most two waiting.
type sender struct {
	ch   chan []sdktrace.ReadOnlySpan
	done chan struct{}
	err  error // set before done closes
}

func (b *Batch) startSender(ctx context.Context) *sender {
	s := &sender{ch: make(chan []sdktrace.ReadOnlySpan, 2), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		for spans := range s.ch {
			if err := b.exp.ExportSpans(ctx, spans); err != nil {
				s.err = fmt.Errorf("export to %s: %w", b.cfg.Endpoint, err)
				return
			}
			sent := b.sent.Add(int64(len(spans)))
			if b.Progress != nil {
				b.Progress(int(sent))
			}
		}
	}()
	return s
}

// send queues one request; after a failed one it returns that error.
func (s *sender) send(spans []sdktrace.ReadOnlySpan) error {
	select {
	case s.ch <- spans:
		return nil
	case <-s.done:
		return s.err
	}
}

// finish waits for the queued requests and returns the first error.
func (s *sender) finish() error {
	close(s.ch)
	<-s.done
	return s.err
}

// handOver queues the collected spans as requests of Chunk spans, keeping
// an incomplete last one for later unless final.
func (b *Batch) handOver(s *sender, final bool) error {
	spans, n := b.buf.spans, b.chunk()
	i := 0
	for len(spans)-i >= n || final && i < len(spans) {
		j := min(len(spans), i+n)
		if err := s.send(append([]sdktrace.ReadOnlySpan(nil), spans[i:j]...)); err != nil {
			return err
		}
		i = j
	}
	rest := copy(spans, spans[i:])
	clear(spans[rest:])
	b.buf.spans = spans[:rest]
	return nil
}

// maxDepth bounds call_workflow nesting, so children that name each other
// cannot recurse forever.
const maxDepth = 64

func (b *Batch) exportRun(ctx context.Context, snd *sender, events []transcript.ExchangeEvent, tid trace.TraceID, link trace.SpanID, fam *family, depth int) error {
	children := fam.children
	var ferr error
	m, err := newMapper(events[0].RunID, tid, b.cfg.Content, func(s *span) {
		if s.runRoot {
			s.parent = link
		}
		b.pipe.record(s)
		if ferr == nil && len(b.buf.spans) >= b.chunk() {
			ferr = b.handOver(snd, false)
		}
	})
	if err != nil {
		return err
	}
	m.prices = fam.prices
	m.childFigures = fam.of
	m.link = link
	m.horizon = lastTime(events, children, map[string]bool{})
	type call struct {
		id   string
		span trace.SpanID
	}
	var calls []call
	m.onChild = func(child string, id trace.SpanID) { calls = append(calls, call{child, id}) }
	for i := range events {
		ev := events[i]
		if b.cfg.Masker != nil {
			b.cfg.Masker.MaskEvent(&ev)
		}
		m.event(&ev)
		if ferr != nil {
			return ferr
		}
	}
	m.finish()
	if ferr != nil {
		return ferr
	}
	if depth >= maxDepth {
		return nil
	}
	seen := map[string]bool{}
	for _, c := range calls {
		evs, ok := children[c.id]
		if !ok || seen[c.id] || len(evs) == 0 || evs[0].RunID != c.id {
			continue
		}
		seen[c.id] = true
		if err := b.exportRun(ctx, snd, evs, tid, c.span, fam, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// family is the child runs of an exported run, by run id, and their
// figures once worked out.
type family struct {
	children map[string][]transcript.ExchangeEvent
	prices   *pricing.Table
	figures  map[string]figures
	// busy holds the runs being worked out, so that children that name
	// each other cannot recurse forever.
	busy map[string]bool
}

func newFamily(children map[string][]transcript.ExchangeEvent, prices *pricing.Table) *family {
	return &family{children: children, prices: prices, figures: map[string]figures{}, busy: map[string]bool{}}
}

// of gives a child run's figures as its own run span states them, its own
// children's included: a run span counts its child runs' cost and tokens,
// as reel tree and the run index do, and the parent's span is mapped
// before its children's. Each child is worked out once, by mapping its
// events without emitting anything.
func (f *family) of(id string) (figures, bool) {
	if fig, ok := f.figures[id]; ok {
		return fig, true
	}
	evs := f.children[id]
	if len(evs) == 0 || evs[0].RunID != id || f.busy[id] || len(f.busy) >= maxDepth {
		return figures{}, false
	}
	m, err := newMapper(id, trace.TraceID{}, false, func(*span) {})
	if err != nil {
		return figures{}, false
	}
	f.busy[id] = true
	defer delete(f.busy, id)
	m.prices = f.prices
	m.childFigures = f.of
	for i := range evs {
		m.event(&evs[i])
	}
	m.finish()
	f.figures[id] = m.ran
	return m.ran, true
}

// lastTime is the latest timestamp in events and the child runs they
// started, as the transcript holds it.
func lastTime(events []transcript.ExchangeEvent, children map[string][]transcript.ExchangeEvent, seen map[string]bool) time.Time {
	var last time.Time
	for i := range events {
		if t := events[i].Timestamp; t.After(last) {
			last = t
		}
		if id := events[i].ChildRunID; id != "" && events[i].Type == transcript.CallWorkflowStarted && !seen[id] {
			seen[id] = true
			if t := lastTime(children[id], children, seen); t.After(last) {
				last = t
			}
		}
	}
	return last.UTC().Truncate(time.Microsecond)
}

func (b *Batch) chunk() int {
	if b.Chunk > 0 {
		return b.Chunk
	}
	return DefaultChunk
}

// Sent is how many spans went out in all.
func (b *Batch) Sent() int { return int(b.sent.Load()) }

// Shutdown closes the exporter.
func (b *Batch) Shutdown(ctx context.Context) error {
	err := b.pipe.tp.Shutdown(ctx)
	if e := b.exp.Shutdown(ctx); err == nil {
		err = e
	}
	return err
}
