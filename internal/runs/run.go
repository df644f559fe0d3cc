package runs

import (
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/reelhq/reel/internal/warn"
	"github.com/reelhq/reel/transcript"
)

// MaxDepth is how far a read follows the transcripts a run links to, for
// every reader alike: a child is one level below its parent (Child), a
// parent one level beyond its child (Parent).
//
// The engine nests call_workflow eight deep by default
// (engine.DefaultMaxDepth), so
// 32 reads every run reel writes with room for an engine configured deeper
// and for imported trees, while a storage whose transcripts chain without
// end (hostile, or looping through ids the cycle check cannot see) still
// stops: the depth bounds the files a page inlines, the stack of a
// recursive reader and the files a depth-first reader holds open.
const MaxDepth = 32

// Errors of Child and Parent.
var (
	// ErrTooDeep is returned for a run more than MaxDepth links away from
	// where the read started.
	ErrTooDeep = fmt.Errorf("sub-workflows nested deeper than %d", MaxDepth)
	// ErrCycle is returned for a run already on the way from where the read
	// started: its transcripts name each other.
	ErrCycle = errors.New("sub-workflow cycle: the run is already being read")
)

// Options tune the reads of a run and of the runs reached from it.
type Options struct {
	// Limits bound each line and each file (the transcript package's
	// defaults when zero).
	Limits transcript.Limits
	// Strict yields each damaged line as the read's error, a
	// *transcript.LineError, with what could be decoded of it, instead of
	// keeping it as a warning: for reel verify, whose findings they are.
	Strict bool
	// Poll and Stale tune Follow (transcript.FollowOptions: defaults when
	// zero).
	Poll, Stale time.Duration
	// Warnings collects the damage the reads meet. Nil gives the run a
	// list of its own; the runs reached from it share their parent's.
	Warnings *warn.List
}

// Run is one run's transcript. Opening one reads nothing: its events are
// read when asked for, as often as asked. A Run is not safe for concurrent
// reads; open one per goroutine.
type Run struct {
	// Path is the transcript's file.
	Path string

	opts  Options
	from  *Run // the run this one was reached from
	depth int
	// status is what the last complete read found at the end of the file.
	status string
}

// Open returns the run whose transcript is at path. Nothing is read until
// its events are.
func Open(path string, opts Options) *Run {
	if opts.Warnings == nil {
		opts.Warnings = &warn.List{}
	}
	return &Run{Path: path, opts: opts}
}

// Warnings is the damage the reads of the run, and of the runs reached
// from it, met: bounded (package warn). Readers add their own findings to
// it, so that a view states one count.
func (r *Run) Warnings() *warn.List { return r.opts.Warnings }

// Depth is how many links the run is from where the read started.
func (r *Run) Depth() int { return r.depth }

// Child returns the run a call_workflow step of r started, which reel
// stores beside its parent. The id is validated, so that a hostile
// transcript cannot point outside the directory; a child deeper than
// MaxDepth, or already on the way here, is refused.
func (r *Run) Child(id string) (*Run, error) {
	c, err := r.beside(id)
	if err != nil {
		return nil, fmt.Errorf("child run: %w", err)
	}
	return c, nil
}

// Parent returns the run r's parent_run_id names, stored beside r, under
// the same rules as Child.
func (r *Run) Parent(id string) (*Run, error) {
	p, err := r.beside(id)
	if err != nil {
		return nil, fmt.Errorf("parent run: %w", err)
	}
	return p, nil
}

func (r *Run) beside(id string) (*Run, error) {
	if err := transcript.ValidRunID(id); err != nil {
		return nil, err
	}
	if r.depth+1 > MaxDepth {
		return nil, fmt.Errorf("run %s: %w", id, ErrTooDeep)
	}
	p := filepath.Join(filepath.Dir(r.Path), id+".jsonl")
	for a := r; a != nil; a = a.from {
		if filepath.Clean(a.Path) == p {
			return nil, fmt.Errorf("run %s: %w", id, ErrCycle)
		}
	}
	return &Run{Path: p, opts: r.opts, from: r, depth: r.depth + 1}, nil
}

// Status is what the last complete read of the run found (package
// runstatus): the status of the last run.completed when the run's last
// attempt has one, else running while a recorder holds the file and
// interrupted when none does. It is "" before a read has reached the end
// of the file.
func (r *Run) Status() string { return r.status }

// Options are the options the run was opened with, for a reader that
// opens it again with a change (its own warnings, say).
func (r *Run) Options() Options { return r.opts }

// WithChildren returns the runs and, breadth first, the runs their
// call_workflow steps started, transitively (as deep as MaxDepth), each
// once: what the runs' totals include. Only the call_workflow lines are
// read, and quietly: what is damaged is the next reader's to report.
func WithChildren(list []*Run) []*Run {
	seen := map[string]bool{}
	var out []*Run
	queue := append([]*Run(nil), list...)
	for len(queue) > 0 {
		r := queue[0]
		queue = queue[1:]
		if seen[filepath.Clean(r.Path)] {
			continue
		}
		seen[filepath.Clean(r.Path)] = true
		out = append(out, r)
		quiet := r.opts
		quiet.Warnings = &warn.List{}
		for rec, err := range Open(r.Path, quiet).Events(EnvelopeOnly, transcript.CallWorkflowStarted) {
			if err != nil {
				break // the next reader reports it
			}
			if c, err := r.Child(rec.Envelope().ChildRunID); err == nil {
				queue = append(queue, c)
			}
		}
	}
	return out
}
