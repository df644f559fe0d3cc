package awfhome

import (
	"strings"
	"testing"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestFromEnv(t *testing.T) {
	for _, c := range []struct {
		name string
		env  map[string]string
		want map[string]string
	}{
		{"home only", map[string]string{"HOME": "/h"}, map[string]string{
			"config_dir": "/h/.config/awf", "data_dir": "/h/.local/share/awf", "cache_dir": "/h/.cache/awf",
			"prompts_dir": "/h/.config/awf/prompts", "scripts_dir": "/h/.config/awf/scripts", "skills_dir": "/h/.config/awf/skills",
			"roles_dir": "/h/.config/awf/roles", "workflows_dir": "/h/.config/awf/workflows", "plugins_dir": "/h/.local/share/awf/plugins",
			"pack_name": "",
		}},
		{"XDG", map[string]string{"HOME": "/h", "XDG_CONFIG_HOME": "/c", "XDG_DATA_HOME": "/d", "XDG_CACHE_HOME": "/k"}, map[string]string{
			"config_dir": "/c/awf", "prompts_dir": "/c/awf/prompts", "data_dir": "/d/awf", "plugins_dir": "/d/awf/plugins", "cache_dir": "/k/awf",
		}},
		// AWF_CONFIG_HOME is the config directory itself, XDG aside
		{"AWF_CONFIG_HOME", map[string]string{"HOME": "/h", "XDG_CONFIG_HOME": "/c", "AWF_CONFIG_HOME": "/x"}, map[string]string{
			"config_dir": "/x", "scripts_dir": "/x/scripts", "workflows_dir": "/x/workflows", "data_dir": "/h/.local/share/awf",
		}},
	} {
		ns := FromEnv(env(c.env)).Namespace("")
		if len(ns) != len(Keys) {
			t.Errorf("%s: keys %v, want %v", c.name, ns, Keys)
		}
		for k, v := range c.want {
			if ns[k] != v {
				t.Errorf("%s: %s = %q, want %q", c.name, k, ns[k], v)
			}
		}
	}
	if got := FromEnv(env(map[string]string{"HOME": "/h"})).Namespace("kit")[KeyPackName]; got != "kit" {
		t.Errorf("pack_name = %q", got)
	}
}

func TestPlaces(t *testing.T) {
	d := FromEnv(env(map[string]string{"HOME": "/h", "XDG_CONFIG_HOME": "/c", "XDG_DATA_HOME": "/d", "AWF_CONFIG_HOME": "/x"}))
	for got, want := range map[string]string{
		d.Workflows(): "/x/workflows", d.Prompts(): "/x/prompts", d.Scripts(): "/x/scripts", d.Roles(): "/x/roles",
		d.Templates(): "/d/awf/templates", d.Packs(): "/d/awf/workflow-packs", d.Plugins(): "/d/awf/plugins",
	} {
		if got != want {
			t.Errorf("got %s, want %s", got, want)
		}
	}
	// AWF's listing order: $XDG_CONFIG_HOME/.awf, the config directory,
	// the data directory (where --global installs), the legacy ~/.awf
	want := "/c/.awf/workflow-packs|/x/workflow-packs|/d/awf/workflow-packs|/h/.awf/workflow-packs"
	if got := strings.Join(d.PackDirs(), "|"); got != want {
		t.Errorf("PackDirs:\n got %s\nwant %s", got, want)
	}
}
