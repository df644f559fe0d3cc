// Package verify checks transcripts, and the child transcripts they link,
// against the transcript schema and reel's decisions: envelope fields,
// closed vocabularies, seq order, file properties, lifecycle order and
// balance, tool pairs, the calls of a step through reel's MCP server
// (each the router's, named by the agent's tool_use) and parent/child
// links.
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
