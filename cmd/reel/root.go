package main

import (
	"fmt"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:           "reel",
		Short:         "Run AI-agent workflows and record every exchange as a canonical transcript",
		Version:       versionString(),
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetVersionTemplate("reel {{.Version}}\n")
	root.PersistentFlags().Bool(noColorFlag, false, "never colour the output (NO_COLOR does the same)")
	root.PersistentFlags().Bool(noHintsFlag, false, `leave "did you mean" suggestions out of problems and errors`)
	root.AddCommand(
		awfUsage(newResumeCmd()),
		awfUsage(newResumeListCmd()),
		newListCmd(),
		newStatusCmd(),
		awfUsage(newDiagramCmd()),
		newConfigCmd(),
		newVersionCmd(),
		newVerifyCmd(),
		newImportCmd(),
		newExportCmd(),
		awfUsage(newRunCmd()),
		awfUsage(newValidateCmd()),
		newRunsCmd(),
		newTreeCmd(),
		newReplayCmd(),
		newTailCmd(),
		newToolsCmd(),
		newEventsCmd(),
		newStatsCmd(),
		newDiffCmd(),
		newIndexCmd(),
		newSearchCmd(),
		newServeCmd(),
		newACPServeCmd(),
		newMCPServeCmd(),
		newWorkflowCmd(),
		newInitCmd(),
		newErrorCmd(),
		newPluginCmd(),
		newTUICmd(),
	)
	addCompletions(root)
	return root
}

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print reel's version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintf(cmd.OutOrStdout(), "reel %s\n", versionString())
			return err
		},
	}
}

// versionString is the linked-in version, or the module version and VCS
// revision Go recorded in the binary.
func versionString() string {
	if version != "dev" {
		return version
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return version
	}
	v := info.Main.Version
	if v == "" || v == "(devel)" {
		v = version
	}
	for _, s := range info.Settings {
		if s.Key == "vcs.revision" && len(s.Value) >= 12 {
			v += " (" + s.Value[:12] + ")"
		}
	}
	return v + " " + info.GoVersion
}
