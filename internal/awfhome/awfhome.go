// Package awfhome decides where AWF keeps what lives outside a project, so
// that reel finds a user's global workflows, prompts, scripts, templates and
// workflow packs where AWF put them, and AWF finds what reel installs.
//
// The places are AWF's (its internal/infrastructure/xdg and the --global
// layout of its docs), computed from the environment the way AWF computes
// them:
//
//	config  $AWF_CONFIG_HOME, else $XDG_CONFIG_HOME/awf, else ~/.config/awf
//	        workflows/, prompts/, scripts/, skills/, roles/
//	data    $XDG_DATA_HOME/awf, else ~/.local/share/awf
//	        plugins/, templates/, workflow-packs/
//	cache   $XDG_CACHE_HOME/awf, else ~/.cache/awf (reel's addition)
//
// An XDG variable is taken as given, as AWF takes it. Variables that put
// one kind of file elsewhere ($AWF_WORKFLOWS_PATH, $AWF_PROMPTS_PATH, …)
// come first in a search; the Env* constants name them.
package awfhome

import (
	"os"
	"path/filepath"
)

// Environment variables AWF reads to put one kind of file elsewhere. A
// directory they name is searched before the project's and the global one.
const (
	EnvConfigHome = "AWF_CONFIG_HOME"
	EnvWorkflows  = "AWF_WORKFLOWS_PATH"
	EnvPrompts    = "AWF_PROMPTS_PATH"
	EnvSkills     = "AWF_SKILLS_PATH"
	EnvRoles      = "AWF_ROLES_PATH"
	EnvPlugins    = "AWF_PLUGINS_PATH"
)

// Dirs are AWF's global directories for one environment.
type Dirs struct {
	// Home is the user's home directory ("" when unknown).
	Home string
	// Config holds global workflows, prompts, scripts, skills and roles.
	Config string
	// Data holds plugins, step templates and workflow packs.
	Data string
	// Cache is $XDG_CACHE_HOME/awf (the .awf.cache_dir template value).
	Cache string
	// xdgConfig is $XDG_CONFIG_HOME or ~/.config, whatever
	// $AWF_CONFIG_HOME says (AWF lists packs below it).
	xdgConfig string
}

// FromEnv computes the directories from getenv (os.Getenv when nil). The
// home directory is $HOME, else the one the system knows.
func FromEnv(getenv func(string) string) Dirs {
	if getenv == nil {
		getenv = os.Getenv
	}
	home := getenv("HOME")
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	base := func(env string, fallback ...string) string {
		if d := getenv(env); d != "" {
			return d
		}
		if home == "" {
			return ""
		}
		return filepath.Join(append([]string{home}, fallback...)...)
	}
	d := Dirs{Home: home, xdgConfig: base("XDG_CONFIG_HOME", ".config")}
	d.Config = getenv(EnvConfigHome)
	if d.Config == "" {
		d.Config = join(d.xdgConfig, "awf")
	}
	d.Data = join(base("XDG_DATA_HOME", ".local", "share"), "awf")
	d.Cache = join(base("XDG_CACHE_HOME", ".cache"), "awf")
	return d
}

// join is filepath.Join that keeps an unknown base unknown rather than
// making a path relative to the working directory.
func join(base string, elem ...string) string {
	if base == "" {
		return ""
	}
	return filepath.Join(append([]string{base}, elem...)...)
}

// Workflows is the global workflows directory.
func (d Dirs) Workflows() string { return join(d.Config, "workflows") }

// Prompts is the global prompts directory.
func (d Dirs) Prompts() string { return join(d.Config, "prompts") }

// Scripts is the global scripts directory.
func (d Dirs) Scripts() string { return join(d.Config, "scripts") }

// Skills is the global skills directory.
func (d Dirs) Skills() string { return join(d.Config, "skills") }

// Roles is the global roles directory.
func (d Dirs) Roles() string { return join(d.Config, "roles") }

// Plugins is the global plugins directory.
func (d Dirs) Plugins() string { return join(d.Data, "plugins") }

// Templates is the global step templates directory (AWF's
// <storage>/templates with its default storage).
func (d Dirs) Templates() string { return join(d.Data, "templates") }

// Packs is where `workflow install --global` puts workflow packs.
func (d Dirs) Packs() string { return join(d.Data, "workflow-packs") }

// PackDirs lists, in AWF's order of precedence, the global directories
// installed workflow packs are looked for in: AWF's listing reads
// $XDG_CONFIG_HOME/.awf/workflow-packs, the config directory's
// workflow-packs, the data directory's (where --global installs) and the
// legacy ~/.awf/workflow-packs, after the project's own.
func (d Dirs) PackDirs() []string {
	var out []string
	add := func(p string) {
		if p == "" {
			return
		}
		for _, x := range out {
			if x == p {
				return
			}
		}
		out = append(out, p)
	}
	add(join(d.xdgConfig, ".awf", "workflow-packs"))
	add(join(d.Config, "workflow-packs"))
	add(d.Packs())
	add(join(d.Home, ".awf", "workflow-packs"))
	return out
}

// Template namespace keys: the .awf values every workflow reads, and the
// one a pack's workflows add.
const (
	KeyPackName = "pack_name"
)

// Keys lists the keys of the .awf template namespace (Namespace), in the
// order reel documents them. pack_name is set only for a pack's
// workflows (empty elsewhere).
var Keys = []string{"config_dir", "data_dir", "cache_dir", "prompts_dir", "scripts_dir", "skills_dir", "roles_dir", "workflows_dir", "plugins_dir", KeyPackName}

// Namespace is the .awf template namespace: AWF's directories by key, and
// the name of the pack the workflow belongs to ("" outside a pack).
func (d Dirs) Namespace(pack string) map[string]string {
	return map[string]string{
		"config_dir":    d.Config,
		"data_dir":      d.Data,
		"cache_dir":     d.Cache,
		"prompts_dir":   d.Prompts(),
		"scripts_dir":   d.Scripts(),
		"skills_dir":    d.Skills(),
		"roles_dir":     d.Roles(),
		"workflows_dir": d.Workflows(),
		"plugins_dir":   d.Plugins(),
		KeyPackName:     pack,
	}
}
