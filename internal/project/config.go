package project

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/reelhq/reel/internal/pricing"
	"gopkg.in/yaml.v3"
)

// Config is the project configuration, merged from .awf/config.yaml and
// .reel/config.yaml.
type Config struct {
	// Inputs are default workflow input values, as AWF's config gives
	// them; --input overrides them.
	Inputs map[string]any
	// Plugins are executable step types by type name (reel only).
	Plugins map[string]Plugin
	// PluginConfig holds the settings of AWF's plugins by plugin name, as
	// AWF's config file gives them under its plugins key; they are passed
	// to each plugin at Init (package plugin).
	PluginConfig map[string]map[string]any
	// Notify configures the notify.send operation.
	Notify Notify
	// Telemetry configures OpenTelemetry export of live runs.
	Telemetry Telemetry
	// Prices override and extend reel's price table (reel only): the
	// prices key names a file in the table's format (relative to the
	// project root) or lists the entries inline. Nil when not set.
	Prices *pricing.Table
	// Files lists the configuration files read, in the order applied.
	Files []string
	// Warnings name keys that were ignored (AWF keys reel has no use for,
	// or unknown keys in AWF's file, which AWF itself only warns about).
	Warnings []string
}

// Plugin is an executable step type: reel writes the step's request as JSON
// on its stdin and reads the result as JSON from its stdout.
type Plugin struct {
	// Command is resolved against the project root when it names a
	// relative path (contains a separator); a bare name is looked up on PATH.
	Command string
	Args    []string
	Timeout time.Duration
}

// Notify is the notify section (AWF's key).
type Notify struct {
	DefaultBackend string
}

// Telemetry is the telemetry section (AWF's keys).
type Telemetry struct {
	Exporter    string
	ServiceName string
}

// EnvAWFConfig names AWF's variable for its config file path, honoured in
// place of .awf/config.yaml.
const EnvAWFConfig = "AWF_CONFIG_PATH"

// LoadConfig reads the configuration of the project rooted at root. Missing
// files are an empty configuration.
func LoadConfig(root string) (*Config, error) {
	cfg := &Config{Inputs: map[string]any{}, Plugins: map[string]Plugin{}}
	awf := filepath.Join(root, ".awf", "config.yaml")
	if env := os.Getenv(EnvAWFConfig); env != "" {
		awf = env
	}
	for _, f := range []struct {
		path string
		reel bool
	}{{awf, false}, {filepath.Join(root, ".reel", "config.yaml"), true}} {
		b, err := os.ReadFile(f.path)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read project config %s: %w", f.path, err)
		}
		if err := cfg.parse(b, f.path, root, f.reel); err != nil {
			return nil, err
		}
		cfg.Files = append(cfg.Files, f.path)
	}
	return cfg, nil
}

// ParseConfig parses the text of one configuration file (path names it in
// errors; relative plugin commands resolve against root). reel selects
// reel's own file, where unknown keys are errors; in AWF's file they are
// warnings, as AWF treats them.
func ParseConfig(b []byte, path, root string, reel bool) (*Config, error) {
	cfg := &Config{Inputs: map[string]any{}, Plugins: map[string]Plugin{}}
	if err := cfg.parse(b, path, root, reel); err != nil {
		return nil, err
	}
	return cfg, nil
}

// awfOnly are keys of AWF's config that reel reads no meaning from.
var awfOnly = map[string]bool{"version": true, "log_level": true, "output_format": true}

func (c *Config) parse(b []byte, path, root string, reel bool) error {
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil
		}
		return fmt.Errorf("project config %s: %w", path, err)
	}
	if len(doc.Content) == 0 {
		return nil
	}
	top := doc.Content[0]
	if top.Kind == yaml.ScalarNode && top.Tag == "!!null" {
		return nil
	}
	if top.Kind != yaml.MappingNode {
		return fmt.Errorf("project config %s:%d:%d: want a mapping of keys", path, top.Line, top.Column)
	}
	errAt := func(n *yaml.Node, format string, args ...any) error {
		return fmt.Errorf("project config %s:%d:%d: %s", path, n.Line, n.Column, fmt.Sprintf(format, args...))
	}
	for i := 0; i+1 < len(top.Content); i += 2 {
		k, v := top.Content[i], top.Content[i+1]
		switch k.Value {
		case "inputs":
			var m map[string]any
			if err := v.Decode(&m); err != nil {
				return errAt(v, "inputs: want a mapping of input names to values")
			}
			for name, val := range m {
				switch val.(type) {
				case nil, string, bool, int, int64, uint64, float64, []any:
				default:
					return errAt(v, "inputs.%s: want a scalar or a list, got %T", name, val)
				}
				c.Inputs[name] = val
			}
		case "plugins":
			if err := c.parsePlugins(v, root, reel, errAt); err != nil {
				return err
			}
		case "prices":
			if !reel {
				c.Warnings = append(c.Warnings, fmt.Sprintf("%s:%d: prices are read from .reel/config.yaml only; ignored here", path, k.Line))
				continue
			}
			t, err := parsePrices(v, root)
			if err != nil {
				return errAt(v, "prices: %v", err)
			}
			c.Prices = t
		case "notify":
			var n struct {
				DefaultBackend string `yaml:"default_backend"`
			}
			if err := v.Decode(&n); err != nil {
				return errAt(v, "notify: %v", err)
			}
			if n.DefaultBackend != "" {
				c.Notify.DefaultBackend = n.DefaultBackend
			}
		case "telemetry":
			var t struct {
				Exporter    string `yaml:"exporter"`
				ServiceName string `yaml:"service_name"`
			}
			if err := v.Decode(&t); err != nil {
				return errAt(v, "telemetry: %v", err)
			}
			if t.Exporter != "" {
				c.Telemetry.Exporter = t.Exporter
			}
			if t.ServiceName != "" {
				c.Telemetry.ServiceName = t.ServiceName
			}
		default:
			if !reel {
				if !awfOnly[k.Value] {
					c.Warnings = append(c.Warnings, fmt.Sprintf("%s:%d: unknown configuration key %q ignored", path, k.Line, k.Value))
				}
				continue
			}
			return errAt(k, "unknown key %q (known: inputs, notify, plugins, prices, telemetry)", k.Value)
		}
	}
	return nil
}

// parsePrices reads the prices key: a file name (resolved against root), a
// list of entries, or a mapping in the price table's own format.
func parsePrices(v *yaml.Node, root string) (*pricing.Table, error) {
	switch v.Kind {
	case yaml.ScalarNode:
		if v.Value == "" {
			return nil, errors.New("want a file name or a list of prices")
		}
		file := v.Value
		if !filepath.IsAbs(file) {
			file = filepath.Join(root, file)
		}
		b, err := os.ReadFile(file)
		if err != nil {
			return nil, err
		}
		return pricing.Parse(b, file)
	case yaml.SequenceNode:
		var entries []pricing.Price
		if err := v.Decode(&entries); err != nil {
			return nil, err
		}
		return pricing.FromEntries(entries)
	case yaml.MappingNode:
		b, err := yaml.Marshal(v)
		if err != nil {
			return nil, err
		}
		return pricing.Parse(b, "inline")
	}
	return nil, errors.New("want a file name or a list of prices")
}

// parsePlugins reads the plugins key: in .reel/config.yaml reel's own
// plugin commands, in .awf/config.yaml AWF's settings for its plugins.
func (c *Config) parsePlugins(v *yaml.Node, root string, reel bool, errAt func(*yaml.Node, string, ...any) error) error {
	if !reel {
		// AWF's plugins key: settings for its plugins
		var m map[string]map[string]any
		if err := v.Decode(&m); err != nil {
			return errAt(v, "plugins: want a mapping of plugin names to their settings: %v", err)
		}
		if c.PluginConfig == nil {
			c.PluginConfig = map[string]map[string]any{}
		}
		for name, settings := range m {
			c.PluginConfig[name] = settings
		}
		return nil
	}
	var raw map[string]struct {
		Command string   `yaml:"command"`
		Args    []string `yaml:"args"`
		Timeout string   `yaml:"timeout"`
	}
	if err := v.Decode(&raw); err != nil {
		return errAt(v, "plugins: %v", err)
	}
	names := make([]string, 0, len(raw))
	for n := range raw {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		pl := raw[name]
		if pl.Command == "" {
			return errAt(v, "plugin %q has no command", name)
		}
		cmd := pl.Command
		if !filepath.IsAbs(cmd) && filepath.Base(cmd) != cmd {
			cmd = filepath.Join(root, cmd)
		}
		plugin := Plugin{Command: cmd, Args: pl.Args}
		if pl.Timeout != "" {
			d, err := time.ParseDuration(pl.Timeout)
			if err != nil {
				return errAt(v, "plugin %q timeout: %v", name, err)
			}
			plugin.Timeout = d
		}
		c.Plugins[name] = plugin
	}
	return nil
}
