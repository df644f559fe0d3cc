package transcript

import (
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// Subscription receives a recorder's events live. Its channel has a fixed
// buffer; when a slow consumer lets it fill, further events are dropped for
// this subscription only (drop-newest) and counted, so the disk write never
// waits for a reader.
type Subscription struct {
	id      uint64
	ch      chan ExchangeEvent
	fan     *fanOut
	dropped uint64
	// lastWarn rate-limits the drop warning to once a second.
	lastWarn time.Time
	closed   bool
}

// C is the channel of events. It is closed when the subscription or the
// recorder is closed.
func (s *Subscription) C() <-chan ExchangeEvent { return s.ch }

// ID identifies the subscription in FanOutStats.
func (s *Subscription) ID() uint64 { return s.id }

// Close unsubscribes. It is idempotent and safe to call concurrently with
// recording.
func (s *Subscription) Close() {
	s.fan.mu.Lock()
	defer s.fan.mu.Unlock()
	s.closeLocked()
}

func (s *Subscription) closeLocked() {
	if s.closed {
		return
	}
	s.closed = true
	delete(s.fan.subs, s.id)
	s.fan.n.Store(int32(len(s.fan.subs)))
	close(s.ch)
}

// FanOutStats reports events dropped for slow subscribers.
type FanOutStats struct {
	// Dropped counts every drop since the recorder opened, including those
	// of subscriptions closed since.
	Dropped uint64
	// PerSubscriber maps open subscription ids to their drop counts.
	PerSubscriber map[uint64]uint64
	Subscribers   int
}

// fanOut delivers written events to subscribers without ever blocking.
// Its own lock lets a subscriber close while the recorder is broadcasting.
type fanOut struct {
	mu      sync.Mutex
	subs    map[uint64]*Subscription
	nextID  uint64
	dropped uint64
	buffer  int
	logger  *slog.Logger
	n       atomic.Int32 // len(subs)
}

func (f *fanOut) init(buffer int, logger *slog.Logger) {
	f.subs = make(map[uint64]*Subscription)
	f.buffer = buffer
	f.logger = logger
}

// active reports whether anyone subscribes, without taking the lock: the
// recorder asks on every event.
func (f *fanOut) active() bool { return f.n.Load() > 0 }

func (f *fanOut) add() *Subscription {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.nextID++
	s := &Subscription{id: f.nextID, ch: make(chan ExchangeEvent, f.buffer), fan: f}
	f.subs[s.id] = s
	f.n.Store(int32(len(f.subs)))
	return s
}

func (f *fanOut) broadcast(e ExchangeEvent) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, s := range f.subs {
		select {
		case s.ch <- e:
		default:
			s.dropped++
			f.dropped++
			if f.logger != nil && time.Since(s.lastWarn) >= time.Second {
				s.lastWarn = time.Now()
				f.logger.Warn("transcript subscriber is too slow; dropping events",
					"subscriber", s.id, "dropped", s.dropped, "seq", e.Seq)
			}
		}
	}
}

func (f *fanOut) stats() FanOutStats {
	f.mu.Lock()
	defer f.mu.Unlock()
	st := FanOutStats{Dropped: f.dropped, PerSubscriber: make(map[uint64]uint64, len(f.subs)), Subscribers: len(f.subs)}
	for id, s := range f.subs {
		st.PerSubscriber[id] = s.dropped
	}
	return st
}

func (f *fanOut) closeAll() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, s := range f.subs {
		s.closeLocked()
	}
}
