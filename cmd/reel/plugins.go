package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/reelhq/reel/internal/engine"
	"github.com/reelhq/reel/internal/plugin"
	"github.com/reelhq/reel/internal/project"
	"github.com/reelhq/reel/internal/workflow"
)

// openPlugins finds the AWF plugins a command in project p can use: in
// $AWF_PLUGINS_PATH, else the project's .awf/plugins and AWF's global
// directory, with AWF's state file and the project's .awf/plugins.yaml.
// Nothing starts until a plugin is needed; log receives what plugins
// print (nil drops it). A state file that cannot be read is reported on
// log and replaced by an empty state: plugins then start enabled and
// unverified, as AWF starts them.
func openPlugins(p *project.Project, log io.Writer) *plugin.Host {
	st, err := plugin.LoadState(plugin.StatePath(os.Getenv), filepath.Join(p.Root, ".awf", plugin.ProjectFile))
	if err != nil {
		if log != nil {
			fmt.Fprintf(log, "reel: plugins: %v\n", err)
		}
		st, _ = plugin.LoadState("", "")
	}
	return plugin.Open(plugin.Options{
		Dirs:   plugin.Dirs(p.Root, os.Getenv),
		State:  st,
		Config: p.Config.PluginConfig,
		Log:    log,
	})
}

// pluginLog is where a command shows what plugins print: stderr, unless
// quiet.
func pluginLog(cmd *cobra.Command, quiet bool) io.Writer {
	if quiet {
		return nil
	}
	return cmd.ErrOrStderr()
}

// pluginCheck is what runs before a workflow does (and in validate): its
// plugin operations and step types checked against their plugins, and
// the validator plugins unless skipped.
type pluginCheck struct {
	skipValidators bool
	timeout        time.Duration
	quiet          bool
}

// issues checks wf.
func (c pluginCheck) issues(ctx context.Context, e *engine.Engine, wf *workflow.Workflow) []plugin.Issue {
	issues := e.PluginHost.CheckWorkflow(ctx, wf)
	if !c.skipValidators {
		issues = append(issues, e.PluginHost.Validate(ctx, wf, c.timeout)...)
	}
	return issues
}

// run prints the issues as file:line:col: [warning: ]message and returns
// how many are errors.
func (c pluginCheck) run(ctx context.Context, e *engine.Engine, wf *workflow.Workflow, out io.Writer) int {
	errs := 0
	for _, is := range c.issues(ctx, e, wf) {
		if is.Severity == plugin.SeverityError {
			errs++
		} else if c.quiet {
			continue
		}
		fmt.Fprintln(out, e.Masker.MaskString(issueLine(wf, is)))
	}
	return errs
}

// issueLine is an issue as validate prints a problem.
func issueLine(wf *workflow.Workflow, is plugin.Issue) string {
	pos := is.Pos
	if pos.Line == 0 {
		pos = workflow.Pos{Line: 1, Col: 1}
	}
	sev := ""
	if is.Severity != plugin.SeverityError {
		sev = is.Severity + ": "
	}
	return fmt.Sprintf("%s:%d:%d: %s%s", wf.File, pos.Line, pos.Col, sev, is)
}

// addPluginCheckFlags adds AWF's --skip-plugins (and, for validate,
// --validator-timeout).
func addPluginCheckFlags(cmd *cobra.Command, c *pluginCheck, timeout bool) {
	cmd.Flags().BoolVar(&c.skipValidators, "skip-plugins", false, "do not run the validator plugins (plugin operations, step types and events still work)")
	c.timeout = plugin.DefaultValidatorTimeout
	if timeout {
		cmd.Flags().DurationVar(&c.timeout, "validator-timeout", plugin.DefaultValidatorTimeout, "how long each validator plugin may take")
	}
}
