package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/reelhq/reel/internal/awfhome"
	"github.com/reelhq/reel/internal/catalog"
	"github.com/reelhq/reel/internal/pricing"
	"github.com/reelhq/reel/internal/project"
)

// shownConfig is what `reel config show --json` prints.
type shownConfig struct {
	Project     string `json:"project"`
	Found       bool   `json:"found"`
	Storage     string `json:"storage"`
	StorageRule string `json:"storage_from"`
	// WorkflowDirs are where reel run NAME looks, in order, each with its
	// scope (env is $AWF_WORKFLOWS_PATH); PackDirs where PACK/WORKFLOW
	// is, the project's first.
	WorkflowDirs []catalog.Dir `json:"workflow_dirs"`
	PackDirs     []string      `json:"pack_dirs"`
	// PromptDirs are where --input NAME=@prompts/PATH looks; ScriptDirs
	// and TemplateDirs where {{.awf.scripts_dir}}/X and use_template
	// resolve for a project workflow.
	PromptDirs   []catalog.Dir `json:"prompt_dirs"`
	ScriptDirs   []catalog.Dir `json:"script_dirs"`
	TemplateDirs []catalog.Dir `json:"template_dirs"`
	// AWF is the .awf template namespace (AWF's global directories) and
	// the variable each comes from.
	AWF map[string]shownItem `json:"awf"`
	// Files are the configuration files read, in the order applied (a
	// key set in both takes the later file's value).
	Files     []string             `json:"files"`
	Inputs    map[string]shownItem `json:"inputs"`
	Plugins   map[string]shownItem `json:"plugins"`
	Notify    map[string]shownItem `json:"notify,omitempty"`
	Telemetry map[string]shownItem `json:"telemetry,omitempty"`
	// Prices are the entries the prices key adds to or changes in reel's
	// price table, by model.
	Prices   map[string]shownItem `json:"prices,omitempty"`
	Warnings []string             `json:"warnings,omitempty"`
}

// shownItem is one configured value and the file it came from.
type shownItem struct {
	Value any    `json:"value"`
	From  string `json:"from"`
}

func newConfigCmd() *cobra.Command {
	cfg := &cobra.Command{
		Use:   "config",
		Short: "Show the project configuration",
	}
	var (
		asJSON  bool
		storage string
	)
	show := &cobra.Command{
		Use:   "show",
		Short: "Show the merged configuration, the files it came from, and where runs are stored",
		Long: `Show where reel works from the current directory: the project (the nearest
directory up holding .reel/ or .awf/), the storage and the rule that chose
it (--storage, $REEL_STORAGE, the project's .reel/storage, or the per-user
storage); where workflows, packs, prompts, scripts and templates are looked
for, in order, each with its scope (env: an AWF_*_PATH variable, local: the
project, global: AWF's global directories); AWF's directories (the .awf
template namespace) and the variable each comes from; and the configuration
merged from .awf/config.yaml (or $AWF_CONFIG_PATH) and .reel/config.yaml,
each value with the file it came from.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			p, err := findProject()
			if err != nil {
				return err
			}
			sc, err := showConfig(p, storage)
			if err != nil {
				return &exitError{code: exitUser, msg: err.Error()}
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), sc)
			}
			return writeConfig(cmd, sc)
		},
	}
	show.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	show.Flags().StringVar(&storage, "storage", "", storageUsage)
	cfg.AddCommand(show)
	return cfg
}

func showConfig(p *project.Project, storageFlag string) (*shownConfig, error) {
	dir, rule := p.StorageFrom(storageFlag)
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	cat := newEngine(p, "", nil).Catalog()
	sc := &shownConfig{Project: p.Root, Found: p.Found, Storage: dir, StorageRule: rule, WorkflowDirs: cat.Dirs(), PackDirs: cat.PackDirs(),
		PromptDirs: cat.PromptDirs(), ScriptDirs: cat.ScriptDirs(), TemplateDirs: cat.TemplateDirs(),
		Files: append([]string{}, p.Config.Files...), Inputs: map[string]shownItem{}, Plugins: map[string]shownItem{},
		Warnings: p.Config.Warnings}
	home := awfhome.FromEnv(nil)
	sc.AWF = map[string]shownItem{}
	configFrom, dataFrom := "~/.config/awf", "~/.local/share/awf"
	switch {
	case os.Getenv(awfhome.EnvConfigHome) != "":
		configFrom = "$" + awfhome.EnvConfigHome
	case os.Getenv("XDG_CONFIG_HOME") != "":
		configFrom = "$XDG_CONFIG_HOME/awf"
	}
	if os.Getenv("XDG_DATA_HOME") != "" {
		dataFrom = "$XDG_DATA_HOME/awf"
	}
	for k, v := range home.Namespace("") {
		switch k {
		case "data_dir", "plugins_dir":
			sc.AWF[k] = shownItem{v, dataFrom}
		case "cache_dir":
			sc.AWF[k] = shownItem{v, "$XDG_CACHE_HOME/awf, else ~/.cache/awf"}
		case "pack_name":
		default:
			sc.AWF[k] = shownItem{v, configFrom}
		}
	}
	// Each file again on its own, to know which one set each key.
	for _, f := range p.Config.Files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		c, err := project.ParseConfig(b, f, p.Root, strings.HasSuffix(filepath.Dir(f), ".reel"))
		if err != nil {
			return nil, err
		}
		for k, v := range c.Inputs {
			sc.Inputs[k] = shownItem{v, f}
		}
		for k, v := range c.Plugins {
			sc.Plugins[k] = shownItem{v, f}
		}
		if c.Notify.DefaultBackend != "" {
			sc.Notify = map[string]shownItem{"default_backend": {c.Notify.DefaultBackend, f}}
		}
		if c.Telemetry.Exporter != "" || c.Telemetry.ServiceName != "" {
			if sc.Telemetry == nil {
				sc.Telemetry = map[string]shownItem{}
			}
			if c.Telemetry.Exporter != "" {
				sc.Telemetry["exporter"] = shownItem{c.Telemetry.Exporter, f}
			}
			if c.Telemetry.ServiceName != "" {
				sc.Telemetry["service_name"] = shownItem{c.Telemetry.ServiceName, f}
			}
		}
		if c.Prices != nil {
			if sc.Prices == nil {
				sc.Prices = map[string]shownItem{}
			}
			for _, pr := range c.Prices.Models {
				sc.Prices[pr.Model] = shownItem{pr, f}
			}
		}
	}
	return sc, nil
}

func writeConfig(cmd *cobra.Command, sc *shownConfig) error {
	w := cmd.OutOrStdout()
	p := palette{on: useColor(cmd, w)}
	key := func(k string) string { return p.bold(fmt.Sprintf("%-10s", k)) }
	if sc.Found {
		fmt.Fprintf(w, "%s %s\n", key("project"), sc.Project)
	} else {
		fmt.Fprintf(w, "%s none (no .reel/ or .awf/ from %s up)\n", key("project"), sc.Project)
	}
	rules := map[string]string{"--storage": "from --storage", "$REEL_STORAGE": "from $REEL_STORAGE", "project": "the project's", "user": "the per-user storage: no project"}
	fmt.Fprintf(w, "%s %s %s\n", key("storage"), sc.Storage, p.dim("("+rules[sc.StorageRule]+")"))
	places := func(name string, dirs []catalog.Dir) {
		for i, d := range dirs {
			label := ""
			if i == 0 {
				label = name
			}
			fmt.Fprintf(w, "%s %s %s\n", key(label), d.Path, p.dim("("+d.Scope+")"))
		}
	}
	places("workflows", sc.WorkflowDirs)
	for i, d := range sc.PackDirs {
		label := ""
		if i == 0 {
			label = "packs"
		}
		fmt.Fprintf(w, "%s %s\n", key(label), d)
	}
	places("prompts", sc.PromptDirs)
	places("scripts", sc.ScriptDirs)
	places("templates", sc.TemplateDirs)
	if len(sc.Files) == 0 {
		fmt.Fprintf(w, "%s none (.reel/config.yaml and .awf/config.yaml are both absent)\n", key("config"))
	} else {
		fmt.Fprintf(w, "%s %s\n", key("config"), strings.Join(sc.Files, ", "))
	}
	section := func(name string, items map[string]shownItem) {
		if len(items) == 0 {
			return
		}
		fmt.Fprintf(w, "\n%s\n", p.bold(name))
		for _, k := range sortedKeys(items) {
			it := items[k]
			v := it.Value
			if pl, ok := v.(project.Plugin); ok {
				v = strings.TrimSpace(pl.Command + " " + strings.Join(pl.Args, " "))
				if pl.Timeout > 0 {
					v = fmt.Sprintf("%s (timeout %s)", v, pl.Timeout)
				}
			}
			if pr, ok := v.(pricing.Price); ok {
				v = fmt.Sprintf("input $%g, output $%g per million tokens", pr.Input, pr.Output)
			}
			fmt.Fprintf(w, "  %s = %v  %s\n", k, v, p.dim("# "+it.From))
		}
	}
	section("awf", sc.AWF)
	section("inputs", sc.Inputs)
	section("plugins", sc.Plugins)
	section("notify", sc.Notify)
	section("telemetry", sc.Telemetry)
	section("prices", sc.Prices)
	for _, warn := range sc.Warnings {
		fmt.Fprintf(cmd.ErrOrStderr(), "reel: warning: %s\n", warn)
	}
	return nil
}
