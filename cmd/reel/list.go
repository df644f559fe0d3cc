package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/reelhq/reel/internal/catalog"
	"github.com/reelhq/reel/internal/project"
)

// listOptions are the flags of `reel list`.
type listOptions struct {
	listFlags
}

func newListCmd() *cobra.Command {
	var o listOptions
	cmd := &cobra.Command{
		Use:   "list [DIR...]",
		Short: "List the workflows reel run NAME finds, with descriptions and inputs",
		Long: `List every workflow reel run NAME finds here, in the order it looks them
up, with where each comes from (SOURCE): env ($AWF_WORKFLOWS_PATH), local
(the project's .reel/workflows, then .awf/workflows), global (AWF's global
workflows directory, $XDG_CONFIG_HOME/awf/workflows) and pack (PACK/WORKFLOW,
the workflows of installed packs). With DIR arguments, the workflows of
those directories instead. Inputs are listed by name, * marking the
required ones and =VALUE the defaults. An invalid file is listed with its
problem count (reel validate shows them); a name an earlier place holds
too is listed as shadowed.

reel list prompts lists the prompt files @prompts/ finds.`,
		RunE: func(cmd *cobra.Command, args []string) error { return runList(cmd, args, &o) },
	}
	o.register(cmd, "print only the names, one a line", "only the names, as --quiet")
	cmd.AddCommand(newListPromptsCmd())
	return cmd
}

func runList(cmd *cobra.Command, dirs []string, o *listOptions) error {
	proj, err := findProject()
	if err != nil {
		return err
	}
	e := newEngine(proj, "", nil)
	cat := e.Catalog()
	var entries []catalog.Entry
	var probs []catalog.Problem
	where := "the project, the global workflows or the installed packs"
	if len(dirs) > 0 {
		named := make([]catalog.Dir, len(dirs))
		for i, a := range dirs {
			named[i] = catalog.Dir{Path: a, Scope: "dir"}
		}
		entries, err = catalog.ListDirs(named)
		where = strings.Join(dirs, ", ")
	} else {
		entries, probs, err = cat.List()
	}
	if err != nil {
		return &exitError{code: exitTrouble, msg: err.Error()}
	}
	for _, p := range probs {
		fmt.Fprintf(cmd.ErrOrStderr(), "reel: warning: %s: %v\n", p.Dir, p.Err)
	}
	found := cat.Describe(entries, e.LoadOptions(), proj.Root)
	out := cmd.OutOrStdout()
	switch {
	case o.asJSON:
		return writeJSON(out, found)
	case o.quiet:
		for _, l := range found {
			fmt.Fprintln(out, l.Name)
		}
		return nil
	case len(found) == 0:
		fmt.Fprintf(cmd.ErrOrStderr(), "no workflows in %s\n", where)
		return nil
	}
	return writeListed(out, found, palette{on: useColor(cmd, out)}, termWidth(out))
}

// writeListed prints the workflows as a table fitting width (0: any), its
// header in bold when p colours.
func writeListed(out io.Writer, found []catalog.Listed, p palette, width int) error {
	t := &table{flexible: 2}
	if p.on {
		t.colour = func(row, col int, cell string) string {
			if row == 0 {
				return p.bold(cell)
			}
			return cell
		}
	}
	t.add("NAME", "SOURCE", "DESCRIPTION", "INPUTS", "FILE")
	for _, l := range found {
		desc := l.Description
		switch {
		case len(l.Problems) > 0:
			desc = fmt.Sprintf("invalid: %d problem(s)", len(l.Problems))
		case l.Shadowed != "":
			desc = "shadowed by " + l.Shadowed
		}
		var ins []string
		for _, in := range l.Inputs {
			s := in.Name
			if in.Required {
				s += "*"
			}
			if in.Default != nil {
				s += "=" + *in.Default
			}
			ins = append(ins, s)
		}
		source := l.Scope
		if l.Version != "" {
			source += " " + l.Version
		}
		t.add(l.Name, source, orDash(desc), orDash(strings.Join(ins, " ")), relPath(l.File))
	}
	return t.write(out, width)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func relPath(p string) string {
	// the checkout's .reel/workflows is a link to examples/: name the file
	// where it is
	if r, err := filepath.EvalSymlinks(p); err == nil {
		p = r
	}
	wd, err := os.Getwd()
	if err != nil {
		return p
	}
	if r, err := filepath.Rel(wd, p); err == nil && !strings.HasPrefix(r, "..") {
		return r
	}
	return p
}

// workflowNames are the names reel run NAME takes here, for completion.
func workflowNames(p *project.Project) []string {
	e := newEngine(p, "", nil)
	cat := e.Catalog()
	entries, _, _ := cat.List()
	var names []string
	for _, l := range cat.Describe(entries, e.LoadOptions(), p.Root) {
		if l.Shadowed == "" {
			names = append(names, l.Name+"\t"+l.Description)
		}
	}
	return names
}
