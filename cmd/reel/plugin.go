package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/reelhq/reel/internal/plugin"
	"github.com/reelhq/reel/internal/plugininstall"
	"github.com/reelhq/reel/internal/pluginscaffold"
	"github.com/reelhq/reel/internal/project"
	"github.com/reelhq/reel/internal/workflow"
)

func newPluginCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:     "plugin",
		Aliases: []string{"plugins"},
		Short:   "Manage AWF plugins: list, install, update, remove, enable, disable, verify, search, init",
		Long: `Manage AWF's external plugins, which reel runs unchanged: operations
(operation: PLUGIN.OP), step types (type: PLUGIN.TYPE), workflow validators
and event subscribers, each a program built with AWF's plugin SDK.

Plugins live where AWF keeps them: $AWF_PLUGINS_PATH when set, else the
project's .awf/plugins, then $XDG_DATA_HOME/awf/plugins. Their state
(enabled, configuration, source, checksum) is AWF's state file,
$XDG_DATA_HOME/awf/plugins/plugins.json, shared with awf; a project's
.awf/plugins.yaml can override enabled and config per plugin, and
.awf/config.yaml's plugins key gives their settings. docs/plugins.md says
more.`,
	}
	cmd.AddCommand(newPluginListCmd(), newPluginInstallCmd(), newPluginUpdateCmd(), newPluginRemoveCmd(),
		newPluginEnableCmd(true), newPluginEnableCmd(false), newPluginVerifyCmd(), newPluginSearchCmd(), newPluginInitCmd())
	return cmd
}

// pluginEnv is what every plugin command works on.
type pluginEnv struct {
	proj *project.Project
	host *plugin.Host
}

func openPluginEnv(cmd *cobra.Command) (*pluginEnv, error) {
	proj, err := findProject()
	if err != nil {
		return nil, err
	}
	return &pluginEnv{proj: proj, host: openPlugins(proj, cmd.ErrOrStderr())}, nil
}

// find looks an installed plugin up by its name, or by its executable's
// name (awf-plugin-NAME), as AWF accepts both.
func (e *pluginEnv) find(name string) (*plugin.Installed, error) {
	for _, n := range []string{name, strings.TrimPrefix(name, plugin.BinaryPrefix)} {
		if in, ok := e.host.Lookup(n); ok {
			return in, nil
		}
	}
	if slices.Contains(builtinPlugins, name) {
		return nil, &exitError{code: exitUser, msg: fmt.Sprintf("plugin %s is built into reel: it cannot be removed, updated or verified (its operations are always there)", name)}
	}
	return nil, &exitError{code: exitUser, msg: fmt.Sprintf("plugin %s is not installed (looked in %s)", name, strings.Join(plugin.Dirs(e.proj.Root, os.Getenv), ", "))}
}

// builtinPlugins are AWF's built-in operation providers, built into reel.
var builtinPlugins = []string{"github", "http", "notify"}

type pluginListOptions struct {
	operations, stepTypes, validators, asJSON bool
}

func newPluginListCmd() *cobra.Command {
	var o pluginListOptions
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the plugins (built in and installed), or their operations, step types or validators",
		Long: `List the plugins: reel's built-in operation providers (github, http,
notify) and the AWF plugins installed, with their version, status, whether
they are enabled, their capabilities and where they were installed from.

--operations, --step-types and --validators list those instead; they start
the enabled plugins to ask them.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runPluginList(cmd, o) },
	}
	cmd.Flags().BoolVar(&o.operations, "operations", false, "list the operations (PLUGIN.OP), built-in ones included")
	cmd.Flags().BoolVar(&o.stepTypes, "step-types", false, "list the step types (PLUGIN.TYPE)")
	cmd.Flags().BoolVar(&o.validators, "validators", false, "list the plugins that validate workflows")
	cmd.Flags().BoolVar(&o.asJSON, "json", false, "print JSON")
	cmd.MarkFlagsMutuallyExclusive("operations", "step-types", "validators")
	var quiet bool
	addFormatFlag(cmd, &o.asJSON, &quiet, "as text")
	return cmd
}

// pluginRow is one line of plugin list.
type pluginRow struct {
	Name         string   `json:"name"`
	Type         string   `json:"type"`
	Version      string   `json:"version"`
	Description  string   `json:"description,omitempty"`
	Status       string   `json:"status"`
	Enabled      bool     `json:"enabled"`
	Capabilities []string `json:"capabilities"`
	Source       string   `json:"source,omitempty"`
	Dir          string   `json:"dir,omitempty"`
	Problem      string   `json:"problem,omitempty"`
}

func runPluginList(cmd *cobra.Command, o pluginListOptions) error {
	env, err := openPluginEnv(cmd)
	if err != nil {
		return err
	}
	defer env.host.Close()
	switch {
	case o.operations:
		return listOperations(cmd, env, o.asJSON)
	case o.stepTypes:
		return listStepTypes(cmd, env, o.asJSON)
	case o.validators:
		return listValidators(cmd, env, o.asJSON)
	}
	var rows []pluginRow
	for _, b := range builtinPlugins {
		rows = append(rows, pluginRow{Name: b, Type: "builtin", Version: versionString(), Status: "builtin", Enabled: true, Capabilities: []string{plugin.CapOperations}})
	}
	st := env.host.State()
	for _, in := range env.host.Installed() {
		r := pluginRow{Name: in.Name, Type: "external", Enabled: env.host.Enabled(in.Name), Dir: in.Dir, Status: "installed"}
		if m := in.Manifest; m != nil {
			r.Version, r.Description, r.Capabilities = m.Version, m.Description, m.Capabilities
		}
		if src := st.Source(in.Name); src != nil {
			r.Source = src.Repository
		}
		switch {
		case in.Problem != nil:
			r.Status, r.Problem = "invalid", in.Problem.Error()
		case !r.Enabled:
			r.Status = "disabled"
		}
		rows = append(rows, r)
	}
	if o.asJSON {
		return writeJSON(cmd.OutOrStdout(), rows)
	}
	tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tTYPE\tVERSION\tSTATUS\tENABLED\tCAPABILITIES\tSOURCE")
	for _, r := range rows {
		src := r.Source
		if src == "" {
			src = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Name, r.Type, orDash(r.Version), r.Status, yesNo(r.Enabled), orDash(strings.Join(r.Capabilities, ",")), src)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, r := range rows {
		if r.Problem != "" {
			fmt.Fprintf(cmd.ErrOrStderr(), "%s: %s\n", r.Name, r.Problem)
		}
	}
	return nil
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// started lists the enabled plugins with capability c, started, and says
// on stderr which could not start.
func started(cmd *cobra.Command, env *pluginEnv, c string) []string {
	var names []string
	for _, in := range env.host.Installed() {
		if in.Problem == nil && in.Manifest.Has(c) && env.host.Enabled(in.Name) {
			names = append(names, in.Name)
		}
	}
	failed := env.host.Start(cmd.Context(), names...)
	var ok []string
	for _, n := range names {
		if err := failed[n]; err != nil {
			fmt.Fprintf(cmd.ErrOrStderr(), "reel: %v\n", err)
			continue
		}
		ok = append(ok, n)
	}
	return ok
}

func listOperations(cmd *cobra.Command, env *pluginEnv, asJSON bool) error {
	return listOffered(cmd, env, plugin.CapOperations, builtinOperations(), env.host.Operations, "NAME", asJSON,
		func(o plugin.Operation) [3]string { return [3]string{o.QualifiedName(), o.Plugin, o.Description} })
}

func listStepTypes(cmd *cobra.Command, env *pluginEnv, asJSON bool) error {
	return listOffered(cmd, env, plugin.CapStepTypes, nil, env.host.StepTypes, "STEP TYPE", asJSON,
		func(t plugin.StepType) [3]string { return [3]string{t.QualifiedName(), t.Plugin, t.Description} })
}

// listOffered prints what the enabled plugins with capability c offer
// (after items): a table of name, plugin and description, or JSON.
func listOffered[T any](cmd *cobra.Command, env *pluginEnv, c string, items []T, fetch func(context.Context, string) ([]T, error), header string, asJSON bool, cols func(T) [3]string) error {
	for _, n := range started(cmd, env, c) {
		more, err := fetch(cmd.Context(), n)
		if err != nil {
			fmt.Fprintf(cmd.ErrOrStderr(), "reel: %v\n", err)
			continue
		}
		items = append(items, more...)
	}
	if asJSON {
		if items == nil {
			items = []T{}
		}
		return writeJSON(cmd.OutOrStdout(), items)
	}
	tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "%s\tPLUGIN\tDESCRIPTION\n", header)
	for _, it := range items {
		c := cols(it)
		fmt.Fprintf(tw, "%s\t%s\t%s\n", c[0], c[1], firstLineOf(c[2]))
	}
	return tw.Flush()
}

// builtinOperations are reel's built-in operations, as plugin list shows
// them.
func builtinOperations() []plugin.Operation {
	var out []plugin.Operation
	for _, name := range sortedKeys(workflow.Operations) {
		p, op, _ := strings.Cut(name, ".")
		spec := workflow.Operations[name]
		o := plugin.Operation{Plugin: p, Name: op}
		for _, in := range spec.Required {
			o.Inputs = append(o.Inputs, plugin.Input{Name: in, Required: true})
		}
		for _, in := range spec.Optional {
			o.Inputs = append(o.Inputs, plugin.Input{Name: in})
		}
		out = append(out, o)
	}
	return out
}

func listValidators(cmd *cobra.Command, env *pluginEnv, asJSON bool) error {
	type row struct {
		Name        string `json:"name"`
		Description string `json:"description,omitempty"`
	}
	var rows []row
	for _, n := range env.host.Validators() {
		in, _ := env.host.Lookup(n)
		rows = append(rows, row{Name: n, Description: in.Manifest.Description})
	}
	if asJSON {
		return writeJSON(cmd.OutOrStdout(), rows)
	}
	tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tDESCRIPTION")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\n", r.Name, r.Description)
	}
	return tw.Flush()
}

func firstLineOf(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

type pluginInstallOptions struct {
	force, preRelease, global bool
}

func newPluginInstallCmd() *cobra.Command {
	var o pluginInstallOptions
	cmd := &cobra.Command{
		Use:   "install OWNER/REPO[@VERSION] | DIR | ARCHIVE.tar.gz",
		Short: "Install a plugin from its GitHub releases, a local directory or a local archive",
		Long: `Install a plugin:

  OWNER/REPO[@VERSION]  the release's NAME_VERSION_OS_ARCH.tar.gz for this
                        platform, checked against the release's checksum
                        file (the newest stable release without a version;
                        VERSION is exact, 1.2.3 or v1.2.3)
  DIR                   a directory holding plugin.yaml and awf-plugin-NAME
  ARCHIVE.tar.gz        a local archive in the release layout (checked
                        against checksums.txt, SHA256SUMS or
                        ARCHIVE.tar.gz.sha256 beside it when there is one)

The plugin goes into the first plugin directory that exists (the project's
.awf/plugins, else AWF's global one; --global picks the global one), and
its source and binary checksum into AWF's state file: the checksum is
verified before every start. GitHub is reached at $GITHUB_API_URL (default
https://api.github.com) with $GITHUB_TOKEN or gh's token.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runPluginInstall(cmd, args[0], o) },
	}
	cmd.Flags().BoolVar(&o.force, "force", false, "replace an installed plugin of the same name")
	cmd.Flags().BoolVar(&o.preRelease, "pre-release", false, "let a pre-release be the newest release")
	cmd.Flags().BoolVar(&o.global, "global", false, "install into AWF's global plugin directory ($XDG_DATA_HOME/awf/plugins)")
	return cmd
}

// installDir is where install puts a plugin: the first plugin directory
// that exists, else the first one (AWF's rule).
func installDir(root string, global bool) string {
	dirs := plugin.Dirs(root, os.Getenv)
	if global {
		return filepath.Join(plugin.DataDir(os.Getenv), "plugins")
	}
	for _, d := range dirs {
		if fi, err := os.Stat(d); err == nil && fi.IsDir() {
			return d
		}
	}
	return dirs[0]
}

func runPluginInstall(cmd *cobra.Command, source string, o pluginInstallOptions) error {
	env, err := openPluginEnv(cmd)
	if err != nil {
		return err
	}
	inst := plugininstall.FromEnv(os.Getenv)
	res, err := inst.Install(cmd.Context(), source, plugininstall.Options{Dir: installDir(env.proj.Root, o.global), State: env.host.State(), Force: o.force, PreRelease: o.preRelease})
	if err != nil {
		return &exitError{code: exitUser, msg: err.Error()}
	}
	verb := "installed"
	if res.Replaced {
		verb = "replaced"
	}
	fmt.Fprintf(cmd.OutOrStdout(), "plugin %s %s %s in %s (from %s)\n", res.Name, res.Version, verb, res.Dir, res.Source)
	if res.Verified != "" {
		fmt.Fprintf(cmd.OutOrStdout(), "archive verified against %s; binary SHA-256 %s stored\n", res.Verified, res.Checksum)
	} else {
		fmt.Fprintf(cmd.OutOrStdout(), "binary SHA-256 %s stored (no checksum file to verify the source against)\n", res.Checksum)
	}
	if !env.host.Enabled(res.Name) {
		fmt.Fprintf(cmd.OutOrStdout(), "it is disabled: reel plugin enable %s\n", res.Name)
	}
	return nil
}

func newPluginUpdateCmd() *cobra.Command {
	var all bool
	cmd := &cobra.Command{
		Use:   "update NAME... | --all",
		Short: "Update installed plugins to their source's newest release",
		Long: `Update installed plugins: a plugin installed from GitHub to its
repository's newest stable release, one installed from a local directory
or archive from that path again when it holds another binary.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 && !all {
				return &exitError{code: exitUser, msg: "name the plugins to update, or give --all"}
			}
			return runPluginUpdate(cmd, args, all)
		},
	}
	cmd.Flags().BoolVar(&all, "all", false, "update every plugin installed from a source")
	return cmd
}

func runPluginUpdate(cmd *cobra.Command, names []string, all bool) error {
	env, err := openPluginEnv(cmd)
	if err != nil {
		return err
	}
	targets, err := env.targets(names, all, func(in *plugin.Installed) bool { return env.host.State().Source(in.Name) != nil })
	if err != nil {
		return err
	}
	inst := plugininstall.FromEnv(os.Getenv)
	failed := 0
	for _, in := range targets {
		res, up, err := inst.Update(cmd.Context(), in, env.host.State())
		switch {
		case err != nil:
			failed++
			fmt.Fprintf(cmd.ErrOrStderr(), "reel: %v\n", err)
		case up:
			fmt.Fprintf(cmd.OutOrStdout(), "plugin %s updated to %s\n", in.Name, res.Version)
		default:
			fmt.Fprintf(cmd.OutOrStdout(), "plugin %s is up to date (%s)\n", in.Name, res.Version)
		}
	}
	if failed > 0 {
		return &exitError{code: exitUser, msg: fmt.Sprintf("%d plugin(s) not updated", failed)}
	}
	return nil
}

// pluginRemoveOptions are the flags of `reel plugin remove`.
type pluginRemoveOptions struct {
	keep bool
}

func newPluginRemoveCmd() *cobra.Command {
	var o pluginRemoveOptions
	cmd := &cobra.Command{
		Use:   "remove NAME",
		Short: "Remove an installed plugin and its state",
		Args:  cobra.ExactArgs(1),
		RunE:  func(cmd *cobra.Command, args []string) error { return runPluginRemove(cmd, args, &o) },
	}
	cmd.Flags().BoolVar(&o.keep, "keep-config", false, "keep the plugin's configuration and enabled state for a later install")
	cmd.Flags().BoolVar(&o.keep, "keep-data", false, "AWF's name for --keep-config")
	return cmd
}

func runPluginRemove(cmd *cobra.Command, args []string, o *pluginRemoveOptions) error {
	env, err := openPluginEnv(cmd)
	if err != nil {
		return err
	}
	in, err := env.find(args[0])
	if err != nil {
		return err
	}
	if err := plugininstall.Remove(in, env.host.State(), o.keep); err != nil {
		return &exitError{code: exitSystem, msg: err.Error()}
	}
	fmt.Fprintf(cmd.OutOrStdout(), "plugin %s removed from %s\n", in.Name, in.Dir)
	return nil
}

func newPluginEnableCmd(on bool) *cobra.Command {
	use, short := "enable NAME", "Enable an installed plugin"
	if !on {
		use, short = "disable NAME", "Disable a plugin: its operations, step types, validators and events stop working"
	}
	return &cobra.Command{
		Use:   use,
		Short: short,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			env, err := openPluginEnv(cmd)
			if err != nil {
				return err
			}
			if slices.Contains(builtinPlugins, args[0]) {
				return &exitError{code: exitUser, msg: fmt.Sprintf("plugin %s is built into reel and cannot be disabled", args[0])}
			}
			in, err := env.find(args[0])
			if err != nil {
				return err
			}
			st := env.host.State()
			if err := st.SetEnabled(in.Name, on); err != nil {
				return &exitError{code: exitUser, msg: err.Error()}
			}
			if err := st.Save(); err != nil {
				return &exitError{code: exitSystem, msg: err.Error()}
			}
			word := "enabled"
			if !on {
				word = "disabled"
			}
			fmt.Fprintf(cmd.OutOrStdout(), "plugin %s %s\n", in.Name, word)
			return nil
		},
	}
}

func newPluginVerifyCmd() *cobra.Command {
	var update, asJSON bool
	cmd := &cobra.Command{
		Use:   "verify [NAME...]",
		Short: "Check installed plugins' binaries against their stored SHA-256",
		Long: `Check the SHA-256 of installed plugins' binaries against the checksum
stored when they were installed: pass, fail (the binary changed: the
plugin will not start) or missing (nothing stored: it starts unverified).
--update stores the binaries' current checksums (for a plugin built or
copied by hand, or one you rebuilt). Exit status 1 when one fails or is
missing.`,
		RunE: func(cmd *cobra.Command, args []string) error { return runPluginVerify(cmd, args, update, asJSON) },
	}
	cmd.Flags().BoolVar(&update, "update", false, "store the binaries' current checksums")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func runPluginVerify(cmd *cobra.Command, names []string, update, asJSON bool) error {
	env, err := openPluginEnv(cmd)
	if err != nil {
		return err
	}
	targets, err := env.targets(names, len(names) == 0, func(in *plugin.Installed) bool {
		return in.Problem == nil || !errors.Is(in.Problem, os.ErrNotExist)
	})
	if err != nil {
		return err
	}
	var verdicts []plugin.Verdict
	bad := 0
	for _, in := range targets {
		v := plugin.Verify(in, env.host.State(), update)
		if v.Status == plugin.VerifyFail || v.Status == plugin.VerifyMissing {
			bad++
		}
		verdicts = append(verdicts, v)
	}
	if update {
		if err := env.host.State().Save(); err != nil {
			return &exitError{code: exitSystem, msg: err.Error()}
		}
	}
	if asJSON {
		if err := writeJSON(cmd.OutOrStdout(), verdicts); err != nil {
			return err
		}
	} else {
		writeVerdicts(cmd.OutOrStdout(), verdicts)
	}
	if bad > 0 {
		return &exitError{code: exitUser, msg: fmt.Sprintf("%d plugin(s) failed verification or have no stored checksum", bad)}
	}
	return nil
}

func writeVerdicts(w io.Writer, vs []plugin.Verdict) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PLUGIN\tSTATUS\tSTORED\tACTUAL")
	for _, v := range vs {
		stored := v.Stored
		if stored == "" {
			stored = "(none)"
		}
		actual := v.Actual
		if v.Error != "" {
			actual = v.Error
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", v.Plugin, v.Status, stored, actual)
	}
	tw.Flush()
}

// pluginSearchOptions are the flags of `reel plugin search`.
type pluginSearchOptions struct {
	asJSON bool
	quiet  bool
}

func newPluginSearchCmd() *cobra.Command {
	var o pluginSearchOptions
	cmd := &cobra.Command{
		Use:   "search [QUERY]",
		Short: "Search GitHub for AWF plugins (repositories with the awf-plugin topic)",
		Args:  cobra.MaximumNArgs(1),
		RunE:  func(cmd *cobra.Command, args []string) error { return runPluginSearch(cmd, args, &o) },
	}
	cmd.Flags().BoolVar(&o.asJSON, "json", false, "print JSON")

	addFormatFlag(cmd, &o.asJSON, &o.quiet, "as text")
	return cmd
}

func runPluginSearch(cmd *cobra.Command, args []string, o *pluginSearchOptions) error {
	q := ""
	if len(args) == 1 {
		q = args[0]
	}
	res, err := plugininstall.FromEnv(os.Getenv).Search(cmd.Context(), q)
	if err != nil {
		return &exitError{code: exitSystem, msg: err.Error() + " (plugin search needs GitHub's API: install from a local directory or archive offline)"}
	}
	if o.asJSON {
		return writeJSON(cmd.OutOrStdout(), res)
	}
	if len(res) == 0 {
		fmt.Fprintln(cmd.OutOrStdout(), "no plugins found")
		return nil
	}
	tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tSTARS\tDESCRIPTION")
	for _, r := range res {
		fmt.Fprintf(tw, "%s\t%d\t%s\n", r.FullName, r.Stars, r.Description)
	}
	return tw.Flush()
}

func newPluginInitCmd() *cobra.Command {
	var o pluginscaffold.Options
	cmd := &cobra.Command{
		Use:   "init NAME",
		Short: "Create a plugin repository that builds with AWF's plugin SDK",
		Long: `Create the repository of a new plugin, written with AWF's plugin SDK
(github.com/awf-project/cli/pkg/plugin/sdk): main.go, its tests,
plugin.yaml, a Makefile (test, build, install-local, package, checksums),
a demo workflow, a README and a GitHub Actions release workflow that
publishes NAME_VERSION_OS_ARCH.tar.gz and checksums.txt as install
expects them.

NAME is the distribution name (awf-plugin-example); the runtime name
workflows use drops the awf-plugin- prefix (example.echo). --kind picks the
starting point: operation, step-type, validator or event.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Name = args[0]
			res, err := pluginscaffold.Create(o)
			if err != nil {
				return &exitError{code: exitUser, msg: err.Error()}
			}
			fmt.Fprintf(cmd.OutOrStdout(), "created %s (%s plugin %s)\n", res.Dir, o.Kind, res.ID)
			for _, f := range res.Files {
				fmt.Fprintf(cmd.OutOrStdout(), "  %s\n", f)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "next: cd %s && make test && make install-local && reel run examples/demo.yaml\n", res.Dir)
			return nil
		},
	}
	cmd.Flags().StringVar(&o.Kind, "kind", pluginscaffold.KindOperation, "operation, step-type, validator or event")
	cmd.Flags().StringVar(&o.Dir, "output", "", "directory to create (default ./NAME)")
	cmd.Flags().StringVar(&o.Module, "module", "", "Go module path (default NAME)")
	cmd.Flags().StringVar(&o.AWFModule, "awf-module", "", "a local checkout of github.com/awf-project/cli to build against (a replace directive)")
	cmd.Flags().BoolVar(&o.Force, "force", false, "write into an existing directory, replacing the files it creates")
	return cmd
}

// targets are the plugins a command acts on: those named, after, when all
// is set, every installed plugin keep accepts.
func (e *pluginEnv) targets(names []string, all bool, keep func(*plugin.Installed) bool) ([]*plugin.Installed, error) {
	var targets []*plugin.Installed
	if all {
		for _, in := range e.host.Installed() {
			if keep(in) {
				targets = append(targets, in)
			}
		}
	}
	for _, n := range names {
		in, err := e.find(n)
		if err != nil {
			return nil, err
		}
		targets = append(targets, in)
	}
	return targets, nil
}
