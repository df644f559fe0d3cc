package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/reelhq/reel/internal/project"
	"github.com/reelhq/reel/internal/workflow"
)

// listed is one workflow `reel list` found.
type listed struct {
	// Name is what reel run NAME takes.
	Name        string        `json:"name"`
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
		Long: `List the workflows of the project (.reel/workflows, then .awf/workflows, in
the order reel run NAME looks them up), or those in the directories named.
Inputs are listed by name, * marking the required ones and =VALUE the
defaults. An invalid file is listed with its problem count (reel validate
shows them).`,
		RunE: func(cmd *cobra.Command, args []string) error {
			dirs := args
			if len(dirs) == 0 {
				proj, err := findProject()
				if err != nil {
					return err
				}
				dirs = proj.WorkflowDirs()
			}
			found, err := listWorkflows(dirs)
			if err != nil {
				return &exitError{code: exitTrouble, msg: err.Error()}
			}
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
				fmt.Fprintf(cmd.ErrOrStderr(), "no workflows in %s\n", strings.Join(dirs, ", "))
				return nil
			}
			p := palette{on: useColor(cmd, out)}
			t := &table{flexible: 1}
			if p.on {
				t.colour = func(row, col int, cell string) string {
					if row == 0 {
						return p.bold(cell)
					}
					return cell
				}
			}
			t.add("NAME", "DESCRIPTION", "INPUTS", "FILE")
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
				t.add(l.Name, orDash(desc), orDash(strings.Join(ins, " ")), relPath(l.File))
			}
			return t.write(out, termWidth(out))
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.Flags().BoolVarP(&quiet, "quiet", "q", false, "print only the names, one a line")
	addFormatFlag(cmd, &asJSON, &quiet, "only the names, as --quiet")
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

// listWorkflows loads every *.yaml and *.yml file of dirs, in lookup order.
func listWorkflows(dirs []string) ([]listed, error) {
	root := ""
	if p, err := findProject(); err == nil {
		root = p.Root
	}
	var out []listed
	first := map[string]string{}
	for _, dir := range dirs {
		entries, err := os.ReadDir(dir)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("list workflows in %s: %w", dir, err)
		}
		sort.Slice(entries, func(i, j int) bool { return entries[i].Name() < entries[j].Name() })
		for _, e := range entries {
			ext := filepath.Ext(e.Name())
			if e.IsDir() || ext != ".yaml" && ext != ".yml" {
				continue
			}
			path := filepath.Join(dir, e.Name())
			l := listed{Name: strings.TrimSuffix(e.Name(), ext), File: path, Inputs: []listedInput{}}
			if prev, dup := first[l.Name]; dup {
				l.Shadowed = prev
				if r, err := filepath.Rel(root, prev); root != "" && err == nil && !strings.HasPrefix(r, "..") {
					l.Shadowed = r
				}
			} else {
				first[l.Name] = path
			}
			wf, err := workflow.Load(path, workflow.Options{})
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
	}
	return out, nil
}

// workflowNames are the names reel run NAME takes in the project, for
// completion.
func workflowNames(p *project.Project) []string {
	found, _ := listWorkflows(p.WorkflowDirs())
	var names []string
	for _, l := range found {
		if l.Shadowed == "" {
			names = append(names, l.Name+"\t"+l.Description)
		}
	}
	return names
}
