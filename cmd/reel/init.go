package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/reelhq/reel/internal/awfhome"
	"github.com/reelhq/reel/internal/errcode"
	"github.com/reelhq/reel/internal/scaffold"
)

type initOptions struct {
	global, force bool
}

func newInitCmd() *cobra.Command {
	var o initOptions
	cmd := &cobra.Command{
		Use:   "init",
		Short: "Start a project here: AWF's .awf/ layout with an example workflow, prompt and script",
		Long: `Write AWF's project layout into the current directory, as awf init does:
.awf.yaml, .awf/config.yaml (input defaults), and .awf/workflows/,
.awf/prompts/ and .awf/scripts/ each with an example. reel and AWF both
run the project. A directory that already has .awf/ is left alone unless
--force, which rewrites those files.

--global writes AWF's global prompts and scripts directories
($XDG_CONFIG_HOME/awf/prompts and scripts, or $AWF_CONFIG_HOME's) with
their examples instead: what every project finds after its own.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runInit(cmd, &o) },
	}
	cmd.Flags().BoolVar(&o.global, "global", false, "initialize AWF's global prompts and scripts directories")
	cmd.Flags().BoolVar(&o.force, "force", false, "rewrite the files even if they exist")
	return cmd
}

func runInit(cmd *cobra.Command, o *initOptions) error {
	var res *scaffold.Result
	var err error
	where := ".awf"
	if o.global {
		d := awfhome.FromEnv(nil)
		where = d.Prompts()
		res, err = scaffold.Global(d, o.force)
	} else {
		wd, werr := os.Getwd()
		if werr != nil {
			return codedError(errcode.SystemIOReadFailed, werr.Error(), nil)
		}
		res, err = scaffold.Project(wd, o.force)
	}
	if err != nil {
		c := errcode.SystemIOWriteFailed
		if os.IsPermission(err) {
			c = errcode.SystemIOPermissionDenied
		}
		return codedError(c, err.Error(), nil)
	}
	out := cmd.OutOrStdout()
	if res.Already {
		fmt.Fprintf(out, "already initialized: %s exists (--force writes the files again)\n", where)
		if !o.global {
			return nil
		}
	}
	for _, p := range res.Written {
		fmt.Fprintf(out, "created %s\n", relPath(p))
	}
	for _, p := range res.Kept {
		fmt.Fprintf(out, "kept %s (exists)\n", relPath(p))
	}
	if !o.global {
		fmt.Fprintln(out, "\nnext: reel list, reel run example, reel validate example")
	}
	return nil
}
