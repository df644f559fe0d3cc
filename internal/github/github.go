// Package github runs the github.* workflow operations (AWF's GitHub
// provider) against the GitHub REST API.
//
// It decides where requests go and with which credentials, the way gh
// does: the API base is GITHUB_API_URL, else https://HOST/api/v3 for a
// GH_HOST other than github.com, else https://api.github.com; the token is
// GH_TOKEN or GITHUB_TOKEN (GH_ENTERPRISE_TOKEN or GITHUB_ENTERPRISE_TOKEN
// first for an enterprise host), else what `gh auth token` prints. The
// repository is the operation's repo input, else the one git's origin
// remote names. Outputs have the shapes AWF's provider gives (it reads
// them from gh's JSON), so workflows written for AWF read the same fields.
package github

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"time"
)

// Client calls the GitHub REST API.
type Client struct {
	// BaseURL is the API root, without a trailing slash.
	BaseURL string
	// Host is the GitHub host repositories live on (github.com, or the
	// enterprise host), used to read git remotes.
	Host string
	// Token authenticates requests; empty sends none (public reads only).
	Token string
	// HTTP is the client requests go through (http.DefaultClient if nil).
	HTTP *http.Client
	// Dir is where git is asked for the origin remote when an operation
	// names no repo.
	Dir string
	// Environ is the environment of git and gh.
	Environ []string
	// LookPath finds git and gh (exec.LookPath if nil).
	LookPath func(name string) (string, error)

	// Requests records every request made (method, path, status), for
	// the step's result.
	mu       sync.Mutex
	requests []Request

	repoOnce sync.Once
	repo     string
	repoErr  error
}

// Request is one API call, as recorded in a step's result.
type Request struct {
	Method string `json:"method"`
	Path   string `json:"path"`
	Status int    `json:"status,omitempty"`
	Error  string `json:"error,omitempty"`
}

// New returns a client configured from environ (KEY=VALUE entries) as gh
// configures itself. dir is where git is run to find the repository.
func New(environ []string, dir string) *Client {
	env := map[string]string{}
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok {
			env[k] = v
		}
	}
	c := &Client{Host: "github.com", Dir: dir, Environ: environ}
	if h := strings.TrimSpace(env["GH_HOST"]); h != "" {
		c.Host = h
	} else if u, err := url.Parse(env["GITHUB_SERVER_URL"]); err == nil && u.Host != "" {
		// GitHub Actions names the server a workflow runs against
		c.Host = u.Host
	}
	switch {
	case env["GITHUB_API_URL"] != "":
		c.BaseURL = strings.TrimRight(env["GITHUB_API_URL"], "/")
	case c.Host == "github.com":
		c.BaseURL = "https://api.github.com"
	default:
		c.BaseURL = "https://" + c.Host + "/api/v3"
	}
	names := []string{"GH_TOKEN", "GITHUB_TOKEN"}
	if c.Host != "github.com" {
		names = append([]string{"GH_ENTERPRISE_TOKEN", "GITHUB_ENTERPRISE_TOKEN"}, names...)
	}
	for _, n := range names {
		if t := strings.TrimSpace(env[n]); t != "" {
			c.Token = t
			break
		}
	}
	return c
}

// UseGHToken asks gh for its token when none was configured, so a user
// logged in with `gh auth login` needs no GITHUB_TOKEN (as with AWF, which
// runs gh). It is a no-op when gh is not installed or not logged in.
func (c *Client) UseGHToken(ctx context.Context) {
	if c.Token != "" {
		return
	}
	gh, err := c.lookPath("gh")
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, gh, "auth", "token", "--hostname", c.Host)
	cmd.Env = c.Environ
	cmd.Dir = c.Dir
	out, err := cmd.Output()
	if err == nil {
		c.Token = strings.TrimSpace(string(out))
	}
}

func (c *Client) lookPath(name string) (string, error) {
	if c.LookPath != nil {
		return c.LookPath(name)
	}
	return exec.LookPath(name)
}

// Requests returns the requests made so far.
func (c *Client) Requests() []Request {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Request(nil), c.requests...)
}

// APIError is a non-2xx answer of the API.
type APIError struct {
	Method, Path string
	Status       int
	Message      string
}

func (e *APIError) Error() string {
	msg := fmt.Sprintf("GitHub API %s %s: %d %s", e.Method, e.Path, e.Status, http.StatusText(e.Status))
	if e.Message != "" {
		msg += ": " + e.Message
	}
	if e.Status == http.StatusUnauthorized {
		msg += " (set GITHUB_TOKEN or GH_TOKEN, or log in with gh auth login)"
	}
	return msg
}

// maxResponse bounds what is read of one API response.
const maxResponse = 32 << 20

// do sends one request and decodes a JSON answer into out (when not nil).
// It returns the response headers.
func (c *Client) do(ctx context.Context, method, path string, body, out any) (http.Header, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, fmt.Errorf("encode request: %w", err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.BaseURL+path, rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/vnd.github+json")
	req.Header.Set("X-GitHub-Api-Version", "2022-11-28")
	req.Header.Set("User-Agent", "reel")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	rec := Request{Method: method, Path: path}
	resp, err := hc.Do(req)
	if err != nil {
		rec.Error = err.Error()
		c.record(rec)
		return nil, fmt.Errorf("GitHub API %s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	rec.Status = resp.StatusCode
	c.record(rec)
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse+1))
	if err != nil {
		return nil, fmt.Errorf("GitHub API %s %s: read answer: %w", method, path, err)
	}
	if len(b) > maxResponse {
		return nil, fmt.Errorf("GitHub API %s %s: answer larger than %d bytes", method, path, maxResponse)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		var e struct {
			Message string `json:"message"`
			Errors  []struct {
				Message string `json:"message"`
			} `json:"errors"`
		}
		msg := strings.TrimSpace(string(b))
		if json.Unmarshal(b, &e) == nil && e.Message != "" {
			msg = e.Message
			for _, x := range e.Errors {
				if x.Message != "" {
					msg += "; " + x.Message
				}
			}
		}
		if len(msg) > 500 {
			msg = msg[:500] + "…"
		}
		return resp.Header, &APIError{Method: method, Path: path, Status: resp.StatusCode, Message: msg}
	}
	if out != nil && len(bytes.TrimSpace(b)) > 0 {
		if err := json.Unmarshal(b, out); err != nil {
			return nil, fmt.Errorf("GitHub API %s %s: answer is not the JSON expected: %w", method, path, err)
		}
	}
	return resp.Header, nil
}

func (c *Client) record(r Request) {
	c.mu.Lock()
	c.requests = append(c.requests, r)
	c.mu.Unlock()
}

var repoRE = regexp.MustCompile(`^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$`)

// Repo returns the repository an operation acts on: given ("owner/repo"),
// or the one the origin remote names.
func (c *Client) Repo(ctx context.Context, given string) (string, error) {
	given = strings.TrimSpace(given)
	if given != "" {
		if !repoRE.MatchString(given) || strings.Contains(given, "..") {
			return "", fmt.Errorf("repo %q is not owner/repo", given)
		}
		return given, nil
	}
	c.repoOnce.Do(func() {
		git, err := c.lookPath("git")
		if err != nil {
			c.repoErr = fmt.Errorf("no repo input, and git is not installed to read the origin remote")
			return
		}
		cmd := exec.CommandContext(ctx, git, "remote", "get-url", "origin")
		cmd.Dir = c.Dir
		cmd.Env = c.Environ
		out, err := cmd.Output()
		if err != nil {
			c.repoErr = fmt.Errorf("no repo input, and git remote get-url origin failed: %v", err)
			return
		}
		c.repo = RepoFromRemote(strings.TrimSpace(string(out)), c.Host)
		if c.repo == "" {
			c.repoErr = fmt.Errorf("no repo input, and the origin remote %q is not a %s repository", strings.TrimSpace(string(out)), c.Host)
		}
	})
	return c.repo, c.repoErr
}

// RepoFromRemote extracts owner/repo from a git remote URL on host (SSH
// git@host:owner/repo.git, ssh://git@host/owner/repo, https://host/owner/repo.git).
func RepoFromRemote(remote, host string) string {
	var path string
	if rest, ok := strings.CutPrefix(remote, "git@"+host+":"); ok {
		path = rest
	} else if u, err := url.Parse(remote); err == nil && u.Host != "" {
		if h := u.Hostname(); !strings.EqualFold(h, host) {
			return ""
		}
		path = strings.TrimPrefix(u.Path, "/")
	} else {
		return ""
	}
	path = strings.TrimSuffix(strings.TrimSuffix(path, "/"), ".git")
	if !repoRE.MatchString(path) {
		return ""
	}
	return path
}

// ErrInput marks an operation input that is missing or of the wrong kind.
var ErrInput = errors.New("invalid input")
