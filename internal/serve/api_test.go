package serve

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/reelhq/reel/internal/engine"
	"github.com/reelhq/reel/internal/launch/launchtest"
	"github.com/reelhq/reel/internal/runstatus"
	"github.com/reelhq/reel/internal/verify"
)

// The API suite: AWF's routes on a real reel serve, on loopback, running
// real workflows (shell commands) into a real storage.

const apiHello = `name: hello
version: "1.0.0"
description: say hello
inputs:
  - name: who
    type: string
    required: true
  - name: count
    type: integer
    default: 2
  - name: tone
    type: string
    default: warm
    validation:
      enum: [warm, dry]
states:
  initial: greet
  greet:
    type: step
    command: echo "hello {{.inputs.who}} x{{.inputs.count}}"
    on_success: done
  done:
    type: terminal
`

// apiPaced takes a while, step by step: an event stream has time to be
// cut and resumed.
const apiPaced = `name: paced
states:
  initial: loop
  loop:
    type: for_each
    items: '["a","b","c","d","e","f"]'
    body: [tick]
    on_complete: done
  tick:
    type: step
    command: sleep 0.15; echo {{.loop.Item}}
  done:
    type: terminal
`

// apiStubborn and apiFlaky are the launcher's hard cases.
const (
	apiStubborn = launchtest.Stubborn
	apiFlaky    = launchtest.Flaky
)

const apiBroken = `name: broken
states:
  initial: a
  a:
    type: step
    command: echo
    on_success: nowhere
`

type apiServer struct {
	t       testing.TB
	url     string
	dir     string
	storage string
	s       *Server
	token   string
}

// startAPI serves a project holding workflows, with runs allowed unless
// opts says otherwise.
func startAPI(t testing.TB, workflows map[string]string, opts Options) *apiServer {
	t.Helper()
	dir := launchtest.Project(t, workflows)
	storage := filepath.Join(dir, "storage")
	if err := os.MkdirAll(storage, 0o755); err != nil {
		t.Fatal(err)
	}
	opts.Engine = &engine.Engine{Storage: storage, ProjectDir: dir, Dir: dir, KillGrace: 300 * time.Millisecond,
		Environ: append(os.Environ(), "HOME="+dir, "XDG_CONFIG_HOME="+filepath.Join(dir, "config"))}
	s, url := start(t, storage, opts)
	return &apiServer{t: t, url: url, dir: dir, storage: storage, s: s, token: opts.Token}
}

// do sends a request and decodes a JSON answer into out (when set).
func (a *apiServer) do(method, path string, body any, out any) (int, http.Header) {
	a.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, a.url+path, rd)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if a.token != "" {
		req.Header.Set("Authorization", "Bearer "+a.token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		a.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if out != nil && len(b) > 0 {
		if err := json.Unmarshal(b, out); err != nil {
			a.t.Fatalf("%s %s: %s: %v\n%s", method, path, resp.Status, err, b)
		}
	}
	return resp.StatusCode, resp.Header
}

// problem is AWF's (huma's) error body.
type problem struct {
	Title  string `json:"title"`
	Status int    `json:"status"`
	Detail string `json:"detail"`
	Errors []struct {
		Message  string `json:"message"`
		Location string `json:"location"`
	} `json:"errors"`
}

type execution struct {
	Body struct {
		ExecutionID  string    `json:"execution_id"`
		WorkflowName string    `json:"workflow_name"`
		Status       string    `json:"status"`
		CurrentStep  string    `json:"current_step"`
		StartedAt    time.Time `json:"started_at"`
		UpdatedAt    time.Time `json:"updated_at"`
	} `json:"body"`
}

// run starts workflow name (scope local) and returns the execution id.
func (a *apiServer) run(name string, inputs map[string]any) string {
	a.t.Helper()
	var out struct {
		Body struct {
			ExecutionID string `json:"execution_id"`
			Status      string `json:"status"`
		} `json:"body"`
	}
	code, _ := a.do("POST", "/api/workflows/local/"+name+"/run", map[string]any{"inputs": inputs}, &out)
	if code != http.StatusAccepted || out.Body.Status != "accepted" || out.Body.ExecutionID == "" {
		a.t.Fatalf("run %s: %d %+v", name, code, out)
	}
	return out.Body.ExecutionID
}

func (a *apiServer) execution(id string) execution {
	a.t.Helper()
	var ex execution
	if code, _ := a.do("GET", "/api/executions/"+id, nil, &ex); code != http.StatusOK {
		a.t.Fatalf("GET execution %s: %d", id, code)
	}
	return ex
}

// wait polls an execution until it is no longer running.
func (a *apiServer) wait(id string) execution {
	a.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		ex := a.execution(id)
		if ex.Body.Status != "running" {
			return ex
		}
		if time.Now().After(deadline) {
			a.t.Fatalf("execution %s still running", id)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (a *apiServer) verified() {
	a.t.Helper()
	rep := verify.Paths([]string{a.storage}, verify.Options{})
	if rep.Violations() > 0 || len(rep.Unreadable) > 0 {
		a.t.Fatalf("verify: %+v %+v", rep.Problems, rep.Unreadable)
	}
}

// frame is one SSE frame.
type frame struct {
	ID   uint64
	Data struct {
		Kind   string `json:"kind"`
		RunID  string `json:"run_id"`
		Seq    uint64 `json:"seq"`
		Status string `json:"status"`
		Step   string `json:"step"`
		Error  string `json:"error"`
	}
}

// stream opens an execution's event stream (lastID > 0: Last-Event-ID)
// and returns its frames as they come; the channel closes at the end.
func (a *apiServer) stream(ctx context.Context, id string, lastID uint64) (<-chan frame, *http.Response) {
	a.t.Helper()
	req, _ := http.NewRequestWithContext(ctx, "GET", a.url+"/api/executions/"+id+"/events", nil)
	if lastID > 0 {
		req.Header.Set("Last-Event-ID", strconv.FormatUint(lastID, 10))
	}
	if a.token != "" {
		req.Header.Set("Authorization", "Bearer "+a.token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		a.t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		a.t.Fatalf("events of %s: %s", id, resp.Status)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		a.t.Fatalf("events Content-Type %q", ct)
	}
	ch := make(chan frame, 256)
	go func() {
		defer close(ch)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		var f frame
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "id: "):
				f.ID, _ = strconv.ParseUint(line[4:], 10, 64)
			case strings.HasPrefix(line, "data: "):
				if err := json.Unmarshal([]byte(line[6:]), &f.Data); err != nil {
					f.Data.Kind = "undecodable: " + line
				}
			case line == "":
				if f.Data.Kind != "" {
					ch <- f
				}
				f = frame{}
			}
		}
	}()
	return ch, resp
}

func collect(t testing.TB, ch <-chan frame) []frame {
	t.Helper()
	var out []frame
	timeout := time.After(60 * time.Second)
	for {
		select {
		case f, ok := <-ch:
			if !ok {
				return out
			}
			out = append(out, f)
		case <-timeout:
			t.Fatalf("stream did not end; got %+v", out)
		}
	}
}

func kinds(fs []frame) []string {
	var out []string
	for _, f := range fs {
		s := f.Data.Kind
		if f.Data.Step != "" {
			s += ":" + f.Data.Step
		}
		out = append(out, s)
	}
	return out
}

func TestAPIWorkflows(t *testing.T) {
	a := startAPI(t, map[string]string{"hello": apiHello, "broken": apiBroken}, Options{AllowRuns: true})
	var list struct {
		Body struct {
			Workflows []map[string]any `json:"workflows"`
		} `json:"body"`
	}
	if code, h := a.do("GET", "/api/workflows", nil, &list); code != 200 || !strings.Contains(h.Get("Link"), "describedBy") {
		t.Fatalf("list: %d %v", code, h)
	}
	var hello map[string]any
	for _, w := range list.Body.Workflows {
		if w["name"] == "hello" {
			hello = w
		}
	}
	want := map[string]any{"name": "hello", "scope": "local", "workflow": "hello", "version": "1.0.0", "description": "say hello"}
	if fmt.Sprint(hello) != fmt.Sprint(want) {
		t.Errorf("hello listed as %v, want %v", hello, want)
	}

	var wf struct {
		Body struct {
			Name    string
			Initial string
			Inputs  []struct {
				Name       string
				Type       string
				Required   bool
				Default    any
				Validation *struct{ Enum []string }
			}
			Steps map[string]struct {
				Type      string
				Command   string
				OnSuccess string
			}
		} `json:"body"`
	}
	if code, _ := a.do("GET", "/api/workflows/local/hello", nil, &wf); code != 200 {
		t.Fatalf("get: %d", code)
	}
	if wf.Body.Initial != "greet" || wf.Body.Steps["greet"].Type != "command" || wf.Body.Steps["greet"].OnSuccess != "done" ||
		len(wf.Body.Inputs) != 3 || wf.Body.Inputs[1].Default != 2.0 || wf.Body.Inputs[2].Validation == nil || len(wf.Body.Inputs[2].Validation.Enum) != 2 {
		t.Errorf("workflow as AWF shows it: %+v", wf.Body)
	}

	for _, path := range []string{"/api/workflows/local/absent", "/api/workflows/nopack/hello", "/api/workflows/local/..%2F..%2Fetc%2Fpasswd", "/api/workflows/..%2F/hello"} {
		var p problem
		if code, _ := a.do("GET", path, nil, &p); code != 404 || p.Status != 404 || !strings.HasPrefix(p.Detail, "workflow not found") {
			t.Errorf("GET %s: %d %+v", path, code, p)
		}
	}
	var p problem
	if code, _ := a.do("GET", "/api/workflows/local/broken", nil, &p); code != 422 || len(p.Errors) == 0 || !strings.Contains(p.Errors[0].Message, "nowhere") {
		t.Errorf("GET an invalid workflow: %d %+v", code, p)
	}

	var v struct {
		Body struct {
			Errors []string `json:"errors"`
		} `json:"body"`
	}
	if code, _ := a.do("POST", "/api/workflows/local/hello/validate", nil, &v); code != 200 || v.Body.Errors != nil {
		t.Errorf("validate hello: %d %+v", code, v)
	}
	if code, _ := a.do("POST", "/api/workflows/local/broken/validate", nil, &v); code != 200 || len(v.Body.Errors) != 1 || !strings.Contains(v.Body.Errors[0], "broken.yaml:") {
		t.Errorf("validate broken: %d %+v", code, v)
	}
	if code, _ := a.do("POST", "/api/workflows/local/absent/validate", nil, &p); code != 404 {
		t.Errorf("validate absent: %d %+v", code, p)
	}
}

func TestAPIRunFollowAndHistory(t *testing.T) {
	a := startAPI(t, map[string]string{"hello": apiHello}, Options{AllowRuns: true})
	id := a.run("hello", map[string]any{"who": "ann", "count": 3})
	ch, _ := a.stream(context.Background(), id, 0)
	fs := collect(t, ch)
	if got := kinds(fs); !slices.Equal(got, []string{"step.started:greet", "step.completed:greet", "workflow.completed"}) {
		t.Fatalf("events %v", got)
	}
	for _, f := range fs {
		if f.Data.RunID != id {
			t.Errorf("frame of another run: %+v", f)
		}
	}
	if fs[0].ID == 0 || fs[0].ID != fs[0].Data.Seq || fs[1].ID <= fs[0].ID {
		t.Errorf("frame ids are not the transcript seqs: %+v", fs)
	}
	ex := a.wait(id)
	if ex.Body.Status != "completed" || ex.Body.WorkflowName != "hello" || ex.Body.CurrentStep != "" || ex.Body.StartedAt.IsZero() || ex.Body.UpdatedAt.Before(ex.Body.StartedAt) {
		t.Errorf("execution %+v", ex.Body)
	}
	// An ordinary run: the transcript is in the storage and says what ran.
	b, err := os.ReadFile(filepath.Join(a.storage, "transcripts", id+".jsonl"))
	if err != nil || !strings.Contains(string(b), "hello ann x3") {
		t.Fatalf("transcript: %v\n%s", err, b)
	}
	var list struct {
		Body struct {
			Executions []struct {
				ExecutionID string `json:"execution_id"`
				Status      string `json:"status"`
			} `json:"executions"`
		} `json:"body"`
	}
	if a.do("GET", "/api/executions", nil, &list); len(list.Body.Executions) != 1 || list.Body.Executions[0].ExecutionID != id {
		t.Errorf("executions %+v", list)
	}
	var hist struct {
		Body struct {
			Entries []struct {
				ID         string `json:"id"`
				Status     string `json:"status"`
				DurationMs int64  `json:"duration_ms"`
			} `json:"entries"`
		} `json:"body"`
	}
	if code, _ := a.do("GET", "/api/history?workflow=hello&status=completed&limit=5", nil, &hist); code != 200 || len(hist.Body.Entries) != 1 || hist.Body.Entries[0].ID != id {
		t.Errorf("history: %d %+v", code, hist)
	}
	if a.do("GET", "/api/history?status=failed", nil, &hist); len(hist.Body.Entries) != 0 {
		t.Errorf("history of failures: %+v", hist)
	}
	var stats struct {
		Body map[string]int64 `json:"body"`
	}
	if code, _ := a.do("GET", "/api/history/stats", nil, &stats); code != 200 || stats.Body["TotalExecutions"] != 1 || stats.Body["SuccessCount"] != 1 {
		t.Errorf("stats: %d %+v", code, stats)
	}
	var p problem
	if code, _ := a.do("GET", "/api/history?since=yesterday", nil, &p); code != 422 {
		t.Errorf("a bad since: %d %+v", code, p)
	}
	// reel's own API sees the same run.
	var runs struct {
		Runs []struct {
			RunID  string `json:"run_id"`
			Status string `json:"status"`
		} `json:"runs"`
	}
	if a.do("GET", "/api/runs", nil, &runs); len(runs.Runs) != 1 || runs.Runs[0].RunID != id || runs.Runs[0].Status != runstatus.Success {
		t.Errorf("/api/runs: %+v", runs)
	}
	a.verified()
}

func TestAPIRunErrors(t *testing.T) {
	a := startAPI(t, map[string]string{"hello": apiHello, "broken": apiBroken}, Options{AllowRuns: true})
	cases := []struct {
		name, path, body string
		code             int
		detail           string
	}{
		{"missing required input", "/api/workflows/local/hello/run", `{"inputs":{}}`, 400, `input "who" is required`},
		{"wrong type", "/api/workflows/local/hello/run", `{"inputs":{"who":"x","count":"many"}}`, 400, `is not an integer`},
		{"not in the enum", "/api/workflows/local/hello/run", `{"inputs":{"who":"x","tone":"loud"}}`, 400, `tone`},
		{"no body", "/api/workflows/local/hello/run", ``, 400, `request body is required`},
		{"not JSON", "/api/workflows/local/hello/run", `{bad`, 400, `validation failed`},
		{"no inputs key", "/api/workflows/local/hello/run", `{}`, 422, `validation failed`},
		{"unknown workflow", "/api/workflows/local/absent/run", `{"inputs":{}}`, 404, `workflow not found: absent`},
		{"unknown pack", "/api/workflows/nopack/x/run", `{"inputs":{}}`, 404, `workflow not found: nopack/x`},
		{"invalid workflow", "/api/workflows/local/broken/run", `{"inputs":{}}`, 422, `failed to start execution`},
		{"unknown execution", "/api/executions/0b8a5a56-2f4e-4b8e-9a55-1c4f5a0d3e21/resume", `{}`, 404, `execution not found`},
		{"not an id", "/api/executions/nope/resume", `{}`, 404, `execution not found`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var rd io.Reader
			if c.body != "" {
				rd = strings.NewReader(c.body)
			}
			resp, err := http.Post(a.url+c.path, "application/json", rd)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var p problem
			json.NewDecoder(resp.Body).Decode(&p)
			if resp.StatusCode != c.code || p.Status != c.code || !strings.Contains(p.Detail+fmt.Sprint(p.Errors), c.detail) {
				t.Errorf("%d %+v, want %d with %q", resp.StatusCode, p, c.code, c.detail)
			}
			if ct := resp.Header.Get("Content-Type"); ct != "application/problem+json" {
				t.Errorf("Content-Type %q", ct)
			}
		})
	}
	for _, path := range []string{"/api/executions/0b8a5a56-2f4e-4b8e-9a55-1c4f5a0d3e21", "/api/executions/0b8a5a56-2f4e-4b8e-9a55-1c4f5a0d3e21/events", "/api/executions/x/events"} {
		var p problem
		if code, _ := a.do("GET", path, nil, &p); code != 404 || !strings.HasPrefix(p.Detail, "execution not found") {
			t.Errorf("GET %s: %d %+v", path, code, p)
		}
	}
	if code, _ := a.do("DELETE", "/api/executions/0b8a5a56-2f4e-4b8e-9a55-1c4f5a0d3e21", nil, nil); code != 204 {
		t.Errorf("cancel of nothing: %d (AWF's cancel is idempotent)", code)
	}
	// Nothing refused left a run behind.
	if ents, _ := os.ReadDir(filepath.Join(a.storage, "transcripts")); len(ents) != 0 {
		t.Errorf("refused runs left %d transcripts", len(ents))
	}
	// An input the workflow does not declare is no error: AWF ignores it,
	// and so does the run.
	id := a.run("hello", map[string]any{"who": "x", "colour": "red"})
	if ex := a.wait(id); ex.Body.Status != "completed" {
		t.Errorf("run with an undeclared input: %+v", ex.Body)
	}
}

func TestAPIRunsOff(t *testing.T) {
	a := startAPI(t, map[string]string{"hello": apiHello}, Options{})
	for _, c := range []struct{ method, path, body string }{
		{"POST", "/api/workflows/local/hello/run", `{"inputs":{"who":"x"}}`},
		{"DELETE", "/api/executions/0b8a5a56-2f4e-4b8e-9a55-1c4f5a0d3e21", ``},
		{"POST", "/api/executions/0b8a5a56-2f4e-4b8e-9a55-1c4f5a0d3e21/resume", `{}`},
	} {
		req, _ := http.NewRequest(c.method, a.url+c.path, strings.NewReader(c.body))
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var p problem
		json.NewDecoder(resp.Body).Decode(&p)
		resp.Body.Close()
		if resp.StatusCode != 403 || !strings.Contains(p.Detail, "--allow-runs") {
			t.Errorf("%s %s with runs off: %d %+v", c.method, c.path, resp.StatusCode, p)
		}
	}
	if code, _ := a.do("GET", "/api/workflows", nil, nil); code != 200 {
		t.Errorf("reading with runs off: %d", code)
	}
}

func TestAPIToken(t *testing.T) {
	a := startAPI(t, map[string]string{"hello": apiHello}, Options{AllowRuns: true, Token: "s3cret"})
	for _, c := range []struct{ method, path string }{
		{"GET", "/api/workflows"}, {"GET", "/api/workflows/local/hello"}, {"POST", "/api/workflows/local/hello/validate"},
		{"POST", "/api/workflows/local/hello/run"}, {"GET", "/api/executions"}, {"GET", "/api/history"}, {"GET", "/api/history/stats"},
		{"DELETE", "/api/executions/0b8a5a56-2f4e-4b8e-9a55-1c4f5a0d3e21"}, {"POST", "/api/executions/0b8a5a56-2f4e-4b8e-9a55-1c4f5a0d3e21/resume"},
		{"GET", "/api/executions/0b8a5a56-2f4e-4b8e-9a55-1c4f5a0d3e21/events"}, {"GET", "/openapi.json"}, {"GET", "/docs"},
	} {
		req, _ := http.NewRequest(c.method, a.url+c.path, strings.NewReader(`{"inputs":{"who":"x"}}`))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 401 {
			t.Errorf("%s %s without the token: %d", c.method, c.path, resp.StatusCode)
		}
	}
	id := a.run("hello", map[string]any{"who": "x"}) // a.do sends the token
	if ex := a.wait(id); ex.Body.Status != "completed" {
		t.Errorf("with the token: %+v", ex)
		dumpRun(t, a, id)
	}
}

func TestAPICrossSiteWritesRefused(t *testing.T) {
	a := startAPI(t, map[string]string{"hello": apiHello}, Options{AllowRuns: true})
	for _, h := range []map[string]string{{"Origin": "http://evil.example"}, {"Sec-Fetch-Site": "cross-site"}, {"Origin": "null"}} {
		req, _ := http.NewRequest("POST", a.url+"/api/workflows/local/hello/run", strings.NewReader(`{"inputs":{"who":"x"}}`))
		req.Header.Set("Content-Type", "text/plain") // a "simple" request: no preflight
		for k, v := range h {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 403 {
			t.Errorf("POST with %v: %d", h, resp.StatusCode)
		}
	}
	// The server's own pages (same origin) may.
	req, _ := http.NewRequest("POST", a.url+"/api/workflows/local/hello/run", strings.NewReader(`{"inputs":{"who":"x"}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Origin", a.url)
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 202 {
		t.Errorf("same-origin POST: %d", resp.StatusCode)
	}
	if ents, _ := os.ReadDir(filepath.Join(a.storage, "transcripts")); len(ents) != 1 {
		t.Errorf("%d runs, want the one same-origin run", len(ents))
	}
}

func TestAPICancelAStepThatIgnoresSIGTERM(t *testing.T) {
	a := startAPI(t, map[string]string{"stubborn": apiStubborn}, Options{AllowRuns: true})
	id := a.run("stubborn", map[string]any{})
	ch, _ := a.stream(context.Background(), id, 0)
	pidFile := filepath.Join(a.dir, "stubborn.pid")
	var pid int
	for deadline := time.Now().Add(20 * time.Second); pid == 0; time.Sleep(10 * time.Millisecond) {
		if b, err := os.ReadFile(pidFile); err == nil {
			pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		}
		if time.Now().After(deadline) {
			t.Fatal("the step never started")
		}
	}
	if ex := a.execution(id); ex.Body.Status != "running" || ex.Body.CurrentStep != "wait" {
		t.Errorf("before the cancel: %+v", ex.Body)
	}
	if code, _ := a.do("DELETE", "/api/executions/"+id, nil, nil); code != 204 {
		t.Fatalf("cancel: %d", code)
	}
	// DELETE answers once the run ended: no wait here.
	if ex := a.execution(id); ex.Body.Status != "cancelled" {
		t.Errorf("after the cancel: %+v", ex.Body)
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("the step's process %d outlived the cancel (%v)", pid, err)
	}
	fs := collect(t, ch)
	last := fs[len(fs)-1]
	if last.Data.Kind != "workflow.failed" || last.Data.Status != "cancelled" || !strings.Contains(last.Data.Error, "DELETE /api/executions/"+id) {
		t.Errorf("last frame %+v", last)
	}
	a.verified()
	if code, _ := a.do("DELETE", "/api/executions/"+id, nil, nil); code != 204 {
		t.Errorf("second cancel: %d", code)
	}
}

func TestAPIResume(t *testing.T) {
	a := startAPI(t, map[string]string{"flaky": apiFlaky}, Options{AllowRuns: true})
	id := a.run("flaky", map[string]any{})
	if ex := a.wait(id); ex.Body.Status != "failed" {
		t.Fatalf("first attempt: %+v", ex.Body)
	}
	if err := os.WriteFile(filepath.Join(a.dir, "ok"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	var acc struct {
		Body struct {
			ExecutionID string `json:"execution_id"`
			Status      string `json:"status"`
		} `json:"body"`
	}
	if code, _ := a.do("POST", "/api/executions/"+id+"/resume", map[string]any{}, &acc); code != 200 || acc.Body.ExecutionID != id {
		t.Fatalf("resume: %d %+v", code, acc)
	}
	// The stream follows the new attempt from its start: nothing of the
	// failed one.
	ch, _ := a.stream(context.Background(), id, 0)
	if got := kinds(collect(t, ch)); !slices.Equal(got, []string{"step.started:second", "step.completed:second", "workflow.completed"}) {
		t.Errorf("events of the resumed attempt: %v", got)
	}
	if ex := a.wait(id); ex.Body.Status != "completed" {
		t.Fatalf("second attempt: %+v", ex.Body)
	}
	var p problem
	if code, _ := a.do("POST", "/api/executions/"+id+"/resume", map[string]any{}, &p); code != 409 || !strings.Contains(p.Detail, "succeeded") {
		t.Errorf("resume of a run that succeeded: %d %+v", code, p)
	}
	a.verified()
}

func TestAPIEventStreamResumes(t *testing.T) {
	a := startAPI(t, map[string]string{"paced": apiPaced}, Options{AllowRuns: true})
	id := a.run("paced", map[string]any{})
	ctx, cancel := context.WithCancel(context.Background())
	ch, _ := a.stream(ctx, id, 0)
	var first []frame
	for f := range ch {
		first = append(first, f)
		if len(first) == 3 {
			break
		}
	}
	cancel() // the client goes away mid-stream
	for range ch {
	}
	last := first[len(first)-1].ID
	ch2, _ := a.stream(context.Background(), id, last)
	rest := collect(t, ch2)
	ch3, _ := a.stream(context.Background(), id, 0)
	all := collect(t, ch3)
	got := append(append([]frame{}, first...), rest...)
	if !slices.Equal(kinds(got), kinds(all)) {
		t.Fatalf("cut and resumed:\n%v\nin one go:\n%v", kinds(got), kinds(all))
	}
	for i := 1; i < len(got)-1; i++ {
		if got[i].ID <= got[i-1].ID {
			t.Fatalf("ids not increasing at %d: %+v", i, got)
		}
	}
	if len(all) != 2+6*2+1 || all[len(all)-1].Data.Kind != "workflow.completed" {
		t.Errorf("whole stream: %v", kinds(all))
	}
}

func dumpRun(t testing.TB, a *apiServer, id string) {
	b, _ := os.ReadFile(filepath.Join(a.storage, "transcripts", id+".jsonl"))
	t.Logf("%s", b)
}

// heapInUse is the live heap after a collection.
func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

// settle waits for the goroutines to come back to at most n.
func settle(t testing.TB, n int) int {
	t.Helper()
	var got int
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if got = runtime.NumGoroutine(); got <= n {
			return got
		}
	}
	buf := make([]byte, 1<<20)
	t.Fatalf("%d goroutines, want at most %d:\n%s", got, n, buf[:runtime.Stack(buf, true)])
	return got
}

func openFDs() int {
	ents, _ := os.ReadDir("/proc/self/fd")
	return len(ents)
}

func TestAPIFiftyConcurrentRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: 50 runs")
	}
	a := startAPI(t, map[string]string{"hello": apiHello}, Options{AllowRuns: true})
	http.DefaultClient.CloseIdleConnections()
	baseG, baseHeap := runtime.NumGoroutine(), heapInUse()
	round := func() []string {
		ids := make([]string, 50)
		var wg sync.WaitGroup
		for i := range ids {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ids[i] = a.run("hello", map[string]any{"who": "n" + strconv.Itoa(i), "count": i})
			}()
		}
		wg.Wait()
		for _, id := range ids {
			if ex := a.wait(id); ex.Body.Status != "completed" {
				t.Errorf("run %s: %+v", id, ex.Body)
			}
		}
		return ids
	}
	first := round()
	afterFirst := heapInUse()
	second := round()
	afterSecond := heapInUse()
	ids := append(first, second...)
	seen := map[string]bool{}
	for _, id := range ids {
		if seen[id] {
			t.Fatalf("execution id %s given twice", id)
		}
		seen[id] = true
		b, err := os.ReadFile(filepath.Join(a.storage, "transcripts", id+".jsonl"))
		if err != nil || !bytes.Contains(b, []byte(`"run.completed"`)) {
			t.Fatalf("run %s: %v", id, err)
		}
	}
	var stats struct {
		Body map[string]int64 `json:"body"`
	}
	if a.do("GET", "/api/history/stats", nil, &stats); stats.Body["TotalExecutions"] != 100 || stats.Body["SuccessCount"] != 100 {
		t.Errorf("history stats after 100 runs: %+v", stats.Body)
	}
	a.verified()
	// Bounded: the second 50 runs do not grow the live heap as the first
	// did (what a run leaves behind is a small record in the launcher),
	// and every goroutine a run started is gone.
	t.Logf("heap in use: %d KiB before, %d KiB after 50 runs, %d KiB after 100", baseHeap>>10, afterFirst>>10, afterSecond>>10)
	if afterSecond > afterFirst+16<<20 {
		t.Errorf("the heap grew by %d KiB over the second 50 runs", (afterSecond-afterFirst)>>10)
	}
	http.DefaultClient.CloseIdleConnections()
	settle(t, baseG+2)
}

func TestAPIClientDisconnectLeaksNothing(t *testing.T) {
	a := startAPI(t, map[string]string{"stubborn": apiStubborn}, Options{AllowRuns: true})
	id := a.run("stubborn", map[string]any{})
	http.DefaultClient.CloseIdleConnections()
	baseG, baseFD := runtime.NumGoroutine(), openFDs()
	for range 20 {
		ctx, cancel := context.WithCancel(context.Background())
		ch, _ := a.stream(ctx, id, 0)
		<-ch // the stream is open and delivering
		cancel()
		for range ch {
		}
	}
	http.DefaultClient.CloseIdleConnections()
	g := settle(t, baseG+2)
	var fd int
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if fd = openFDs(); fd <= baseFD+2 || time.Now().After(deadline) {
			break
		}
	}
	if fd > baseFD+2 {
		t.Errorf("%d descriptors open after 20 streams were dropped, %d before", fd, baseFD)
	}
	t.Logf("goroutines %d → %d, descriptors %d → %d", baseG, g, baseFD, fd)
	if code, _ := a.do("DELETE", "/api/executions/"+id, nil, nil); code != 204 {
		t.Errorf("cancel: %d", code)
	}
}
