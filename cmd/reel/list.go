package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/reelhq/reel/internal/catalog"
	"github.com/reelhq/reel/internal/engine"
	"github.com/reelhq/reel/internal/project"
	"github.com/reelhq/reel/internal/workflow"
)

// listed is one workflow `reel list` found.
type listed struct {
	// Name is what reel run NAME takes.
	Name string `json:"name"`
	// Scope is where it comes from: env ($AWF_WORKFLOWS_PATH), local (the
	// project), global (AWF's global workflows), pack, or dir (a
	// directory named on the command line).
	Scope string `json:"scope"`
	// Pack and Version name a pack workflow's pack and its version.
	Pack        string        `json:"pack,omitempty"`
	Version     string        `json:"version,omitempty"`
	Workflow    string        `json:"workflow,omitempty"`
	Description string        `json:"description,omitempty"`
	File        string        `json:"file"`
	Inputs      []listedInput `json:"inputs"`
	// Shadowed names the file that `reel run NAME` picks instead.
	Shadowed string   `json:"shadowed_by,omitempty"`
	Problems []string `json:"problems,omitempty"`
}

type listedInput struct {
	Name        string   `json:"name"`
	Type        string   `json:"type"`
	Required    bool     `json:"required"`
	Default     *string  `json:"default,omitempty"`
	Description string   `json:"description,omitempty"`
	Enum        []string `json:"enum,omitempty"`
}

func newListCmd() *cobra.Command {
	var asJSON, quiet bool
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
		RunE: func(cmd *cobra.Command, args []string) error {
			proj, err := findProject()
			if err != nil {
				return err
			}
			e := newEngine(proj, "", nil)
			var entries []catalog.Entry
			var probs []catalog.Problem
			where := "the project, the global workflows or the installed packs"
			if len(args) > 0 {
				dirs := make([]catalog.Dir, len(args))
				for i, a := range args {
					dirs[i] = catalog.Dir{Path: a, Scope: "dir"}
				}
				entries, err = catalog.ListDirs(dirs)
				where = strings.Join(args, ", ")
			} else {
				entries, probs, err = e.Workflows()
			}
			if err != nil {
				return &exitError{code: exitTrouble, msg: err.Error()}
			}
			for _, p := range probs {
				fmt.Fprintf(cmd.ErrOrStderr(), "reel: warning: %s: %v\n", p.Dir, p.Err)
			}
			found := describeWorkflows(e, proj.Root, entries)
			out := cmd.OutOrStdout()
			if asJSON {
				return writeJSON(out, found)
			}
			if quiet {
				for _, l := range found {
					fmt.Fprintln(out, l.Name)
				}
				return nil
			}
			if len(found) == 0 {
				fmt.Fprintf(cmd.ErrOrStderr(), "no workflows in %s\n", where)
				return nil
			}
			p := palette{on: useColor(cmd, out)}
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
			return t.write(out, termWidth(out))
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.Flags().BoolVarP(&quiet, "quiet", "q", false, "print only the names, one a line")
	addFormatFlag(cmd, &asJSON, &quiet, "only the names, as --quiet")
	cmd.AddCommand(newListPromptsCmd())
	return cmd
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func relPath(p string) string {
	wd, err := os.Getwd()
	if err != nil {
		return p
	}
	if r, err := filepath.Rel(wd, p); err == nil && !strings.HasPrefix(r, "..") {
		return r
	}
	return p
}

// describeWorkflows loads each entry for its description and inputs; an
// invalid file is described by its problems.
func describeWorkflows(e *engine.Engine, root string, entries []catalog.Entry) []listed {
	cat := e.Catalog()
	opts := e.LoadOptions()
	out := make([]listed, 0, len(entries))
	for _, en := range entries {
		l := listed{Name: en.Name, Scope: en.Scope, Pack: en.Pack, Version: en.Version, File: en.File, Inputs: []listedInput{}}
		if en.ShadowedBy != "" {
			l.Shadowed = en.ShadowedBy
			if r, err := filepath.Rel(root, en.ShadowedBy); root != "" && err == nil && !strings.HasPrefix(r, "..") {
				l.Shadowed = r
			}
		}
		ref, err := cat.Find(en.File)
		var wf *workflow.Workflow
		if err == nil {
			wf, err = cat.Load(ref, opts)
		}
		var probs workflow.Problems
		switch {
		case errors.As(err, &probs):
			for _, p := range probs {
				l.Problems = append(l.Problems, p.String())
			}
		case err != nil:
			l.Problems = []string{err.Error()}
		default:
			l.Workflow, l.Description = wf.Name, wf.Description
			for _, in := range wf.Inputs {
				li := listedInput{Name: in.Name, Type: in.Type, Required: in.Required, Default: in.Default, Description: in.Description}
				if in.Validation != nil {
					li.Enum = in.Validation.Enum
				}
				l.Inputs = append(l.Inputs, li)
			}
		}
		out = append(out, l)
	}
	return out
}

// workflowNames are the names reel run NAME takes here, for completion.
func workflowNames(p *project.Project) []string {
	e := newEngine(p, "", nil)
	entries, _, _ := e.Workflows()
	var names []string
	for _, l := range describeWorkflows(e, p.Root, entries) {
		if l.Shadowed == "" {
			names = append(names, l.Name+"\t"+l.Description)
		}
	}
	return names
}
