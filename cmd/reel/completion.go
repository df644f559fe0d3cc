package main

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/reelhq/reel/internal/index"
	"github.com/reelhq/reel/internal/normalize"
	"github.com/reelhq/reel/internal/pricing"
	"github.com/reelhq/reel/internal/rerun"
	"github.com/reelhq/reel/internal/runs"
)

// Shell completion (reel completion bash|zsh|fish|powershell, cobra's)
// completes run ids, newest first with their workflow and status, for every
// command that takes a run; workflow names for run, validate and diagram;
// the formats of import --from and export --to; state names for run --step,
// --breakpoint and resume --from.

// runIDCommands take runs as arguments.
var runIDCommands = []string{"tree", "replay", "tail", "tools", "events", "stats", "diff", "export", "verify"}

func addCompletions(root *cobra.Command) {
	for _, c := range root.Commands() {
		switch {
		case contains(runIDCommands, c.Name()) && c.ValidArgsFunction == nil:
			c.ValidArgsFunction = completeRunIDs
		case c.Name() == "validate" && c.ValidArgsFunction == nil:
			c.ValidArgsFunction = completeWorkflows
		}
		switch c.Name() {
		case "import":
			formats := []string{"auto\tdetect the format of each file", "flowstudio\tFlow Studio run directory", "agentlog\tShadow .agentlog trace"}
			for _, f := range normalize.Formats() {
				formats = append(formats, string(f))
			}
			_ = c.RegisterFlagCompletionFunc("from", cobra.FixedCompletions(formats, cobra.ShellCompDirectiveNoFileComp))
		case "export":
			_ = c.RegisterFlagCompletionFunc("to", cobra.FixedCompletions([]string{"flowstudio\tFlow Studio run directory", "agentlog\tShadow .agentlog traces"}, cobra.ShellCompDirectiveNoFileComp))
		case "run":
			_ = c.RegisterFlagCompletionFunc("replay-from", completeRunIDs)
			_ = c.RegisterFlagCompletionFunc("step", completeWorkflowStates)
			_ = c.RegisterFlagCompletionFunc("breakpoint", completeWorkflowStates)
		}
	}
}

// completeRunIDs offers the storage's top-level run ids, newest first,
// from the run index when the storage has one (a query, however many runs
// there are), else from the transcripts.
func completeRunIDs(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	flag := ""
	if f := cmd.Flag("storage"); f != nil {
		flag = f.Value.String()
	}
	dir, err := storageDir(flag)
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var list []runs.Summary
	prices, err := priceTable()
	if err == nil {
		// The project's prices: runs the index has not seen yet are
		// indexed as reel runs would index them.
		list, err = indexedRuns(cmd.Context(), dir, prices)
	}
	if err != nil {
		list, err = scannedRuns(dir)
	}
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	out := make([]string, 0, len(list))
	for _, r := range list {
		if r.ParentRunID == "" && strings.HasPrefix(r.RunID, toComplete) {
			out = append(out, fmt.Sprintf("%s\t%s %s %s", r.RunID, r.Workflow, r.Status, r.Started.Local().Format("2006-01-02 15:04")))
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveKeepOrder
}

// indexedRuns lists the runs of the storage's index, newest first. A
// storage without an index is an error: completion does not build one (the
// first build reads every transcript, too slow for a key press).
func indexedRuns(ctx context.Context, storage string, prices *pricing.Table) ([]runs.Summary, error) {
	if _, err := os.Stat(index.Path(storage)); err != nil {
		return nil, err
	}
	if err := checkIndex(storage); err != nil {
		return nil, err
	}
	if ctx == nil {
		ctx = context.Background()
	}
	ix, err := index.Open(ctx, storage, index.WithPrices(prices))
	if err != nil {
		return nil, err
	}
	defer ix.Close()
	var list []runs.Summary
	f := index.Filter{Limit: 1000}
	for {
		page, err := ix.List(ctx, f)
		if err != nil {
			return nil, err
		}
		for _, r := range page.Runs {
			list = append(list, runs.Summary{RunID: r.RunID, ParentRunID: r.ParentRunID, Workflow: r.Workflow, Status: r.Status, Started: r.Started})
		}
		if page.Next == "" {
			return list, nil
		}
		f.After = page.Next
	}
}

// scannedRuns summarises every transcript of the storage, newest first.
func scannedRuns(storage string) ([]runs.Summary, error) {
	all, err := runs.NewStore(storage, runs.Options{}).All()
	if err != nil {
		return nil, err
	}
	var list []runs.Summary
	for _, r := range all {
		if s, err := r.Summarize(); err == nil {
			list = append(list, s)
		}
	}
	sort.SliceStable(list, func(i, j int) bool { return list[i].Started.After(list[j].Started) })
	return list, nil
}

// completeWorkflows offers the project's workflow names; files complete as
// usual.
func completeWorkflows(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 && cmd.Name() != "validate" {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	p, err := findProject()
	if err != nil {
		return nil, cobra.ShellCompDirectiveDefault
	}
	var out []string
	for _, n := range workflowNames(p) {
		if strings.HasPrefix(n, toComplete) {
			out = append(out, n)
		}
	}
	return out, cobra.ShellCompDirectiveDefault
}

// completeWorkflowStates offers the state names of the workflow run names.
func completeWorkflowStates(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	if len(args) == 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	p, err := findProject()
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	wf, err := newEngine(p, "", nil).LoadWorkflow(args[0])
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var out []string
	for _, n := range wf.Order {
		if strings.HasPrefix(n, toComplete) {
			out = append(out, n+"\t"+wf.States[n].Type)
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveKeepOrder
}

// completeRunStates offers the step paths a run recorded, for resume --from.
func completeRunStates(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	if len(args) == 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	flag := ""
	if f := cmd.Flag("storage"); f != nil {
		flag = f.Value.String()
	}
	rec, err := loadRun(flag, args[0], rerun.Options{})
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	seen := map[string]bool{}
	var out []string
	for _, x := range rec.Executions {
		if !seen[x.Path] && strings.HasPrefix(x.Path, toComplete) {
			seen[x.Path] = true
			out = append(out, x.Path+"\t"+x.Kind)
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveKeepOrder
}
