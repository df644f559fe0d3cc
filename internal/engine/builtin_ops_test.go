package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reelhq/reel/internal/exitcode"

	"github.com/reelhq/reel/transcript"
)

// opStepResult decodes a built-in operation's step result.
func opStepResult(t *testing.T, rep *Report, path string) (opResult, string) {
	t.Helper()
	var ev transcript.ExchangeEvent
	for _, e := range readAll(t, rep.TranscriptPath) {
		if e.Type == transcript.StepCompleted && e.Path == path {
			ev = e // the last attempt
		}
	}
	var res opResult
	if p := ev.Step(); p == nil || p.Result == nil {
		t.Fatalf("no result at %s", path)
	}
	if err := transcript.DecodeResult(ev.Step().Result, &res); err != nil {
		t.Fatal(err)
	}
	return res, ev.Step().Error
}

// github.* operations call the REST API named by GITHUB_API_URL with
// GITHUB_TOKEN; their outputs are .states.NAME.Response (and .Output, their
// JSON), as AWF exposes them.
func TestGitHubOperations(t *testing.T) {
	var flaky atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer ghp_test" {
			w.WriteHeader(401)
			io.WriteString(w, `{"message":"Bad credentials"}`)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.Method == "GET" && r.URL.Path == "/repos/acme/app/issues/42":
			io.WriteString(w, `{"number":42,"title":"Crash on start","body":"boom","state":"open","labels":[{"node_id":"L1","name":"bug","color":"f00"}],"user":{"login":"ann"}}`)
		case r.Method == "POST" && r.URL.Path == "/repos/acme/app/issues/42/comments":
			var body map[string]string
			json.NewDecoder(r.Body).Decode(&body)
			if body["body"] != "Looking at: Crash on start" {
				t.Errorf("comment %v", body)
			}
			if flaky.Add(1) < 3 {
				w.WriteHeader(502)
				io.WriteString(w, `{"message":"Server Error"}`)
				return
			}
			w.WriteHeader(201)
			io.WriteString(w, `{"id":77,"html_url":"https://github.com/acme/app/issues/42#issuecomment-77"}`)
		default:
			w.WriteHeader(404)
			io.WriteString(w, `{"message":"Not Found"}`)
		}
	}))
	defer srv.Close()
	h := newHarness(t)
	h.e.Environ = append(os.Environ(), "GITHUB_API_URL="+srv.URL, "GITHUB_TOKEN=ghp_test")
	rep := h.run(context.Background(), `
name: gh
inputs: [{name: issue, default: "42"}]
states:
  initial: get
  get:
    type: operation
    operation: github.get_issue
    inputs: {number: '{{.inputs.issue}}', repo: acme/app}
    capture: {stdout: issue_json}
    on_success: comment
  comment:
    type: operation
    operation: github.add_comment
    inputs:
      number: '{{.states.get.Response.number}}'
      repo: acme/app
      body: 'Looking at: {{.states.get.Response.title}}'
    retry: {max_attempts: 3}
    on_success: show
  show:
    type: step
    command: 'echo "{{.states.get.Response.state}} {{(index .states.get.Response.labels 0).name}} {{.states.comment.Response.comment_id}}"; echo ''{{.states.get.Output}}'''
    on_success: missing
  missing:
    type: operation
    operation: github.get_issue
    inputs: {number: 404, repo: acme/app}
    retry: {max_attempts: 3}
`, nil)
	if rep.Status != "failure" || rep.ExitCode != exitcode.Execution || !strings.Contains(rep.Error, "github.get_issue: GitHub API GET /repos/acme/app/issues/404: 404 Not Found") {
		t.Fatalf("report %+v", rep)
	}
	cr, _ := commandResult(t, rep, "show")
	want := "OPEN bug 77\n" + `{"body":"boom","labels":[{"color":"f00","description":"","id":"L1","name":"bug"}],"number":42,"state":"OPEN","title":"Crash on start"}` + "\n"
	if cr.Output != want {
		t.Fatalf("show:\n%q\nwant\n%q", cr.Output, want)
	}
	get, _ := opStepResult(t, rep, "get")
	if get.Operation != "github.get_issue" || get.Outputs["title"] != "Crash on start" || len(get.Requests) != 1 || get.Requests[0].Status != 200 ||
		!strings.HasPrefix(get.Captured["issue_json"], `{"body":"boom"`) {
		t.Fatalf("get result %+v", get)
	}
	// a 502 is retried, a 404 is not
	got := events(t, rep.TranscriptPath)
	var attempts []string
	for _, e := range got {
		if strings.HasPrefix(e, "step.completed comment@") || strings.HasPrefix(e, "step.completed missing@") {
			attempts = append(attempts, e)
		}
	}
	if strings.Join(attempts, "\n") != "step.completed comment@0 operation:comment a1 !\nstep.completed comment@0 operation:comment a2 !\nstep.completed comment@0 operation:comment a3\nstep.completed missing@0 operation:missing a1 !" {
		t.Fatalf("attempts:\n%s", strings.Join(attempts, "\n"))
	}
	if !strings.Contains(h.display.String(), "get │ GET /repos/acme/app/issues/42 → 200") {
		t.Fatalf("display:\n%s", h.display.String())
	}
}

// notify.send delivers through the backend the step names, else the
// project's notify.default_backend.
func TestNotifySend(t *testing.T) {
	var bodies []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		bodies = append(bodies, string(b))
		w.WriteHeader(200)
		io.WriteString(w, "ok")
	}))
	defer srv.Close()
	h := newHarness(t)
	bin := filepath.Join(h.dir, "bin")
	h.write("bin/notify-send", "#!/bin/sh\necho \"$@\" >> "+filepath.Join(h.dir, "desktop.log")+"\n")
	os.Chmod(filepath.Join(bin, "notify-send"), 0o755)
	h.e.Environ = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	h.e.NotifyBackend = "webhook"
	rep := h.succeed(fmt.Sprintf(`
name: notify
states:
  initial: hook
  hook:
    type: operation
    operation: notify.send
    inputs: {webhook_url: %q, message: 'built {{.workflow.Name}}', title: Build}
    on_success: desk
  desk:
    type: operation
    operation: notify.send
    inputs: {backend: desktop, message: done, priority: low}
    on_success: show
  show: {type: step, command: 'echo {{.states.hook.Response.status}} {{.states.hook.Response.backend}} {{.states.desk.Response.status}}'}
`, srv.URL), nil)
	if len(bodies) != 1 || bodies[0] != `{"message":"built notify","priority":"default","title":"Build"}` {
		t.Fatalf("webhook bodies %q", bodies)
	}
	if b, _ := os.ReadFile(filepath.Join(h.dir, "desktop.log")); string(b) != "-u low AWF Workflow done\n" {
		t.Fatalf("notify-send %q", b)
	}
	if cr, _ := commandResult(t, rep, "show"); cr.Output != "200 webhook 0\n" {
		t.Fatalf("show %q", cr.Output)
	}
}

// An operation reel has no provider for passes validate (AWF's
// diagram-all-types.yaml uses one named noop) and ends the run when it runs,
// without on_failure, as in AWF; an operation's timeout ends it.
func TestUnknownOperationAndTimeout(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
	}))
	defer srv.Close()
	h := newHarness(t)
	h.e.Environ = append(os.Environ(), "GITHUB_API_URL="+srv.URL)
	rep := h.run(context.Background(), `
name: ops
states:
  initial: noop
  noop:
    type: operation
    operation: noop
    retry: {max_attempts: 3}
    on_failure: error
  error: {type: terminal, status: failure}
`, nil)
	if rep.Status != "failure" || rep.ExitCode != 1 || !strings.HasPrefix(rep.Error, `state noop: operation "noop" not found (built-in: github.add_comment`) {
		t.Fatalf("report %+v", rep)
	}
	assertEvents(t, events(t, rep.TranscriptPath),
		"run.started @0 workflow:ops",
		"step.started noop@0 operation:noop a1",
		"step.completed noop@0 operation:noop a1 !",
		"run.completed @0 workflow:ops !",
	)

	rep = h.run(context.Background(), `
name: slow
states:
  initial: slow
  slow:
    type: operation
    operation: github.get_pr
    inputs: {number: 1, repo: a/b}
    timeout: 200ms
`, nil)
	slow := find(t, readAll(t, rep.TranscriptPath), transcript.StepCompleted, "slow")
	if rep.ExitCode != exitcode.Execution || slow.Step().Error != "timed out after 200ms" {
		t.Fatalf("slow %+v %q", rep, slow.Step().Error)
	}
}
