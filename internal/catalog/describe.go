package catalog

import (
	"errors"
	"path/filepath"
	"strings"

	"github.com/reelhq/reel/internal/workflow"
)

// Listed is one workflow as `reel list` shows it: the entry, and what its
// file says of itself.
type Listed struct {
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
	Inputs      []ListedInput `json:"inputs"`
	// Shadowed names the file that `reel run NAME` picks instead.
	Shadowed string `json:"shadowed_by,omitempty"`
	// Problems are why the file does not load (reel validate shows them).
	Problems []string `json:"problems,omitempty"`
}

// ListedInput is one input a listed workflow declares.
type ListedInput struct {
	Name        string   `json:"name"`
	Type        string   `json:"type"`
	Required    bool     `json:"required"`
	Default     *string  `json:"default,omitempty"`
	Description string   `json:"description,omitempty"`
	Enum        []string `json:"enum,omitempty"`
}

// Describe loads each entry with opts for its description and inputs; an
// invalid file is described by its problems. A shadowing file inside root
// (the project) is named relative to it.
func (c *Catalog) Describe(entries []Entry, opts workflow.Options, root string) []Listed {
	out := make([]Listed, 0, len(entries))
	for _, en := range entries {
		l := Listed{Name: en.Name, Scope: en.Scope, Pack: en.Pack, Version: en.Version, File: en.File, Inputs: []ListedInput{}}
		if en.ShadowedBy != "" {
			l.Shadowed = en.ShadowedBy
			if r, err := filepath.Rel(root, en.ShadowedBy); root != "" && err == nil && !strings.HasPrefix(r, "..") {
				l.Shadowed = r
			}
		}
		ref, err := c.Find(en.File)
		var wf *workflow.Workflow
		if err == nil {
			wf, err = c.Load(ref, opts)
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
				li := ListedInput{Name: in.Name, Type: in.Type, Required: in.Required, Default: in.Default, Description: in.Description}
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
