package otlp

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// queueOptions are the OpenTelemetry batch span processor's settings
// (OTEL_BSP_*), with its defaults.
type queueOptions struct {
	size    int           // OTEL_BSP_MAX_QUEUE_SIZE
	batch   int           // OTEL_BSP_MAX_EXPORT_BATCH_SIZE
	delay   time.Duration // OTEL_BSP_SCHEDULE_DELAY
	timeout time.Duration // OTEL_BSP_EXPORT_TIMEOUT
}

// queueOptionsFromEnv reads the OTEL_BSP_* variables. A value that is not a
// positive integer is an error, not silently the default.
func queueOptionsFromEnv(getenv func(string) string) (queueOptions, error) {
	o := queueOptions{size: 2048, batch: 512, delay: 5 * time.Second, timeout: 30 * time.Second}
	ms := func(d *time.Duration) func(int) { return func(n int) { *d = time.Duration(n) * time.Millisecond } }
	for _, v := range []struct {
		name, unit string
		set        func(int)
	}{
		{"OTEL_BSP_MAX_QUEUE_SIZE", "a positive integer", func(n int) { o.size = n }},
		{"OTEL_BSP_MAX_EXPORT_BATCH_SIZE", "a positive integer", func(n int) { o.batch = n }},
		{"OTEL_BSP_SCHEDULE_DELAY", "milliseconds, a positive integer", ms(&o.delay)},
		{"OTEL_BSP_EXPORT_TIMEOUT", "milliseconds, a positive integer", ms(&o.timeout)},
	} {
		s := strings.TrimSpace(getenv(v.name))
		if s == "" {
			continue
		}
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 {
			return o, fmt.Errorf("%s=%q: want %s", v.name, s, v.unit)
		}
		v.set(n)
	}
	o.batch = min(o.batch, o.size)
	return o, nil
}

// queue is the live export's span processor. It does the batch span
// processor's job (a bounded queue, batches sent by one goroutine) but
// accounts for every span: OnEnd never blocks, a span that finds the queue
// full is dropped and counted, and a failed export is counted with its
// error, so the run can say at its end what did not reach the collector.
// The SDK's own processor counts drops privately and hands export errors
// to a process-wide handler.
type queue struct {
	exp  sdktrace.SpanExporter
	opts queueOptions
	ch   chan sdktrace.ReadOnlySpan
	stop chan struct{}
	done chan struct{}
	// base bounds every export; Shutdown cancels it when its own
	// deadline passes, so the remaining exports fail at once.
	base       context.Context
	cancelBase context.CancelFunc
	stopOnce   sync.Once

	mu       sync.Mutex
	ended    uint64
	exported uint64
	dropped  uint64
	failed   uint64
	lastErr  error
}

func newQueue(exp sdktrace.SpanExporter, opts queueOptions) *queue {
	q := &queue{
		exp: exp, opts: opts,
		ch:   make(chan sdktrace.ReadOnlySpan, opts.size),
		stop: make(chan struct{}),
		done: make(chan struct{}),
	}
	q.base, q.cancelBase = context.WithCancel(context.Background())
	go q.run()
	return q
}

func (q *queue) OnStart(context.Context, sdktrace.ReadWriteSpan) {}

func (q *queue) OnEnd(s sdktrace.ReadOnlySpan) {
	q.mu.Lock()
	q.ended++
	q.mu.Unlock()
	select {
	case <-q.stop:
		q.count(0, 1, 0, nil)
		return
	default:
	}
	select {
	case q.ch <- s:
	default:
		q.count(0, 1, 0, nil)
	}
}

func (q *queue) count(exported, dropped, failed int, err error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.exported += uint64(exported)
	q.dropped += uint64(dropped)
	q.failed += uint64(failed)
	if err != nil {
		q.lastErr = err
	}
}

func (q *queue) run() {
	defer close(q.done)
	t := time.NewTimer(q.opts.delay)
	defer t.Stop()
	buf := make([]sdktrace.ReadOnlySpan, 0, q.opts.batch)
	send := func() {
		if len(buf) > 0 {
			q.export(buf)
			clear(buf)
			buf = buf[:0]
		}
	}
	add := func(s sdktrace.ReadOnlySpan) {
		buf = append(buf, s)
		if len(buf) >= q.opts.batch {
			send()
		}
	}
	for {
		select {
		case s := <-q.ch:
			add(s)
		case <-t.C:
			send()
			t.Reset(q.opts.delay)
		case <-q.stop:
		drain:
			for {
				select {
				case s := <-q.ch:
					add(s)
				default:
					break drain
				}
			}
			send()
			return
		}
	}
}

func (q *queue) export(spans []sdktrace.ReadOnlySpan) {
	if q.base.Err() != nil {
		q.count(0, 0, len(spans), errFlushDeadline)
		return
	}
	ctx, cancel := context.WithTimeout(q.base, q.opts.timeout)
	err := q.exp.ExportSpans(ctx, spans)
	cancel()
	if err != nil {
		if q.base.Err() != nil {
			err = fmt.Errorf("%w: %v", errFlushDeadline, err)
		}
		q.count(0, 0, len(spans), err)
		return
	}
	q.count(len(spans), 0, 0, nil)
}

var errFlushDeadline = errors.New("not sent before the final flush deadline")

// ForceFlush is not needed by reel (Shutdown flushes); the SDK calls it
// only on TracerProvider.ForceFlush.
func (q *queue) ForceFlush(context.Context) error { return nil }

// Shutdown sends what is queued, waiting at most until ctx ends, then
// closes the exporter.
func (q *queue) Shutdown(ctx context.Context) error {
	q.stopOnce.Do(func() { close(q.stop) })
	select {
	case <-q.done:
	case <-ctx.Done():
		q.cancelBase()
		<-q.done
	}
	q.cancelBase()
	// A span that slipped in after the drain was never sent.
	for n := len(q.ch); n > 0; n-- {
		<-q.ch
		q.count(0, 1, 0, nil)
	}
	sctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	return q.exp.Shutdown(sctx)
}

// queueStats is what became of the spans the queue was given.
type queueStats struct {
	ended, exported, dropped, failed uint64
	err                              error
}

func (q *queue) stats() queueStats {
	q.mu.Lock()
	defer q.mu.Unlock()
	return queueStats{q.ended, q.exported, q.dropped, q.failed, q.lastErr}
}
