package awfapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"

	"github.com/danielgtaylor/huma/v2"

	"github.com/reelhq/reel/internal/catalog"
	"github.com/reelhq/reel/internal/workflow"
)

// WorkflowSummary is one entry of GET /api/workflows.
type WorkflowSummary struct {
	Name        string `json:"name" doc:"What reel run takes: the name, or PACK/WORKFLOW for a pack's." example:"deploy-prod"`
	Scope       string `json:"scope" doc:"Where the workflow comes from: local, global, env (AWF_WORKFLOWS_PATH) or the pack's name." example:"local"`
	Workflow    string `json:"workflow" doc:"The name without the pack." example:"deploy-prod"`
	Version     string `json:"version" doc:"The workflow's version." example:"1.0.0"`
	Description string `json:"description" doc:"The workflow's description."`
}

type listWorkflowsBody struct {
	Workflows []WorkflowSummary `json:"workflows" doc:"Every workflow reel can run here, in lookup order; a name an earlier place shadows is left out."`
}

// ListWorkflowsOutput is the response of GET /api/workflows.
type ListWorkflowsOutput envelope[listWorkflowsBody]

// WorkflowPath names a workflow by scope and name.
type WorkflowPath struct {
	Scope string `path:"scope" doc:"local (also global and env: the name is looked up in catalog order) or a pack's name." example:"local"`
	Name  string `path:"name" doc:"The workflow's name." example:"deploy-prod"`
}

// ref is what reel run takes for the workflow a path names. Only names
// are looked up: a segment that would make it a file path (a separator,
// . or ..) names nothing.
func (p *WorkflowPath) ref() string {
	for _, s := range []string{p.Scope, p.Name} {
		if s == "" || s == "." || s == ".." || strings.ContainsAny(s, "/\\\x00") {
			return ""
		}
	}
	switch p.Scope {
	case "local", "global", "env":
		return p.Name
	}
	return p.Scope + "/" + p.Name
}

// display is the workflow a path names, as AWF writes it in errors.
func (p *WorkflowPath) display() string {
	switch p.Scope {
	case "local", "global", "env":
		return p.Name
	}
	return p.Scope + "/" + p.Name
}

// GetWorkflowOutput is the response of GET /api/workflows/{scope}/{name}.
type GetWorkflowOutput envelope[*Workflow]

type validateWorkflowBody struct {
	Errors []string `json:"errors" doc:"The workflow's problems, each with its file and line; null when it is valid."`
}

// ValidateWorkflowOutput is the response of POST …/validate.
type ValidateWorkflowOutput envelope[validateWorkflowBody]

func (a *API) workflowRoutes() {
	huma.Register(a.huma, huma.Operation{
		Method: http.MethodGet, Path: "/api/workflows", OperationID: "list-workflows", Tags: []string{"Workflows"},
		Summary: "List workflows", Description: "The project's, the global, AWF_WORKFLOWS_PATH's and the installed packs' workflows.",
	}, a.listWorkflows)
	huma.Register(a.huma, huma.Operation{
		Method: http.MethodGet, Path: "/api/workflows/{scope}/{name}", OperationID: "get-workflow", Tags: []string{"Workflows"},
		Summary: "Get a workflow", Description: "The workflow as AWF shows it (AWF's field names).",
		Errors: []int{http.StatusNotFound, http.StatusUnprocessableEntity},
	}, a.getWorkflow)
	huma.Register(a.huma, huma.Operation{
		Method: http.MethodPost, Path: "/api/workflows/{scope}/{name}/validate", OperationID: "validate-workflow", Tags: []string{"Workflows"},
		Summary: "Validate a workflow", Description: "Loads and checks the workflow as `reel validate` does; its problems come back in errors.",
		Errors: []int{http.StatusNotFound},
	}, a.validateWorkflow)
}

func (a *API) listWorkflows(ctx context.Context, _ *struct{}) (*ListWorkflowsOutput, error) {
	entries, _, err := a.opts.Engine.Workflows()
	if err != nil {
		return nil, huma.Error500InternalServerError("failed to list workflows: " + err.Error())
	}
	out := &ListWorkflowsOutput{}
	out.Body.Body.Workflows = []WorkflowSummary{}
	opts := a.opts.Engine.LoadOptions()
	for _, e := range entries {
		if e.ShadowedBy != "" {
			continue
		}
		s := WorkflowSummary{Name: e.Name, Scope: e.Scope, Workflow: e.Name}
		if e.Scope == catalog.ScopePack {
			s.Scope = e.Pack
			s.Workflow = strings.TrimPrefix(e.Name, e.Pack+"/")
		}
		if wf, err := workflow.Load(e.File, opts); err == nil {
			s.Version, s.Description = wf.Version, wf.Description
		}
		out.Body.Body.Workflows = append(out.Body.Body.Workflows, s)
	}
	return out, nil
}

// loadRaw loads the workflow p names, with the engine's errors.
func (a *API) loadRaw(p *WorkflowPath) (*workflow.Workflow, error) {
	ref := p.ref()
	if ref == "" {
		return nil, fmt.Errorf("%w: %s", workflow.ErrNotFound, p.display())
	}
	return a.opts.Engine.LoadWorkflow(ref)
}

// load loads the workflow p names, turning what went wrong into AWF's
// statuses.
func (a *API) load(p *WorkflowPath) (*workflow.Workflow, error) {
	wf, err := a.loadRaw(p)
	if err != nil {
		return nil, loadError(p.display(), err, "")
	}
	return wf, nil
}

// loadError is the problem of a workflow that could not be loaded: 404
// for a name that resolves to nothing, 422 for an invalid file, each
// problem an error detail.
func loadError(ref string, err error, prefix string) error {
	var probs workflow.Problems
	switch {
	case errors.Is(err, workflow.ErrNotFound), errors.Is(err, os.ErrNotExist):
		return huma.Error404NotFound("workflow not found: " + ref)
	case errors.As(err, &probs):
		details := make([]error, 0, len(probs))
		for _, p := range probs {
			details = append(details, &huma.ErrorDetail{Message: p.String(), Location: fmt.Sprintf("%s:%d", p.File, p.Pos.Line)})
		}
		return huma.Error422UnprocessableEntity(prefix+fmt.Sprintf("workflow %s is invalid: %d problem(s)", ref, probs.Errors()), details...)
	}
	return huma.Error500InternalServerError(prefix + err.Error())
}

func (a *API) getWorkflow(ctx context.Context, in *WorkflowPath) (*GetWorkflowOutput, error) {
	wf, err := a.load(in)
	if err != nil {
		return nil, err
	}
	out := &GetWorkflowOutput{}
	out.Body.Body = awfWorkflow(wf)
	return out, nil
}

func (a *API) validateWorkflow(ctx context.Context, in *WorkflowPath) (*ValidateWorkflowOutput, error) {
	out := &ValidateWorkflowOutput{}
	_, err := a.loadRaw(in)
	var probs workflow.Problems
	switch {
	case err == nil:
	case errors.As(err, &probs):
		for _, p := range probs {
			out.Body.Body.Errors = append(out.Body.Body.Errors, p.String())
		}
	default:
		return nil, loadError(in.display(), err, "")
	}
	return out, nil
}
