package main

import (
	"fmt"

	"github.com/spf13/cobra"
)

// listPromptsOptions are reel list prompts' flags.
type listPromptsOptions struct {
	listFlags
}

func newListPromptsCmd() *cobra.Command {
	var o listPromptsOptions
	cmd := &cobra.Command{
		Use:   "prompts",
		Short: "List the prompt files --input NAME=@prompts/PATH reads",
		Long: `List the prompt files an --input NAME=@prompts/PATH value reads, with
where each comes from: env ($AWF_PROMPTS_PATH), local (the project's
.reel/prompts, then .awf/prompts) or global (AWF's global prompts
directory). A name found in an earlier place hides it in later ones.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runListPrompts(cmd, &o) },
	}
	o.register(cmd, "print only the names, one a line", "only the names, as --quiet")
	return cmd
}

func runListPrompts(cmd *cobra.Command, o *listPromptsOptions) error {
	proj, err := findProject()
	if err != nil {
		return err
	}
	prompts, probs := newEngine(proj, "", nil).Catalog().Prompts()
	for _, p := range probs {
		fmt.Fprintf(cmd.ErrOrStderr(), "reel: warning: %s: %v\n", p.Dir, p.Err)
	}
	out := cmd.OutOrStdout()
	switch {
	case o.asJSON:
		return writeJSON(out, prompts)
	case o.quiet:
		for _, p := range prompts {
			fmt.Fprintln(out, p.Name)
		}
		return nil
	case len(prompts) == 0:
		fmt.Fprintln(cmd.ErrOrStderr(), "no prompt files (reel config show lists the prompts directories)")
		return nil
	}
	t := &table{flexible: 3}
	t.add("NAME", "SOURCE", "SIZE", "PATH")
	for _, p := range prompts {
		t.add(p.Name, p.Scope, fmt.Sprint(p.Size), relPath(p.Path))
	}
	return t.write(out, termWidth(out))
}
