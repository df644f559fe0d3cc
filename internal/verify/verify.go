// Package verify checks transcripts, and the child transcripts they link,
// against the transcript schema and reel's decisions: envelope fields,
// closed vocabularies, seq order, file properties, lifecycle order and
// balance, tool pairs and parent/child links.
package verify

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/reelhq/reel/internal/runs"
	"github.com/reelhq/reel/transcript"
)

// Problem is one finding. Line is 0 for findings about the whole file.
type Problem struct {
	File    string `json:"file"`
	Line    int    `json:"line,omitempty"`
	Message string `json:"problem"`
	// Warning marks findings that do not make the file invalid, such as an
	// interrupted run.
	Warning bool `json:"warning,omitempty"`
}

func (p Problem) String() string {
	prefix := p.File
	if p.Line > 0 {
		prefix = fmt.Sprintf("%s:%d", p.File, p.Line)
	}
	if p.Warning {
		return prefix + ": warning: " + p.Message
	}
	return prefix + ": " + p.Message
}

// FileSummary describes one checked transcript.
type FileSummary struct {
	File        string `json:"file"`
	RunID       string `json:"run_id,omitempty"`
	Events      int    `json:"events"`
	Interrupted bool   `json:"interrupted,omitempty"`
	Children    int    `json:"children,omitempty"`
	Valid       bool   `json:"valid"`
}

// Report is the outcome of checking one or more transcripts.
type Report struct {
	Files    []FileSummary `json:"files"`
	Problems []Problem     `json:"problems"`
	// Unreadable lists files that could not be opened or read.
	Unreadable []Problem `json:"unreadable,omitempty"`
}

// Violations counts the problems that are not warnings.
func (r *Report) Violations() int {
	n := 0
	for _, p := range r.Problems {
		if !p.Warning {
			n++
		}
	}
	return n
}

// Bounds that keep a check's memory independent of what a file holds.
const (
	// perKind is how many problems of one kind are listed per file; the
	// rest are counted in one more problem.
	perKind = 10
	// maxTracked bounds the steps, tool calls and child runs tracked per
	// file for the pairing checks; past it those checks stop, and say so.
	maxTracked = 1 << 18
)

// Options tune a check.
type Options struct {
	Limits transcript.Limits
	// SkipMode disables the 0600 check (for files copied by tools that do
	// not keep modes).
	SkipMode bool
}

// Paths checks every transcript named: files, or directories whose *.jsonl
// files (or whose transcripts/ subdirectory's) are checked. Child files
// linked through child_run_id are checked too, each once.
func Paths(paths []string, opts Options) *Report {
	c := &checker{opts: opts, report: &Report{Problems: []Problem{}}, done: map[string]bool{}}
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			c.unreadable(p, err)
			continue
		}
		if !st.IsDir() {
			c.file(c.open(p))
			continue
		}
		dir := p
		if sub := transcript.Dir(p); isDir(sub) {
			dir = sub
		}
		entries, err := os.ReadDir(dir)
		if err != nil {
			c.unreadable(dir, err)
			continue
		}
		for _, e := range entries {
			if !e.IsDir() && strings.HasSuffix(e.Name(), ".jsonl") {
				c.file(c.open(filepath.Join(dir, e.Name())))
			}
		}
		// A torn tail whose transcript is gone is still worth a word.
		for _, e := range entries {
			if base, ok := tornOf(e.Name()); ok && !e.IsDir() {
				if _, err := os.Lstat(filepath.Join(dir, base)); errors.Is(err, fs.ErrNotExist) {
					c.report.Problems = append(c.report.Problems, Problem{File: filepath.Join(dir, e.Name()), Warning: true,
						Message: fmt.Sprintf("torn tail of a transcript that is not here (%s)", base)})
				}
			}
		}
	}
	return c.report
}

// tornOf returns the transcript a torn tail file belongs to:
// <name>.jsonl.torn or <name>.jsonl.torn.N.
func tornOf(name string) (string, bool) {
	i := strings.LastIndex(name, ".jsonl.torn")
	if i < 0 {
		return "", false
	}
	rest := name[i+len(".jsonl.torn"):]
	if rest != "" {
		if rest[0] != '.' || len(rest) == 1 || strings.Trim(rest[1:], "0123456789") != "" {
			return "", false
		}
	}
	return name[:i+len(".jsonl")], true
}

// tornTails lists the torn tails saved beside path, with their sizes.
func tornTails(path string) []Problem {
	matches, _ := filepath.Glob(globEscape(path) + ".torn*")
	var out []Problem
	for _, m := range matches {
		if base, ok := tornOf(filepath.Base(m)); !ok || base != filepath.Base(path) {
			continue
		}
		size := "?"
		if st, err := os.Lstat(m); err == nil {
			size = fmt.Sprint(st.Size())
		}
		out = append(out, Problem{File: path, Warning: true,
			Message: fmt.Sprintf("a resume moved a torn final line (%s bytes) out of this transcript into %s: those bytes are not part of the record", size, m)})
	}
	return out
}

func globEscape(p string) string {
	var b strings.Builder
	for _, c := range p {
		if strings.ContainsRune(`*?[\`, c) {
			b.WriteByte('\\')
		}
		b.WriteRune(c)
	}
	return b.String()
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

type checker struct {
	opts   Options
	report *Report
	done   map[string]bool
}

func (c *checker) unreadable(path string, err error) {
	c.report.Unreadable = append(c.report.Unreadable, Problem{File: path, Message: err.Error()})
}

// fileState is what one pass over a transcript learned.
type fileState struct {
	path        string
	runID       string
	parentRunID string
	children    map[string]int // child run id -> line of step.call_workflow.started
	events      int
	completed   bool
}

// open opens a transcript named on the command line: its damage is what
// the check reports, line by line.
func (c *checker) open(path string) *runs.Run {
	return runs.Open(path, runs.Options{Limits: c.opts.Limits, Strict: true})
}

func (c *checker) file(run *runs.Run) {
	path := run.Path
	clean := filepath.Clean(path)
	if c.done[clean] {
		return
	}
	c.done[clean] = true
	st, problems, err := c.scan(run)
	if err != nil {
		c.unreadable(path, err)
		return
	}
	problems = append(problems, tornTails(path)...)
	// Links, both directions. A child run id that is not a canonical UUID
	// was reported by scan and is never followed: it could name a file
	// anywhere ("../../x/<uuid>").
	var childIDs []string
	for id := range st.children {
		if transcript.ValidRunID(id) == nil {
			childIDs = append(childIDs, id)
		}
	}
	sort.Strings(childIDs)
	children := map[string]*runs.Run{}
	for _, id := range childIDs {
		line := st.children[id]
		child, err := run.Child(id)
		if err != nil {
			if errors.Is(err, runs.ErrTooDeep) {
				problems = append(problems, Problem{File: path, Line: line, Warning: true, Message: fmt.Sprintf("%v: not checked", err)})
			}
			continue
		}
		children[id] = child
		parent, err := peekParent(child)
		if errors.Is(err, errNoEvents) {
			// stopped between creating the child's file and its first
			// event; the child's own check says so
			continue
		}
		if err != nil {
			problems = append(problems, Problem{File: path, Line: line, Message: fmt.Sprintf("child transcript %s: %v", child.Path, err)})
			continue
		}
		if parent != st.runID {
			problems = append(problems, Problem{File: path, Line: line, Message: fmt.Sprintf("child run %s names parent_run_id %q, not this run", id, parent)})
		}
	}
	if st.parentRunID != "" && transcript.ValidRunID(st.parentRunID) == nil {
		if parent, err := run.Parent(st.parentRunID); err == nil {
			if ok, err := parentLinks(parent, st.runID); err != nil {
				problems = append(problems, Problem{File: path, Message: fmt.Sprintf("parent transcript %s: %v", parent.Path, err)})
			} else if !ok {
				problems = append(problems, Problem{File: path, Message: fmt.Sprintf("parent run %s has no step.call_workflow.started with child_run_id %s", st.parentRunID, st.runID)})
			}
		}
	}
	valid := true
	for _, p := range problems {
		if !p.Warning {
			valid = false
		}
	}
	c.report.Problems = append(c.report.Problems, problems...)
	c.report.Files = append(c.report.Files, FileSummary{
		File: path, RunID: st.runID, Events: st.events, Interrupted: !st.completed && st.events > 0,
		Children: len(st.children), Valid: valid,
	})
	for _, id := range childIDs {
		if child := children[id]; child != nil {
			if _, err := os.Stat(child.Path); err == nil {
				c.file(child)
			}
		}
	}
}

// peekParent returns the parent_run_id of a transcript's first event.
func peekParent(run *runs.Run) (string, error) {
	ev, err := run.First()
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", errors.New("missing")
	case errors.Is(err, transcript.ErrEmpty):
		return "", errNoEvents
	case err != nil && ev.Type == "":
		return "", fmt.Errorf("unreadable first event: %v", err)
	}
	return ev.ParentRunID, nil
}

// errNoEvents is peekParent's answer for an empty transcript.
var errNoEvents = errors.New("no events")

// parentLinks reports whether the parent transcript names child as a child.
func parentLinks(parent *runs.Run, child string) (bool, error) {
	// Whatever is damaged in the parent is the parent's own check's to
	// report: this read only looks for the link.
	parent = runs.Open(parent.Path, runs.Options{})
	for rec, err := range parent.Events(runs.EnvelopeOnly, transcript.CallWorkflowStarted) {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return false, errors.New("missing")
			}
			if errors.Is(err, transcript.ErrEmpty) {
				return false, nil
			}
			return false, err
		}
		if rec.Envelope().ChildRunID == child {
			return true, nil
		}
	}
	return false, nil
}

type stepKey struct {
	path      string
	iteration int
}

func (c *checker) scan(run *runs.Run) (*fileState, []Problem, error) {
	path := run.Path
	info, err := os.Stat(path)
	if err != nil {
		return nil, nil, err
	}
	st := &fileState{path: path, children: map[string]int{}}
	pl := &problemList{path: path}
	add := pl.add
	tracking := true
	track := func(line, n int) bool {
		if tracking && n >= maxTracked {
			tracking = false
			pl.list = append(pl.list, Problem{File: path, Line: line, Warning: true,
				Message: fmt.Sprintf("more than %d steps, tool calls or child runs to pair: the pairing checks stop here", maxTracked)})
		}
		return tracking
	}
	if !c.opts.SkipMode && info.Mode().Perm() != 0o600 {
		add(0, "mode is %04o, want 0600", info.Mode().Perm())
	}
	nameID, isJSONL := strings.CutSuffix(filepath.Base(path), ".jsonl")
	if !isJSONL {
		add(0, "file name is not <run-id>.jsonl")
	} else if err := transcript.ValidRunID(nameID); err != nil {
		add(0, "file name: %v", err)
	}

	var (
		expectSeq    uint64 = 1
		openSteps    map[stepKey]int
		openCalls    map[stepKey]int
		toolCalls    map[string]int // call_id -> line of tool.call
		toolDone     map[string]bool
		spanChildren map[string]bool
		lastLine     int
		sawStarted   bool
		sawCompleted bool
		attempt      = 1
	)
	// Balance is checked per attempt: steps an interrupted attempt left
	// open stay so, and the attempt that resumes it starts afresh.
	resetSpan := func() {
		openSteps, openCalls = map[stepKey]int{}, map[stepKey]int{}
		toolCalls, toolDone = map[string]int{}, map[string]bool{}
		spanChildren = map[string]bool{}
	}
	resetSpan()
	// A completed attempt must have closed everything it opened.
	closeSpan := func() {
		if !tracking {
			return
		}
		for _, k := range sortedKeys(openSteps) {
			add(0, "step %s (iteration %d) started %d more time(s) than it completed", k.path, k.iteration, openSteps[k])
		}
		for _, k := range sortedKeys(openCalls) {
			add(0, "call_workflow %s (iteration %d) has no step.call_workflow.completed", k.path, k.iteration)
		}
		var dangling []string
		for id := range toolCalls {
			if !toolDone[id] {
				dangling = append(dangling, id)
			}
		}
		sort.Strings(dangling)
		for _, id := range dangling {
			add(toolCalls[id], "tool.call %s has no tool.result", id)
		}
	}
	for rec, err := range run.Events(runs.FullDecode) {
		if rec == nil {
			if errors.Is(err, transcript.ErrEmpty) {
				break
			}
			return nil, nil, err
		}
		ev, line := rec.Event(), rec.Line
		if err != nil {
			var le *transcript.LineError
			if !errors.As(err, &le) {
				return nil, nil, err
			}
			switch {
			case errors.Is(err, transcript.ErrUnknownEventType), errors.Is(err, transcript.ErrUnknownBlockType):
				add(line, "%v (writers must use the closed vocabulary)", le.Err)
			case errors.Is(err, transcript.ErrTornLine):
				add(line, "%v", le.Err)
				continue
			case errors.Is(err, transcript.ErrFileTooLarge):
				add(line, "%v", le.Err)
				return st, pl.done(), nil
			default:
				add(line, "%v", le.Err)
				if ev.Type == "" {
					continue
				}
			}
		}
		st.events++
		// Envelope.
		if ev.Seq != expectSeq {
			add(line, "seq %d, want %d (seq must be 1..N in file order)", ev.Seq, expectSeq)
		}
		expectSeq = ev.Seq + 1
		if st.runID == "" {
			st.runID = ev.RunID
			st.parentRunID = ev.ParentRunID
			if err := transcript.ValidRunID(ev.RunID); err != nil {
				add(line, "run_id: %v", err)
			}
			if isJSONL && ev.RunID != nameID {
				add(line, "run_id %s does not match the file name", ev.RunID)
			}
		} else if ev.RunID != st.runID {
			add(line, "run_id %s differs from the first event's %s", ev.RunID, st.runID)
		}
		if ev.ParentRunID != st.parentRunID {
			add(line, "parent_run_id %q differs from the first event's %q", ev.ParentRunID, st.parentRunID)
		}
		if ev.Timestamp.IsZero() {
			add(line, "timestamp missing")
		}
		if (ev.Type == transcript.RunStarted || ev.Type == transcript.RunCompleted) && ev.Path != "" {
			add(line, "%s has path %q, want empty", ev.Type, ev.Path)
		}
		if ev.Iteration < 0 {
			add(line, "negative iteration %d", ev.Iteration)
		}
		if ev.ChildRunID != "" && ev.Type != transcript.CallWorkflowStarted && ev.Type != transcript.CallWorkflowCompleted {
			add(line, "child_run_id on a %s event", ev.Type)
		}
		// Lifecycle order. A resumed run's file holds one span per
		// attempt, each opened by a run.started whose attempt counts
		// them (docs/decisions.md §11); only a run.started may follow a
		// run.completed.
		if st.events == 1 && ev.Type != transcript.RunStarted {
			add(line, "first event is %s, want run.started", ev.Type)
		}
		if ev.Type == transcript.RunStarted {
			if sawStarted {
				attempt++
				if p := ev.Step(); p == nil || p.Attempt != attempt {
					add(line, "run.started again without attempt %d (a resume must number its attempt)", attempt)
				}
				if sawCompleted {
					closeSpan()
				}
				resetSpan()
			} else if p := ev.Step(); p != nil && p.Attempt > 1 {
				add(line, "first run.started has attempt %d", p.Attempt)
			}
			sawStarted, sawCompleted = true, false
		}
		if sawCompleted && ev.Type != transcript.RunStarted {
			add(line, "%s after run.completed", ev.Type)
		}
		if ev.Type == transcript.RunCompleted {
			sawCompleted = true
			if p := ev.Step(); p != nil && p.Attempt > 1 && p.Attempt != attempt {
				add(line, "run.completed of attempt %d closes attempt %d", p.Attempt, attempt)
			}
		}
		lastLine = line
		c.payload(ev, line, add)

		key := stepKey{ev.Path, ev.Iteration}
		tracked := len(openSteps) + len(openCalls) + len(toolCalls) + len(toolDone) + len(st.children) + len(spanChildren)
		if !track(line, tracked) {
			continue
		}
		switch ev.Type {
		case transcript.StepStarted:
			openSteps[key]++
		case transcript.StepCompleted:
			if openSteps[key] == 0 {
				add(line, "step.completed for %s (iteration %d) without a step.started", ev.Path, ev.Iteration)
			} else {
				openSteps[key]--
			}
		case transcript.CallWorkflowStarted:
			openCalls[key]++
			if ev.ChildRunID == "" {
				add(line, "step.call_workflow.started without child_run_id")
			} else {
				if err := transcript.ValidRunID(ev.ChildRunID); err != nil {
					add(line, "child_run_id: %v", err)
				}
				if spanChildren[ev.ChildRunID] {
					add(line, "child_run_id %s started twice", ev.ChildRunID)
				}
				spanChildren[ev.ChildRunID] = true
				if _, seen := st.children[ev.ChildRunID]; !seen {
					st.children[ev.ChildRunID] = line
				}
			}
		case transcript.CallWorkflowCompleted:
			if openCalls[key] == 0 {
				add(line, "step.call_workflow.completed for %s without a start", ev.Path)
			} else {
				openCalls[key]--
			}
			if ev.ChildRunID != "" {
				if _, ok := st.children[ev.ChildRunID]; !ok {
					add(line, "step.call_workflow.completed names child_run_id %s that was never started", ev.ChildRunID)
				}
			}
		case transcript.ToolCall:
			if p := ev.Tool(); p != nil && p.CallID != "" {
				if _, dup := toolCalls[p.CallID]; dup {
					add(line, "tool.call %s appears twice", p.CallID)
				}
				toolCalls[p.CallID] = line
			}
		case transcript.ToolResult:
			if p := ev.Tool(); p != nil && p.CallID != "" {
				if _, ok := toolCalls[p.CallID]; !ok {
					add(line, "tool.result %s without a preceding tool.call", p.CallID)
				}
				if toolDone[p.CallID] {
					add(line, "tool.result %s appears twice", p.CallID)
				}
				toolDone[p.CallID] = true
			}
		}
	}
	if st.events == 0 {
		pl.list = append(pl.list, Problem{File: path, Warning: true,
			Message: "no events: the run was stopped before it wrote its first one"})
		return st, pl.done(), nil
	}
	st.completed = sawCompleted
	if !st.completed {
		pl.list = append(pl.list, Problem{File: path, Line: lastLine, Warning: true,
			Message: "interrupted: no run.completed (the run was killed or is still running)"})
		return st, pl.done(), nil
	}
	closeSpan()
	return st, pl.done(), nil
}

// problemList lists one file's problems, perKind of each kind (each
// format) and a count of the rest, so a file of a million bad lines gives
// a short report in bounded memory.
type problemList struct {
	path  string
	list  []Problem
	count map[string]int
	first map[string]string
	order []string
}

func (pl *problemList) add(line int, format string, args ...any) {
	if pl.count == nil {
		pl.count, pl.first = map[string]int{}, map[string]string{}
	}
	n := pl.count[format]
	pl.count[format] = n + 1
	if n >= perKind {
		return
	}
	msg := fmt.Sprintf(format, args...)
	if n == 0 {
		pl.order = append(pl.order, format)
		pl.first[format] = msg
	}
	pl.list = append(pl.list, Problem{File: pl.path, Line: line, Message: msg})
}

// done returns the problems with a count for each kind listed only in
// part.
func (pl *problemList) done() []Problem {
	for _, f := range pl.order {
		if n := pl.count[f]; n > perKind {
			pl.list = append(pl.list, Problem{File: pl.path,
				Message: fmt.Sprintf("… and %d more problems like this one: %s", n-perKind, pl.first[f])})
		}
	}
	return pl.list
}

func sortedKeys(m map[stepKey]int) []stepKey {
	var keys []stepKey
	for k, n := range m {
		if n > 0 {
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].path != keys[j].path {
			return keys[i].path < keys[j].path
		}
		return keys[i].iteration < keys[j].iteration
	})
	return keys
}

// payload checks that the payload has the shape its event type requires.
func (c *checker) payload(ev *transcript.ExchangeEvent, line int, add func(int, string, ...any)) {
	if !ev.Type.Known() {
		return
	}
	switch ev.Type {
	case transcript.RunStarted, transcript.RunCompleted:
		if ev.Payload == nil {
			return
		}
		fallthrough
	case transcript.StepStarted, transcript.StepCompleted, transcript.CallWorkflowStarted, transcript.CallWorkflowCompleted:
		p := ev.Step()
		if p == nil {
			add(line, "%s payload is not a step payload (needs name and kind)", ev.Type)
			return
		}
		if p.Name == "" && ev.Type != transcript.RunStarted && ev.Type != transcript.RunCompleted {
			add(line, "%s payload has no name", ev.Type)
		}
		if p.Kind == "" {
			add(line, "%s payload has no kind", ev.Type)
		}
		if p.Attempt < 0 {
			add(line, "negative attempt %d", p.Attempt)
		}
	case transcript.MessageUser, transcript.MessageAssistant:
		p := ev.Message()
		if p == nil {
			add(line, "%s payload is not a message payload (needs role and blocks)", ev.Type)
			return
		}
		want := "user"
		if ev.Type == transcript.MessageAssistant {
			want = "assistant"
		}
		if p.Role != want {
			add(line, "%s has role %q, want %q", ev.Type, p.Role, want)
		}
		for i, b := range p.Blocks {
			if !b.Fidelity.Known() {
				add(line, "block %d has fidelity %q, want router or agent_emitted", i, b.Fidelity)
			}
			if b.Type == transcript.BlockToolUse && b.ToolID == "" {
				add(line, "block %d: tool_use without tool_id", i)
			}
		}
	case transcript.ToolCall, transcript.ToolResult:
		p := ev.Tool()
		if p == nil {
			add(line, "%s payload is not a tool payload (needs call_id)", ev.Type)
			return
		}
		if p.CallID == "" {
			add(line, "%s has an empty call_id", ev.Type)
		}
		if p.Name == "" {
			add(line, "%s has no tool name", ev.Type)
		}
		if !p.Fidelity.Known() {
			add(line, "%s has fidelity %q, want router or agent_emitted", ev.Type, p.Fidelity)
		}
	}
}
