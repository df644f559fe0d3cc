package plugin

import (
	"context"
	"crypto/rand"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/reelhq/reel/internal/plugin/pluginv1"
)

// Event bus bounds (AWF's).
const (
	// eventBuffer is each subscriber's queue: when it is full (the plugin
	// is slow), further events for it are dropped with a warning, and the
	// run never waits.
	eventBuffer = 256
	// maxPropagation: an event emitted in answer to an event emitted in
	// answer to a run's event is the last that is routed.
	maxPropagation = 3
	// handleTimeout bounds one HandleEvent call.
	handleTimeout = 5 * time.Second
	// drainTimeout bounds how long Close waits for queued events.
	drainTimeout = 10 * time.Second
)

// The seven lifecycle events.
const (
	WorkflowStarted   = "workflow.started"
	WorkflowCompleted = "workflow.completed"
	WorkflowFailed    = "workflow.failed"
	StepStarted       = "step.started"
	StepCompleted     = "step.completed"
	StepFailed        = "step.failed"
	StepRetrying      = "step.retrying"
)

// Lifecycle is a moment of a run that subscribed plugins hear of.
type Lifecycle struct {
	// Type is one of the seven event types.
	Type string
	// RunID is the run's id (AWF's workflow_id); ParentRunID the calling
	// run's, for a sub-workflow.
	RunID, ParentRunID string
	Workflow, Version  string
	// Step is the state's name, Path its dot path, Kind its type.
	Step, Path, Kind string
	Iteration        int
	// Attempt is the attempt that just failed (step.retrying), of
	// MaxAttempts.
	Attempt, MaxAttempts int
	Duration             time.Duration
	// Status is the run's status (success, failure, cancelled).
	Status   string
	Error    string
	ExitCode int
	// FailedStep is the state a failed run ended in.
	FailedStep string
}

// metadata is the event's metadata: the keys AWF sends, and those its
// documentation adds.
func (l Lifecycle) metadata() map[string]string {
	m := map[string]string{"workflow_id": l.RunID}
	if l.ParentRunID != "" {
		m["parent_workflow_id"] = l.ParentRunID
	}
	switch l.Type {
	case WorkflowStarted, WorkflowCompleted, WorkflowFailed:
		m["workflow_name"] = l.Workflow
		if l.Version != "" {
			m["version"] = l.Version
		}
	default:
		m["step_name"] = l.Step
		if l.Path != l.Step {
			m["step_path"] = l.Path
			m["iteration"] = strconv.Itoa(l.Iteration)
		}
	}
	switch l.Type {
	case WorkflowCompleted:
		m["duration"] = l.Duration.String()
		m["status"] = l.Status
	case WorkflowFailed:
		m["duration"] = l.Duration.String()
		m["status"] = l.Status
		m["error"], m["error_message"] = l.Error, l.Error
		if l.FailedStep != "" {
			m["failed_step"] = l.FailedStep
		}
	case StepStarted:
		m["step_type"] = l.Kind
	case StepCompleted:
		m["duration"] = l.Duration.String()
	case StepFailed:
		m["duration"] = l.Duration.String()
		m["error"], m["error_message"] = l.Error, l.Error
		m["exit_code"] = strconv.Itoa(l.ExitCode)
	case StepRetrying:
		m["attempt"] = strconv.Itoa(l.Attempt)
		m["max_attempts"] = strconv.Itoa(l.MaxAttempts)
		if l.Error != "" {
			m["error"] = l.Error
		}
	}
	return m
}

// Publish sends a run's lifecycle event to the plugins subscribed to its
// type. It never waits for them.
func (h *Host) Publish(l Lifecycle) {
	if h == nil {
		return
	}
	h.bus.publish(&pluginv1.HandleEventRequest{Id: newID(), Type: l.Type, TimestampUnixNanos: time.Now().UnixNano(), Source: "core", Metadata: l.metadata()})
}

// deliver hands one event to the plugin and returns the events it emits
// in answer.
func (p *proc) deliver(ev *pluginv1.HandleEventRequest) ([]*pluginv1.HandleEventRequest, error) {
	if err := p.failed(); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), handleTimeout)
	defer cancel()
	resp, err := p.svc.event.HandleEvent(ctx, ev)
	if err != nil {
		return nil, p.rpcError(ctx, err)
	}
	return resp.GetEmittedEvents(), nil
}

// matchPattern matches an event type against a subscription pattern:
// segments split on '.', '*' matching one segment; the pattern "*" alone
// matches every type (as AWF's bus does).
func matchPattern(pattern, typ string) bool {
	if pattern == "*" {
		return typ != ""
	}
	ps, ts := strings.Split(pattern, "."), strings.Split(typ, ".")
	if pattern == "" || typ == "" || len(ps) != len(ts) {
		return false
	}
	for i, s := range ps {
		if s != "*" && s != ts[i] {
			return false
		}
	}
	return true
}

// bus routes events to subscribed plugins, a queue and a goroutine each,
// so that a slow plugin delays only its own events.
type bus struct {
	warn func(key, msg string)

	mu     sync.Mutex
	subs   map[string]*subscriber
	order  []*subscriber // subs by name, the order events are queued in
	queued int           // events queued or being handled
	closed bool
}

type subscriber struct {
	name     string
	patterns []string
	deliver  func(*pluginv1.HandleEventRequest) ([]*pluginv1.HandleEventRequest, error)
	queue    chan *pluginv1.HandleEventRequest
	done     chan struct{}
	dropped  int
}

func newBus(warn func(key, msg string)) *bus {
	return &bus{warn: warn, subs: map[string]*subscriber{}}
}

func (b *bus) subscribe(name string, patterns []string, deliver func(*pluginv1.HandleEventRequest) ([]*pluginv1.HandleEventRequest, error)) {
	s := &subscriber{name: name, patterns: patterns, deliver: deliver, queue: make(chan *pluginv1.HandleEventRequest, eventBuffer), done: make(chan struct{})}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed || b.subs[name] != nil {
		return
	}
	b.subs[name] = s
	b.reorder()
	go b.run(s)
}

// unsubscribe stops delivering to a plugin (it crashed); its queue is
// dropped.
func (b *bus) unsubscribe(name string) {
	b.mu.Lock()
	s := b.subs[name]
	delete(b.subs, name)
	b.reorder()
	b.mu.Unlock()
	if s != nil {
		close(s.done)
	}
}

// reorder lists the subscribers by name (b.mu held).
func (b *bus) reorder() {
	b.order = b.order[:0]
	for _, name := range sortedKeys(b.subs) {
		b.order = append(b.order, b.subs[name])
	}
}

func (b *bus) publish(ev *pluginv1.HandleEventRequest) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return
	}
	for _, s := range b.order {
		if !s.matches(ev.GetType()) {
			continue
		}
		select {
		case s.queue <- ev:
			b.queued++
		default:
			s.dropped++
			b.warn(s.name+": full", fmt.Sprintf("plugin %s: its event queue (%d) is full, events for it are dropped (first: %s)", s.name, eventBuffer, ev.GetType()))
		}
	}
}

func (s *subscriber) matches(typ string) bool {
	for _, p := range s.patterns {
		if matchPattern(p, typ) {
			return true
		}
	}
	return false
}

// run delivers a subscriber's events in order and routes what it emits.
func (b *bus) run(s *subscriber) {
	for {
		select {
		case <-s.done:
			for {
				select {
				case <-s.queue:
					b.handled()
				default:
					return
				}
			}
		case ev := <-s.queue:
			emitted, err := s.deliver(ev)
			if err != nil {
				b.warn(s.name+": deliver", fmt.Sprintf("plugin %s: event %s not handled: %v", s.name, ev.GetType(), err))
			}
			for _, e := range emitted {
				b.route(s.name, ev, e)
			}
			b.handled()
		}
	}
}

func (b *bus) handled() {
	b.mu.Lock()
	b.queued--
	b.mu.Unlock()
}

// route publishes an event a plugin emitted in answer to ev, one level
// deeper, unless that passes AWF's propagation limit.
func (b *bus) route(from string, ev, e *pluginv1.HandleEventRequest) {
	depth := max(ev.GetPropagationDepth()+1, e.GetPropagationDepth())
	if depth >= maxPropagation {
		b.warn(from+": depth "+e.GetType(), fmt.Sprintf("plugin %s: event %s not routed: it is %d events deep (the limit is %d)", from, e.GetType(), depth, maxPropagation))
		return
	}
	out := &pluginv1.HandleEventRequest{Id: e.GetId(), Type: e.GetType(), TimestampUnixNanos: e.GetTimestampUnixNanos(),
		Source: e.GetSource(), Metadata: e.GetMetadata(), Payload: e.GetPayload(), PropagationDepth: depth}
	if out.Id == "" {
		out.Id = newID()
	}
	if out.TimestampUnixNanos == 0 {
		out.TimestampUnixNanos = time.Now().UnixNano()
	}
	if out.Source == "" {
		out.Source = from
	}
	b.publish(out)
}

// close waits up to d for the queued events to be handled, then stops
// every subscriber.
func (b *bus) close(d time.Duration) {
	for deadline := time.Now().Add(d); ; time.Sleep(5 * time.Millisecond) {
		b.mu.Lock()
		n := b.queued
		b.mu.Unlock()
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			b.warn("drain", fmt.Sprintf("plugins: %d event(s) still queued after %s were dropped", n, d))
			break
		}
	}
	b.mu.Lock()
	b.closed = true
	subs := b.subs
	b.subs = map[string]*subscriber{}
	b.order = nil
	b.mu.Unlock()
	for _, s := range subs {
		if s.dropped > 0 {
			b.warn(s.name+": dropped", fmt.Sprintf("plugin %s: %d event(s) were dropped, its queue being full", s.name, s.dropped))
		}
		close(s.done)
	}
}

// hostEvents is HostEventService for one plugin: what it emits through
// its HostClient is routed if its manifest lists the type under
// events.emit. The event's source is the plugin the call comes from.
type hostEvents struct {
	pluginv1.UnimplementedHostEventServiceServer
	h      *Host
	plugin string
}

func (s *hostEvents) Emit(_ context.Context, req *pluginv1.EmitRequest) (*pluginv1.EmitResponse, error) {
	in := s.h.installed[s.plugin]
	allowed := false
	if in.Manifest.Has(CapEvents) {
		for _, p := range in.Manifest.Events.Emit {
			if matchPattern(p, req.GetEventType()) {
				allowed = true
				break
			}
		}
	}
	if !allowed {
		return &pluginv1.EmitResponse{ErrorMessage: fmt.Sprintf("plugin %q not authorized to emit event type %q: list it under events.emit in its plugin.yaml", s.plugin, req.GetEventType())}, nil
	}
	ev := &pluginv1.HandleEventRequest{Id: newID(), Type: req.GetEventType(), TimestampUnixNanos: req.GetTimestampUnixNanos(),
		Source: s.plugin, Metadata: req.GetMetadata(), Payload: req.GetPayload(), PropagationDepth: req.GetPropagationDepth()}
	if ev.TimestampUnixNanos == 0 {
		ev.TimestampUnixNanos = time.Now().UnixNano()
	}
	if ev.PropagationDepth >= maxPropagation {
		return &pluginv1.EmitResponse{ErrorMessage: fmt.Sprintf("event %s is %d events deep (the limit is %d)", ev.Type, ev.PropagationDepth, maxPropagation)}, nil
	}
	s.h.bus.publish(ev)
	return &pluginv1.EmitResponse{Success: true, EventId: ev.Id}, nil
}

// newID is a random UUID v4.
func newID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
