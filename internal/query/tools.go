package query

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/reelhq/reel/internal/rawevent"
	"github.com/reelhq/reel/internal/rawjson"
	"github.com/reelhq/reel/internal/runstore"
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
// which never got a result (DECISIONS §6).
const DanglingPrefix = "no result"

// Tools lists the tool invocations of the run at path and of the
// sub-workflows it called, in call order per transcript. Damage is
// reported in the warnings; a root transcript that cannot be opened is an
// error.
func Tools(path string, limits transcript.Limits) ([]ToolPair, []string, error) {
	var pairs []ToolPair
	var warnings []string
	seen := map[string]bool{}
	var walk func(p string, root bool) error
	walk = func(p string, root bool) error {
		if seen[p] {
			return nil
		}
		seen[p] = true
		got, children, warn, err := toolsOf(p, limits)
		warnings = append(warnings, warn...)
		if err != nil {
			if root {
				return err
			}
			warnings = append(warnings, err.Error())
			return nil
		}
		pairs = append(pairs, got...)
		for _, c := range children {
			cp, err := runstore.ChildPath(p, c)
			if err != nil {
				warnings = append(warnings, fmt.Sprintf("%s: %v", p, err))
				continue
			}
			if err := walk(cp, false); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(path, true); err != nil {
		return nil, warnings, err
	}
	return pairs, warnings, nil
}

func toolsOf(path string, limits transcript.Limits) (pairs []ToolPair, children, warnings []string, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("open transcript %s: %w", path, err)
	}
	defer f.Close()
	rd := transcript.NewReader(f)
	rd.SetLimits(limits)
	index := map[string]int{} // call id → index in pairs, while waiting for the result
	for {
		line, err := rd.NextLine()
		if err == io.EOF {
			break
		}
		if err != nil {
			warnings = append(warnings, fmt.Sprintf("%s: %v", path, err))
			var le *transcript.LineError
			if !errors.As(err, &le) || errors.Is(err, transcript.ErrFileTooLarge) {
				break
			}
			continue
		}
		tv, ok, _ := rawevent.Type(line)
		if !ok {
			warnings = append(warnings, fmt.Sprintf("%s: line %d: not a transcript event", path, rd.Line()))
			continue
		}
		isCall, isResult := bytes.Equal(tv, tToolCall), bytes.Equal(tv, tToolResult)
		if !isCall && !isResult && !bytes.Equal(tv, tCallWF) {
			continue
		}
		ev, err := transcript.DecodeEvent(line)
		if err != nil {
			warnings = append(warnings, fmt.Sprintf("%s: line %d: %v", path, rd.Line(), err))
			continue
		}
		if ev.Type == transcript.CallWorkflowStarted {
			if ev.ChildRunID != "" {
				children = append(children, ev.ChildRunID)
			}
			continue
		}
		tp := ev.Tool()
		if tp == nil {
			warnings = append(warnings, fmt.Sprintf("%s: line %d: %s without a tool payload", path, rd.Line(), ev.Type))
			continue
		}
		key := ev.Path + "\x00" + tp.CallID
		if isCall {
			index[key] = len(pairs)
			pairs = append(pairs, ToolPair{
				RunID: ev.RunID, Path: ev.Path, Iteration: ev.Iteration, Name: tp.Name, CallID: tp.CallID,
				Fidelity: tp.Fidelity, CallSeq: ev.Seq, Called: ev.Timestamp, Input: raw(tp.Input), Dangling: true,
			})
			continue
		}
		i, ok := index[key]
		if !ok {
			pairs = append(pairs, ToolPair{
				RunID: ev.RunID, Path: ev.Path, Iteration: ev.Iteration, Name: tp.Name, CallID: tp.CallID,
				Fidelity: tp.Fidelity, ResultSeq: ev.Seq, Returned: ev.Timestamp, Input: raw(tp.Input),
				Output: raw(tp.Output), Error: tp.Error, Orphan: true,
			})
			continue
		}
		delete(index, key)
		p := &pairs[i]
		p.ResultSeq, p.Returned = ev.Seq, ev.Timestamp
		p.Output, p.Error = raw(tp.Output), tp.Error
		p.Dangling = strings.HasPrefix(tp.Error, DanglingPrefix)
		if !p.Dangling && ev.Timestamp.After(p.Called) {
			p.DurationMS = ev.Timestamp.Sub(p.Called).Milliseconds()
		}
	}
	return pairs, children, warnings, nil
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
