package pluginscaffold

// The templates use [[ ]] as delimiters, so that the workflow files they
// write keep their own {{ }}.

// common are the files of every kind.
var common = map[string]string{
	"go.mod": `module [[.Module]]

go 1.25.8

require [[.SDK]] [[.SDKVersion]]
[[- if .AWFModule]]

replace [[.SDK]] => [[.AWFModule]]
[[- end]]
`,
	".gitignore": `/bin/
/dist/
`,
	"Makefile": `# [[.Dist]]: build, test, install and package the plugin.
BINARY      := [[.Dist]]
ID          := [[.ID]]
VERSION     ?= $(shell sed -n 's/^version: *//p' plugin.yaml)
GOOS        ?= $(shell go env GOOS)
GOARCH      ?= $(shell go env GOARCH)
PLUGINS_DIR ?= $(HOME)/.local/share/awf/plugins
ARCHIVE     := dist/$(BINARY)_$(VERSION)_$(GOOS)_$(GOARCH).tar.gz

.PHONY: test build install-local package checksums clean

test:
	go test ./...

build:
	go build -o bin/$(BINARY) .

# install-local puts the plugin where AWF and reel look for it; then
# "reel plugin verify --update $(ID)" stores its checksum.
install-local: build
	mkdir -p $(PLUGINS_DIR)/$(ID)
	cp bin/$(BINARY) plugin.yaml $(PLUGINS_DIR)/$(ID)/

# package writes the release archive "plugin install OWNER/REPO" takes.
package: build
	mkdir -p dist
	tar -czf $(ARCHIVE) -C bin $(BINARY) -C .. plugin.yaml

checksums:
	cd dist && sha256sum *.tar.gz > checksums.txt

clean:
	rm -rf bin dist
`,
	"README.md": `# [[.Dist]]

An AWF [[.Kind]] plugin, built with AWF's plugin SDK
([[.SDK]]/pkg/plugin/sdk). It runs under AWF and under reel, which host AWF
plugins unchanged. Workflows call it by its runtime name, ` + "`[[.ID]]`" + `.

    make test            # its tests, no host needed
    make install-local   # into $(HOME)/.local/share/awf/plugins/[[.ID]]
    reel plugin verify --update [[.ID]]
    reel run examples/demo.yaml

Releases: push a tag vX.Y.Z; .github/workflows/release.yml publishes
` + "`[[.Dist]]_X.Y.Z_OS_ARCH.tar.gz`" + ` and ` + "`checksums.txt`" + `, which
` + "`reel plugin install OWNER/[[.Dist]]`" + ` (or awf plugin install) downloads and
verifies. ` + "`make package checksums`" + ` builds the same locally.
`,
	".github/workflows/release.yml": `name: release
on:
  push:
    tags: ["v*"]
permissions:
  contents: write
jobs:
  release:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-go@v5
        with:
          go-version-file: go.mod
      - run: go test ./...
      - name: package
        run: |
          for target in linux/amd64 linux/arm64 darwin/amd64 darwin/arm64; do
            make package GOOS=${target%/*} GOARCH=${target#*/} VERSION=${GITHUB_REF_NAME#v}
          done
          make checksums
      - name: publish
        env:
          GH_TOKEN: ${{ github.token }}
        run: gh release create "$GITHUB_REF_NAME" dist/*.tar.gz dist/checksums.txt --generate-notes
`,
}

// kinds are each kind's own files.
var kinds = map[string]map[string]string{
	KindOperation: {
		"plugin.yaml": `name: [[.ID]]
version: 0.1.0
description: [[.ID]] operations for AWF workflows
awf_version: ">=0.4.0"
capabilities:
  - operations
`,
		"main.go": `// Command [[.Dist]] is an AWF plugin whose operation echo answers its
// text input, prefixed. Workflows call it as [[.ID]].echo.
package main

import (
	"context"

	"[[.SDK]]/pkg/plugin/sdk"
)

// [[.Type]]Plugin offers the echo operation.
type [[.Type]]Plugin struct {
	sdk.BasePlugin
}

func newPlugin() *[[.Type]]Plugin {
	return &[[.Type]]Plugin{BasePlugin: sdk.BasePlugin{PluginName: "[[.ID]]", PluginVersion: "0.1.0"}}
}

// Operations lists the operations, by their short names.
func (p *[[.Type]]Plugin) Operations() []string { return []string{"echo"} }

// GetOperationSchema describes an operation: hosts check inputs against
// it, list it, and offer it to agents as a tool.
func (p *[[.Type]]Plugin) GetOperationSchema(name string) (sdk.OperationMeta, bool) {
	if name != "echo" {
		return sdk.OperationMeta{}, false
	}
	return sdk.OperationMeta{
		Description: "Echo text, optionally prefixed.",
		Inputs: []sdk.InputMeta{
			{Name: "text", Type: sdk.InputTypeString, Required: true, Description: "Text to echo."},
			{Name: "prefix", Type: sdk.InputTypeString, Description: "Put before the text."},
		},
		Outputs: []sdk.OutputMeta{
			{Name: "text", Type: sdk.InputTypeString, Description: "The text given."},
			{Name: "length", Type: sdk.InputTypeInteger, Description: "The length of the output."},
		},
	}, true
}

// HandleOperation runs an operation. A failure the workflow should see is
// an error result; a Go error is for what went wrong in the plugin.
func (p *[[.Type]]Plugin) HandleOperation(_ context.Context, name string, inputs map[string]any) (*sdk.OperationResult, error) {
	if name != "echo" {
		return sdk.NewErrorResult("unknown operation: " + name), nil
	}
	text, ok := sdk.GetString(inputs, "text")
	if !ok || text == "" {
		return sdk.NewErrorResult("text is required"), nil
	}
	out := sdk.GetStringDefault(inputs, "prefix", "") + text
	return sdk.NewSuccessResult(out, map[string]any{"text": text, "length": len(out)}), nil
}

func main() { sdk.Serve(newPlugin()) }
`,
		"main_test.go": `package main

import (
	"context"
	"testing"
)

func TestEcho(t *testing.T) {
	res, err := newPlugin().HandleOperation(context.Background(), "echo", map[string]any{"text": "hi", "prefix": "> "})
	if err != nil || !res.Success || res.Output != "> hi" || res.Data["length"] != 4 {
		t.Fatalf("echo: %+v %v", res, err)
	}
}

func TestEchoNeedsText(t *testing.T) {
	res, err := newPlugin().HandleOperation(context.Background(), "echo", map[string]any{})
	if err != nil || res.Success || res.Error != "text is required" {
		t.Fatalf("echo without text: %+v %v", res, err)
	}
}

func TestSchema(t *testing.T) {
	meta, ok := newPlugin().GetOperationSchema("echo")
	if !ok || len(meta.Inputs) != 2 || !meta.Inputs[0].Required {
		t.Fatalf("schema: %+v", meta)
	}
}
`,
		"examples/demo.yaml": `name: [[.ID]]-demo
version: "1.0.0"
states:
  initial: echo
  echo:
    type: operation
    operation: [[.ID]].echo
    inputs:
      text: hello
      prefix: "[[.ID]]: "
    on_success: show
  show:
    type: step
    command: echo "{{.states.echo.Response.output}} ({{.states.echo.Response.length}} characters)"
    on_success: done
  done:
    type: terminal
`,
	},
	KindStepType: {
		"plugin.yaml": `name: [[.ID]]
version: 0.1.0
description: [[.ID]] step types for AWF workflows
awf_version: ">=0.5.0"
capabilities:
  - step_types
`,
		"main.go": `// Command [[.Dist]] is an AWF plugin offering the step type greet:
// a state of type [[.ID]].greet says hello to its config's name.
package main

import (
	"context"
	"fmt"

	"[[.SDK]]/pkg/plugin/sdk"
)

// [[.Type]]Plugin offers the greet step type.
type [[.Type]]Plugin struct {
	sdk.BasePlugin
}

func newPlugin() *[[.Type]]Plugin {
	return &[[.Type]]Plugin{BasePlugin: sdk.BasePlugin{PluginName: "[[.ID]]", PluginVersion: "0.1.0"}}
}

// StepTypes lists the types by their short names; workflows write
// [[.ID]].NAME.
func (p *[[.Type]]Plugin) StepTypes() []sdk.StepTypeInfo {
	return []sdk.StepTypeInfo{{Name: "greet", Description: "Say hello to config.name"}}
}

// ExecuteStep runs a state. Its output is the state's Output, its data
// the state's Data; an exit code other than 0 fails the state.
func (p *[[.Type]]Plugin) ExecuteStep(_ context.Context, req sdk.StepExecuteRequest) (sdk.StepExecuteResult, error) {
	if req.StepType != "greet" {
		return sdk.StepExecuteResult{ExitCode: 1}, fmt.Errorf("unknown step type %q", req.StepType)
	}
	name, _ := req.Config["name"].(string)
	if name == "" {
		return sdk.StepExecuteResult{Output: "config.name is required", ExitCode: 2}, nil
	}
	return sdk.StepExecuteResult{Output: "hello " + name, Data: map[string]any{"name": name}}, nil
}

func main() { sdk.Serve(newPlugin()) }
`,
		"main_test.go": `package main

import (
	"context"
	"testing"

	"[[.SDK]]/pkg/plugin/sdk"
)

func TestGreet(t *testing.T) {
	res, err := newPlugin().ExecuteStep(context.Background(), sdk.StepExecuteRequest{StepType: "greet", Config: map[string]any{"name": "ann"}})
	if err != nil || res.ExitCode != 0 || res.Output != "hello ann" {
		t.Fatalf("greet: %+v %v", res, err)
	}
}

func TestGreetNeedsName(t *testing.T) {
	res, err := newPlugin().ExecuteStep(context.Background(), sdk.StepExecuteRequest{StepType: "greet"})
	if err != nil || res.ExitCode != 2 {
		t.Fatalf("greet without a name: %+v %v", res, err)
	}
}
`,
		"examples/demo.yaml": `name: [[.ID]]-demo
version: "1.0.0"
states:
  initial: greet
  greet:
    type: [[.ID]].greet
    config:
      name: world
    on_success: show
  show:
    type: step
    command: echo "{{.states.greet.Output}} ({{.states.greet.Data.name}})"
    on_success: done
  done:
    type: terminal
`,
	},
	KindValidator: {
		"plugin.yaml": `name: [[.ID]]
version: 0.1.0
description: [[.ID]] checks for AWF workflows
awf_version: ">=0.5.0"
capabilities:
  - validators
`,
		"main.go": `// Command [[.Dist]] is an AWF plugin that validates workflows: a
// command that deletes from the root is an error, a command without a
// timeout a warning, a workflow without a version a warning.
package main

import (
	"context"
	"strings"

	"[[.SDK]]/pkg/plugin/sdk"
)

// [[.Type]]Plugin validates workflows.
type [[.Type]]Plugin struct {
	sdk.BasePlugin
}

func newPlugin() *[[.Type]]Plugin {
	return &[[.Type]]Plugin{BasePlugin: sdk.BasePlugin{PluginName: "[[.ID]]", PluginVersion: "0.1.0"}}
}

// ValidateWorkflow checks the workflow as a whole.
func (p *[[.Type]]Plugin) ValidateWorkflow(_ context.Context, wf sdk.WorkflowDefinition) ([]sdk.ValidationIssue, error) {
	if wf.Version == "" {
		return []sdk.ValidationIssue{{Severity: sdk.SeverityWarning, Message: "workflow has no version"}}, nil
	}
	return nil, nil
}

// ValidateStep checks one state.
func (p *[[.Type]]Plugin) ValidateStep(_ context.Context, wf sdk.WorkflowDefinition, name string) ([]sdk.ValidationIssue, error) {
	step, ok := wf.Steps[name]
	if !ok || step.Type != "command" {
		return nil, nil
	}
	var issues []sdk.ValidationIssue
	if strings.Contains(step.Command, "rm -rf /") {
		issues = append(issues, sdk.ValidationIssue{Severity: sdk.SeverityError, Message: "deletes from the root", Step: name, Field: "command"})
	}
	if step.Timeout == 0 {
		issues = append(issues, sdk.ValidationIssue{Severity: sdk.SeverityWarning, Message: "command has no timeout", Step: name, Field: "timeout"})
	}
	return issues, nil
}

func main() { sdk.Serve(newPlugin()) }
`,
		"main_test.go": `package main

import (
	"context"
	"testing"

	"[[.SDK]]/pkg/plugin/sdk"
)

func TestValidateStep(t *testing.T) {
	wf := sdk.WorkflowDefinition{Name: "w", Version: "1", Steps: map[string]sdk.StepDefinition{
		"clean": {Type: "command", Command: "rm -rf /", Timeout: 5},
		"slow":  {Type: "command", Command: "sleep 1"},
	}}
	issues, err := newPlugin().ValidateStep(context.Background(), wf, "clean")
	if err != nil || len(issues) != 1 || issues[0].Severity != sdk.SeverityError {
		t.Fatalf("clean: %+v %v", issues, err)
	}
	issues, err = newPlugin().ValidateStep(context.Background(), wf, "slow")
	if err != nil || len(issues) != 1 || issues[0].Severity != sdk.SeverityWarning {
		t.Fatalf("slow: %+v %v", issues, err)
	}
}
`,
		"examples/demo.yaml": `name: [[.ID]]-demo
version: "1.0.0"
states:
  initial: hello
  hello:
    type: step
    command: echo "checked by [[.ID]] before it ran"
    timeout: 10s
    on_success: done
  done:
    type: terminal
`,
	},
	KindEvent: {
		"plugin.yaml": `name: [[.ID]]
version: 0.1.0
description: [[.ID]] logs workflow and step events
awf_version: ">=0.8.0"
capabilities:
  - events
config:
  log:
    type: string
    default: .awf/logs/[[.ID]].log
    description: the file events are appended to
events:
  subscribe:
    - "workflow.*"
    - "step.*"
    - "[[.ID]].*"
  emit:
    - "[[.ID]].*"
`,
		"main.go": `// Command [[.Dist]] is an AWF plugin that appends every workflow and step
// event to a log file (config log), and when a workflow ends emits
// [[.ID]].logged through the host, which it hears and logs too.
package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"[[.SDK]]/pkg/plugin/sdk"
)

// [[.Type]]Plugin logs events.
type [[.Type]]Plugin struct {
	sdk.BasePlugin
	mu   sync.Mutex
	log  *os.File
	host *sdk.HostClient
}

// SetHostClient gives the plugin its way to emit events at any time.
func (p *[[.Type]]Plugin) SetHostClient(c *sdk.HostClient) { p.host = c }

func newPlugin() *[[.Type]]Plugin {
	return &[[.Type]]Plugin{BasePlugin: sdk.BasePlugin{PluginName: "[[.ID]]", PluginVersion: "0.1.0"}}
}

// Init opens the log file its config names.
func (p *[[.Type]]Plugin) Init(_ context.Context, config map[string]any) error {
	path, _ := config["log"].(string)
	if path == "" {
		path = ".awf/logs/[[.ID]].log"
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	p.log = f
	return nil
}

// Shutdown closes the log.
func (p *[[.Type]]Plugin) Shutdown(context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.log == nil {
		return nil
	}
	return p.log.Close()
}

// Patterns are the events it wants (the manifest's events.subscribe is
// what hosts read).
func (p *[[.Type]]Plugin) Patterns() []string { return []string{"workflow.*", "step.*", "[[.ID]].*"} }

// HandleEvent logs an event; the events it returns are routed to their
// subscribers.
func (p *[[.Type]]Plugin) HandleEvent(ctx context.Context, ev sdk.Event) ([]sdk.Event, error) { //nolint:gocritic // the SDK's signature
	p.mu.Lock()
	if p.log != nil {
		fmt.Fprintf(p.log, "%s %s %s\n", ev.Type, ev.Metadata["workflow_name"], ev.Metadata["step_name"])
	}
	p.mu.Unlock()
	if (ev.Type == "workflow.completed" || ev.Type == "workflow.failed") && p.host != nil {
		// an emit failure must not fail the plugin
		_ = p.host.Emit(ctx, "[[.ID]].logged", nil, map[string]string{"workflow_name": ev.Metadata["workflow_name"]})
	}
	return nil, nil
}

func main() { sdk.Serve(newPlugin()) }
`,
		"main_test.go": `package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"[[.SDK]]/pkg/plugin/sdk"
)

func TestLogsEvents(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.log")
	p := newPlugin()
	if err := p.Init(context.Background(), map[string]any{"log": path}); err != nil {
		t.Fatal(err)
	}
	p.HandleEvent(context.Background(), sdk.Event{Type: "step.started", Metadata: map[string]string{"step_name": "a"}})
	p.Shutdown(context.Background())
	b, err := os.ReadFile(path)
	if err != nil || string(b) != "step.started  a\n" {
		t.Fatalf("log: %q %v", b, err)
	}
}
`,
		"examples/demo.yaml": `name: [[.ID]]-demo
version: "1.0.0"
states:
  initial: one
  one:
    type: step
    command: echo one
    on_success: two
  two:
    type: step
    command: echo two
    on_success: done
  done:
    type: terminal
`,
	},
}
