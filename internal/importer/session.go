// Agent sessions and provider streams: one recording, one run with one
// agent step.

package importer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/reelhq/reel/internal/normalize"
	"github.com/reelhq/reel/internal/promptkind"
	"github.com/reelhq/reel/internal/runstatus"
	"github.com/reelhq/reel/internal/safefile"
	"github.com/reelhq/reel/transcript"
)

// file imports one file. explicit is false for files found in a
// directory: with format auto those that are not recordings are passed
// over (nil, nil) rather than reported as failures.
func (im *importer) file(ctx context.Context, path string, explicit bool) (*Run, error) {
	format := normalize.Format(im.o.Format)
	if im.o.Format == Auto {
		var f normalize.Format
		ok := false
		interop := detectInterop(path)
		if interop == "" {
			var err error
			if f, ok, err = detectFile(path); err != nil {
				return &Run{File: path, Format: Auto, Error: err.Error()}, nil
			}
		}
		if !ok {
			if interop != "" {
				got, err := im.interop(ctx, interop, []string{path})
				if err != nil {
					return nil, err
				}
				if len(got) == 1 {
					return &got[0], nil
				}
				return &Run{File: path, Format: interop, Error: fmt.Sprintf("%d runs where one was expected", len(got))}, nil
			}
			if !explicit {
				return nil, nil
			}
			return &Run{File: path, Format: Auto, Error: "cannot detect the format; name it with --from"}, nil
		}
		format = f
	}
	r, err := im.session(path, format)
	if err != nil {
		return &Run{File: path, Format: string(format), Error: err.Error()}, nil
	}
	return r, nil
}

// session normalizes one recording and writes it as a run, unless an
// earlier import of the same source has the same content.
func (im *importer) session(path string, format normalize.Format) (*Run, error) {
	src, err := identify(path, string(format))
	if err != nil {
		return nil, err
	}
	var subFiles map[string]string
	if format == normalize.ClaudeSessionLog {
		subFiles = subagentFiles(src.Path)
		if src, err = withSubagents(src, subFiles); err != nil {
			return nil, err
		}
	}
	outcome, prior, err := check(im.o.Dir, src)
	if err != nil {
		return nil, err
	}
	r := &Run{File: path, Format: string(format), RunID: src.RunID(), Outcome: outcome}
	if outcome == Unchanged {
		r.Transcript = filepath.Join(im.o.Dir, r.RunID+".jsonl")
		return r, nil
	}
	events, res, err := normalizeFile(path, format)
	if err != nil {
		return nil, err
	}
	name := runName(res, src.Path, format)
	st, err := os.Stat(src.Path)
	if err != nil {
		return nil, fmt.Errorf("import source %s: %w", path, err)
	}
	t := sessionTree(name, events, res, st.ModTime())
	src.Untimed = t.Untimed
	var warnings []string
	if len(subFiles) > 0 {
		subs, w := readSubagents(subFiles)
		var lw []string
		t, lw = linkSubagents(t, subs, taskAgents(src.Path))
		warnings = append(w, lw...)
	}
	if r.Transcript, r.ChildRunIDs, err = im.write(src, prior, t); err != nil {
		return nil, err
	}
	r.Name = im.o.Masker.MaskString(name)
	r.Messages, r.ToolCalls, r.Status = t.counts()
	r.Skipped = res.Agent.Skipped
	r.Warnings = append(res.Warnings, warnings...)
	return r, nil
}

// normalizeFile reads the recording at path whole into transcript events.
func normalizeFile(path string, format normalize.Format) ([]transcript.ExchangeEvent, *normalize.Result, error) {
	if _, ok := isSubagentLog(path); ok && format == normalize.ClaudeSessionLog {
		// imported alone: its sidechain lines are its conversation
		return normalizeSubagent(path)
	}
	events, res, err := readAll(path, func(emit normalize.Emit) (*normalize.Parser, error) {
		return normalize.NewParser(format, emit)
	})
	if err != nil {
		return nil, nil, err
	}
	if len(events) == 0 && !res.IsError && res.Agent.Usage.TotalTokens == 0 && len(res.Warnings) == 0 &&
		res.Agent.SessionID == "" && res.Agent.Model == "" {
		msg := fmt.Sprintf("no %s content found", format)
		if len(res.Agent.Skipped) > 0 {
			msg += " (skipped: " + normalize.SkippedSummary(res.Agent.Skipped) + ")"
		}
		return nil, nil, errors.New(msg)
	}
	// Read whole, a recording's text goes before the tool calls it
	// introduced.
	return normalize.TextFirst(events), res, nil
}

// readAll reads the recording at path whole through the parser newParser
// makes, into events in the order the parser emitted them.
func readAll(path string, newParser func(normalize.Emit) (*normalize.Parser, error)) ([]transcript.ExchangeEvent, *normalize.Result, error) {
	f, err := safefile.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	var events []transcript.ExchangeEvent
	p, err := newParser(func(ev transcript.ExchangeEvent) error {
		events = append(events, ev)
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	if _, err := io.Copy(p, f); err != nil {
		return nil, nil, fmt.Errorf("read %s: %w", path, err)
	}
	res, err := p.Close("recording ended")
	if err != nil {
		return nil, nil, err
	}
	return events, res, nil
}

// runName names an imported run after what it is: the project the agent
// worked in (the last element of its working directory, else the Claude
// project directory the session log sits in) and the session's title, or
// its first prompt; "import:<file>" when the recording says neither.
func runName(res *normalize.Result, path string, format normalize.Format) string {
	project := ""
	if res.CWD != "" {
		project = filepath.Base(filepath.Clean(res.CWD))
	} else if format == normalize.ClaudeSessionLog {
		// ~/.claude/projects/<the cwd with / as ->/<session>.jsonl
		project = filepath.Base(filepath.Dir(path))
	}
	title := res.Title
	if title == "" {
		// the request, without the blocks the CLI added around it
		title = res.Prompt
		if t := promptkind.Classify(title); t.Kind == promptkind.Prompt && strings.TrimSpace(t.Text) != "" {
			title = t.Text
		}
	}
	title = oneLine(title, 72)
	switch {
	case project != "" && title != "":
		return project + ": " + title
	case title != "":
		return title
	case project != "":
		return project + ": " + filepath.Base(path)
	}
	return "import:" + filepath.Base(path)
}

// oneLine folds s's white space and cuts it to n runes, ending a cut
// string in "…".
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}

// sessionTree is the run around a recording's normalized events: the run
// named name, with one agent step holding the events. Events the provider
// gave no time carry the previous event's time, so the transcript stays in
// the provider's timeline; before the first provider time they get the
// first one. A recording without any time (a provider stream, Codex exec
// JSON) is untimed: every event gets mtime, the source file's modification
// time, which is when the recording was last written to and so the best
// bound known of when it ran, and the tree says so (tree.Untimed: readers
// show no start or duration, docs/import.md). The run starts and ends
// where the recording's stated times do (normalize.Result's Start and
// End), its events' or not.
func sessionTree(name string, events []transcript.ExchangeEvent, res *normalize.Result, mtime time.Time) tree {
	var first, last time.Time
	for _, ev := range events {
		if !ev.Timestamp.IsZero() {
			if first.IsZero() {
				first = ev.Timestamp
			}
			if ev.Timestamp.After(last) {
				last = ev.Timestamp
			}
		}
	}
	// the session's own span, where it states one beyond its events
	if !res.Start.IsZero() && (first.IsZero() || res.Start.Before(first)) {
		first = res.Start
	}
	if res.End.After(last) {
		last = res.End
	}
	untimed := first.IsZero()
	if untimed {
		// The transcript keeps microseconds: the same instant whatever
		// reads it back.
		first = mtime.UTC().Truncate(time.Microsecond)
		last = first
	}
	const stepPath = "agent"
	status, exitCode := runstatus.Success, 0
	errMsg := ""
	if res.IsError {
		status, exitCode = runstatus.Failure, 1
		errMsg = res.Error
	}
	duration := res.Agent.DurationMS
	if duration == 0 {
		duration = last.Sub(first).Milliseconds()
	}
	out := make([]transcript.ExchangeEvent, 0, len(events)+4)
	out = append(out,
		transcript.ExchangeEvent{Type: transcript.RunStarted, Timestamp: first,
			Payload: &transcript.StepPayload{Name: name, Kind: transcript.KindWorkflow}},
		transcript.ExchangeEvent{Type: transcript.StepStarted, Path: stepPath, Timestamp: first,
			Payload: &transcript.StepPayload{Name: stepPath, Kind: transcript.KindAgent}})
	ts := first
	for _, ev := range events {
		if ev.Timestamp.IsZero() {
			ev.Timestamp = ts
		} else {
			ts = ev.Timestamp
		}
		ev.Path = stepPath
		out = append(out, ev)
	}
	out = append(out,
		transcript.ExchangeEvent{Type: transcript.StepCompleted, Path: stepPath, Timestamp: last,
			Payload: &transcript.StepPayload{Name: stepPath, Kind: transcript.KindAgent, Error: errMsg, Result: res.Agent}},
		transcript.ExchangeEvent{Type: transcript.RunCompleted, Timestamp: last,
			Payload: &transcript.StepPayload{Name: name, Kind: transcript.KindWorkflow, Error: errMsg, Result: transcript.RunResult{
				Status: status, ExitCode: exitCode, DurationMS: duration, Usage: res.Agent.Usage, CostUSD: res.Agent.CostUSD,
			}}})
	return tree{Events: out, Untimed: untimed}
}
