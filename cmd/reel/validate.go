package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/reelhq/reel/internal/catalog"
	"github.com/reelhq/reel/internal/engine"
	"github.com/reelhq/reel/internal/errcode"
	"github.com/reelhq/reel/internal/pack"
	"github.com/reelhq/reel/internal/plugin"
	"github.com/reelhq/reel/internal/workflow"
)

// validated is one file's verdict in validate --json.
type validated struct {
	File     string          `json:"file"`
	Valid    bool            `json:"valid"`
	Problems []problemAtJSON `json:"problems"`
	// Warnings do not make the file invalid (unless --strict).
	Warnings []problemAtJSON `json:"warnings,omitempty"`
}

// add records p, with hints applied, among the file's problems or its
// warnings, and prints it unless --json.
func (v *validated) add(out io.Writer, p workflow.Problem, problem bool, o *validateOptions, hints func(string) string) {
	p.Msg = hints(p.Msg)
	pj := problemAtJSON{p.Pos.Line, p.Pos.Col, p.Msg}
	if problem {
		v.Problems = append(v.Problems, pj)
	} else {
		v.Warnings = append(v.Warnings, pj)
	}
	if !o.asJSON {
		fmt.Fprintln(out, p)
	}
}

type problemAtJSON struct {
	Line    int    `json:"line,omitempty"`
	Column  int    `json:"column,omitempty"`
	Message string `json:"message"`
}

// validateOptions are the flags of `reel validate`.
type validateOptions struct {
	asJSON, quiet, strict bool
	packName, dir         string
	plugins               pluginCheck
}

func newValidateCmd() *cobra.Command {
	var o validateOptions
	cmd := &cobra.Command{
		Use:   "validate FILE|NAME... | --pack NAME | --dir DIR",
		Short: "Check workflow files and print every problem as file:line:col: problem",
		Long: `Check workflow files, found by path, by name (as reel run finds them:
$AWF_WORKFLOWS_PATH, .reel/workflows/, .awf/workflows/, the global
workflows) or as PACK/WORKFLOW, and print every problem as
file:line:col: problem, or, with --json, one verdict per file. --pack NAME
checks every workflow an installed pack publishes, --dir DIR every workflow
file of a directory, as AWF's validate does.

Warnings (fields that load but do nothing, references that fail when they
are read in the fields AWF's own validate does not check) are printed as
file:line:col: warning: ... and do not make a file invalid, so that every
workflow AWF accepts still loads; --strict makes them problems.

States that use an AWF plugin's operation or step type are checked against
the plugin (it is installed and enabled, offers them, and the operation's
inputs fit its schema), and the validator plugins run (--skip-plugins
skips them; each has --validator-timeout): their errors make the file
invalid, their warnings and infos are printed as warnings.

Exit status (AWF's): 0 every file is valid, 1 a file was not found, 2 a file
is invalid.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 && o.packName == "" && o.dir == "" {
				return fmt.Errorf("requires at least 1 arg(s) (a workflow name or file), or --pack or --dir")
			}
			return nil
		},
		ValidArgsFunction: completeWorkflows,
		RunE:              func(cmd *cobra.Command, args []string) error { return runValidate(cmd, args, &o) },
	}
	cmd.Flags().BoolVar(&o.asJSON, "json", false, "print one verdict per file as JSON")
	cmd.Flags().BoolVarP(&o.quiet, "quiet", "q", false, "print only problems")
	cmd.Flags().BoolVar(&o.strict, "strict", false, "treat warnings as problems (for CI)")
	cmd.Flags().StringVar(&o.packName, "pack", "", "check every workflow of the installed pack `NAME`")
	cmd.Flags().StringVar(&o.dir, "dir", "", "check every workflow file (*.yaml, *.yml) of `DIR`")
	addFormatFlag(cmd, &o.asJSON, &o.quiet, "only problems, as --quiet")
	addPluginCheckFlags(cmd, &o.plugins, true)
	addVerboseFlag(cmd)
	return cmd
}

func runValidate(cmd *cobra.Command, args []string, o *validateOptions) error {
	proj, err := findProject()
	if err != nil {
		return err
	}
	e := newEngine(proj, "", pluginLog(cmd, o.quiet || o.asJSON))
	defer e.PluginHost.Close()
	cat := e.Catalog()
	more, err := validateTargets(cat, o.packName, o.dir)
	if err != nil {
		return err
	}
	args = append(args, more...)
	out := cmd.OutOrStdout()
	hints := hintsOff(cmd)
	var results []validated
	bad, missing := 0, 0
	badCode := errcode.WorkflowValidationFailed
	for _, ref := range args {
		r, err := cat.Find(ref)
		if err != nil {
			missing++
			results = append(results, validated{File: ref, Problems: []problemAtJSON{{Message: hints(err.Error())}}})
			if !o.asJSON {
				fmt.Fprintf(out, "%s: %s\n", ref, hints(err.Error()))
			}
			continue
		}
		f := r.File
		v := validated{File: f, Valid: true, Problems: []problemAtJSON{}}
		wf, err := cat.Load(r, e.LoadOptions())
		var probs workflow.Problems
		switch {
		case errors.As(err, &probs):
			if bad == 0 {
				badCode = probs.Code()
			}
			bad += probs.Errors()
			v.Valid = false
			for _, p := range probs {
				v.add(out, p, !p.Warning, o, hints)
			}
		case err != nil:
			bad++
			v.Valid = false
			v.Problems = append(v.Problems, problemAtJSON{1, 1, hints(err.Error())})
			if !o.asJSON {
				fmt.Fprintf(out, "%s:1:1: %s\n", f, hints(err.Error()))
			}
		default:
			bad += validateLoaded(cmd, e, wf, &v, o, hints)
		}
		results = append(results, v)
	}
	if o.asJSON {
		if err := writeJSON(out, results); err != nil {
			return err
		}
	}
	switch {
	case missing > 0:
		return codedError(errcode.UserInputMissingFile, fmt.Sprintf("%d workflow(s) not found, %d problem(s)", missing, bad), nil,
			"reel list shows the workflows reel can run here")
	case bad > 0:
		return codedError(badCode, fmt.Sprintf("%d problem(s)", bad), nil)
	}
	return nil
}

// validateLoaded checks a workflow that loaded: its warnings (problems
// with --strict) and what the plugins say of it, into v, printing them
// unless --json. It returns the number of problems.
func validateLoaded(cmd *cobra.Command, e *engine.Engine, wf *workflow.Workflow, v *validated, o *validateOptions, hints func(string) string) (bad int) {
	out := cmd.OutOrStdout()
	f := v.File
	for _, w := range wf.Warnings {
		v.add(out, w, o.strict, o, hints)
	}
	if o.strict && len(wf.Warnings) > 0 {
		bad += len(wf.Warnings)
		v.Valid = false
	}
	for _, is := range o.plugins.issues(cmd.Context(), e, wf) {
		line := issueLine(wf, is)
		pj := problemAtJSON{is.Pos.Line, is.Pos.Col, hints(is.String())}
		if is.Severity == plugin.SeverityError || o.strict {
			bad++
			v.Valid = false
			v.Problems = append(v.Problems, pj)
		} else {
			pj.Message = is.Severity + ": " + pj.Message
			v.Warnings = append(v.Warnings, pj)
			if o.quiet {
				continue
			}
		}
		if !o.asJSON {
			fmt.Fprintln(out, line)
		}
	}
	if v.Valid && !o.asJSON && !o.quiet {
		fmt.Fprintf(out, "%s: ok\n", f)
	}
	return bad
}

// validateTargets are the workflows --pack and --dir name: PACK/WORKFLOW
// for each workflow the pack's manifest lists, the files of the
// directory.
func validateTargets(cat *catalog.Catalog, packName, dir string) ([]string, error) {
	var out []string
	if packName != "" {
		p, err := pack.Find(packName, cat.PackDirs())
		if err != nil {
			return nil, codedError(errcode.UserInputMissingFile, err.Error(), map[string]any{"pack": packName}, "reel workflow list shows the installed packs")
		}
		for _, w := range p.Manifest.Workflows {
			out = append(out, p.Name+"/"+w)
		}
	}
	if dir != "" {
		entries, err := catalog.ListDirs([]catalog.Dir{{Path: dir}})
		if err != nil {
			return nil, codedError(errcode.SystemIOReadFailed, err.Error(), map[string]any{"dir": dir})
		}
		if _, err := os.Stat(dir); err != nil {
			return nil, codedError(errcode.UserInputMissingFile, err.Error(), map[string]any{"dir": dir})
		}
		for _, e := range entries {
			out = append(out, e.File)
		}
	}
	return out, nil
}
