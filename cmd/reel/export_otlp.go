package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/reelhq/reel/internal/index"
	"github.com/reelhq/reel/internal/otlp"
	"github.com/reelhq/reel/internal/runs"
	"github.com/reelhq/reel/transcript"
	"github.com/reelhq/reel/transcript/secrets"
)

// formatOTLP is reel export's --to for OpenTelemetry collectors.
const formatOTLP = "otlp"

// otlpExportOptions are reel export --to otlp's own flags.
type otlpExportOptions struct {
	otel        otelFlags
	all         bool
	since       string
	maskSecrets bool
}

func addOTLPExportFlags(cmd *cobra.Command, o *otlpExportOptions) {
	cmd.Flags().BoolVar(&o.all, "all", false, "otlp: export every run in the storage")
	cmd.Flags().StringVar(&o.since, "since", "", "otlp: export the runs started at or after `T` (RFC 3339, 2006-01-02, or a duration before now such as 24h), as reel runs --since")
	cmd.Flags().StringVar(&o.otel.exporter, "otel-exporter", "", "otlp: the collector at `HOST:PORT` or URL (default: OTEL_EXPORTER_OTLP_ENDPOINT, the project's telemetry.exporter, else localhost:4317)")
	cmd.Flags().StringVar(&o.otel.serviceName, "otel-service-name", "", "otlp: "+otelServiceNameUsage)
	cmd.Flags().BoolVar(&o.otel.content, "otel-content", false, "otlp: "+otelContentUsage)
	cmd.Flags().BoolVar(&o.maskSecrets, "mask-secrets", false, "mask secret-looking environment values and key shapes in what is written or sent (every format)")
}

// otlpExported is what `reel export --to otlp --json` prints.
type otlpExported struct {
	Endpoint string        `json:"endpoint"`
	Runs     []otlpRunDone `json:"runs"`
	Spans    int           `json:"spans"`
	Warnings []string      `json:"warnings,omitempty"`
}

// otlpRunDone is one exported run (with its child runs).
type otlpRunDone struct {
	RunID    string   `json:"run_id"`
	TraceID  string   `json:"trace_id"`
	Spans    int      `json:"spans"`
	Children []string `json:"child_run_ids,omitempty"`
}

// otlpCandidate is a run selected for export.
type otlpCandidate struct {
	path, id, parent string
	started          time.Time
}

// runExportOTLP sends runs to an OpenTelemetry collector: the named ones,
// or every one (--all) or every one started since a time (--since). A
// child run goes with its parent when both are selected, and alone, in
// its parent's trace, when only it is.
func runExportOTLP(cmd *cobra.Command, refs []string, json bool, storageFlag string, o *otlpExportOptions) error {
	since, err := o.check(refs)
	if err != nil {
		return err
	}
	proj, err := findProject()
	if err != nil {
		return err
	}
	ep, err := otlp.Resolve(o.otel.exporter, proj.Config.Telemetry.Exporter, os.Getenv)
	if err != nil {
		return &exitError{code: 2, msg: "export --to otlp: " + err.Error()}
	}
	var cands []otlpCandidate
	if o.all || o.since != "" {
		cands, err = listOTLPRuns(cmd, storageFlag, since)
	} else {
		cands, err = namedOTLPRuns(runs.NewStore(proj.Storage(storageFlag), runs.Options{}), refs)
	}
	if err != nil {
		return err
	}
	cands = withoutSelectedChildren(cands)
	if err := ep.Probe(cmd.Context()); err != nil {
		// nothing was sent: the export's failure (1), as when the collector
		// goes away mid-export, not a usage error
		return &exitError{code: 1, msg: fmt.Sprintf("export --to otlp: %v (0 of %d runs sent before the error)", err, len(cands))}
	}
	cfg := otlp.Config{
		Endpoint: ep, ServiceName: o.otel.serviceName, DefaultServiceName: proj.Config.Telemetry.ServiceName,
		Version: versionString(), Content: o.otel.content, Prices: proj.Prices(),
	}
	if o.maskSecrets {
		cfg.Masker = secrets.NewMasker(os.Environ())
	}
	ctx := cmd.Context()
	b, err := otlp.NewBatch(ctx, cfg)
	if err != nil {
		return &exitError{code: 2, msg: "export --to otlp: " + err.Error()}
	}
	errw := cmd.ErrOrStderr()
	prog := newOTLPProgress(errw, len(cands))
	b.Progress = prog.spans
	start := time.Now()
	res := otlpExported{Endpoint: ep.String()}
	exportErr := exportOTLPRuns(ctx, b, cands, prog, &res)
	prog.clear()
	shutdownErr := b.Shutdown(ctx)
	if exportErr != nil {
		for _, w := range res.Warnings {
			fmt.Fprintf(errw, "reel: export: warning: %s\n", w)
		}
		return &exitError{code: 1, msg: fmt.Sprintf("export: %v (%d of %d runs sent before the error)", exportErr, len(res.Runs), len(cands))}
	}
	if shutdownErr != nil && !errors.Is(shutdownErr, ctx.Err()) {
		res.Warnings = append(res.Warnings, "closing the exporter: "+shutdownErr.Error())
	}
	if json {
		return writeJSON(cmd.OutOrStdout(), res)
	}
	writeOTLPExported(cmd.OutOrStdout(), errw, &res)
	fmt.Fprintf(errw, "exported %d runs, %d spans to %s in %s\n", len(res.Runs), res.Spans, ep, time.Since(start).Round(time.Millisecond))
	return nil
}

// check refuses a selection that names runs and asks for --all or
// --since too, or none at all, and reads --since.
func (o *otlpExportOptions) check(refs []string) (since time.Time, err error) {
	if o.since == "" && !o.all && len(refs) == 0 {
		return since, &exitError{code: 2, msg: "export --to otlp: name runs, or give --all or --since"}
	}
	if len(refs) > 0 && (o.all || o.since != "") {
		return since, &exitError{code: 2, msg: "export --to otlp: name runs or give --all/--since, not both"}
	}
	if o.since != "" {
		if since, err = parseWhen(o.since, time.Now()); err != nil {
			return since, &exitError{code: 2, msg: "export --to otlp: --since: " + err.Error()}
		}
	}
	return since, nil
}

// exportOTLPRuns sends each candidate with its child runs through b,
// adding what it sent and the warnings met to res; the error is the
// export's, which ends it.
func exportOTLPRuns(ctx context.Context, b *otlp.Batch, cands []otlpCandidate, prog *otlpProgress, res *otlpExported) error {
	done := map[string]bool{}
	for i, c := range cands {
		if done[c.id] {
			continue
		}
		prog.run(i + 1)
		src := runs.Open(c.path, runs.Options{})
		fam, err := src.ReadFamily()
		if err != nil {
			res.Warnings = append(res.Warnings, fmt.Sprintf("run %s: %v", c.id, err))
			continue
		}
		events, order := fam.Events, fam.Order
		run := otlp.Run{Events: events, Children: fam.Children}
		if events[0].ParentRunID != "" {
			run.Link = otlpParentLink(src, events[0])
		}
		res.Warnings = append(res.Warnings, src.Warnings().Strings()...)
		n, err := b.Export(ctx, run)
		tid := run.Link.Trace
		if !tid.IsValid() {
			tid, _ = otlp.TraceID(events[0].RunID)
		}
		res.Spans += n
		if err != nil {
			return err
		}
		done[c.id] = true
		for _, id := range order {
			done[id] = true
		}
		res.Runs = append(res.Runs, otlpRunDone{RunID: c.id, TraceID: tid.String(), Spans: n, Children: order})
	}
	return nil
}

// writeOTLPExported prints the warnings to errw and each run sent, with
// its trace id and span count, to out.
func writeOTLPExported(out, errw io.Writer, res *otlpExported) {
	for _, w := range res.Warnings {
		fmt.Fprintf(errw, "reel: export: warning: %s\n", w)
	}
	for _, r := range res.Runs {
		line := fmt.Sprintf("%s  trace %s  %d spans", r.RunID, r.TraceID, r.Spans)
		switch len(r.Children) {
		case 0:
		case 1:
			line += " (with 1 child run)"
		default:
			line += fmt.Sprintf(" (with %d child runs)", len(r.Children))
		}
		fmt.Fprintln(out, line)
	}
}

// listOTLPRuns lists the runs of the storage started at or after since
// (every run when since is zero), oldest first, from the run index as reel
// runs does.
func listOTLPRuns(cmd *cobra.Command, storageFlag string, since time.Time) ([]otlpCandidate, error) {
	ix, err := openIndex(cmd, storageFlag)
	if err != nil {
		return nil, err
	}
	defer ix.Close()
	list, err := ix.ListAll(cmd.Context(), index.Filter{Since: since}, 0)
	if err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	cands := make([]otlpCandidate, 0, len(list))
	for _, r := range list {
		cands = append(cands, otlpCandidate{path: r.Path, id: r.RunID, parent: r.ParentRunID, started: r.Started})
	}
	slices.Reverse(cands) // the index lists newest first
	return cands, nil
}

// namedOTLPRuns resolves the runs named on the command line.
func namedOTLPRuns(store *runs.Store, refs []string) ([]otlpCandidate, error) {
	var cands []otlpCandidate
	for _, ref := range refs {
		r, err := store.Find(ref)
		if err != nil {
			return nil, fmt.Errorf("export: %w", err)
		}
		first, err := r.First()
		if err != nil {
			return nil, fmt.Errorf("export: %w", err)
		}
		cands = append(cands, otlpCandidate{path: r.Path, id: first.RunID, parent: first.ParentRunID, started: first.Timestamp})
	}
	return cands, nil
}

// withoutSelectedChildren leaves out child runs whose parent is selected
// too: they are exported with it.
func withoutSelectedChildren(cands []otlpCandidate) []otlpCandidate {
	selected := map[string]bool{}
	for _, c := range cands {
		selected[c.id] = true
	}
	kept := cands[:0]
	for _, c := range cands {
		if c.parent == "" || !selected[c.parent] {
			kept = append(kept, c)
		}
	}
	return kept
}

// otlpParentLink places a child run exported without its parent: in its
// top-level run's trace, under the call_workflow step that started it,
// reading the ancestors' transcripts beside it (as far as runs.MaxDepth).
// Without the parent's transcript the run becomes a root span of the trace
// named after its parent.
func otlpParentLink(run *runs.Run, first transcript.ExchangeEvent) otlp.Link {
	parentID := first.ParentRunID
	tid, err := otlp.TraceID(parentID)
	if err != nil {
		run.Warnings().Addf("run %s: parent run id: %v", first.RunID, err)
		return otlp.Link{}
	}
	fallback := otlp.Link{Trace: tid}
	pr, err := run.Parent(parentID)
	if err != nil {
		return fallback
	}
	parent, err := pr.ReadAll()
	if err != nil {
		run.Warnings().Addf("run %s: parent run %s not found (%v): exported as a root span of trace %s", first.RunID, parentID, err, tid)
		return fallback
	}
	var plink otlp.Link
	if parent[0].ParentRunID != "" {
		plink = otlpParentLink(pr, parent[0])
	}
	if l, ok := otlp.ChildLink(parent, plink, first.RunID); ok {
		return l
	}
	if plink.Trace.IsValid() {
		return otlp.Link{Trace: plink.Trace}
	}
	return fallback
}

// otlpProgress shows the export's progress on a terminal, at most ten
// times a second. The batch exporter reports sent spans from its sending
// goroutine.
type otlpProgress struct {
	w     io.Writer
	on    bool
	mu    sync.Mutex
	total int
	n     int
	sent  int
	last  time.Time
}

func newOTLPProgress(w io.Writer, total int) *otlpProgress {
	return &otlpProgress{w: w, on: isTerminal(w), total: total}
}

func (p *otlpProgress) run(n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.n = n
	p.show()
}

func (p *otlpProgress) spans(sent int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.sent = sent
	p.show()
}

func (p *otlpProgress) show() {
	if !p.on || time.Since(p.last) < 100*time.Millisecond {
		return
	}
	p.last = time.Now()
	fmt.Fprintf(p.w, "\r\033[Kexporting run %d/%d, %d spans sent", p.n, p.total, p.sent)
}

func (p *otlpProgress) clear() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.on && !p.last.IsZero() {
		fmt.Fprint(p.w, "\r\033[K")
	}
}
