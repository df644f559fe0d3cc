package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/reelhq/reel/internal/catalog"
	"github.com/reelhq/reel/internal/engine"
	"github.com/reelhq/reel/internal/errcode"
	"github.com/reelhq/reel/internal/github"
	"github.com/reelhq/reel/internal/pack"
	"github.com/reelhq/reel/internal/workflow"
)

// The workflow command group manages workflow packs as AWF's `awf workflow`
// does (package pack has the rules); reel run PACK/WORKFLOW runs their
// workflows.
func newWorkflowCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:     "workflow",
		Aliases: []string{"wf"},
		Short:   "Install, list, update and remove workflow packs",
		Long: `Workflow packs are bundles of workflows, prompts and scripts, installed
into the project's .awf/workflow-packs/NAME (or, with --global, AWF's global
$XDG_DATA_HOME/awf/workflow-packs/NAME) and run as reel run NAME/WORKFLOW.
The layout and commands are AWF's: a pack installed by one tool runs under
the other. See docs/packs.md.`,
	}
	cmd.AddCommand(newWorkflowInstallCmd(), newWorkflowListCmd(), newWorkflowInfoCmd(), newWorkflowUpdateCmd(),
		newWorkflowRemoveCmd(), newWorkflowSearchCmd())
	return cmd
}

// packContext is what every workflow subcommand works with.
type packContext struct {
	engine  *engine.Engine
	catalog *catalog.Catalog
	found   bool // a project was found
}

func newPackContext() (*packContext, error) {
	proj, err := findProject()
	if err != nil {
		return nil, err
	}
	e := newEngine(proj, "", nil)
	return &packContext{engine: e, catalog: e.Catalog(), found: proj.Found}, nil
}

// gitHub is the GitHub client packs are installed and searched with:
// GITHUB_API_URL, GH_TOKEN or GITHUB_TOKEN, else gh's token.
func gitHub(ctx context.Context) *github.Client {
	gh := github.New(os.Environ(), ".")
	gh.UseGHToken(ctx)
	return gh
}

// findPack finds an installed pack by name (the local one first).
func (pc *packContext) findPack(name string) (*pack.Pack, error) {
	p, err := pack.Find(strings.TrimPrefix(name, "awf-workflow-"), pc.catalog.PackDirs())
	if errors.Is(err, pack.ErrNotFound) {
		return nil, codedError(errcode.UserInputMissingFile, fmt.Sprintf("workflow pack %q is not installed (looked in %s)", name, strings.Join(pc.catalog.PackDirs(), ", ")),
			map[string]any{"pack": name}, "reel workflow list shows the installed packs")
	}
	if err != nil {
		return nil, codedError(errcode.UserInputValidationFailed, err.Error(), map[string]any{"pack": name})
	}
	return p, nil
}

type workflowInstallOptions struct {
	global, force bool
}

func newWorkflowInstallCmd() *cobra.Command {
	var o workflowInstallOptions
	cmd := &cobra.Command{
		Use:   "install OWNER/REPO[@VERSION] | DIR | ARCHIVE.tar.gz",
		Short: "Install a workflow pack from a GitHub release, a directory or an archive",
		Long: `Install a workflow pack. OWNER/REPO installs the newest stable release of that
GitHub repository (@VERSION an exact one: 1.2.0 or v1.2.0), as AWF does:
the release's .tar.gz asset, checked against the SHA-256 its checksums.txt
lists; the pack is named after the repository without its awf-workflow-
prefix. A directory or a .tar.gz archive installs from the disk (an archive
with a checksums.txt beside it listing it is checked against it).

The manifest is checked (name, reserved names, versions, the workflow files
it lists) before the pack is moved into place in one step; --force replaces
an installed pack of the same name. The pack goes into the project's
.awf/workflow-packs, or with --global into AWF's global pack directory.
GITHUB_API_URL points the GitHub calls elsewhere (GitHub Enterprise, a
test server); GITHUB_TOKEN or GH_TOKEN (else gh's login) authenticates.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runWorkflowInstall(cmd, args[0], &o) },
	}
	cmd.Flags().BoolVar(&o.global, "global", false, "install into AWF's global pack directory instead of the project's")
	cmd.Flags().BoolVar(&o.force, "force", false, "replace an installed pack of the same name")
	return cmd
}

func runWorkflowInstall(cmd *cobra.Command, arg string, o *workflowInstallOptions) error {
	pc, err := newPackContext()
	if err != nil {
		return err
	}
	spec, err := pack.ParseSpec(arg)
	if err != nil {
		return codedError(errcode.UserInputValidationFailed, err.Error(), map[string]any{"source": arg})
	}
	dir := pc.catalog.GlobalPacks()
	if !o.global {
		if !pc.found {
			return codedError(errcode.UserInputValidationFailed, "not in a project (no .awf/ or .reel/ here or above): run reel init first, or install with --global", nil)
		}
		dir = pc.catalog.LocalPacks()
	}
	in := &pack.Installer{Dir: dir, Force: o.force, GitHub: gitHub(cmd.Context())}
	if spec.Repo != "" {
		fmt.Fprintf(cmd.ErrOrStderr(), "fetching the releases of %s\n", spec.Repo)
	}
	res, err := in.Install(cmd.Context(), spec)
	if err != nil {
		return packError(fmt.Errorf("install %s: %w", spec, err))
	}
	reportInstall(cmd, pc, res, "installed")
	return nil
}

// packError codes an install or update failure.
func packError(err error) error {
	switch {
	case errors.Is(err, os.ErrPermission):
		return codedError(errcode.SystemIOPermissionDenied, err.Error(), nil)
	case strings.Contains(err.Error(), "checksum mismatch"):
		return codedError(errcode.UserInputInvalidFormat, err.Error(), nil)
	}
	return codedError(errcode.UserInputValidationFailed, err.Error(), nil)
}

// reportInstall says what an install or update did, its warnings, and
// the pack's workflows reel would refuse.
func reportInstall(cmd *cobra.Command, pc *packContext, res *pack.Result, did string) {
	p := res.Pack
	what := fmt.Sprintf("%s workflow pack %s %s", did, p.Name, p.Manifest.Version)
	if res.Replaced != "" {
		what += " (was " + res.Replaced + ")"
	}
	fmt.Fprintf(cmd.OutOrStdout(), "%s into %s\n", what, relPath(p.Dir))
	fmt.Fprintf(cmd.OutOrStdout(), "workflows: %s (reel run %s/WORKFLOW)\n", strings.Join(p.Manifest.Workflows, ", "), p.Name)
	for _, w := range res.Warnings {
		fmt.Fprintf(cmd.ErrOrStderr(), "reel: warning: %s\n", w)
	}
	for _, w := range p.Manifest.Workflows {
		f, _ := p.Workflow(w)
		if _, err := pc.engine.LoadWorkflow(f); err != nil {
			var probs workflow.Problems
			if errors.As(err, &probs) {
				err = fmt.Errorf("%d problem(s)", probs.Errors())
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "reel: warning: %s/%s does not load: %v (reel validate %s/%s)\n", p.Name, w, err, p.Name, w)
		}
	}
}

// packListed is one line of reel workflow list.
type packListed struct {
	Name      string   `json:"name"`
	Version   string   `json:"version,omitempty"`
	Enabled   bool     `json:"enabled"`
	Source    string   `json:"source,omitempty"`
	Dir       string   `json:"dir,omitempty"`
	Workflows []string `json:"workflows"`
}

type workflowListOptions struct {
	listFlags
}

func newWorkflowListCmd() *cobra.Command {
	var o workflowListOptions
	cmd := &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List the installed workflow packs",
		Long: `List the installed workflow packs (the project's first; a name installed
in both is the project's), with their version, whether enabled, where each
came from and its workflows; then, as AWF does, (env), (local) and (global)
entries for the workflows outside packs.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runWorkflowList(cmd, &o) },
	}
	o.register(cmd, "print only the names, one a line", "only the names, as --quiet")
	return cmd
}

func runWorkflowList(cmd *cobra.Command, o *workflowListOptions) error {
	pc, err := newPackContext()
	if err != nil {
		return err
	}
	packs, probs := pack.Discover(pc.catalog.PackDirs())
	for _, p := range probs {
		fmt.Fprintf(cmd.ErrOrStderr(), "reel: warning: %v\n", p.Err)
	}
	var rows []packListed
	for _, p := range packs {
		rows = append(rows, packListed{Name: p.Name, Version: p.Manifest.Version, Enabled: p.State.Enabled, Source: p.State.Source.String(),
			Dir: p.Dir, Workflows: p.Manifest.Workflows})
	}
	loose, err := catalog.ListDirs(pc.catalog.Dirs())
	if err != nil {
		return &exitError{code: exitTrouble, msg: err.Error()}
	}
	byScope := map[string][]string{}
	var scopes []string
	for _, e := range loose {
		if e.ShadowedBy != "" {
			continue
		}
		if _, ok := byScope[e.Scope]; !ok {
			scopes = append(scopes, e.Scope)
		}
		byScope[e.Scope] = append(byScope[e.Scope], e.Name)
	}
	for _, s := range scopes {
		rows = append(rows, packListed{Name: "(" + s + ")", Enabled: true, Workflows: byScope[s]})
	}
	out := cmd.OutOrStdout()
	switch {
	case o.asJSON:
		if rows == nil {
			rows = []packListed{}
		}
		return writeJSON(out, rows)
	case o.quiet:
		for _, r := range rows {
			fmt.Fprintln(out, r.Name)
		}
		return nil
	case len(rows) == 0:
		fmt.Fprintln(cmd.ErrOrStderr(), "no workflow packs installed (reel workflow install OWNER/REPO)")
		return nil
	}
	t := &table{flexible: 4}
	t.add("NAME", "VERSION", "ENABLED", "SOURCE", "WORKFLOWS")
	for _, r := range rows {
		enabled := "yes"
		if !r.Enabled {
			enabled = "no"
		}
		t.add(r.Name, orDash(r.Version), enabled, orDash(r.Source), strings.Join(r.Workflows, ", "))
	}
	return t.write(out, termWidth(out))
}

type workflowInfoOptions struct {
	asJSON bool
}

// packInfo is what reel workflow info --json prints.
type packInfo struct {
	Manifest  *pack.Manifest `json:"manifest"`
	Dir       string         `json:"dir"`
	Enabled   bool           `json:"enabled"`
	Source    *pack.Source   `json:"source,omitempty"`
	Workflows []packWorkflow `json:"workflows"`
	Readme    string         `json:"readme,omitempty"`
}

type packWorkflow struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// Problem says why reel would refuse it, when it would.
	Problem string `json:"problem,omitempty"`
}

func newWorkflowInfoCmd() *cobra.Command {
	var o workflowInfoOptions
	cmd := &cobra.Command{
		Use:   "info NAME",
		Short: "Show an installed workflow pack: its manifest, source, workflows and README",
		Args:  cobra.ExactArgs(1),
		RunE:  func(cmd *cobra.Command, args []string) error { return runWorkflowInfo(cmd, args[0], &o) },
	}
	cmd.Flags().BoolVar(&o.asJSON, "json", false, "print JSON")
	var quiet bool
	addFormatFlag(cmd, &o.asJSON, &quiet, "as text")
	return cmd
}

// maxReadme bounds the README info prints.
const maxReadme = 1 << 20

func runWorkflowInfo(cmd *cobra.Command, name string, o *workflowInfoOptions) error {
	pc, err := newPackContext()
	if err != nil {
		return err
	}
	p, err := pc.findPack(name)
	if err != nil {
		return err
	}
	info := packInfo{Manifest: p.Manifest, Dir: p.Dir, Enabled: p.State.Enabled, Workflows: []packWorkflow{}}
	if p.State.Recorded() {
		info.Source = &p.State.Source
	}
	for _, w := range p.Manifest.Workflows {
		pw := packWorkflow{Name: w}
		f, _ := p.Workflow(w)
		wf, err := pc.engine.LoadWorkflow(f)
		var probs workflow.Problems
		switch {
		case errors.As(err, &probs):
			pw.Problem = fmt.Sprintf("%d problem(s): reel validate %s/%s", probs.Errors(), p.Name, w)
		case err != nil:
			pw.Problem = err.Error()
		default:
			pw.Description = wf.Description
		}
		info.Workflows = append(info.Workflows, pw)
	}
	if f, err := os.Open(filepath.Join(p.Dir, "README.md")); err == nil {
		b, _ := io.ReadAll(io.LimitReader(f, maxReadme))
		f.Close()
		info.Readme = string(b)
	}
	out := cmd.OutOrStdout()
	if o.asJSON {
		return writeJSON(out, info)
	}
	m := p.Manifest
	fmt.Fprintf(out, "Pack:        %s\nVersion:     %s\n", m.Name, m.Version)
	for _, kv := range [][2]string{{"Description", m.Description}, {"Author", m.Author}, {"License", m.License}, {"AWF version", m.AWFVersion}} {
		if kv[1] != "" {
			fmt.Fprintf(out, "%-12s %s\n", kv[0]+":", kv[1])
		}
	}
	if info.Source != nil {
		fmt.Fprintf(out, "Source:      %s\n", info.Source)
	}
	fmt.Fprintf(out, "Directory:   %s\n", relPath(p.Dir))
	if !p.State.Enabled {
		fmt.Fprintln(out, "Enabled:     no")
	}
	fmt.Fprintln(out, "Workflows:")
	for _, w := range info.Workflows {
		line := "  " + p.Name + "/" + w.Name
		if w.Description != "" {
			line += ": " + w.Description
		}
		if w.Problem != "" {
			line += " (invalid: " + w.Problem + ")"
		}
		fmt.Fprintln(out, line)
	}
	if len(m.Plugins) > 0 {
		fmt.Fprintln(out, "Plugins:")
		names := make([]string, 0, len(m.Plugins))
		for n := range m.Plugins {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			fmt.Fprintf(out, "  %s %s\n", n, m.Plugins[n])
		}
	}
	if info.Readme != "" {
		fmt.Fprintf(out, "\nREADME:\n%s\n", strings.TrimRight(info.Readme, "\n"))
	}
	return nil
}

type workflowUpdateOptions struct {
	all bool
}

func newWorkflowUpdateCmd() *cobra.Command {
	var o workflowUpdateOptions
	cmd := &cobra.Command{
		Use:   "update [NAME]",
		Short: "Update an installed workflow pack (or --all) to the newest version of its source",
		Long: `Update an installed pack to the newest stable release of the repository it was
installed from, or to what its local directory or archive now holds when
that version is newer. User overrides (.awf/prompts/NAME, .awf/scripts/NAME)
live outside the pack and are kept.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runWorkflowUpdate(cmd, args, &o) },
	}
	cmd.Flags().BoolVar(&o.all, "all", false, "update every installed pack")
	return cmd
}

func runWorkflowUpdate(cmd *cobra.Command, args []string, o *workflowUpdateOptions) error {
	switch {
	case o.all && len(args) > 0:
		return codedError(errcode.UserInputValidationFailed, "cannot name a pack with --all", nil)
	case !o.all && len(args) == 0:
		return codedError(errcode.UserInputValidationFailed, "pack name required (or use --all)", nil)
	}
	pc, err := newPackContext()
	if err != nil {
		return err
	}
	var packs []*pack.Pack
	if o.all {
		packs, _ = pack.Discover(pc.catalog.PackDirs())
		if len(packs) == 0 {
			fmt.Fprintln(cmd.OutOrStdout(), "no installed workflow packs to update")
			return nil
		}
	} else {
		p, err := pc.findPack(args[0])
		if err != nil {
			return err
		}
		packs = []*pack.Pack{p}
	}
	in := &pack.Installer{GitHub: gitHub(cmd.Context())}
	var failed []string
	updated := 0
	for _, p := range packs {
		res, err := in.Update(cmd.Context(), p)
		switch {
		case err != nil:
			if !o.all {
				return packError(fmt.Errorf("update %s: %w", p.Name, err))
			}
			failed = append(failed, p.Name)
			fmt.Fprintf(cmd.ErrOrStderr(), "reel: update %s: %v\n", p.Name, err)
		case res.Pack == nil:
			fmt.Fprintf(cmd.OutOrStdout(), "%s is already at the latest version (%s)\n", p.Name, p.Manifest.Version)
		default:
			updated++
			reportInstall(cmd, pc, res, "updated")
		}
	}
	if o.all {
		fmt.Fprintf(cmd.OutOrStdout(), "updated %d pack(s)\n", updated)
	}
	if len(failed) > 0 {
		return codedError(errcode.UserInputValidationFailed, fmt.Sprintf("%d pack(s) could not be updated: %s", len(failed), strings.Join(failed, ", ")), nil)
	}
	return nil
}

func newWorkflowRemoveCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "remove NAME",
		Short: "Remove an installed workflow pack (the project's, else the global one)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			pc, err := newPackContext()
			if err != nil {
				return err
			}
			p, err := pc.findPack(args[0])
			if err != nil {
				return err
			}
			if err := pack.Remove(p); err != nil {
				return codedError(errcode.SystemIOWriteFailed, err.Error(), map[string]any{"dir": p.Dir})
			}
			fmt.Fprintf(cmd.OutOrStdout(), "removed workflow pack %s from %s\n", p.Name, relPath(p.Dir))
			return nil
		},
	}
}

type workflowSearchOptions struct {
	asJSON bool
	output string
}

func newWorkflowSearchCmd() *cobra.Command {
	var o workflowSearchOptions
	cmd := &cobra.Command{
		Use:   "search [QUERY]",
		Short: "Search GitHub for workflow packs (repositories tagged awf-workflow)",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			q := ""
			if len(args) > 0 {
				q = args[0]
			}
			return runWorkflowSearch(cmd, q, &o)
		},
	}
	cmd.Flags().BoolVar(&o.asJSON, "json", false, "print JSON")
	cmd.Flags().StringVar(&o.output, "output", "", "AWF's flag: json prints JSON")
	var quiet bool
	addFormatFlag(cmd, &o.asJSON, &quiet, "only the names")
	return cmd
}

func runWorkflowSearch(cmd *cobra.Command, query string, o *workflowSearchOptions) error {
	switch o.output {
	case "", "text", "table":
	case "json":
		o.asJSON = true
	default:
		return codedError(errcode.UserInputValidationFailed, fmt.Sprintf("--output %q: want json", o.output), nil)
	}
	repos, err := pack.Search(cmd.Context(), gitHub(cmd.Context()), query)
	if err != nil {
		return codedError(errcode.UserInputValidationFailed, err.Error(), nil)
	}
	out := cmd.OutOrStdout()
	if o.asJSON {
		if repos == nil {
			repos = []github.Repository{}
		}
		return writeJSON(out, repos)
	}
	if f := cmd.Flag("format"); f != nil && f.Value.String() == "quiet" {
		for _, r := range repos {
			fmt.Fprintln(out, r.FullName)
		}
		return nil
	}
	if len(repos) == 0 {
		fmt.Fprintln(cmd.ErrOrStderr(), "no workflow packs found")
		return nil
	}
	t := &table{flexible: 2}
	t.add("NAME", "STARS", "DESCRIPTION")
	for _, r := range repos {
		t.add(r.FullName, fmt.Sprint(r.Stars), orDash(r.Description))
	}
	return t.write(out, termWidth(out))
}
