package query

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// RenderStats writes the report as tables.
func RenderStats(w io.Writer, r *Report) error {
	var sb strings.Builder
	t := r.Total
	fmt.Fprintf(&sb, "runs %d  steps %d (%d failed, %d agent)  tool calls %d\n", len(r.Runs), t.Steps, t.Failed, t.AgentSteps, t.ToolCalls)
	u := t.Usage
	fmt.Fprintf(&sb, "tokens  input %d  output %d  cache read %d  cache write %d  reasoning %d  total %d\n",
		u.InputTokens, u.OutputTokens, u.CacheReadTokens, u.CacheWriteTokens, u.ReasoningTokens, u.InputTokens+u.OutputTokens)
	fmt.Fprintf(&sb, "cost    %s\n", t.Cost())
	if t.UnpricedSteps > 0 {
		fmt.Fprintf(&sb, "        %d agent steps used models without a known price and are not in the cost (add their prices with the prices key of .reel/config.yaml)\n", t.UnpricedSteps)
	}
	fmt.Fprintf(&sb, "time    %s in runs\n", FormatMS(t.DurationMS))

	tw := tabwriter.NewWriter(&sb, 0, 0, 2, ' ', 0)
	table := func(title string, header string, rows func()) {
		fmt.Fprintf(tw, "\n%s\n", title)
		fmt.Fprintln(tw, header)
		rows()
		tw.Flush()
	}
	table("RUNS", "RUN\tWORKFLOW\tSTATUS\tDURATION\tSTEPS\tINPUT\tOUTPUT\tCACHE READ\tCACHE WRITE\tREASONING\tCOST\tTOOLS", func() {
		for _, run := range r.Runs {
			name := run.Workflow
			if run.ParentRunID != "" {
				name += " (child of " + short(run.ParentRunID) + ")"
			}
			u := run.Usage
			dur := FormatMS(run.DurationMS)
			if run.Untimed {
				dur = "—"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t%d\n", run.RunID, name, run.Status, dur,
				run.Steps, u.InputTokens, u.OutputTokens, u.CacheReadTokens, u.CacheWriteTokens, u.ReasoningTokens,
				run.Cost(), run.ToolCalls)
		}
	})
	groups := func(title string, rows []Named) {
		if len(rows) == 0 {
			return
		}
		table(title, strings.TrimSuffix(title, "S")+"\tEXECUTIONS\tFAILED\tDURATION\tINPUT\tOUTPUT\tCACHE READ\tCACHE WRITE\tREASONING\tCOST\tTOOLS", func() {
			for _, g := range rows {
				name := g.Name
				if name == "" {
					name = "(run)"
				}
				u := g.Usage
				fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%d\t%d\t%d\t%d\t%d\t%s\t%d\n", name, g.Steps, g.Failed, FormatMS(g.DurationMS),
					u.InputTokens, u.OutputTokens, u.CacheReadTokens, u.CacheWriteTokens, u.ReasoningTokens, g.Cost(), g.ToolCalls)
			}
		})
	}
	groups("STEPS", r.Steps)
	groups("PROVIDERS", r.Providers)
	groups("MODELS", r.Models)
	if len(r.Tools) > 0 {
		table("TOOLS", "TOOL\tCALLS", func() {
			for _, g := range r.Tools {
				fmt.Fprintf(tw, "%s\t%d\n", g.Name, g.ToolCalls)
			}
		})
	}
	_, err := io.WriteString(w, sb.String())
	return err
}

func short(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}
