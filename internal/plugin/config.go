package plugin

import (
	"fmt"
	"regexp"
)

// initConfig is the configuration a plugin gets at Init: the defaults its
// manifest declares, under the settings of AWF's state file, under those
// of the project config's plugins section (.awf/config.yaml), under those
// of the project's .awf/plugins.yaml. ${VAR} in a string setting is
// replaced by the environment variable. Declared settings are checked
// against their type (the text of a number or a boolean becomes one) and
// a required one that is missing stops the plugin from starting;
// undeclared settings are passed as they are, each JSON-encoded, as AWF
// passes them.
func (h *Host) initConfig(in *Installed) (map[string]any, error) {
	cfg := map[string]any{}
	for k, f := range in.Manifest.Config {
		if f.Default != nil {
			cfg[k] = f.Default
		}
	}
	getenv := envLookup(h.environ())
	set := func(m map[string]any) {
		for k, v := range m {
			if s, ok := v.(string); ok {
				v = expandVars(s, getenv)
			}
			cfg[k] = v
		}
	}
	state := h.opts.State
	if e, ok := state.entries[in.Name]; ok {
		set(e.Config)
	}
	set(h.opts.Config[in.Name])
	set(state.project[in.Name].Config)
	for _, k := range sortedKeys(in.Manifest.Config) {
		f := in.Manifest.Config[k]
		v, ok := cfg[k]
		if !ok || v == nil || v == "" {
			if f.Required {
				return nil, fmt.Errorf("config %s is required (%s): set it under plugins.%s in .awf/config.yaml", k, f.Description, in.Name)
			}
			continue
		}
		c, err := f.coerce(v)
		if err != nil {
			return nil, fmt.Errorf("config %s: %v", k, err)
		}
		cfg[k] = c
	}
	return cfg, nil
}

// envLookup reads a variable from an environment list.
func envLookup(env []string) func(string) string {
	m := make(map[string]string, len(env))
	for _, kv := range env {
		for i := 0; i < len(kv); i++ {
			if kv[i] == '=' {
				m[kv[:i]] = kv[i+1:]
				break
			}
		}
	}
	return func(k string) string { return m[k] }
}

var varRE = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// expandVars replaces ${NAME} by the variable's value. A bare $ is left
// alone: a secret may hold one.
func expandVars(s string, getenv func(string) string) string {
	return varRE.ReplaceAllStringFunc(s, func(m string) string { return getenv(m[2 : len(m)-1]) })
}
