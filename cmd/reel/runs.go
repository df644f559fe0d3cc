package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/reelhq/reel/internal/runstore"
	"github.com/reelhq/reel/transcript"
)

// runSummary is one line of `reel runs`.
type runSummary struct {
	RunID       string    `json:"run_id"`
	ParentRunID string    `json:"parent_run_id,omitempty"`
	Workflow    string    `json:"workflow"`
	Status      string    `json:"status"`
	ExitCode    *int      `json:"exit_code,omitempty"`
	Started     time.Time `json:"started"`
	DurationMS  int64     `json:"duration_ms"`
	Tokens      int64     `json:"tokens"`
	Error       string    `json:"error,omitempty"`
	Path        string    `json:"path"`
}

func newRunsCmd() *cobra.Command {
	var storage string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "runs",
		Short: "List the runs in the storage (id, workflow, status, started, duration, tokens)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			dir, err := storageDir(storage)
			if err != nil {
				return err
			}
			paths, err := runstore.New(dir).All()
			if err != nil {
				return &exitError{code: 1, msg: err.Error()}
			}
			runs := make([]runSummary, 0, len(paths))
			for _, p := range paths {
				s, err := summarize(p)
				if err != nil {
					fmt.Fprintf(cmd.ErrOrStderr(), "reel: %s: %v\n", p, err)
					continue
				}
				runs = append(runs, s)
			}
			sort.SliceStable(runs, func(i, j int) bool { return runs[i].Started.After(runs[j].Started) })
			out := cmd.OutOrStdout()
			if asJSON {
				return writeJSON(out, runs)
			}
			tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "RUN ID\tWORKFLOW\tSTATUS\tSTARTED\tDURATION\tTOKENS")
			for _, r := range runs {
				name := r.Workflow
				if r.ParentRunID != "" {
					name = "↳ " + name
				}
				dur := "-"
				if r.Status != "incomplete" {
					dur = (time.Duration(r.DurationMS) * time.Millisecond).String()
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\n", r.RunID, name, r.Status, r.Started.Local().Format("2006-01-02 15:04:05"), dur, r.Tokens)
			}
			return tw.Flush()
		},
	}
	cmd.Flags().StringVar(&storage, "storage", "", storageUsage)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

// tailSize is how much of a transcript's end is read to find run.completed,
// which is a short line.
const tailSize = 64 << 10

// summarize reads a transcript's first event and its last line, so listing
// many long transcripts stays fast.
func summarize(path string) (runSummary, error) {
	f, err := os.Open(path)
	if err != nil {
		return runSummary{}, err
	}
	defer f.Close()
	rd := transcript.NewReader(f)
	first, err := rd.Next()
	if err != nil && !errors.Is(err, transcript.ErrUnknownEventType) {
		return runSummary{}, fmt.Errorf("first event: %w", err)
	}
	s := runSummary{RunID: first.RunID, ParentRunID: first.ParentRunID, Started: first.Timestamp, Status: "incomplete", Path: path}
	if p := first.Step(); p != nil {
		s.Workflow = p.Name
	}
	st, err := f.Stat()
	if err != nil {
		return s, err
	}
	off := max(st.Size()-tailSize, 0)
	buf := make([]byte, st.Size()-off)
	if _, err := f.ReadAt(buf, off); err != nil && err != io.EOF {
		return s, err
	}
	buf = bytes.TrimRight(buf, "\n")
	if i := bytes.LastIndexByte(buf, '\n'); i >= 0 {
		buf = buf[i+1:]
	}
	last, err := transcript.DecodeEvent(buf)
	if err != nil || last.Type != transcript.RunCompleted {
		s.DurationMS = max(0, last.Timestamp.Sub(s.Started).Milliseconds())
		return s, nil
	}
	var res transcript.RunResult
	if p := last.Step(); p != nil {
		if err := transcript.DecodeResult(p.Result, &res); err == nil {
			s.Status, s.DurationMS, s.Tokens = res.Status, res.DurationMS, res.Usage.TotalTokens
			ec := res.ExitCode
			s.ExitCode = &ec
		}
		s.Error = p.Error
	}
	return s, nil
}
