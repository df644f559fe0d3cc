// Package awfapi is AWF's HTTP API (`awf serve`) on reel: the routes, the
// JSON shapes and the event stream an AWF client uses, over reel's
// storage and its run launcher, with the OpenAPI 3.1 document generated
// from the handlers.
//
// What it decides:
//
//   - Shapes are AWF's, key for key: every body wrapped in {"body": …},
//     errors as RFC 7807 problems ({"title","status","detail","errors"}),
//     a workflow as AWF's Go structs serialize it, history statistics
//     with AWF's capitalized keys. Statuses are AWF's words: running,
//     completed, failed, cancelled (reel's interrupted, a run whose
//     process died, reads failed).
//   - The execution id is the run id: every run the API starts is an
//     ordinary run of the storage (package launch), so
//     GET /api/executions/{id} answers for any run, wherever it was
//     started, and `reel resume ID` continues a run started here.
//     GET /api/executions lists the runs this server started, as AWF's
//     does.
//   - Where AWF's server and its documentation disagree, or AWF answers
//     with a status that hides the cause, reel takes the documented or
//     the precise answer: 404 for an unknown pack, a workflow or an
//     execution that does not exist (event stream included); 400 for
//     inputs that do not fit the workflow, before anything runs; 409 for a
//     resume of a run that cannot be resumed (it succeeded or is running)
//     or a cancel of a run another process runs; validate answers 200 and
//     lists the problems. docs/api.md lists each difference.
//   - Running is off unless the server was given a launcher: without one
//     the routes that start, cancel or resume runs answer 403 and say how
//     to turn them on. Who may call the API at all (loopback, the token,
//     the Host check, cross-site requests) is package serve's to decide.
//   - The event stream (GET /api/executions/{id}/events) sends AWF's
//     frames, data lines with a "kind" ({"kind":"step.started",
//     "run_id","seq","status","step"}), one per transcript event of the
//     run's current attempt, ending after workflow.completed or
//     workflow.failed. Each frame carries the transcript seq as its SSE
//     id, so a client that reconnects with Last-Event-ID misses nothing
//     and sees nothing twice.
package awfapi

import (
	"errors"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humago"

	"github.com/reelhq/reel/internal/engine"
	"github.com/reelhq/reel/internal/index"
	"github.com/reelhq/reel/internal/launch"
	"github.com/reelhq/reel/internal/runs"
	"github.com/reelhq/reel/transcript"
)

// Options configure the API.
type Options struct {
	// Engine finds, loads and validates workflows (its catalog); its
	// Storage is the storage the executions are read from.
	Engine *engine.Engine
	// Launcher starts, cancels and resumes runs; nil turns those routes
	// off (403).
	Launcher *launch.Launcher
	// Index answers the history routes.
	Index *index.Index
	// Limits bound the transcript lines read.
	Limits transcript.Limits
	// Poll is how often an event stream looks for new lines (default
	// 100ms).
	Poll time.Duration
	// CancelWait bounds how long DELETE /api/executions/{id} waits for the
	// run to end (default 30s).
	CancelWait time.Duration
	// RunsOff is the detail of the 403 the running routes answer without
	// a launcher.
	RunsOff string
	// Version is reel's version, the document's info.version.
	Version string
}

// envelope is a response in AWF's envelope, {"body": T}. Each response
// is a defined type over it, so that its schemas keep the response's own
// name (ListWorkflowsOutputBody).
type envelope[T any] struct {
	Body struct {
		Body T `json:"body"`
	}
}

// API serves AWF's routes.
type API struct {
	opts Options
	huma huma.API
}

// Register adds AWF's routes, /openapi.json, /openapi.yaml, /schemas/… and
// the interactive reference at /docs to mux.
func Register(mux *http.ServeMux, opts Options) *API {
	if opts.Poll <= 0 {
		opts.Poll = 100 * time.Millisecond
	}
	if opts.CancelWait <= 0 {
		opts.CancelWait = 30 * time.Second
	}
	if opts.RunsOff == "" {
		opts.RunsOff = "starting, cancelling and resuming runs is off on this server"
	}
	if opts.Version == "" {
		opts.Version = "v1"
	}
	cfg := huma.DefaultConfig("reel API (AWF-compatible)", opts.Version)
	cfg.Info.Description = "AWF's HTTP API on reel: discover, validate, run, follow, cancel and resume workflows. " +
		"Every execution is an ordinary reel run (execution id = run id), recorded as a transcript in the storage. " +
		"Runs started over HTTP use the server's environment and working directory."
	cfg.DocsPath = "" // our own, embedded: serveDocs
	a := &API{opts: opts, huma: humago.New(mux, cfg)}
	a.workflowRoutes()
	a.executionRoutes()
	a.eventRoutes()
	a.historyRoutes()
	registerDocs(mux)
	return a
}

// OpenAPI is the generated document.
func (a *API) OpenAPI() *huma.OpenAPI { return a.huma.OpenAPI() }

// Huma is the underlying API, for routes of the same server documented in
// the same document.
func (a *API) Huma() huma.API { return a.huma }

// transcriptOf is the transcript of run id in the storage, or an error
// when there is none.
func (a *API) transcriptOf(id string) (string, error) {
	r, err := runs.NewStore(a.opts.Engine.Storage, runs.Options{}).ID(id)
	if err != nil {
		return "", err
	}
	return r.Path, nil
}

func notFoundExecution(id string) error {
	return huma.Error404NotFound("execution not found: " + id)
}

// runsOff answers the running routes of a server started without them.
func (a *API) runsOff() error {
	if a.opts.Launcher == nil {
		return huma.Error403Forbidden(a.opts.RunsOff)
	}
	return nil
}

// inputError is the 400 of inputs that do not fit.
func inputError(err error) error {
	var ie *engine.InputError
	if errors.As(err, &ie) {
		details := make([]error, len(ie.Problems))
		for i, p := range ie.Problems {
			details[i] = &huma.ErrorDetail{Message: p, Location: "body.inputs"}
		}
		return huma.Error400BadRequest(err.Error(), details...)
	}
	return huma.Error400BadRequest(err.Error())
}
