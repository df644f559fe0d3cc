package runs

import (
	"fmt"

	"github.com/reelhq/reel/transcript"
)

// Family is a run's events, whole, with those of the child runs its
// call_workflow steps started (and theirs): what an export writes or
// sends.
type Family struct {
	Events []transcript.ExchangeEvent
	// Children are the child runs' events by run id; Order lists their
	// ids depth first, in the order they were started.
	Children map[string][]transcript.ExchangeEvent
	Order    []string
}

// ReadAll reads every event of the run, whole. Damaged lines are left
// out and reported in the run's warnings; a file without an event, or
// that does not start with run.started, is an error.
func (r *Run) ReadAll() ([]transcript.ExchangeEvent, error) {
	var events []transcript.ExchangeEvent
	for rec, err := range r.Events(FullDecode) {
		if err != nil {
			return nil, err
		}
		events = append(events, *rec.Event())
	}
	if len(events) == 0 {
		return nil, fmt.Errorf("transcript %s holds no event", r.Path)
	}
	if events[0].Type != transcript.RunStarted {
		return nil, fmt.Errorf("transcript %s does not start with run.started", r.Path)
	}
	return events, nil
}

// ReadFamily reads the run (ReadAll) and, depth first, the child runs
// beside it, as deep as MaxDepth. A child that cannot be read is a warning
// of the run's; the family holds the others.
func (r *Run) ReadFamily() (*Family, error) {
	events, err := r.ReadAll()
	if err != nil {
		return nil, err
	}
	f := &Family{Events: events, Children: map[string][]transcript.ExchangeEvent{}, Order: []string{}}
	f.readChildren(r, events)
	return f, nil
}

func (f *Family) readChildren(parent *Run, events []transcript.ExchangeEvent) {
	for i := range events {
		id := events[i].ChildRunID
		if id == "" || events[i].Type != transcript.CallWorkflowStarted {
			continue
		}
		if _, done := f.Children[id]; done {
			continue
		}
		c, err := parent.Child(id)
		if err != nil {
			parent.Warnings().Addf("%s: %v", parent.Path, err)
			continue
		}
		child, err := c.ReadAll()
		if err != nil {
			parent.Warnings().Addf("child run %s: %v", id, err)
			continue
		}
		f.Children[id] = child
		f.Order = append(f.Order, id)
		f.readChildren(c, child)
	}
}
