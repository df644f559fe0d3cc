// Package pluginscaffold writes the repository of a new AWF plugin (reel
// plugin init): a Go program built with AWF's plugin SDK, its tests, its
// plugin.yaml, a Makefile, a demo workflow, a README and a release
// workflow that publishes archives as plugin install expects them.
//
// What it decides: the distribution name (awf-plugin-NAME: the repository,
// the executable, the release archives) and the runtime name (NAME: the
// manifest's name and the prefix workflows write) are derived from the
// one name given; the SDK is required at the AWF release reel follows
// (plugin.AWFVersion), or replaced by a local checkout; each kind
// (operation, step-type, validator, event) starts from a working plugin of
// that kind with tests that exercise it without a host.
package pluginscaffold

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/reelhq/reel/internal/plugin"
)

// Kinds of plugin.
const (
	KindOperation = "operation"
	KindStepType  = "step-type"
	KindValidator = "validator"
	KindEvent     = "event"
)

// Kinds lists them.
var Kinds = []string{KindOperation, KindStepType, KindValidator, KindEvent}

// SDKModule is AWF's module, whose pkg/plugin/sdk plugins are written
// with.
const SDKModule = "github.com/awf-project/cli"

// Options of a new plugin.
type Options struct {
	// Name is the distribution name (awf-plugin-example) or the runtime
	// name (example).
	Name string
	// Kind is one of Kinds ("" is operation).
	Kind string
	// Dir is the directory to create (./awf-plugin-NAME when "").
	Dir string
	// Module is the Go module path (the distribution name when "").
	Module string
	// AWFModule, when set, is a local checkout of AWF's module that the
	// plugin builds against (a replace directive).
	AWFModule string
	// Force writes into an existing directory.
	Force bool
}

// Result is what Create wrote.
type Result struct {
	Dir string
	// ID is the runtime name, Dist the distribution name.
	ID, Dist string
	Files    []string
}

var idRE = regexp.MustCompile(`^[a-z][a-z0-9-]*$`)

// Create writes the new plugin's repository.
func Create(o Options) (*Result, error) {
	if o.Kind == "" {
		o.Kind = KindOperation
	}
	if o.Kind == "event-listener" {
		o.Kind = KindEvent
	}
	if !slices.Contains(Kinds, o.Kind) {
		return nil, fmt.Errorf("plugin init: kind %q is not one of %s", o.Kind, strings.Join(Kinds, ", "))
	}
	id := strings.TrimPrefix(filepath.Base(o.Name), plugin.BinaryPrefix)
	if !idRE.MatchString(id) {
		return nil, fmt.Errorf("plugin init: name %q: the plugin's name must be lower case letters, digits and -, starting with a letter (such as awf-plugin-example)", o.Name)
	}
	dist := plugin.BinaryPrefix + id
	if o.Dir == "" {
		o.Dir = dist
	}
	if o.Module == "" {
		o.Module = dist
	}
	if o.AWFModule != "" {
		abs, err := filepath.Abs(o.AWFModule)
		if err != nil {
			return nil, err
		}
		if _, err := os.Stat(filepath.Join(abs, "pkg", "plugin", "sdk")); err != nil {
			return nil, fmt.Errorf("plugin init: %s is not a checkout of %s (no pkg/plugin/sdk)", o.AWFModule, SDKModule)
		}
		o.AWFModule = filepath.ToSlash(abs)
	}
	if entries, err := os.ReadDir(o.Dir); err == nil && len(entries) > 0 && !o.Force {
		return nil, fmt.Errorf("plugin init: %s exists and is not empty; --force writes into it", o.Dir)
	}
	data := map[string]any{
		"ID": id, "Dist": dist, "Module": o.Module, "Kind": o.Kind, "Type": goName(id),
		"SDK": SDKModule, "SDKVersion": "v" + plugin.AWFVersion, "AWFModule": o.AWFModule,
		"AWFVersion": plugin.AWFVersion,
	}
	set, names, err := parseKind(o.Kind)
	if err != nil {
		return nil, fmt.Errorf("plugin init: %w", err)
	}
	res := &Result{Dir: o.Dir, ID: id, Dist: dist}
	for _, name := range names {
		var b bytes.Buffer
		if err := set.ExecuteTemplate(&b, name, data); err != nil {
			return nil, fmt.Errorf("plugin init: template %s: %w", name, err)
		}
		path := filepath.Join(o.Dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			return nil, err
		}
		res.Files = append(res.Files, name)
	}
	return res, nil
}

// goName is a Go identifier for the plugin's type: example-tool → ExampleTool.
func goName(id string) string {
	var b strings.Builder
	for _, part := range strings.Split(id, "-") {
		if part != "" {
			b.WriteString(strings.ToUpper(part[:1]) + part[1:])
		}
	}
	return b.String()
}
