package main

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/reelhq/reel/internal/importstore"
	"github.com/reelhq/reel/internal/normalize"
	"github.com/reelhq/reel/internal/runstatus"
	"github.com/reelhq/reel/internal/safefile"
	"github.com/reelhq/reel/transcript"
)

// importFile normalizes one recording and writes it as a transcript,
// unless an earlier import of the same source has the same content.
func importFile(path string, format normalize.Format, dir string, o *importOptions) (*importedRun, error) {
	src, err := importstore.Identify(path, string(format))
	if err != nil {
		return nil, err
	}
	outcome, prior, err := importstore.Check(dir, src)
	if err != nil {
		return nil, err
	}
	runID := src.RunID()
	if outcome == importstore.Unchanged {
		return &importedRun{File: path, Format: string(format), RunID: runID, Transcript: filepath.Join(dir, runID+".jsonl"),
			Outcome: outcome}, nil
	}
	f, err := safefile.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var events []transcript.ExchangeEvent
	p, err := normalize.NewParser(format, func(ev transcript.ExchangeEvent) error {
		events = append(events, ev)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if _, err := io.Copy(p, f); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	res, err := p.Close("recording ended")
	if err != nil {
		return nil, err
	}
	if len(events) == 0 && !res.IsError && res.Agent.Usage.TotalTokens == 0 && len(res.Warnings) == 0 &&
		res.Agent.SessionID == "" && res.Agent.Model == "" {
		msg := fmt.Sprintf("no %s content found", format)
		if len(res.Agent.Skipped) > 0 {
			msg += " (skipped: " + normalize.SkippedSummary(res.Agent.Skipped) + ")"
		}
		return nil, errors.New(msg)
	}
	// Read whole, a recording's text goes before the tool calls it
	// introduced.
	events = normalize.TextFirst(events)
	st, err := importstore.NewStage(dir)
	if err != nil {
		return nil, err
	}
	r, err := writeImported(src, st.Dir(), runID, events, res, time.Now, o)
	if err != nil {
		st.Abort()
		return nil, err
	}
	if err := st.Commit(prior, nil); err != nil {
		st.Abort()
		return nil, err
	}
	r.File = path
	r.Transcript = st.Final(r.Transcript)
	r.Outcome = outcome
	return r, nil
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
		title = res.Prompt
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

// writeImported records the run around the normalized events. Events the
// provider gave no time carry the previous event's time, so the transcript
// stays in the provider's timeline; before the first provider time they get
// the first one, and a recording without any time gets the import time.
func writeImported(src importstore.Source, dir, runID string, events []transcript.ExchangeEvent, res *normalize.Result, now func() time.Time, o *importOptions) (*importedRun, error) {
	format := normalize.Format(src.Format)
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
	if first.IsZero() {
		first = now()
		last = first
	}
	rec, err := transcript.Create(dir, runID, transcript.Options{Masker: o.masker()})
	if err != nil {
		return nil, fmt.Errorf("create transcript: %w", err)
	}
	name := runName(res, src.Path, format)
	const stepPath = "agent"
	record := func(ev transcript.ExchangeEvent) error {
		_, err := rec.Record(ev)
		return err
	}
	out := &importedRun{File: src.Path, Format: string(format), RunID: runID, Transcript: rec.Path(), Name: name}
	status, exitCode := runstatus.Success, 0
	if res.IsError {
		status, exitCode = runstatus.Failure, 1
	}
	duration := res.Agent.DurationMS
	if duration == 0 {
		duration = last.Sub(first).Milliseconds()
	}
	err = func() error {
		if err := record(transcript.ExchangeEvent{Type: transcript.RunStarted, Timestamp: first,
			Payload: &transcript.StepPayload{Name: name, Kind: transcript.KindWorkflow, Result: src.Result()}}); err != nil {
			return err
		}
		if err := record(transcript.ExchangeEvent{Type: transcript.StepStarted, Path: stepPath, Timestamp: first,
			Payload: &transcript.StepPayload{Name: stepPath, Kind: transcript.KindAgent}}); err != nil {
			return err
		}
		ts := first
		for _, ev := range events {
			if ev.Timestamp.IsZero() {
				ev.Timestamp = ts
			} else {
				ts = ev.Timestamp
			}
			ev.Path = stepPath
			switch ev.Type {
			case transcript.MessageUser, transcript.MessageAssistant:
				out.Messages++
			case transcript.ToolCall:
				out.ToolCalls++
			}
			if err := record(ev); err != nil {
				return err
			}
		}
		errMsg := ""
		if res.IsError {
			errMsg = res.Error
		}
		if err := record(transcript.ExchangeEvent{Type: transcript.StepCompleted, Path: stepPath, Timestamp: last,
			Payload: &transcript.StepPayload{Name: stepPath, Kind: transcript.KindAgent, Error: errMsg, Result: res.Agent}}); err != nil {
			return err
		}
		return record(transcript.ExchangeEvent{Type: transcript.RunCompleted, Timestamp: last,
			Payload: &transcript.StepPayload{Name: name, Kind: transcript.KindWorkflow, Error: errMsg, Result: transcript.RunResult{
				Status: status, ExitCode: exitCode, DurationMS: duration, Usage: res.Agent.Usage, CostUSD: res.Agent.CostUSD,
			}}})
	}()
	if cerr := rec.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("write transcript %s: %w", rec.Path(), err)
	}
	out.Status = status
	out.Skipped = res.Agent.Skipped
	out.Warnings = res.Warnings
	return out, nil
}
