package serve

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/reelhq/reel/internal/catalog"
	"github.com/reelhq/reel/internal/engine"
	"github.com/reelhq/reel/internal/launch"
	"github.com/reelhq/reel/internal/runstatus"
	"github.com/reelhq/reel/internal/webview"
	"github.com/reelhq/reel/internal/workflow"
)

// The pages that act: the start page (/workflows) and the forms of a run
// page that cancel or resume it. They go through the same launcher as the
// AWF API, and answer with a redirect to the run's page (Post/Redirect/Get).

// workflowsPage lists the workflows with their start forms; posted and
// refusal, when set, put back what the user posted to one of them.
func (s *Server) workflowsPage(w http.ResponseWriter, r *http.Request, status int, posted map[string]string, ref, refusal string) {
	e := s.opts.Engine
	entries, probs, err := e.Workflows()
	if err != nil {
		s.fail(w, r, http.StatusInternalServerError, "workflows", err)
		return
	}
	d := &webview.Workflows{}
	if s.launcher == nil {
		d.RunsOff = RunsOff
	}
	for _, p := range probs {
		d.Problems = append(d.Problems, fmt.Sprintf("pack %s: %v", p.Dir, p.Err))
	}
	for _, en := range entries {
		if en.ShadowedBy != "" {
			continue
		}
		scope := en.Scope
		if scope == catalog.ScopePack {
			scope = "pack " + en.Pack
		}
		wf, err := workflow.Load(en.File, e.LoadOptions())
		var f webview.WorkflowForm
		if err != nil {
			f = webview.WorkflowForm{Ref: en.Name, Scope: scope}
			var ps workflow.Problems
			if errors.As(err, &ps) {
				for _, p := range ps {
					f.Invalid = append(f.Invalid, p.String())
				}
			} else {
				f.Invalid = []string{err.Error()}
			}
		} else {
			var values map[string]string
			if en.Name == ref {
				values = posted
			}
			f = webview.FormOf(en.Name, scope, wf, values)
			if en.Name == ref {
				f.Error, f.Open = refusal, true
			}
		}
		d.Forms = append(d.Forms, f)
	}
	s.page(w, r, status, &webview.Page{Name: "workflows", Title: "workflows", Data: d})
}

func (s *Server) workflows(w http.ResponseWriter, r *http.Request) {
	s.workflowsPage(w, r, http.StatusOK, nil, "", "")
}

// runsAllowed answers 403 on a server started without runs.
func (s *Server) runsAllowed(w http.ResponseWriter, r *http.Request) bool {
	if s.launcher == nil {
		s.fail(w, r, http.StatusForbidden, "runs are off", errors.New(RunsOff))
		return false
	}
	return true
}

// startRun starts the workflow a start form posted.
func (s *Server) startRun(w http.ResponseWriter, r *http.Request) {
	if !s.runsAllowed(w, r) {
		return
	}
	if err := r.ParseForm(); err != nil {
		s.fail(w, r, http.StatusBadRequest, "bad form", err)
		return
	}
	ref := r.PostForm.Get("workflow")
	posted := map[string]string{}
	inputs := map[string]string{}
	for k, vs := range r.PostForm {
		name, ok := strings.CutPrefix(k, "in.")
		if !ok || len(vs) == 0 {
			continue
		}
		posted[name] = vs[0]
		if vs[0] != "" { // an empty field leaves the input to its default
			inputs[name] = vs[0]
		}
	}
	if ref == "" || strings.ContainsAny(ref, "\\\x00") || strings.HasPrefix(ref, "/") || strings.Contains(ref, "..") || strings.HasSuffix(ref, ".yaml") || strings.HasSuffix(ref, ".yml") {
		// Only names: the form never names a file.
		s.fail(w, r, http.StatusNotFound, "no such workflow", fmt.Errorf("workflow not found: %q", ref))
		return
	}
	run, err := s.launcher.Start(r.Context(), ref, inputs)
	if err != nil {
		var ie *engine.InputError
		var ee *engine.EnvError
		switch {
		case errors.Is(err, workflow.ErrNotFound):
			s.fail(w, r, http.StatusNotFound, "no such workflow", err)
		case errors.As(err, &ie), errors.As(err, &ee):
			s.workflowsPage(w, r, http.StatusBadRequest, posted, ref, err.Error())
		default:
			s.workflowsPage(w, r, http.StatusUnprocessableEntity, posted, ref, err.Error())
		}
		return
	}
	http.Redirect(w, r, "/runs/"+run.ID, http.StatusSeeOther)
}

// cancelRun cancels a run this server started.
func (s *Server) cancelRun(w http.ResponseWriter, r *http.Request) {
	if !s.runsAllowed(w, r) {
		return
	}
	id := r.PathValue("id")
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), 30*time.Second)
	defer cancel()
	if err := s.launcher.Cancel(ctx, id, errors.New("cancelled from the web view")); err != nil {
		status := http.StatusInternalServerError
		if errors.Is(err, launch.ErrNotLaunched) {
			status = http.StatusConflict
			err = fmt.Errorf("run %s was not started by this server, which can cancel only its own runs", id)
		}
		s.fail(w, r, status, "cannot cancel", err)
		return
	}
	http.Redirect(w, r, "/runs/"+id, http.StatusSeeOther)
}

// resumeRun resumes a failed, cancelled or interrupted run.
func (s *Server) resumeRun(w http.ResponseWriter, r *http.Request) {
	if !s.runsAllowed(w, r) {
		return
	}
	id := r.PathValue("id")
	if _, err := s.launcher.Resume(r.Context(), id, launch.ResumeOptions{}); err != nil {
		status := http.StatusConflict
		if errors.Is(err, launch.ErrNoRun) {
			status = http.StatusNotFound
		}
		s.fail(w, r, status, "cannot resume", err)
		return
	}
	http.Redirect(w, r, "/runs/"+id, http.StatusSeeOther)
}

// actions are the forms a run page offers for run.
func (s *Server) actions(run *webview.Run) *webview.Actions {
	if s.launcher == nil || run.ParentRunID != "" {
		return nil
	}
	a := &webview.Actions{}
	if lr, ok := s.launcher.Get(run.ID); ok && lr.Report() == nil {
		a.Cancel = "/runs/" + run.ID + "/cancel"
	}
	switch run.Status {
	case runstatus.Failure, runstatus.Cancelled, runstatus.Interrupted:
		a.Resume = "/runs/" + run.ID + "/resume"
	}
	if a.Cancel == "" && a.Resume == "" {
		return nil
	}
	return a
}
