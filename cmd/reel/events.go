package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/reelhq/reel/internal/query"
	"github.com/reelhq/reel/internal/runs"
	"github.com/reelhq/reel/internal/warn"
	"github.com/reelhq/reel/transcript"
	"github.com/spf13/cobra"
)

// eventsOptions are the flags of `reel events`.
type eventsOptions struct {
	refs         runRefFlags
	types        []string
	fields       []string
	f            query.Filter
	fidelity     string
	since, until string
	asJSON       bool
	all          bool
	workflow     string
}

func newEventsCmd() *cobra.Command {
	var o eventsOptions
	cmd := &cobra.Command{
		Use:   "events FILE|RUN...|--latest|--all",
		Short: "Filter and project events across transcripts, fast",
		Long: `Print the events of one or many transcripts that match every filter given,
as JSON lines, or only the --field values (strings unquoted, like jq -r;
several fields tab-separated; a missing field prints null).

Lines are judged from their raw bytes: only a --fidelity filter decodes an
event, so filtering by type, path and time runs at disk speed.

  --type T        event type; repeat or separate with commas
  --path GLOB     step path; '*' matches within one dot-separated segment
  --since/--until RFC 3339 time, a date (2006-01-02), or a duration ago (15m)
  --field PATH    dotted path into the event: payload.name, payload.blocks.0.text

--all reads every run of the storage, in order of start; the run index
(<storage>/index.db) picks them, so with --since/--until only the runs
active in that window are read, and --workflow keeps the runs of one
workflow.`,
		RunE: func(cmd *cobra.Command, args []string) error { return runEvents(cmd, args, &o) },
	}
	o.refs.register(cmd)
	fl := cmd.Flags()
	fl.StringSliceVar(&o.types, "type", nil, "keep events of this type (repeatable, comma-separated)")
	fl.StringVar(&o.f.PathGlob, "path", "", "keep events whose step path matches this glob")
	fl.StringVar(&o.fidelity, "fidelity", "", "keep tool events and messages of this fidelity (router, agent_emitted)")
	fl.StringVar(&o.since, "since", "", "keep events at or after this time")
	fl.StringVar(&o.until, "until", "", "keep events before this time")
	fl.StringArrayVar(&o.fields, "field", nil, "print this dotted field instead of the event (repeatable)")
	fl.BoolVar(&o.asJSON, "json", false, "print --field values as JSON")
	fl.BoolVar(&o.all, "all", false, "read every run of the storage (picked through the run index)")
	fl.StringVar(&o.workflow, "workflow", "", "with --all: only the runs of this workflow")
	return cmd
}

func runEvents(cmd *cobra.Command, args []string, o *eventsOptions) error {
	var err error
	if o.workflow != "" && !o.all {
		return &exitError{code: 2, msg: "--workflow selects runs for --all; name runs or use --all"}
	}
	now := time.Now()
	if o.f.Since, err = parseWhen(o.since, now); err != nil {
		return fmt.Errorf("--since: %w", err)
	}
	if o.f.Until, err = parseWhen(o.until, now); err != nil {
		return fmt.Errorf("--until: %w", err)
	}
	var list []*runs.Run
	if o.all {
		if len(args) > 0 || o.refs.latest {
			return &exitError{code: 2, msg: "--all reads every run: name no runs and no --latest with it"}
		}
		ix, err := openIndex(cmd, o.refs.storage)
		if err != nil {
			return err
		}
		paths, err := ix.Active(cmd.Context(), o.workflow, o.f.Since, o.f.Until)
		ix.Close()
		if err != nil {
			return err
		}
		for _, p := range paths {
			list = append(list, runs.Open(p, runs.Options{}))
		}
	} else if list, err = o.refs.resolve(args, 0); err != nil {
		return err
	}
	for _, t := range o.types {
		for _, s := range strings.Split(t, ",") {
			if s = strings.TrimSpace(s); s != "" {
				o.f.Types = append(o.f.Types, transcript.EventType(s))
			}
		}
	}
	o.f.Fidelity = transcript.Fidelity(o.fidelity)
	_, err = query.Events(cmd.Context(), cmd.OutOrStdout(), list, o.f, query.Projection{Fields: o.fields, JSON: o.asJSON})
	if err != nil {
		return err
	}
	var warns warn.List
	for _, r := range list {
		warns.Merge(r.Warnings())
	}
	return reportWarnings(cmd, warns.Strings())
}
