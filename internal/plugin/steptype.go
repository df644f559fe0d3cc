package plugin

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/reelhq/reel/internal/plugin/pluginv1"
)

// StepType describes a state type a plugin offers. Workflows name it
// PLUGIN.NAME; the plugin gets NAME.
type StepType struct {
	Plugin      string `json:"plugin"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
}

// QualifiedName is the type a workflow's state writes.
func (t StepType) QualifiedName() string { return t.Plugin + "." + t.Name }

// StepRequest runs one state of a plugin's type.
type StepRequest struct {
	// Type is the state's type, PLUGIN.NAME.
	Type string
	// State is the state's name.
	State string
	// Config is the state's config, its templates rendered.
	Config map[string]any
	// Inputs are the workflow's inputs.
	Inputs map[string]any
}

// StepResult is what a plugin step did, as its step records it.
type StepResult struct {
	Plugin   string         `json:"plugin"`
	StepType string         `json:"step_type"`
	Config   map[string]any `json:"config"`
	Output   string         `json:"output"`
	Data     map[string]any `json:"data,omitempty"`
	// ExitCode other than 0 fails the state, as a command's does, and
	// transitions can test it.
	ExitCode int `json:"exit_code"`
}

// ProvidesStepType reports whether typ (PLUGIN.NAME) is in the namespace
// of an installed plugin that declares step types.
func (h *Host) ProvidesStepType(typ string) bool {
	p, _, ok := split(typ)
	in, installed := h.Lookup(p)
	return ok && installed && (in.Manifest == nil || in.Manifest.Has(CapStepTypes))
}

// StepTypes lists the step types of a plugin, starting it if need be.
func (h *Host) StepTypes(ctx context.Context, plugin string) ([]StepType, error) {
	p, err := h.proc(ctx, plugin)
	if err != nil {
		return nil, err
	}
	out := make([]StepType, 0, len(p.typeNames))
	for _, n := range p.typeNames {
		out = append(out, StepType{Plugin: plugin, Name: n, Description: p.stepTypes[n].GetDescription()})
	}
	return out, nil
}

// ExecuteStep runs a state of a plugin's step type. The error is the
// host's or the plugin's (ExecuteStep answered an error); a non-zero
// ExitCode is the step's own failure.
func (h *Host) ExecuteStep(ctx context.Context, req StepRequest) (*StepResult, error) {
	plugin, short, ok := split(req.Type)
	if !ok {
		return nil, unknown("step type %q: want PLUGIN.TYPE", req.Type)
	}
	p, err := h.proc(ctx, plugin)
	if err != nil {
		return nil, err
	}
	if p.stepTypes[short] == nil {
		return nil, unknown("plugin %s has no step type %q (it has: %s)", plugin, short, strings.Join(p.typeNames, ", "))
	}
	res := &StepResult{Plugin: plugin, StepType: req.Type, Config: req.Config}
	cfg, err := json.Marshal(orEmpty(req.Config))
	if err != nil {
		return res, fmt.Errorf("%s: config: %v", req.Type, err)
	}
	inputs, err := json.Marshal(orEmpty(req.Inputs))
	if err != nil {
		return res, fmt.Errorf("%s: inputs: %v", req.Type, err)
	}
	resp, err := p.svc.stepType.ExecuteStep(ctx, &pluginv1.ExecuteStepRequest{StepName: req.State, StepType: short, Config: cfg, Inputs: inputs})
	if err != nil {
		return res, fmt.Errorf("%s: %w", req.Type, p.rpcError(ctx, err))
	}
	res.Output, res.ExitCode = resp.GetOutput(), int(resp.GetExitCode())
	if b := resp.GetData(); len(b) > 0 {
		if err := json.Unmarshal(b, &res.Data); err != nil {
			return res, fmt.Errorf("%s: the plugin answered data that is not a JSON object: %v", req.Type, err)
		}
	}
	return res, nil
}

func orEmpty(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}
