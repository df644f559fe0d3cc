package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/reelhq/reel/internal/agentlog"
	"github.com/reelhq/reel/internal/flowstudio"
	"github.com/reelhq/reel/internal/importer"
	"github.com/reelhq/reel/internal/runs"
	"github.com/reelhq/reel/internal/safefile"
	"github.com/reelhq/reel/internal/shadowstore"
	"github.com/reelhq/reel/transcript"
	"github.com/reelhq/reel/transcript/secrets"
	"github.com/spf13/cobra"
)

type exportOptions struct {
	to          string
	storage     string
	store       bool
	json        bool
	maskSecrets bool
	force       bool
}

// exported is what `reel export --json` prints.
type exported struct {
	RunID  string   `json:"run_id"`
	Format string   `json:"format"`
	Dir    string   `json:"dir"`
	Files  []string `json:"files"`
	// FlowStudioRunID is the id of the written Flow Studio run.
	FlowStudioRunID string   `json:"flowstudio_run_id,omitempty"`
	Warnings        []string `json:"warnings,omitempty"`
}

func newExportCmd() *cobra.Command {
	var o exportOptions
	var oo otlpExportOptions
	cmd := &cobra.Command{
		Use:   "export RUN --to flowstudio|agentlog DIR | export [RUN…|--all|--since T] --to otlp",
		Short: "Write a run as a Flow Studio run directory or Shadow .agentlog traces, or send runs to an OpenTelemetry collector",
		Long: `Export a run (id, unique prefix, or transcript file) and the child runs its
call_workflow steps started, read from the same directory.

--to flowstudio writes a Flow Studio run directory at DIR: meta.json,
spec.json, events.jsonl, and per agent step <flow>/llm/<step_id>-<agent_key>-<engine>.jsonl
and <flow>/receipts/<step_id>-<agent_key>.json. Each child run is a flow of
its own; spec.json's params.reel_children names the step that started it,
so reel import --from flowstudio restores the child runs.

--to agentlog writes one content-addressed .agentlog trace per run into DIR
(<run-id>.agentlog); with --store, DIR is a project directory and the traces go
into Shadow's store, DIR/.shadow/traces/<id[0:2]>/<id[2:]>.agentlog, registered
in DIR/.shadow/index.sqlite.

--to otlp sends runs (with their child runs) to an OpenTelemetry collector
as traces in the GenAI semantic conventions: the runs named, every run
(--all), or those started since a time (--since). The collector is
OTEL_EXPORTER_OTLP_ENDPOINT (or --otel-exporter, or the project's
telemetry.exporter), over OTEL_EXPORTER_OTLP_PROTOCOL (grpc, the default,
or http/protobuf) with OTEL_EXPORTER_OTLP_HEADERS. Trace and span ids
derive from the run ids, so exporting a run again, or after a live export
(reel run --otel-exporter), gives the same ids. See docs/opentelemetry.md.

Every file is written whole (beside its name, synced, renamed over it), 0600
in directories created 0700, and never through a symlink found at its name.
A Flow Studio DIR must be new or empty, and an .agentlog file must not exist
yet, unless --force says to replace what is there.`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			switch o.to {
			case formatOTLP:
				return runExportOTLP(cmd, args, o.json, o.storage, &oo)
			case importer.FlowStudio, importer.Agentlog:
				if len(args) != 2 {
					return &exitError{code: 2, msg: fmt.Sprintf("export --to %s takes RUN and DIR (%d arguments given)", o.to, len(args))}
				}
			case "":
				return &exitError{code: 2, msg: "export: --to is required (flowstudio, agentlog or otlp)"}
			default:
				return &exitError{code: 2, msg: fmt.Sprintf("export: unknown format %q (want flowstudio, agentlog or otlp)", o.to)}
			}
			o.maskSecrets = oo.maskSecrets // one --mask-secrets for every format
			return runExport(cmd, args[0], args[1], &o)
		},
	}
	cmd.Flags().StringVar(&o.to, "to", "", "format to write: flowstudio, agentlog or otlp")
	cmd.Flags().StringVar(&o.storage, "storage", "", storageUsage)
	cmd.Flags().BoolVar(&o.store, "store", false, "agentlog: write into Shadow's .shadow/ store and SQLite index under DIR")
	cmd.Flags().BoolVar(&o.json, "json", false, "print what was written as JSON")
	addOTLPExportFlags(cmd, &oo)
	cmd.Flags().BoolVar(&o.force, "force", false, "write into a non-empty DIR, replacing files of the same names")
	return cmd
}

func runExport(cmd *cobra.Command, ref, dir string, o *exportOptions) error {
	if err := o.check(dir); err != nil {
		return err
	}
	storage, err := storageDir(o.storage)
	if err != nil {
		return err
	}
	run, err := runs.NewStore(storage, runs.Options{}).Find(ref)
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	fam, err := run.ReadFamily()
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	events, children := fam.Events, fam.Children
	warnings := run.Warnings().Strings()
	if o.maskSecrets {
		m := secrets.NewMasker(os.Environ())
		maskEvents(m, events)
		for _, evs := range children {
			maskEvents(m, evs)
		}
	}
	res := exported{RunID: events[0].RunID, Format: o.to, Dir: dir, Warnings: warnings}
	switch o.to {
	case importer.FlowStudio:
		fr, err := flowstudio.Export(dir, flowstudio.Run{Events: events, Children: children})
		if err != nil {
			return fmt.Errorf("export: %w", err)
		}
		res.FlowStudioRunID = fr.RunID
		res.Files = append(append([]string{filepath.Join(dir, "meta.json"), filepath.Join(dir, "spec.json"), filepath.Join(dir, "events.jsonl")},
			fr.Transcripts...), fr.Receipts...)
	case importer.Agentlog:
		all := [][]transcript.ExchangeEvent{events}
		for _, id := range fam.Order {
			all = append(all, children[id])
		}
		if res.Files, err = o.writeAgentlogs(cmd, dir, all); err != nil {
			return err
		}
	}
	return o.print(cmd, res)
}

// check refuses a format, --store or a Flow Studio DIR that cannot be
// written, before anything is read.
func (o *exportOptions) check(dir string) error {
	switch o.to {
	case importer.FlowStudio, importer.Agentlog:
	case "":
		return &exitError{code: 2, msg: "export: --to is required (flowstudio, agentlog or otlp)"}
	default:
		return &exitError{code: 2, msg: fmt.Sprintf("export: unknown format %q (want flowstudio, agentlog or otlp)", o.to)}
	}
	if o.store && o.to != importer.Agentlog {
		return &exitError{code: 2, msg: "export: --store applies to --to agentlog only"}
	}
	if o.to == importer.FlowStudio {
		if err := safefile.CheckTarget(dir, o.force); err != nil {
			return &exitError{code: 1, msg: fmt.Sprintf("export: %v", err)}
		}
	}
	return nil
}

// writeAgentlogs writes one .agentlog trace per run (the exported run,
// then its children) into dir, or into Shadow's store under dir with
// --store, and returns the files written.
func (o *exportOptions) writeAgentlogs(cmd *cobra.Command, dir string, all [][]transcript.ExchangeEvent) ([]string, error) {
	var traces [][]agentlog.Record
	for _, evs := range all {
		recs, err := agentlog.FromTranscript(evs, agentlog.ExportOptions{SDKVersion: version})
		if err != nil {
			return nil, fmt.Errorf("export: run %s: %w", evs[0].RunID, err)
		}
		traces = append(traces, recs)
	}
	if o.store {
		paths, err := shadowstore.Put(cmd.Context(), dir, traces)
		if err != nil {
			return nil, fmt.Errorf("export: %w", err)
		}
		return append(paths, shadowstore.IndexPath(dir)), nil
	}
	if !o.force {
		for i := range traces {
			p := filepath.Join(dir, all[i][0].RunID+".agentlog")
			if _, err := os.Lstat(p); err == nil {
				return nil, &exitError{code: 1, msg: fmt.Sprintf("export: %s exists (--force replaces it)", p)}
			}
		}
	}
	var files []string
	for i, recs := range traces {
		p := filepath.Join(dir, all[i][0].RunID+".agentlog")
		if err := agentlog.WriteFile(p, recs); err != nil {
			return nil, fmt.Errorf("export: %w", err)
		}
		files = append(files, p)
	}
	return files, nil
}

// print says what was written: the files, one a line, or as JSON.
func (o *exportOptions) print(cmd *cobra.Command, res exported) error {
	out := cmd.OutOrStdout()
	if o.json {
		return writeJSON(out, res)
	}
	for _, w := range res.Warnings {
		fmt.Fprintf(cmd.ErrOrStderr(), "reel: export: warning: %s\n", w)
	}
	if res.FlowStudioRunID != "" {
		fmt.Fprintf(out, "%s  %s  flowstudio %s\n", res.RunID, res.Dir, res.FlowStudioRunID)
	}
	for _, f := range res.Files {
		fmt.Fprintln(out, f)
	}
	return nil
}

// maskEvents masks every event in place, as the recorder does with
// --mask-secrets.
func maskEvents(m *secrets.Masker, events []transcript.ExchangeEvent) {
	for i := range events {
		m.MaskEvent(&events[i])
	}
}
