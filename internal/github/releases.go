package github

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// Release is a GitHub release, as the releases API gives it.
type Release struct {
	TagName    string  `json:"tag_name"`
	Prerelease bool    `json:"prerelease"`
	Draft      bool    `json:"draft"`
	Assets     []Asset `json:"assets"`
}

// Asset is a file attached to a release.
type Asset struct {
	Name        string `json:"name"`
	DownloadURL string `json:"browser_download_url"`
	Size        int64  `json:"size"`
}

// Releases lists the releases of repo (owner/repo), newest first as the
// API orders them, following the API's pagination up to 10 pages of 100.
func (c *Client) Releases(ctx context.Context, repo string) ([]Release, error) {
	if strings.TrimSpace(repo) == "" {
		return nil, fmt.Errorf("list releases: no repository given")
	}
	repo, err := c.Repo(ctx, repo)
	if err != nil {
		return nil, err
	}
	var all []Release
	for page := 1; page <= 10; page++ {
		var rs []Release
		if _, err := c.do(ctx, http.MethodGet, fmt.Sprintf("/repos/%s/releases?per_page=100&page=%d", repo, page), nil, &rs); err != nil {
			return nil, err
		}
		all = append(all, rs...)
		if len(rs) < 100 {
			break
		}
	}
	return all, nil
}

// Repository is one result of a repository search.
type Repository struct {
	FullName    string `json:"full_name"`
	Description string `json:"description"`
	Stars       int    `json:"stargazers_count"`
}

// SearchRepositories runs a repository search (GitHub's search syntax,
// such as "topic:awf-workflow speckit"), most starred first.
func (c *Client) SearchRepositories(ctx context.Context, query string) ([]Repository, error) {
	v := url.Values{"q": {query}, "sort": {"stars"}, "order": {"desc"}, "per_page": {"100"}}
	var res struct {
		Items []Repository `json:"items"`
	}
	if _, err := c.do(ctx, http.MethodGet, "/search/repositories?"+v.Encode(), nil, &res); err != nil {
		return nil, err
	}
	return res.Items, nil
}

// Download fetches a release asset's URL, refusing more than limit bytes.
// Assets are served from another host than the API, so no credentials go
// with the request (the URL of a public asset needs none).
func (c *Client) Download(ctx context.Context, rawURL string, limit int64) ([]byte, error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") {
		return nil, fmt.Errorf("download %s: not an http(s) URL", rawURL)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return nil, fmt.Errorf("download %s: %w", rawURL, err)
	}
	req.Header.Set("User-Agent", "reel")
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("download %s: %w", rawURL, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, fmt.Errorf("download %s: HTTP %d %s", rawURL, resp.StatusCode, http.StatusText(resp.StatusCode))
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, fmt.Errorf("download %s: %w", rawURL, err)
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("download %s: larger than the %d byte limit", rawURL, limit)
	}
	return b, nil
}

// IsRateLimit reports whether err is the API refusing a request for the
// rate limit (403 or 429 with that message), for which a token helps.
func IsRateLimit(err error) bool {
	var ae *APIError
	return errors.As(err, &ae) && (ae.Status == http.StatusTooManyRequests || ae.Status == http.StatusForbidden && strings.Contains(strings.ToLower(ae.Message), "rate limit"))
}
