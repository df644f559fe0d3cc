package github

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// fakeGitHub is a small in-memory GitHub REST API on loopback: issues,
// pull requests, labels and comments of one repository, with the answers
// shaped like the real API's (fields reel does not read included).
type fakeGitHub struct {
	t        *testing.T
	srv      *httptest.Server
	mu       sync.Mutex
	auth     []string // Authorization headers seen
	comments int      // comments on issue 7
	fail     map[int]int
}

func newFake(t *testing.T) *fakeGitHub {
	f := &fakeGitHub{t: t, comments: 230, fail: map[int]int{}}
	mux := http.NewServeMux()
	issue := func(n int) map[string]any {
		return map[string]any{
			"number": n, "title": "Crash on start", "body": "It crashes.", "state": "open", "node_id": "I_1",
			"html_url": fmt.Sprintf("https://github.com/acme/app/issues/%d", n), "user": map[string]any{"login": "ann", "id": 1},
			"labels":    []any{map[string]any{"id": 11, "node_id": "LA_bug", "name": "bug", "description": "Something is wrong", "color": "d73a4a", "default": true}},
			"assignees": []any{map[string]any{"login": "bob"}}, "created_at": "2026-11-01T10:00:00Z", "updated_at": "2026-11-02T10:00:00Z",
			"closed_at": nil, "milestone": map[string]any{"number": 2, "title": "v1"}, "comments": 3,
		}
	}
	mux.HandleFunc("GET /repos/acme/app/issues/{n}", func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.PathValue("n"))
		if n == 404 {
			w.WriteHeader(404)
			io.WriteString(w, `{"message":"Not Found","documentation_url":"https://docs.github.com/rest"}`)
			return
		}
		json.NewEncoder(w).Encode(issue(n))
	})
	mux.HandleFunc("GET /repos/acme/app/pulls/{n}", func(w http.ResponseWriter, r *http.Request) {
		pr := issue(5)
		pr["merged"], pr["mergeable"], pr["merged_at"], pr["draft"] = true, nil, "2026-11-03T10:00:00Z", false
		pr["head"] = map[string]any{"ref": "fix-crash", "sha": "abc123"}
		pr["base"] = map[string]any{"ref": "main", "sha": "def456"}
		json.NewEncoder(w).Encode(pr)
	})
	mux.HandleFunc("POST /repos/acme/app/issues", func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		json.NewDecoder(r.Body).Decode(&body)
		if body["title"] != "New bug" || !reflect.DeepEqual(body["labels"], []any{"bug", "p1"}) || !reflect.DeepEqual(body["assignees"], []any{"ann"}) || body["body"] != "details" {
			t.Errorf("create issue body %v", body)
		}
		w.WriteHeader(201)
		json.NewEncoder(w).Encode(issue(41))
	})
	mux.HandleFunc("POST /repos/acme/app/pulls", func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		json.NewDecoder(r.Body).Decode(&body)
		if body["head"] == "dup" {
			w.WriteHeader(422)
			io.WriteString(w, `{"message":"Validation Failed","errors":[{"resource":"PullRequest","code":"custom","message":"A pull request already exists for acme:dup."}]}`)
			return
		}
		if body["draft"] != true || body["base"] != "main" {
			t.Errorf("create pr body %v", body)
		}
		w.WriteHeader(201)
		json.NewEncoder(w).Encode(map[string]any{"number": 12, "html_url": "https://github.com/acme/app/pull/12"})
	})
	mux.HandleFunc("GET /repos/acme/app/pulls", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("head") != "acme:dup" || r.URL.Query().Get("state") != "open" {
			t.Errorf("existing pr query %v", r.URL.Query())
		}
		json.NewEncoder(w).Encode([]any{map[string]any{"number": 9, "html_url": "https://github.com/acme/app/pull/9"}})
	})
	mux.HandleFunc("POST /repos/acme/app/issues/{n}/labels", func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.PathValue("n"))
		f.mu.Lock()
		code := f.fail[n]
		f.mu.Unlock()
		if code != 0 {
			w.WriteHeader(code)
			io.WriteString(w, `{"message":"nope"}`)
			return
		}
		var body struct{ Labels []string }
		json.NewDecoder(r.Body).Decode(&body)
		var out []any
		for _, l := range body.Labels {
			out = append(out, map[string]any{"name": l})
		}
		json.NewEncoder(w).Encode(out)
	})
	mux.HandleFunc("POST /repos/acme/app/issues/{n}/comments", func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		json.NewDecoder(r.Body).Decode(&body)
		if body["body"] != "Thanks!" {
			t.Errorf("comment body %v", body)
		}
		w.WriteHeader(201)
		json.NewEncoder(w).Encode(map[string]any{"id": 9001, "html_url": "https://github.com/acme/app/issues/7#issuecomment-9001"})
	})
	mux.HandleFunc("GET /repos/acme/app/issues/{n}/comments", func(w http.ResponseWriter, r *http.Request) {
		page, _ := strconv.Atoi(r.URL.Query().Get("page"))
		per, _ := strconv.Atoi(r.URL.Query().Get("per_page"))
		var out []any
		for i := (page - 1) * per; i < min(page*per, f.comments); i++ {
			out = append(out, map[string]any{"id": i, "node_id": fmt.Sprintf("IC_%d", i), "body": fmt.Sprintf("c%d", i),
				"html_url": "u", "user": map[string]any{"login": "ann"}, "created_at": "t", "author_association": "OWNER"})
		}
		if out == nil {
			out = []any{}
		}
		json.NewEncoder(w).Encode(out)
	})
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.auth = append(f.auth, r.Header.Get("Authorization"))
		f.mu.Unlock()
		if r.Header.Get("Accept") != "application/vnd.github+json" || r.Header.Get("X-GitHub-Api-Version") == "" {
			t.Errorf("headers %v", r.Header)
		}
		w.Header().Set("Content-Type", "application/json")
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeGitHub) client() *Client {
	return New([]string{"GITHUB_API_URL=" + f.srv.URL + "/", "GITHUB_TOKEN=ghp_test", "PATH="}, "")
}

func TestNewFromEnvironment(t *testing.T) {
	for _, c := range []struct {
		env               []string
		base, host, token string
	}{
		{nil, "https://api.github.com", "github.com", ""},
		{[]string{"GITHUB_TOKEN= t1 ", "GH_TOKEN=t0"}, "https://api.github.com", "github.com", "t0"},
		{[]string{"GITHUB_TOKEN=t1"}, "https://api.github.com", "github.com", "t1"},
		{[]string{"GH_HOST=ghe.corp", "GITHUB_TOKEN=t1", "GH_ENTERPRISE_TOKEN=e1"}, "https://ghe.corp/api/v3", "ghe.corp", "e1"},
		{[]string{"GITHUB_API_URL=http://127.0.0.1:9/api/", "GITHUB_SERVER_URL=https://ghe.corp"}, "http://127.0.0.1:9/api", "ghe.corp", ""},
	} {
		cl := New(c.env, "")
		if cl.BaseURL != c.base || cl.Host != c.host || cl.Token != c.token {
			t.Errorf("%v: base %q host %q token %q", c.env, cl.BaseURL, cl.Host, cl.Token)
		}
	}
}

func TestRepoFromRemote(t *testing.T) {
	for remote, want := range map[string]string{
		"git@github.com:acme/app.git":        "acme/app",
		"https://github.com/acme/app.git":    "acme/app",
		"https://github.com/acme/app":        "acme/app",
		"ssh://git@github.com/acme/app.git":  "acme/app",
		"https://user:pw@github.com/acme/a/": "acme/a",
		"https://gitlab.com/acme/app.git":    "",
		"git@github.com:acme/app/extra.git":  "",
		"not a url":                          "",
	} {
		if got := RepoFromRemote(remote, "github.com"); got != want {
			t.Errorf("%s: %q, want %q", remote, got, want)
		}
	}
	if got := RepoFromRemote("git@ghe.corp:team/svc.git", "ghe.corp"); got != "team/svc" {
		t.Errorf("enterprise: %q", got)
	}
}

func TestOperations(t *testing.T) {
	f := newFake(t)
	c := f.client()
	ctx := context.Background()
	run := func(name string, in map[string]any) map[string]any {
		t.Helper()
		out, err := c.Run(ctx, name, in)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return out
	}
	js := func(v any) string { b, _ := json.Marshal(v); return string(b) }

	got := run("github.get_issue", map[string]any{"number": "#7", "repo": "acme/app"})
	if want := `{"body":"It crashes.","labels":[{"color":"d73a4a","description":"Something is wrong","id":"LA_bug","name":"bug"}],"number":7,"state":"OPEN","title":"Crash on start"}`; js(got) != want {
		t.Errorf("get_issue\n got %s\nwant %s", js(got), want)
	}
	got = run("github.get_issue", map[string]any{"number": 7, "repo": "acme/app", "fields": []any{"url", "author", "milestone", "closedAt"}})
	if want := `{"author":{"login":"ann"},"closedAt":null,"milestone":{"number":2,"title":"v1"},"url":"https://github.com/acme/app/issues/7"}`; js(got) != want {
		t.Errorf("get_issue fields\n got %s\nwant %s", js(got), want)
	}
	got = run("github.get_pr", map[string]any{"number": float64(5), "repo": "acme/app"})
	if want := `{"baseRefName":"main","body":"It crashes.","headRefName":"fix-crash","labels":[{"color":"d73a4a","description":"Something is wrong","id":"LA_bug","name":"bug"}],"mergeable":"UNKNOWN","mergedAt":"2026-11-03T10:00:00Z","number":5,"state":"MERGED","title":"Crash on start"}`; js(got) != want {
		t.Errorf("get_pr\n got %s\nwant %s", js(got), want)
	}
	got = run("github.create_issue", map[string]any{"title": " New bug ", "body": "details", "labels": "bug, p1", "assignees": []any{"ann"}, "repo": "acme/app"})
	if js(got) != `{"number":"41","url":"https://github.com/acme/app/issues/41"}` {
		t.Errorf("create_issue %s", js(got))
	}
	got = run("github.create_pr", map[string]any{"title": "Fix", "head": "fix", "base": "main", "draft": "true", "repo": "acme/app"})
	if js(got) != `{"already_exists":"false","number":"12","url":"https://github.com/acme/app/pull/12"}` {
		t.Errorf("create_pr %s", js(got))
	}
	got = run("github.create_pr", map[string]any{"title": "Fix", "head": "dup", "base": "main", "repo": "acme/app"})
	if js(got) != `{"already_exists":"true","number":"9","url":"https://github.com/acme/app/pull/9"}` {
		t.Errorf("create_pr existing %s", js(got))
	}
	got = run("github.add_labels", map[string]any{"number": 7, "labels": []any{"a", "b"}, "repo": "acme/app"})
	if js(got) != `{"labels":"a,b"}` {
		t.Errorf("add_labels %s", js(got))
	}
	got = run("github.add_comment", map[string]any{"number": 7, "body": "Thanks!", "repo": "acme/app"})
	if js(got) != `{"comment_id":"9001","url":"https://github.com/acme/app/issues/7#issuecomment-9001"}` {
		t.Errorf("add_comment %s", js(got))
	}
	got = run("github.list_comments", map[string]any{"number": 7, "repo": "acme/app"})
	if cs := got["comments"].([]any); len(cs) != 230 || got["total"] != 230 || cs[229].(map[string]any)["body"] != "c229" {
		t.Errorf("list_comments: %d comments, total %v", len(cs), got["total"])
	}
	got = run("github.list_comments", map[string]any{"number": 7, "repo": "acme/app", "limit": "150"})
	if cs := got["comments"].([]any); len(cs) != 150 || got["total"] != 150 {
		t.Errorf("list_comments limit: %d", len(cs))
	}
	for _, a := range f.auth {
		if a != "Bearer ghp_test" {
			t.Fatalf("authorization %q", a)
		}
	}
	reqs := c.Requests()
	if len(reqs) != 14 || reqs[0] != (Request{Method: "GET", Path: "/repos/acme/app/issues/7", Status: 200}) {
		t.Errorf("requests %+v", reqs)
	}
}

func TestOperationErrors(t *testing.T) {
	f := newFake(t)
	c := f.client()
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		in    map[string]any
		want  string
		input bool
	}{
		{"github.get_issue", map[string]any{"repo": "acme/app"}, "number is required", true},
		{"github.get_issue", map[string]any{"number": "abc", "repo": "acme/app"}, "number must be a positive number, got abc", true},
		{"github.get_issue", map[string]any{"number": -3, "repo": "acme/app"}, "number must be a positive number", true},
		{"github.get_issue", map[string]any{"number": 1, "repo": "acme/../x"}, `repo "acme/../x" is not owner/repo`, false},
		{"github.get_issue", map[string]any{"number": 1, "repo": "acme/app", "fields": "title,nope"}, `fields: unknown field "nope"`, true},
		{"github.get_issue", map[string]any{"number": 404, "repo": "acme/app"}, "GitHub API GET /repos/acme/app/issues/404: 404 Not Found: Not Found", false},
		{"github.create_pr", map[string]any{"title": "t", "head": "h", "repo": "acme/app"}, "base is required", true},
		{"github.add_labels", map[string]any{"number": 1, "labels": []any{}, "repo": "acme/app"}, "labels is required", true},
		{"github.add_comment", map[string]any{"number": 1, "body": "  ", "repo": "acme/app"}, "body is required", true},
		{"github.batch", map[string]any{"operations": "x"}, "operations must be a list", true},
		{"github.batch", map[string]any{"operations": []any{map[string]any{"name": "http.request"}}}, `operations[0]: name "http.request" is not a github operation`, true},
		{"github.batch", map[string]any{"operations": []any{}, "strategy": "some"}, `strategy "some" is not`, true},
		{"github.nope", nil, `unknown GitHub operation "github.nope"`, false},
	} {
		_, err := c.Run(ctx, tc.name, tc.in)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %v:\n got %v\nwant %s", tc.name, tc.in, err, tc.want)
		}
		if errors.Is(err, ErrInput) != tc.input {
			t.Errorf("%s %v: ErrInput %v, want %v", tc.name, tc.in, errors.Is(err, ErrInput), tc.input)
		}
	}
	unauth := &APIError{Method: "POST", Path: "/x", Status: 401, Message: "Bad credentials"}
	if !strings.Contains(unauth.Error(), "401 Unauthorized: Bad credentials (set GITHUB_TOKEN or GH_TOKEN") {
		t.Errorf("401 hint: %v", unauth)
	}
	// A network failure names the request.
	dead := New([]string{"GITHUB_API_URL=http://127.0.0.1:1"}, "")
	if _, err := dead.Run(ctx, "github.get_issue", map[string]any{"number": 1, "repo": "a/b"}); err == nil || !strings.Contains(err.Error(), "GitHub API GET /repos/a/b/issues/1:") {
		t.Errorf("dead server: %v", err)
	}
}

func TestBatchStrategies(t *testing.T) {
	f := newFake(t)
	f.fail[3] = 500
	ctx := context.Background()
	ops := func(nums ...int) []any {
		var out []any
		for i, n := range nums {
			if i%2 == 0 { // AWF's docs write inputs inline, AWF runs them nested: both work
				out = append(out, map[string]any{"name": "github.add_labels", "number": n, "labels": []any{"x"}, "repo": "acme/app"})
			} else {
				out = append(out, map[string]any{"name": "github.add_labels", "inputs": map[string]any{"number": n, "labels": []any{"x"}, "repo": "acme/app"}})
			}
		}
		return out
	}
	out, err := f.client().Run(ctx, "github.batch", map[string]any{"operations": ops(1, 2, 3, 4, 5), "concurrency": 2})
	if err != nil || out["total"] != 5 || out["succeeded"] != 4 || out["failed"] != 1 {
		t.Fatalf("best_effort: %v %v", out, err)
	}
	res := out["results"].([]any)
	third := res[2].(map[string]any)
	if third["success"] != false || !strings.Contains(third["error"].(string), "500 Internal Server Error: nope") || res[0].(map[string]any)["outputs"].(map[string]any)["labels"] != "x" {
		t.Fatalf("results in input order: %v", res)
	}

	out, err = f.client().Run(ctx, "github.batch", map[string]any{"operations": ops(3, 1, 2, 4), "strategy": "all_succeed", "concurrency": 1})
	if err == nil || !strings.Contains(err.Error(), "of 4 operations failed") || out["succeeded"] != 0 {
		t.Fatalf("all_succeed: %v %v", out, err)
	}
	if e := out["results"].([]any)[3].(map[string]any)["error"]; !strings.Contains(e.(string), "skipped: operations[0] (github.add_labels) failed") {
		t.Fatalf("all_succeed stops: %v", e)
	}

	out, err = f.client().Run(ctx, "github.batch", map[string]any{"operations": ops(3, 1, 2), "strategy": "any_succeed", "concurrency": "1"})
	if err != nil || out["succeeded"] != 1 || out["failed"] != 2 {
		t.Fatalf("any_succeed: %v %v", out, err)
	}
	f.fail[1] = 404
	_, err = f.client().Run(ctx, "github.batch", map[string]any{"operations": ops(3, 1), "strategy": "any_succeed"})
	if err == nil || err.Error() != "all 2 operations failed" {
		t.Fatalf("any_succeed, none: %v", err)
	}
}

// Without a token in the environment the client asks gh, as AWF does by
// running gh; the repository comes from git's origin remote.
func TestTokenFromGHAndRepoFromGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	os.Mkdir(bin, 0o755)
	os.WriteFile(filepath.Join(bin, "gh"), []byte("#!/bin/sh\n[ \"$1 $2 $3 $4\" = 'auth token --hostname github.com' ] && echo gho_from_gh\n"), 0o755)
	gitPath, _ := exec.LookPath("git")
	os.Symlink(gitPath, filepath.Join(bin, "git"))
	repo := filepath.Join(dir, "repo")
	os.Mkdir(repo, 0o755)
	for _, args := range [][]string{{"init", "-q"}, {"remote", "add", "origin", "git@github.com:acme/app.git"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = repo
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	f := newFake(t)
	env := []string{"PATH=" + bin, "GITHUB_API_URL=" + f.srv.URL, "HOME=" + dir}
	c := New(env, repo)
	c.LookPath = func(name string) (string, error) { return filepath.Join(bin, name), nil }
	c.UseGHToken(context.Background())
	if c.Token != "gho_from_gh" {
		t.Fatalf("token %q", c.Token)
	}
	out, err := c.Run(context.Background(), "github.get_issue", map[string]any{"number": 7})
	if err != nil || out["number"] != 7 {
		t.Fatalf("%v %v", out, err)
	}
	// no origin remote: a clear error
	c = New(env, dir)
	if _, err := c.Run(context.Background(), "github.get_issue", map[string]any{"number": 7}); err == nil || !strings.Contains(err.Error(), "no repo input, and git remote get-url origin failed") {
		t.Fatalf("no remote: %v", err)
	}
}
