package plugin

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// ManifestFile is the name of a plugin's manifest in its directory.
const ManifestFile = "plugin.yaml"

// Capabilities a manifest declares (AWF's names).
const (
	CapOperations = "operations"
	CapStepTypes  = "step_types"
	CapValidators = "validators"
	CapEvents     = "events"
)

var capabilities = []string{CapOperations, CapStepTypes, CapValidators, CapEvents}

// Manifest is a plugin.yaml: what the plugin is and what it offers.
type Manifest struct {
	// Name is the runtime id: workflows write NAME.op and NAME.type.
	Name        string `yaml:"name" json:"name"`
	Version     string `yaml:"version" json:"version"`
	Description string `yaml:"description,omitempty" json:"description,omitempty"`
	// AWFVersion is the AWF versions the plugin supports (">=0.4.0").
	AWFVersion   string                 `yaml:"awf_version" json:"awf_version"`
	Author       string                 `yaml:"author,omitempty" json:"author,omitempty"`
	License      string                 `yaml:"license,omitempty" json:"license,omitempty"`
	Homepage     string                 `yaml:"homepage,omitempty" json:"homepage,omitempty"`
	Capabilities []string               `yaml:"capabilities" json:"capabilities"`
	Config       map[string]ConfigField `yaml:"config,omitempty" json:"config,omitempty"`
	Events       ManifestEvents         `yaml:"events,omitempty" json:"events,omitzero"`
}

// ConfigField declares one configuration setting.
type ConfigField struct {
	Type        string   `yaml:"type" json:"type"`
	Required    bool     `yaml:"required,omitempty" json:"required,omitempty"`
	Default     any      `yaml:"default,omitempty" json:"default,omitempty"`
	Description string   `yaml:"description,omitempty" json:"description,omitempty"`
	Enum        []string `yaml:"enum,omitempty" json:"enum,omitempty"`
}

// ManifestEvents lists the event patterns a plugin subscribes to and the
// event types it may emit.
type ManifestEvents struct {
	Subscribe []string `yaml:"subscribe,omitempty" json:"subscribe,omitempty"`
	Emit      []string `yaml:"emit,omitempty" json:"emit,omitempty"`
}

// Has reports whether the manifest declares capability c.
func (m *Manifest) Has(c string) bool { return slices.Contains(m.Capabilities, c) }

var (
	nameRE    = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9_-]*$`)
	versionRE = regexp.MustCompile(`^\d+\.\d+\.\d+(-[a-zA-Z0-9.-]+)?$`)
)

// ReadManifest reads and checks the manifest at path.
func ReadManifest(path string) (*Manifest, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read manifest: %w", err)
	}
	m, err := ParseManifest(b)
	if err != nil {
		return nil, fmt.Errorf("manifest %s: %w", path, err)
	}
	return m, nil
}

// ParseManifest parses and checks a manifest's text. Unknown keys are
// allowed, as AWF allows them.
func ParseManifest(b []byte) (*Manifest, error) {
	if len(bytes.TrimSpace(b)) == 0 {
		return nil, errors.New("empty manifest")
	}
	var m Manifest
	if err := yaml.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	if err := m.check(); err != nil {
		return nil, err
	}
	return &m, nil
}

// check applies AWF's rules for a manifest it will load.
func (m *Manifest) check() error {
	var probs []string
	switch {
	case m.Name == "":
		probs = append(probs, "name is required")
	case !nameRE.MatchString(m.Name):
		probs = append(probs, fmt.Sprintf("name %q must start with a letter and hold only letters, digits, - and _", m.Name))
	}
	switch {
	case m.Version == "":
		probs = append(probs, "version is required")
	case !versionRE.MatchString(m.Version):
		probs = append(probs, fmt.Sprintf("version %q is not X.Y.Z", m.Version))
	}
	if m.AWFVersion == "" {
		probs = append(probs, "awf_version is required (such as \">=0.4.0\")")
	} else if _, err := parseConstraint(m.AWFVersion); err != nil {
		probs = append(probs, fmt.Sprintf("awf_version %q: %v", m.AWFVersion, err))
	}
	if len(m.Capabilities) == 0 {
		probs = append(probs, "capabilities lists none (operations, step_types, validators, events)")
	}
	for _, c := range m.Capabilities {
		if !slices.Contains(capabilities, c) {
			probs = append(probs, fmt.Sprintf("capability %q is not one of %s", c, strings.Join(capabilities, ", ")))
		}
	}
	for _, name := range sortedKeys(m.Config) {
		if err := m.Config[name].check(); err != nil {
			probs = append(probs, fmt.Sprintf("config.%s: %v", name, err))
		}
	}
	if len(probs) > 0 {
		return errors.New(strings.Join(probs, "; "))
	}
	return nil
}

func (f ConfigField) check() error {
	switch f.Type {
	case "string", "integer", "boolean":
	case "":
		return errors.New("type is required (string, integer or boolean)")
	default:
		return fmt.Errorf("type %q is not string, integer or boolean", f.Type)
	}
	if len(f.Enum) > 0 && f.Type != "string" {
		return errors.New("enum is allowed on string settings only")
	}
	if f.Default != nil {
		if _, err := f.coerce(f.Default); err != nil {
			return fmt.Errorf("default: %v", err)
		}
	}
	return nil
}

// coerce checks v against the setting's type (and enum), turning the text
// of a number or a boolean into one, since values written in config files
// through environment variables arrive as text.
func (f ConfigField) coerce(v any) (any, error) {
	switch f.Type {
	case "string":
		s, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("want a string, got %v", v)
		}
		if len(f.Enum) > 0 && !slices.Contains(f.Enum, s) {
			return nil, fmt.Errorf("%q is not one of %s", s, strings.Join(f.Enum, ", "))
		}
		return s, nil
	case "integer":
		return toInteger(v)
	case "boolean":
		return toBoolean(v)
	}
	return v, nil
}
