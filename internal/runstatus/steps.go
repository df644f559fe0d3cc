package runstatus

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// StepCounts counts a run's steps where the run stands now, by the one rule
// every reader (reel status, reel runs, the run index, the web view) uses:
//
//   - each step execution counts once, by its outcome: each loop
//     iteration, each pass of the flow through a state;
//   - a step's retry attempts are one step, counted by the last attempt:
//     a failure a retry made good is not a failure of the run;
//   - an execution of an earlier attempt of the run that a resume did not
//     keep (the step the run was cut short, cancelled or failed in, which
//     the resume ran again) does not count: the resume's execution does.
//     Rerun counts those executions.
type StepCounts struct {
	Succeeded   int `json:"succeeded"`
	Failed      int `json:"failed"`
	Cancelled   int `json:"cancelled,omitempty"`
	Running     int `json:"running,omitempty"`
	Interrupted int `json:"interrupted,omitempty"`
	// Rerun counts the executions of earlier attempts a resume ran again;
	// they are not in the counts above.
	Rerun int `json:"rerun,omitempty"`
}

// Add counts one step in status st.
func (c *StepCounts) Add(st string) {
	switch st {
	case Success:
		c.Succeeded++
	case Failure:
		c.Failed++
	case Cancelled:
		c.Cancelled++
	case Running:
		c.Running++
	case Interrupted:
		c.Interrupted++
	}
}

// Total is the number of steps counted (Rerun left out).
func (c StepCounts) Total() int {
	return c.Succeeded + c.Failed + c.Cancelled + c.Running + c.Interrupted
}

// Why an execution no longer counts (Tally.Superseded).
const (
	SupersededByRetry  = "retry"
	SupersededByResume = "resume"
)

// StepError is the status a step.completed's error gives: success without
// one, cancelled for the engine's words for a step a cancel cut short,
// failure otherwise.
func StepError(err string) string {
	switch {
	case err == "":
		return Success
	case err == "cancelled" || strings.HasPrefix(err, "cancelled: "):
		return Cancelled
	}
	return Failure
}

// Tally applies StepCounts' rule to a transcript read in order: fed its
// run.started, step.started and step.completed events, it decides which
// executions count and how. Executions are named by ordinal, the 1-based
// position of their step.started among the file's (as rerun numbers
// them and RunInput.Reused names them).
//
// Its state is a byte per execution, the executions open, and the failed
// ones a retry may follow; it marshals to JSON so that an incremental
// reader (the run index) can keep it between reads.
type Tally struct {
	state   []byte // by ordinal-1: one of the st* codes
	attempt []uint16
	open    []openExec
	// failed holds, by path and iteration, the last execution there when
	// it failed: a retry attempt started next supersedes it.
	failed map[string]int
	spans  int
}

type openExec struct {
	Path      string `json:"p"`
	Iteration int    `json:"i,omitempty"`
	Ordinal   int    `json:"o"`
}

// Execution states. The superseded ones no longer count.
const (
	stOpen        = 'o'
	stSuccess     = 's'
	stFailure     = 'f'
	stCancelled   = 'c'
	stInterrupted = 'i' // left open by an earlier attempt
	stRetried     = 'x'
	stRerun       = 'R'
)

func code(st string) byte {
	switch st {
	case Success:
		return stSuccess
	case Cancelled:
		return stCancelled
	}
	return stFailure
}

func key(path string, iteration int) string { return path + "\x00" + strconv.Itoa(iteration) }

// RunStarted folds in a run.started. For a resume (every run.started after
// the first), reused names the ordinals the resume kept (RunInput.Reused)
// when known is set; the executions of earlier attempts outside them were
// run again. Without it (a writer that does not name them), the
// executions that did not succeed were.
func (t *Tally) RunStarted(reused [][2]int, known bool) {
	t.spans++
	if t.spans == 1 {
		return
	}
	for _, o := range t.open {
		t.state[o.Ordinal-1] = stInterrupted
	}
	t.open = t.open[:0]
	clear(t.failed)
	for i, s := range t.state {
		if s == stRetried || s == stRerun {
			continue
		}
		if known && !InRanges(reused, i+1) || !known && s != stSuccess {
			t.state[i] = stRerun
		}
	}
}

// StepStarted folds in a step.started and returns the execution's ordinal.
// attempt is its retry attempt (0 or 1 for the first).
func (t *Tally) StepStarted(path string, iteration, attempt int) int {
	t.state = append(t.state, stOpen)
	t.attempt = append(t.attempt, uint16(min(max(attempt, 0), 1<<16-1)))
	ord := len(t.state)
	k := key(path, iteration)
	if prev, ok := t.failed[k]; ok {
		delete(t.failed, k)
		if attempt > 1 && int(t.attempt[prev-1]) == attempt-1 {
			t.state[prev-1] = stRetried
		}
	}
	t.open = append(t.open, openExec{path, iteration, ord})
	return ord
}

// StepCompleted folds in a step.completed at path and iteration with
// error err, closing the latest open execution there (else the latest at
// path). It returns the execution's ordinal, 0 when none was open.
func (t *Tally) StepCompleted(path string, iteration int, err string) int {
	at := Closes(t.open, path, iteration, func(o openExec) (string, int) { return o.Path, o.Iteration })
	if at < 0 {
		return 0
	}
	o := t.open[at]
	t.open = append(t.open[:at], t.open[at+1:]...)
	st := code(StepError(err))
	t.state[o.Ordinal-1] = st
	if st == stFailure {
		if t.failed == nil {
			t.failed = map[string]int{}
		}
		t.failed[key(o.Path, o.Iteration)] = o.Ordinal
	}
	return o.Ordinal
}

// Closes returns the index in open (in start order) of the execution a
// step.completed at path and iteration closes: the latest open there, else
// the latest open at path (docs/decisions.md §3); -1 when none is. at
// gives an execution's path and iteration. Every reader that pairs step
// events pairs them so.
func Closes[E any](open []E, path string, iteration int, at func(E) (string, int)) int {
	found := -1
	for k := len(open) - 1; k >= 0; k-- {
		p, it := at(open[k])
		if p != path {
			continue
		}
		if it == iteration {
			return k
		}
		if found < 0 {
			found = k
		}
	}
	return found
}

// Status is the status of the execution of ordinal ord, the open ones
// taking open (Running or Interrupted: the run's status when its last
// attempt has no run.completed), and why it no longer counts, if it does
// not.
func (t *Tally) Status(ord int, open string) (status, superseded string) {
	if ord < 1 || ord > len(t.state) {
		return "", ""
	}
	switch t.state[ord-1] {
	case stOpen:
		return open, ""
	case stSuccess:
		return Success, ""
	case stFailure:
		return Failure, ""
	case stCancelled:
		return Cancelled, ""
	case stInterrupted:
		return Interrupted, ""
	case stRetried:
		return Failure, SupersededByRetry
	}
	return "", SupersededByResume
}

// Counts counts the steps, the open executions taking status open.
func (t *Tally) Counts(open string) StepCounts {
	var c StepCounts
	for _, s := range t.state {
		switch s {
		case stOpen:
			c.Add(open)
		case stSuccess:
			c.Succeeded++
		case stFailure:
			c.Failed++
		case stCancelled:
			c.Cancelled++
		case stInterrupted:
			c.Interrupted++
		case stRerun:
			c.Rerun++
		}
	}
	return c
}

// Executions is the number of step.started events folded in.
func (t *Tally) Executions() int { return len(t.state) }

type tallyJSON struct {
	State   string         `json:"state,omitempty"`
	Attempt []uint16       `json:"attempt,omitempty"`
	Open    []openExec     `json:"open,omitempty"`
	Failed  map[string]int `json:"failed,omitempty"`
	Spans   int            `json:"spans,omitempty"`
}

// MarshalJSON writes the tally's state.
func (t Tally) MarshalJSON() ([]byte, error) {
	a := t.attempt
	if allFirst(a) {
		a = nil // the common case: no retries; StepStarted's check needs attempt > 1
	}
	return json.Marshal(tallyJSON{State: string(t.state), Attempt: a, Open: t.open, Failed: t.failed, Spans: t.spans})
}

// UnmarshalJSON reads what MarshalJSON wrote.
func (t *Tally) UnmarshalJSON(b []byte) error {
	var j tallyJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	if j.Attempt != nil && len(j.Attempt) != len(j.State) {
		return fmt.Errorf("step tally: %d attempts for %d executions", len(j.Attempt), len(j.State))
	}
	if j.Attempt == nil {
		j.Attempt = make([]uint16, len(j.State))
	}
	for _, o := range j.Open {
		if o.Ordinal < 1 || o.Ordinal > len(j.State) {
			return fmt.Errorf("step tally: open execution %d of %d", o.Ordinal, len(j.State))
		}
	}
	for _, o := range j.Failed {
		if o < 1 || o > len(j.State) {
			return fmt.Errorf("step tally: failed execution %d of %d", o, len(j.State))
		}
	}
	*t = Tally{state: []byte(j.State), attempt: j.Attempt, open: j.Open, failed: j.Failed, spans: j.Spans}
	return nil
}

func allFirst(a []uint16) bool {
	for _, x := range a {
		if x > 1 {
			return false
		}
	}
	return true
}

// InRanges reports whether ordinal lies in one of the sorted inclusive
// ranges (RunInput.Reused).
func InRanges(ranges [][2]int, ordinal int) bool {
	i := sort.Search(len(ranges), func(i int) bool { return ranges[i][1] >= ordinal })
	return i < len(ranges) && ranges[i][0] <= ordinal
}
