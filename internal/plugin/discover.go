package plugin

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// EnvPluginsPath is AWF's variable naming the plugin directory: when set it
// is the only one searched (reel also takes a list, separated by ':').
const EnvPluginsPath = "AWF_PLUGINS_PATH"

// BinaryPrefix starts every plugin executable's name.
const BinaryPrefix = "awf-plugin-"

// Dirs are the plugin directories in the order AWF searches them:
// $AWF_PLUGINS_PATH alone when set, else the project's .awf/plugins, then
// $XDG_DATA_HOME/awf/plugins. getenv reads the environment.
func Dirs(projectRoot string, getenv func(string) string) []string {
	if p := getenv(EnvPluginsPath); p != "" {
		return filepath.SplitList(p)
	}
	var dirs []string
	if projectRoot != "" {
		dirs = append(dirs, filepath.Join(projectRoot, ".awf", "plugins"))
	}
	return append(dirs, filepath.Join(DataDir(getenv), "plugins"))
}

// DataDir is AWF's data directory, $XDG_DATA_HOME/awf (~/.local/share/awf),
// which holds the global plugin directory and its state file.
func DataDir(getenv func(string) string) string {
	if d := getenv("XDG_DATA_HOME"); d != "" {
		return filepath.Join(d, "awf")
	}
	home := getenv("HOME")
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	return filepath.Join(home, ".local", "share", "awf")
}

// StatePath is where AWF keeps its plugin state file.
func StatePath(getenv func(string) string) string {
	return filepath.Join(DataDir(getenv), "plugins", StateFile)
}

// Installed is a plugin found in a plugin directory.
type Installed struct {
	// Name is the manifest's name (the directory's when the manifest
	// cannot be read).
	Name string
	// Dir is the plugin's directory and Binary its executable.
	Dir    string
	Binary string
	// Manifest is nil when Problem says why it could not be read.
	Manifest *Manifest
	// Problem, when set, is why the plugin cannot run.
	Problem error
}

// BinaryName is the executable AWF runs for a plugin directory named dir:
// awf-plugin-DIR, or DIR itself when it already starts with awf-plugin-.
func BinaryName(dir string) string {
	base := filepath.Base(dir)
	if strings.HasPrefix(base, BinaryPrefix) {
		return base
	}
	return BinaryPrefix + base
}

// Discover lists the plugins of dirs: every subdirectory holding a
// plugin.yaml. A name found in an earlier directory shadows later ones.
// Directories that do not exist are skipped.
func Discover(dirs []string) []*Installed {
	seen := map[string]bool{}
	var out []*Installed
	for _, dir := range dirs {
		entries, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, de := range entries {
			sub := filepath.Join(dir, de.Name())
			if fi, err := os.Stat(sub); err != nil || !fi.IsDir() {
				continue
			}
			if _, err := os.Stat(filepath.Join(sub, ManifestFile)); err != nil {
				continue
			}
			in := Inspect(sub)
			if seen[in.Name] {
				continue
			}
			seen[in.Name] = true
			out = append(out, in)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Inspect reads the plugin in dir: its manifest and its executable.
func Inspect(dir string) *Installed {
	in := &Installed{Name: filepath.Base(dir), Dir: dir, Binary: filepath.Join(dir, BinaryName(dir))}
	m, err := ReadManifest(filepath.Join(dir, ManifestFile))
	if err != nil {
		in.Problem = err
		return in
	}
	in.Name, in.Manifest = m.Name, m
	fi, err := os.Stat(in.Binary)
	switch {
	case errors.Is(err, os.ErrNotExist):
		in.Problem = fmt.Errorf("no executable %s in %s", filepath.Base(in.Binary), dir)
	case err != nil:
		in.Problem = err
	case fi.IsDir():
		in.Problem = fmt.Errorf("%s is a directory, not an executable", in.Binary)
	case fi.Mode()&0o111 == 0:
		in.Problem = fmt.Errorf("%s is not executable (chmod +x it)", in.Binary)
	}
	return in
}
