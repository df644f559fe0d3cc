package github

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Run runs the operation name (github.get_issue, ...) with its resolved
// inputs and returns its outputs.
func (c *Client) Run(ctx context.Context, name string, in map[string]any) (map[string]any, error) {
	switch name {
	case "github.get_issue":
		return c.getIssue(ctx, in)
	case "github.get_pr":
		return c.getPR(ctx, in)
	case "github.create_issue":
		return c.createIssue(ctx, in)
	case "github.create_pr":
		return c.createPR(ctx, in)
	case "github.add_labels":
		return c.addLabels(ctx, in)
	case "github.add_comment":
		return c.addComment(ctx, in)
	case "github.list_comments":
		return c.listComments(ctx, in)
	case "github.batch":
		return c.batch(ctx, in)
	}
	return nil, fmt.Errorf("unknown GitHub operation %q", name)
}

// Input readers. Inputs come from templates (text) or YAML literals.

func number(in map[string]any, key string) (int, error) {
	switch v := in[key].(type) {
	case int:
		if v > 0 {
			return v, nil
		}
	case int64:
		if v > 0 && v <= math.MaxInt32 {
			return int(v), nil
		}
	case uint64:
		if v > 0 && v <= math.MaxInt32 {
			return int(v), nil
		}
	case float64:
		if v > 0 && v == math.Trunc(v) && v <= math.MaxInt32 {
			return int(v), nil
		}
	case string:
		n, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(v), "#")))
		if err == nil && n > 0 {
			return n, nil
		}
	case nil:
		return 0, fmt.Errorf("%w: %s is required", ErrInput, key)
	}
	return 0, fmt.Errorf("%w: %s must be a positive number, got %v", ErrInput, key, in[key])
}

func text(in map[string]any, key string) string {
	switch v := in[key].(type) {
	case nil:
		return ""
	case string:
		return strings.TrimSpace(v)
	default:
		return strings.TrimSpace(fmt.Sprint(v))
	}
}

func required(in map[string]any, key string) (string, error) {
	if s := text(in, key); s != "" {
		return s, nil
	}
	return "", fmt.Errorf("%w: %s is required", ErrInput, key)
}

// list reads a list input: a YAML list, or text with one item per comma
// (what a template yields).
func list(in map[string]any, key string) []string {
	var out []string
	switch v := in[key].(type) {
	case []any:
		for _, x := range v {
			if s := strings.TrimSpace(fmt.Sprint(x)); s != "" {
				out = append(out, s)
			}
		}
	case []string:
		out = append(out, v...)
	case string:
		for s := range strings.SplitSeq(v, ",") {
			if s = strings.TrimSpace(s); s != "" {
				out = append(out, s)
			}
		}
	}
	return out
}

func boolean(in map[string]any, key string) bool {
	switch v := in[key].(type) {
	case bool:
		return v
	case string:
		v = strings.ToLower(strings.TrimSpace(v))
		return v == "true" || v == "draft" || v == "yes"
	}
	return false
}

// The REST shapes reel reads.

type restUser struct {
	Login string `json:"login"`
}

type restLabel struct {
	NodeID      string `json:"node_id"`
	Name        string `json:"name"`
	Description string `json:"description"`
	Color       string `json:"color"`
}

type restIssue struct {
	Number      int         `json:"number"`
	Title       string      `json:"title"`
	Body        string      `json:"body"`
	State       string      `json:"state"`
	HTMLURL     string      `json:"html_url"`
	User        restUser    `json:"user"`
	Labels      []restLabel `json:"labels"`
	Assignees   []restUser  `json:"assignees"`
	CreatedAt   string      `json:"created_at"`
	UpdatedAt   string      `json:"updated_at"`
	ClosedAt    *string     `json:"closed_at"`
	PullRequest *struct{}   `json:"pull_request"`
	Milestone   *struct {
		Number int    `json:"number"`
		Title  string `json:"title"`
	} `json:"milestone"`
}

type restPR struct {
	restIssue
	Draft     bool    `json:"draft"`
	Merged    bool    `json:"merged"`
	Mergeable *bool   `json:"mergeable"`
	MergedAt  *string `json:"merged_at"`
	Head      struct {
		Ref string `json:"ref"`
		SHA string `json:"sha"`
	} `json:"head"`
	Base struct {
		Ref string `json:"ref"`
	} `json:"base"`
}

// labels in gh's shape.
func labels(ls []restLabel) []any {
	out := make([]any, len(ls))
	for i, l := range ls {
		out[i] = map[string]any{"id": l.NodeID, "name": l.Name, "description": l.Description, "color": l.Color}
	}
	return out
}

func users(us []restUser) []any {
	out := make([]any, len(us))
	for i, u := range us {
		out[i] = map[string]any{"login": u.Login}
	}
	return out
}

func optString(s *string) any {
	if s == nil {
		return nil
	}
	return *s
}

// Default output fields, as AWF asks gh for them; fields may add others.
var (
	issueFields = []string{"number", "title", "body", "state", "labels"}
	prFields    = []string{"number", "title", "body", "state", "headRefName", "baseRefName", "mergeable", "mergedAt", "labels"}
)

func issueValues(is *restIssue) map[string]any {
	v := map[string]any{
		"number": is.Number, "title": is.Title, "body": is.Body, "state": strings.ToUpper(is.State),
		"labels": labels(is.Labels), "url": is.HTMLURL, "author": map[string]any{"login": is.User.Login},
		"assignees": users(is.Assignees), "createdAt": is.CreatedAt, "updatedAt": is.UpdatedAt, "closedAt": optString(is.ClosedAt),
		"milestone": nil,
	}
	if is.Milestone != nil {
		v["milestone"] = map[string]any{"number": is.Milestone.Number, "title": is.Milestone.Title}
	}
	return v
}

// pick keeps the default fields, or the ones the fields input names.
func pick(all map[string]any, defaults []string, in map[string]any) (map[string]any, error) {
	want := list(in, "fields")
	if len(want) == 0 {
		want = defaults
	}
	var known []string
	for k := range all {
		known = append(known, k)
	}
	slices.Sort(known)
	out := make(map[string]any, len(want))
	for _, f := range want {
		v, ok := all[f]
		if !ok {
			return nil, fmt.Errorf("%w: fields: unknown field %q (known: %s)", ErrInput, f, strings.Join(known, ", "))
		}
		out[f] = v
	}
	return out, nil
}

func (c *Client) getIssue(ctx context.Context, in map[string]any) (map[string]any, error) {
	repo, n, err := c.repoAndNumber(ctx, in)
	if err != nil {
		return nil, err
	}
	var is restIssue
	if _, err := c.do(ctx, http.MethodGet, fmt.Sprintf("/repos/%s/issues/%d", repo, n), nil, &is); err != nil {
		return nil, err
	}
	return pick(issueValues(&is), issueFields, in)
}

func (c *Client) getPR(ctx context.Context, in map[string]any) (map[string]any, error) {
	repo, n, err := c.repoAndNumber(ctx, in)
	if err != nil {
		return nil, err
	}
	var pr restPR
	if _, err := c.do(ctx, http.MethodGet, fmt.Sprintf("/repos/%s/pulls/%d", repo, n), nil, &pr); err != nil {
		return nil, err
	}
	v := issueValues(&pr.restIssue)
	if pr.Merged {
		v["state"] = "MERGED"
	}
	mergeable := "UNKNOWN"
	if pr.Mergeable != nil {
		mergeable = map[bool]string{true: "MERGEABLE", false: "CONFLICTING"}[*pr.Mergeable]
	}
	v["mergeable"] = mergeable
	v["mergedAt"] = optString(pr.MergedAt)
	v["headRefName"], v["baseRefName"], v["headRefOid"] = pr.Head.Ref, pr.Base.Ref, pr.Head.SHA
	v["isDraft"] = pr.Draft
	return pick(v, prFields, in)
}

func (c *Client) repoAndNumber(ctx context.Context, in map[string]any) (string, int, error) {
	n, err := number(in, "number")
	if err != nil {
		return "", 0, err
	}
	repo, err := c.Repo(ctx, text(in, "repo"))
	return repo, n, err
}

func (c *Client) createIssue(ctx context.Context, in map[string]any) (map[string]any, error) {
	title, err := required(in, "title")
	if err != nil {
		return nil, err
	}
	repo, err := c.Repo(ctx, text(in, "repo"))
	if err != nil {
		return nil, err
	}
	body := map[string]any{"title": title}
	if b := text(in, "body"); b != "" {
		body["body"] = b
	}
	if l := list(in, "labels"); len(l) > 0 {
		body["labels"] = l
	}
	if a := list(in, "assignees"); len(a) > 0 {
		body["assignees"] = a
	}
	var is restIssue
	if _, err := c.do(ctx, http.MethodPost, "/repos/"+repo+"/issues", body, &is); err != nil {
		return nil, err
	}
	// AWF reads the number from the URL gh prints: text, not a number.
	return map[string]any{"number": strconv.Itoa(is.Number), "url": is.HTMLURL}, nil
}

func (c *Client) createPR(ctx context.Context, in map[string]any) (map[string]any, error) {
	var f [3]string
	for i, k := range []string{"title", "head", "base"} {
		s, err := required(in, k)
		if err != nil {
			return nil, err
		}
		f[i] = s
	}
	repo, err := c.Repo(ctx, text(in, "repo"))
	if err != nil {
		return nil, err
	}
	body := map[string]any{"title": f[0], "head": f[1], "base": f[2]}
	if b := text(in, "body"); b != "" {
		body["body"] = b
	}
	if boolean(in, "draft") {
		body["draft"] = true
	}
	var pr restPR
	_, err = c.do(ctx, http.MethodPost, "/repos/"+repo+"/pulls", body, &pr)
	var ae *APIError
	if errors.As(err, &ae) && ae.Status == http.StatusUnprocessableEntity && strings.Contains(ae.Message, "already exists") {
		return c.existingPR(ctx, repo, f[1])
	}
	if err != nil {
		return nil, err
	}
	return map[string]any{"number": strconv.Itoa(pr.Number), "url": pr.HTMLURL, "already_exists": "false"}, nil
}

// existingPR finds the open pull request of head, for create_pr on a
// branch that already has one.
func (c *Client) existingPR(ctx context.Context, repo, head string) (map[string]any, error) {
	if !strings.Contains(head, ":") {
		head = strings.Split(repo, "/")[0] + ":" + head
	}
	var prs []restPR
	q := url.Values{"head": {head}, "state": {"open"}}
	if _, err := c.do(ctx, http.MethodGet, "/repos/"+repo+"/pulls?"+q.Encode(), nil, &prs); err != nil {
		return nil, fmt.Errorf("a pull request for %s already exists, but finding it failed: %w", head, err)
	}
	if len(prs) == 0 {
		return nil, fmt.Errorf("GitHub says a pull request for %s already exists, but none is open", head)
	}
	return map[string]any{"number": strconv.Itoa(prs[0].Number), "url": prs[0].HTMLURL, "already_exists": "true"}, nil
}

func (c *Client) addLabels(ctx context.Context, in map[string]any) (map[string]any, error) {
	repo, n, err := c.repoAndNumber(ctx, in)
	if err != nil {
		return nil, err
	}
	ls := list(in, "labels")
	if len(ls) == 0 {
		return nil, fmt.Errorf("%w: labels is required", ErrInput)
	}
	if _, err := c.do(ctx, http.MethodPost, fmt.Sprintf("/repos/%s/issues/%d/labels", repo, n), map[string]any{"labels": ls}, nil); err != nil {
		return nil, err
	}
	return map[string]any{"labels": strings.Join(ls, ",")}, nil
}

func (c *Client) addComment(ctx context.Context, in map[string]any) (map[string]any, error) {
	repo, n, err := c.repoAndNumber(ctx, in)
	if err != nil {
		return nil, err
	}
	body, err := required(in, "body")
	if err != nil {
		return nil, err
	}
	var cm struct {
		ID      int64  `json:"id"`
		HTMLURL string `json:"html_url"`
	}
	if _, err := c.do(ctx, http.MethodPost, fmt.Sprintf("/repos/%s/issues/%d/comments", repo, n), map[string]any{"body": body}, &cm); err != nil {
		return nil, err
	}
	return map[string]any{"comment_id": strconv.FormatInt(cm.ID, 10), "url": cm.HTMLURL}, nil
}

// commentPage is the page size of list_comments (the API's maximum).
const commentPage = 100

func (c *Client) listComments(ctx context.Context, in map[string]any) (map[string]any, error) {
	repo, n, err := c.repoAndNumber(ctx, in)
	if err != nil {
		return nil, err
	}
	limit := 0
	if in["limit"] != nil {
		if limit, err = number(in, "limit"); err != nil {
			return nil, err
		}
	}
	comments := []any{}
	for page := 1; ; page++ {
		var got []struct {
			NodeID            string   `json:"node_id"`
			Body              string   `json:"body"`
			HTMLURL           string   `json:"html_url"`
			User              restUser `json:"user"`
			CreatedAt         string   `json:"created_at"`
			AuthorAssociation string   `json:"author_association"`
		}
		path := fmt.Sprintf("/repos/%s/issues/%d/comments?per_page=%d&page=%d", repo, n, commentPage, page)
		if _, err := c.do(ctx, http.MethodGet, path, nil, &got); err != nil {
			return nil, err
		}
		for _, g := range got {
			comments = append(comments, map[string]any{
				"id": g.NodeID, "author": map[string]any{"login": g.User.Login}, "authorAssociation": g.AuthorAssociation,
				"body": g.Body, "createdAt": g.CreatedAt, "url": g.HTMLURL,
			})
		}
		if limit > 0 && len(comments) >= limit {
			comments = comments[:limit]
			break
		}
		if len(got) < commentPage {
			break
		}
	}
	return map[string]any{"comments": comments, "total": len(comments)}, nil
}

// Batch strategies.
const (
	AllSucceed = "all_succeed"
	AnySucceed = "any_succeed"
	BestEffort = "best_effort"
)

// DefaultConcurrency is how many batch operations run at once by default.
const DefaultConcurrency = 3

// batch runs several operations concurrently. Results keep the order of
// the operations. all_succeed stops at the first failure and fails;
// any_succeed stops at the first success and fails only when none
// succeeded; best_effort runs everything and succeeds (its outputs count
// the failures).
func (c *Client) batch(ctx context.Context, in map[string]any) (map[string]any, error) {
	raw, ok := in["operations"].([]any)
	if !ok {
		return nil, fmt.Errorf("%w: operations must be a list", ErrInput)
	}
	strategy := text(in, "strategy")
	if strategy == "" {
		strategy = BestEffort
	}
	if strategy != AllSucceed && strategy != AnySucceed && strategy != BestEffort {
		return nil, fmt.Errorf("%w: strategy %q is not all_succeed, any_succeed or best_effort", ErrInput, strategy)
	}
	conc := DefaultConcurrency
	if in["concurrency"] != nil {
		n, err := number(in, "concurrency")
		if err != nil {
			return nil, err
		}
		conc = n
	}
	ops, err := batchOps(raw)
	if err != nil {
		return nil, err
	}

	results := make([]map[string]any, len(ops))
	bctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	sem := make(chan struct{}, conc)
	var wg sync.WaitGroup
	for i, o := range ops {
		select {
		case sem <- struct{}{}:
		case <-bctx.Done():
		}
		if bctx.Err() != nil {
			results[i] = map[string]any{"name": o.name, "success": false, "outputs": map[string]any{}, "error": "skipped: " + context.Cause(bctx).Error()}
			continue
		}
		wg.Add(1)
		go func(i int, o batchOp) {
			defer wg.Done()
			defer func() { <-sem }()
			outs, err := c.Run(bctx, o.name, o.inputs)
			res := map[string]any{"name": o.name, "success": err == nil, "outputs": outs, "error": ""}
			if outs == nil {
				res["outputs"] = map[string]any{}
			}
			if err != nil {
				res["error"] = err.Error()
				if bctx.Err() != nil && ctx.Err() == nil {
					res["error"] = "cancelled: " + context.Cause(bctx).Error()
				} else if strategy == AllSucceed {
					cancel(fmt.Errorf("operations[%d] (%s) failed", i, o.name))
				}
			} else if strategy == AnySucceed {
				cancel(fmt.Errorf("operations[%d] (%s) succeeded", i, o.name))
			}
			results[i] = res
		}(i, o)
	}
	wg.Wait()
	succeeded, failed := 0, 0
	list := make([]any, len(results))
	for i, r := range results {
		if r["success"] == true {
			succeeded++
		} else {
			failed++
		}
		list[i] = r
	}
	outs := map[string]any{"total": len(ops), "succeeded": succeeded, "failed": failed, "results": list}
	switch {
	case ctx.Err() != nil:
		return outs, ctx.Err()
	case strategy == AllSucceed && failed > 0:
		return outs, fmt.Errorf("%d of %d operations failed", failed, len(ops))
	case strategy == AnySucceed && succeeded == 0 && len(ops) > 0:
		return outs, fmt.Errorf("all %d operations failed", len(ops))
	}
	return outs, nil
}

// batchOp is one operation of a github.batch.
type batchOp struct {
	name   string
	inputs map[string]any
}

// batchOps reads github.batch's operations: each a github operation's name
// and its inputs, given beside the name or under inputs.
func batchOps(raw []any) ([]batchOp, error) {
	ops := make([]batchOp, len(raw))
	for i, r := range raw {
		m, ok := r.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%w: operations[%d] is not a mapping", ErrInput, i)
		}
		o := batchOp{name: text(m, "name"), inputs: map[string]any{}}
		if o.name == "" || o.name == "github.batch" || !strings.HasPrefix(o.name, "github.") {
			return nil, fmt.Errorf("%w: operations[%d]: name %q is not a github operation", ErrInput, i, o.name)
		}
		for k, v := range m {
			if k != "name" && k != "inputs" {
				o.inputs[k] = v
			}
		}
		if nested, ok := m["inputs"].(map[string]any); ok {
			for k, v := range nested {
				o.inputs[k] = v
			}
		}
		ops[i] = o
	}
	return ops, nil
}
