// The one writer of imported runs.

package importer

import (
	"fmt"
	"os"
	"time"

	"github.com/reelhq/reel/internal/flowstudio"
	"github.com/reelhq/reel/transcript"
)

// tree is one source's runs as events: the run's own and those of the
// child runs it carried, whose ChildRunID and parent links use the
// source's own run ids (Ref for the run), replaced when written by ids
// derived from the source.
type tree struct {
	Ref      string
	Events   []transcript.ExchangeEvent
	Children []flowstudio.ChildRun
	// Untimed: the recording gave no event a time (sessionTree).
	Untimed bool
}

// start is the time of the run's first event.
func (t tree) start() time.Time {
	if len(t.Events) == 0 {
		return time.Time{}
	}
	return t.Events[0].Timestamp
}

// counts are the run's messages and tool calls, its child runs' included,
// and the status its run.completed records.
func (t tree) counts() (messages, toolCalls int, status string) {
	count := func(events []transcript.ExchangeEvent) {
		for i := range events {
			switch events[i].Type {
			case transcript.MessageUser, transcript.MessageAssistant:
				messages++
			case transcript.ToolCall:
				toolCalls++
			}
		}
	}
	count(t.Events)
	for _, c := range t.Children {
		count(c.Events)
	}
	for i := range t.Events {
		if t.Events[i].Type != transcript.RunCompleted {
			continue
		}
		var rr transcript.RunResult
		if sp := t.Events[i].Step(); sp != nil && transcript.DecodeResult(sp.Result, &rr) == nil {
			status = rr.Status
		}
	}
	return messages, toolCalls, status
}

// write writes t's run and child runs with the transcript recorder, every
// child beside its parent with parent_run_id set and the parent's
// call_workflow events naming it in child_run_id, and the source in the
// run's run.started (result.import). Run ids derive from the source, so a
// second import of a changed source replaces the first: the runs are
// written into a stage and moved into the directory together, or not at
// all. It returns the run's transcript and the child run ids.
func (im *importer) write(src Source, prior *Source, t tree) (path string, childIDs []string, err error) {
	ids := map[string]string{}
	runID := src.RunID()
	if t.Ref != "" {
		ids[t.Ref] = runID
	}
	for _, c := range t.Children {
		if _, dup := ids[c.RunID]; dup || c.RunID == "" {
			return "", nil, fmt.Errorf("child run %q listed twice or without an id", c.RunID)
		}
		ids[c.RunID] = src.ChildRunID(c.RunID)
		childIDs = append(childIDs, ids[c.RunID])
	}
	src.ChildRunIDs = childIDs
	st, err := newStage(im.o.Dir)
	if err != nil {
		return "", nil, err
	}
	defer func() {
		if err != nil {
			st.Abort()
		}
	}()
	path, err = im.record(st.Dir(), runID, "", t.Events, ids, src.Result())
	if err != nil {
		return "", nil, err
	}
	for _, c := range t.Children {
		parent, ok := ids[c.ParentRunID]
		if !ok {
			return "", nil, fmt.Errorf("child run %s: parent run %q is not in the import", c.RunID, c.ParentRunID)
		}
		if _, err := im.record(st.Dir(), ids[c.RunID], parent, c.Events, ids, nil); err != nil {
			return "", nil, fmt.Errorf("child run %s: %w", c.RunID, err)
		}
	}
	if err := st.Commit(prior, childIDs); err != nil {
		return "", nil, err
	}
	return st.Final(path), childIDs, nil
}

// record writes events as the run runID into dir, mapping child run ids
// through ids; source, when set, goes into run.started's result.
func (im *importer) record(dir, runID, parentRunID string, events []transcript.ExchangeEvent, ids map[string]string, source any) (string, error) {
	opts := transcript.Options{ParentRunID: parentRunID}
	if im.o.Masker != nil {
		opts.Masker = im.o.Masker
	}
	rec, err := transcript.Create(dir, runID, opts)
	if err != nil {
		return "", fmt.Errorf("create transcript: %w", err)
	}
	for i, e := range events {
		e.Seq, e.RunID, e.ParentRunID = 0, "", ""
		if e.ChildRunID != "" {
			id, ok := ids[e.ChildRunID]
			if !ok {
				err = fmt.Errorf("%s event names child run %s, which the import does not hold", e.Type, e.ChildRunID)
			}
			e.ChildRunID = id
		}
		if i == 0 && source != nil && e.Type == transcript.RunStarted {
			if sp := e.Step(); sp != nil && sp.Result == nil {
				c := *sp
				c.Result = source
				e.Payload = &c
			}
		}
		if err == nil {
			_, err = rec.Record(e)
		}
		if err != nil {
			rec.Close()
			os.Remove(rec.Path())
			return "", fmt.Errorf("record %s event: %w", e.Type, err)
		}
	}
	if err := rec.Close(); err != nil {
		return "", fmt.Errorf("close transcript: %w", err)
	}
	return rec.Path(), nil
}
