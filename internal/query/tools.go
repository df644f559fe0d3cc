package query

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/reelhq/reel/internal/rawjson"
	"github.com/reelhq/reel/internal/runs"
	"github.com/reelhq/reel/internal/warn"
	"github.com/reelhq/reel/transcript"
)

// ToolPair is one tool invocation: its call and its result.
type ToolPair struct {
	RunID     string              `json:"run_id"`
	Path      string              `json:"path"`
	Iteration int                 `json:"iteration"`
	Name      string              `json:"name"`
	CallID    string              `json:"call_id"`
	Fidelity  transcript.Fidelity `json:"fidelity"`
	CallSeq   uint64              `json:"call_seq,omitempty"`
	ResultSeq uint64              `json:"result_seq,omitempty"`
	Called    time.Time           `json:"called"`
	Returned  time.Time           `json:"returned,omitzero"`
	// DurationMS is the time from call to result; 0 when unknown.
	DurationMS int64           `json:"duration_ms"`
	Input      json.RawMessage `json:"input,omitempty"`
	Output     json.RawMessage `json:"output,omitempty"`
	Error      string          `json:"error,omitempty"`
	// Dangling marks a call that never got a real result: the result is
	// the "no result: …" closer, or missing altogether.
	Dangling bool `json:"dangling"`
	// Orphan marks a result without a call.
	Orphan bool `json:"orphan,omitempty"`
}

// DanglingPrefix opens the error of the tool.result that closes a call
// which never got a result (docs/decisions.md §6).
const DanglingPrefix = "no result"

// Limits of a Tools listing, so that memory follows what is listed, up to
// a bound, whatever the transcripts hold.
const (
	// MaxToolPairs bounds the pairs listed; past it, a warning counts the
	// rest.
	MaxToolPairs = 1_000_000
	// MaxToolIO bounds the bytes of inputs and outputs kept for the
	// listing; past it, pairs are listed without them and a warning says
	// so (reel events prints them whole).
	MaxToolIO = 64 << 20
)

// Tools lists the tool invocations of the run and of the sub-workflows it
// called, in call order per transcript. Damage is reported in the
// warnings, repeated ones summarised; a root transcript that cannot be
// read is an error.
func Tools(run *runs.Run) ([]ToolPair, []string, error) {
	l := &toolLister{seen: map[string]bool{}, warns: run.Warnings()}
	if err := l.walk(run, true); err != nil {
		return nil, l.warns.Strings(), err
	}
	if l.cut > 0 {
		l.warns.Addf("the listing holds the first %d tool calls; %d more are not listed", MaxToolPairs, l.cut)
	}
	if l.ioCut > 0 {
		l.warns.Addf("inputs and outputs of %d tool calls are left out: more than %d bytes in all (reel events --type tool.call,tool.result prints them)", l.ioCut, MaxToolIO)
	}
	return l.pairs, l.warns.Strings(), nil
}

type toolLister struct {
	seen  map[string]bool
	pairs []ToolPair
	warns *warn.List
	io    int // bytes of input and output kept
	cut   int // pairs past MaxToolPairs
	ioCut int // pairs listed without their input and output
}

func (l *toolLister) walk(run *runs.Run, root bool) error {
	if l.seen[run.Path] {
		return nil
	}
	l.seen[run.Path] = true
	children, err := l.file(run)
	if err != nil {
		if root {
			return err
		}
		l.warns.Add("child", err.Error())
		return nil
	}
	for _, id := range children {
		c, err := run.Child(id)
		if err != nil {
			l.warns.Addf("%s: %v", run.Path, err)
			continue
		}
		if err := l.walk(c, false); err != nil {
			return err
		}
	}
	return nil
}

// keep returns v if the budget for inputs and outputs allows it.
func (l *toolLister) keep(v json.RawMessage) json.RawMessage {
	if l.io+len(v) > MaxToolIO {
		return nil
	}
	l.io += len(v)
	return v
}

func (l *toolLister) file(run *runs.Run) (children []string, err error) {
	index := map[string]int{} // call id → index in pairs, while waiting for the result
	for rec, err := range run.Events(runs.FullDecode, transcript.ToolCall, transcript.ToolResult, transcript.CallWorkflowStarted) {
		if err != nil {
			return nil, err
		}
		ev := rec.Event()
		if ev.Type == transcript.CallWorkflowStarted {
			if ev.ChildRunID != "" {
				children = append(children, ev.ChildRunID)
			}
			continue
		}
		isCall := ev.Type == transcript.ToolCall
		tp := ev.Tool()
		if tp == nil {
			l.warns.Addf("%s: line %d: %s without a tool payload", run.Path, rec.Line, ev.Type)
			continue
		}
		key := ev.Path + "\x00" + tp.CallID
		i, ok := index[key]
		if !isCall && ok {
			delete(index, key)
			p := &l.pairs[i]
			p.ResultSeq, p.Returned = ev.Seq, ev.Timestamp
			p.Output, p.Error = l.keep(raw(tp.Output)), tp.Error
			if p.Output == nil && tp.Output != nil && string(raw(tp.Output)) != "" {
				l.ioCut++
			}
			p.Dangling = strings.HasPrefix(tp.Error, DanglingPrefix)
			if !p.Dangling && ev.Timestamp.After(p.Called) {
				p.DurationMS = ev.Timestamp.Sub(p.Called).Milliseconds()
			}
			continue
		}
		if len(l.pairs) >= MaxToolPairs {
			l.cut++
			continue
		}
		in := l.keep(raw(tp.Input))
		if in == nil && len(raw(tp.Input)) > 0 {
			l.ioCut++
		}
		if isCall {
			index[key] = len(l.pairs)
			l.pairs = append(l.pairs, ToolPair{
				RunID: ev.RunID, Path: ev.Path, Iteration: ev.Iteration, Name: tp.Name, CallID: tp.CallID,
				Fidelity: tp.Fidelity, CallSeq: ev.Seq, Called: ev.Timestamp, Input: in, Dangling: true,
			})
			continue
		}
		l.pairs = append(l.pairs, ToolPair{
			RunID: ev.RunID, Path: ev.Path, Iteration: ev.Iteration, Name: tp.Name, CallID: tp.CallID,
			Fidelity: tp.Fidelity, ResultSeq: ev.Seq, Returned: ev.Timestamp, Input: in,
			Output: l.keep(raw(tp.Output)), Error: tp.Error, Orphan: true,
		})
	}
	return children, nil
}

func raw(v any) json.RawMessage {
	switch r := v.(type) {
	case nil:
		return nil
	case json.RawMessage:
		if string(r) == "null" {
			return nil
		}
		return r
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	return b
}

// RenderTools writes the pairs as a table with inputs and outcomes
// shortened to one line.
func RenderTools(w io.Writer, pairs []ToolPair) error {
	var sb strings.Builder
	tw := tabwriter.NewWriter(&sb, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "STEP\tTOOL\tCALL ID\tFIDELITY\tDURATION\tRESULT\tINPUT")
	dangling := 0
	for _, p := range pairs {
		step := p.Path
		if p.Iteration != 0 {
			step = fmt.Sprintf("%s[%d]", p.Path, p.Iteration)
		}
		if step == "" {
			step = "(run)"
		}
		dur := "-"
		if p.DurationMS > 0 || !p.Returned.IsZero() && !p.Dangling {
			dur = FormatMS(p.DurationMS)
		}
		var outcome string
		switch {
		case p.Orphan:
			outcome = "ORPHAN result without call"
		case p.Dangling && p.Error != "":
			outcome = "DANGLING " + p.Error
		case p.Dangling:
			outcome = "DANGLING no result recorded"
		case p.Error != "":
			outcome = "error: " + p.Error
		default:
			outcome = "ok " + summarize(p.Output, 40)
		}
		if p.Dangling {
			dangling++
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", step, p.Name, p.CallID, p.Fidelity, dur, oneLine(outcome, 60), summarize(p.Input, 60))
	}
	tw.Flush()
	fmt.Fprintf(&sb, "%d tool calls, %d dangling\n", len(pairs), dangling)
	_, err := io.WriteString(w, sb.String())
	return err
}

// summarize shortens a JSON value to one line: strings unquoted.
func summarize(v json.RawMessage, max int) string {
	if len(v) == 0 {
		return ""
	}
	return oneLine(string(rawjson.AppendText(nil, v)), max)
}

func oneLine(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > max {
		return string(r[:max-1]) + "…"
	}
	return s
}
