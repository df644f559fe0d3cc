package awfapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/reelhq/reel/internal/engine"
	"github.com/reelhq/reel/internal/launch"
	"github.com/reelhq/reel/internal/runstatus"
	"github.com/reelhq/reel/internal/workflow"
)

// Execution is a run as AWF's executions routes show it.
type Execution struct {
	ExecutionID  string    `json:"execution_id" doc:"The run id." example:"550e8400-e29b-41d4-a716-446655440000"`
	WorkflowName string    `json:"workflow_name" doc:"The workflow's name." example:"deploy-prod"`
	Status       string    `json:"status" enum:"running,completed,failed,cancelled" doc:"running, completed, failed or cancelled (a run whose process died reads failed)."`
	CurrentStep  string    `json:"current_step" doc:"The step running now; empty once the run ended." example:"build"`
	StartedAt    time.Time `json:"started_at" doc:"When the run started (RFC 3339)."`
	UpdatedAt    time.Time `json:"updated_at" doc:"When its last event was recorded (RFC 3339)."`
}

// RunWorkflowInput is the request of POST …/run.
type RunWorkflowInput struct {
	Scope string `path:"scope" doc:"local (also global and env) or a pack's name." example:"local"`
	Name  string `path:"name" doc:"The workflow's name." example:"deploy-prod"`
	Body  struct {
		Inputs map[string]any `json:"inputs" doc:"The workflow's inputs by name: strings, numbers, booleans, or arrays for array inputs. Project configuration inputs and the declared defaults fill the rest."`
	}
}

type acceptedBody struct {
	ExecutionID string `json:"execution_id" doc:"The run id." example:"550e8400-e29b-41d4-a716-446655440000"`
	Status      string `json:"status" enum:"accepted" doc:"Always accepted: the run goes on after the response."`
}

// AcceptedOutput is the response of run and resume.
type AcceptedOutput envelope[acceptedBody]

type listExecutionsBody struct {
	Executions []Execution `json:"executions" doc:"The runs this server started (and resumed), newest first."`
}

// ListExecutionsOutput is the response of GET /api/executions.
type ListExecutionsOutput envelope[listExecutionsBody]

// ExecutionInput names an execution.
type ExecutionInput struct {
	ID string `path:"id" doc:"The execution (run) id." example:"550e8400-e29b-41d4-a716-446655440000"`
}

// ExecutionOutput is the response of GET /api/executions/{id}.
type ExecutionOutput envelope[Execution]

// ResumeExecutionInput is the request of POST /api/executions/{id}/resume.
type ResumeExecutionInput struct {
	ExecutionInput
	Body struct {
		InputOverrides map[string]any `json:"input_overrides,omitempty" doc:"Inputs to give other values than the recorded ones."`
		FromStep       string         `json:"from_step,omitempty" doc:"Run this state's latest execution, and everything recorded after it, again: a state name, or current (the state the run stopped in) or previous (the one before it)." example:"build"`
	}
}

func (a *API) executionRoutes() {
	huma.Register(a.huma, huma.Operation{
		Method: http.MethodPost, Path: "/api/workflows/{scope}/{name}/run", OperationID: "run-workflow", Tags: []string{"Executions"},
		Summary: "Run a workflow", DefaultStatus: http.StatusAccepted,
		Description: "Starts the workflow as an ordinary reel run, in the server's environment and working directory, and answers once its run.started is recorded. Needs a server started with --allow-runs.",
		Errors:      []int{http.StatusBadRequest, http.StatusForbidden, http.StatusNotFound, http.StatusUnprocessableEntity, http.StatusServiceUnavailable},
	}, a.runWorkflow)
	huma.Register(a.huma, huma.Operation{
		Method: http.MethodGet, Path: "/api/executions", OperationID: "list-executions", Tags: []string{"Executions"},
		Summary: "List the executions this server started",
	}, a.listExecutions)
	huma.Register(a.huma, huma.Operation{
		Method: http.MethodGet, Path: "/api/executions/{id}", OperationID: "get-execution", Tags: []string{"Executions"},
		Summary: "Get an execution", Description: "Any run of the storage, wherever it was started.",
		Errors: []int{http.StatusNotFound},
	}, a.getExecution)
	huma.Register(a.huma, huma.Operation{
		Method: http.MethodDelete, Path: "/api/executions/{id}", OperationID: "cancel-execution", Tags: []string{"Executions"},
		Summary: "Cancel an execution", DefaultStatus: http.StatusNoContent,
		Description: "Cancels a run this server started and answers once it ended: it ends cancelled, with its run.completed, its processes gone (SIGTERM, then SIGKILL). A run that ended, or that does not exist, is not an error (AWF's idempotent cancel); a run another process runs is 409.",
		Errors:      []int{http.StatusForbidden, http.StatusConflict},
	}, a.cancelExecution)
	huma.Register(a.huma, huma.Operation{
		Method: http.MethodPost, Path: "/api/executions/{id}/resume", OperationID: "resume-execution", Tags: []string{"Executions"},
		Summary: "Resume an execution",
		Description: "Continues a failed, cancelled or interrupted run in the same transcript, as reel resume does: the execution id stays the same. " +
			"A run that succeeded or is running is 409.",
		Errors: []int{http.StatusBadRequest, http.StatusForbidden, http.StatusNotFound, http.StatusConflict, http.StatusUnprocessableEntity, http.StatusServiceUnavailable},
	}, a.resumeExecution)
}

// inputText turns AWF's JSON inputs into the text reel's inputs are given
// as (reel run --input): numbers and booleans as written, arrays and
// objects as JSON. A null is no value.
func inputText(in map[string]any) (map[string]string, error) {
	out := make(map[string]string, len(in))
	for k, v := range in {
		switch x := v.(type) {
		case nil:
			continue
		case string:
			out[k] = x
		case float64:
			out[k] = strconv.FormatFloat(x, 'f', -1, 64)
		case bool:
			out[k] = strconv.FormatBool(x)
		default:
			b, err := json.Marshal(x)
			if err != nil {
				return nil, fmt.Errorf("input %q: %v", k, err)
			}
			out[k] = string(b)
		}
	}
	return out, nil
}

func accepted(id string) *AcceptedOutput {
	out := &AcceptedOutput{}
	out.Body.Body = acceptedBody{ExecutionID: id, Status: "accepted"}
	return out
}

// startError turns a refused start or resume into AWF's statuses.
func startError(ref string, err error) error {
	var ie *engine.InputError
	var ee *engine.EnvError
	var re *engine.ResumeError
	var probs workflow.Problems
	switch {
	case errors.As(err, &ie):
		return inputError(err)
	case errors.As(err, &re):
		return huma.Error409Conflict("cannot resume execution: " + err.Error())
	case errors.Is(err, launch.ErrResume):
		return huma.Error409Conflict(err.Error())
	case errors.Is(err, launch.ErrClosed):
		return huma.Error503ServiceUnavailable("the server is stopping: " + err.Error())
	case errors.As(err, &ee):
		return huma.Error422UnprocessableEntity("failed to start execution: " + err.Error())
	case errors.As(err, &probs):
		return loadError(ref, err, "failed to start execution: ")
	case errors.Is(err, workflow.ErrNotFound):
		return huma.Error404NotFound("workflow not found: " + ref)
	}
	return huma.Error500InternalServerError("failed to start execution: " + err.Error())
}

func (a *API) runWorkflow(ctx context.Context, in *RunWorkflowInput) (*AcceptedOutput, error) {
	if err := a.runsOff(); err != nil {
		return nil, err
	}
	p := &WorkflowPath{Scope: in.Scope, Name: in.Name}
	if p.ref() == "" {
		return nil, huma.Error404NotFound("workflow not found: " + p.display())
	}
	inputs, err := inputText(in.Body.Inputs)
	if err != nil {
		return nil, huma.Error400BadRequest(err.Error())
	}
	r, err := a.opts.Launcher.Start(ctx, p.ref(), inputs)
	if err != nil {
		return nil, startError(p.display(), err)
	}
	return accepted(r.ID), nil
}

// execution reads run id's execution from its transcript.
func (a *API) execution(id, path string) (Execution, error) {
	st, err := readState(path, a.opts.Limits)
	if err != nil {
		return Execution{}, err
	}
	return Execution{ExecutionID: id, WorkflowName: st.workflow, Status: awfStatus(st.status), CurrentStep: st.current,
		StartedAt: st.started, UpdatedAt: st.updated}, nil
}

func (a *API) listExecutions(ctx context.Context, _ *struct{}) (*ListExecutionsOutput, error) {
	out := &ListExecutionsOutput{}
	out.Body.Body.Executions = []Execution{}
	if a.opts.Launcher == nil {
		return out, nil
	}
	for _, r := range a.opts.Launcher.Runs() {
		if r.Transcript == "" {
			continue
		}
		ex, err := a.execution(r.ID, r.Transcript)
		if err != nil {
			// A run whose transcript went away (storage pruned) is
			// listed from what the launcher knows.
			ex = Execution{ExecutionID: r.ID, WorkflowName: r.Workflow, Status: "failed", StartedAt: r.Started, UpdatedAt: r.Started}
		}
		out.Body.Body.Executions = append(out.Body.Body.Executions, ex)
	}
	return out, nil
}

func (a *API) getExecution(ctx context.Context, in *ExecutionInput) (*ExecutionOutput, error) {
	path, err := a.transcriptOf(in.ID)
	if err != nil {
		return nil, notFoundExecution(in.ID)
	}
	ex, err := a.execution(in.ID, path)
	if err != nil {
		return nil, huma.Error500InternalServerError("read execution " + in.ID + ": " + err.Error())
	}
	out := &ExecutionOutput{}
	out.Body.Body = ex
	return out, nil
}

func (a *API) cancelExecution(ctx context.Context, in *ExecutionInput) (*struct{}, error) {
	if err := a.runsOff(); err != nil {
		return nil, err
	}
	if _, ok := a.opts.Launcher.Get(in.ID); !ok {
		path, err := a.transcriptOf(in.ID)
		if err != nil {
			return nil, nil // AWF's idempotent cancel: nothing to cancel
		}
		if runstatus.Open(path) == runstatus.Running {
			if st, err := readState(path, a.opts.Limits); err == nil && st.status == runstatus.Running {
				return nil, huma.Error409Conflict("execution " + in.ID + " runs in another process, which this server cannot cancel: stop it there (Ctrl-C, or SIGTERM to its reel)")
			}
		}
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), a.opts.CancelWait)
	defer cancel()
	if err := a.opts.Launcher.Cancel(ctx, in.ID, errors.New("DELETE /api/executions/"+in.ID)); err != nil && !errors.Is(err, launch.ErrNotLaunched) {
		return nil, huma.Error500InternalServerError("cancel execution "+in.ID+": the run did not end in time", err)
	}
	return nil, nil
}

func (a *API) resumeExecution(ctx context.Context, in *ResumeExecutionInput) (*AcceptedOutput, error) {
	if err := a.runsOff(); err != nil {
		return nil, err
	}
	overrides, err := inputText(in.Body.InputOverrides)
	if err != nil {
		return nil, huma.Error400BadRequest(err.Error())
	}
	r, err := a.opts.Launcher.Resume(ctx, in.ID, launch.ResumeOptions{Inputs: overrides, From: in.Body.FromStep})
	if err != nil {
		if errors.Is(err, launch.ErrNoRun) {
			return nil, notFoundExecution(in.ID)
		}
		return nil, startError(in.ID, err)
	}
	return accepted(r.ID), nil
}
