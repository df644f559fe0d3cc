package plugininstall

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/Masterminds/semver/v3"
)

// DefaultAPI is GitHub's API; $GITHUB_API_URL replaces it (AWF's variable,
// which tests and GitHub Enterprise use).
const DefaultAPI = "https://api.github.com"

// Release is a GitHub release, as its API gives it.
type Release struct {
	TagName    string  `json:"tag_name"`
	Prerelease bool    `json:"prerelease"`
	Draft      bool    `json:"draft"`
	Assets     []Asset `json:"assets"`
}

// Asset is a file of a release.
type Asset struct {
	Name string `json:"name"`
	URL  string `json:"browser_download_url"`
	Size int64  `json:"size"`
}

// SearchResult is a repository found by Search.
type SearchResult struct {
	FullName    string `json:"full_name"`
	Description string `json:"description"`
	Stars       int    `json:"stargazers_count"`
	URL         string `json:"html_url"`
}

// Limits on what is downloaded.
const (
	maxAPIBody     = 10 << 20
	maxArchive     = 200 << 20
	maxChecksums   = 1 << 20
	maxReleaseList = 100
)

// get fetches url, refusing a body over limit.
func (i *Installer) get(ctx context.Context, u string, limit int64, api bool) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	if api {
		req.Header.Set("Accept", "application/vnd.github+json")
		req.Header.Set("X-GitHub-Api-Version", "2022-11-28")
	}
	if i.Token != "" && i.sameHost(u) {
		req.Header.Set("Authorization", "Bearer "+i.Token)
	}
	resp, err := i.client().Do(req)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", redact(u), err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusForbidden || resp.StatusCode == http.StatusTooManyRequests {
		if resp.Header.Get("X-RateLimit-Remaining") == "0" {
			return nil, errors.New("GitHub's API rate limit is exhausted: set GITHUB_TOKEN (or log in with gh) for a higher one")
		}
	}
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return nil, fmt.Errorf("GET %s: %s: %s", redact(u), resp.Status, strings.TrimSpace(string(msg)))
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", redact(u), err)
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("GET %s: more than %d bytes", redact(u), limit)
	}
	return b, nil
}

// sameHost: the token goes to GitHub's API host and its download hosts
// only as far as the API is one of them (release assets redirect to
// other hosts, which must not get it).
func (i *Installer) sameHost(u string) bool {
	a, err1 := url.Parse(i.api())
	b, err2 := url.Parse(u)
	return err1 == nil && err2 == nil && a.Host == b.Host
}

func redact(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return u
	}
	return p.Redacted()
}

// Releases lists a repository's releases, newest first.
func (i *Installer) Releases(ctx context.Context, repo string) ([]Release, error) {
	b, err := i.get(ctx, fmt.Sprintf("%s/repos/%s/releases?per_page=%d", i.api(), repo, maxReleaseList), maxAPIBody, true)
	if err != nil {
		return nil, fmt.Errorf("releases of %s: %w", repo, err)
	}
	var rs []Release
	if err := json.Unmarshal(b, &rs); err != nil {
		return nil, fmt.Errorf("releases of %s: %w", repo, err)
	}
	return rs, nil
}

// pickRelease is the release with tag version (v optional), or else the
// highest semantic version, pre-releases only if asked.
func pickRelease(rs []Release, version string, pre bool) (Release, error) {
	if version != "" {
		want := strings.TrimPrefix(version, "v")
		for _, r := range rs {
			if strings.TrimPrefix(r.TagName, "v") == want && !r.Draft {
				return r, nil
			}
		}
		return Release{}, fmt.Errorf("no release %s", version)
	}
	var best Release
	var bestV *semver.Version
	for _, r := range rs {
		if r.Draft || (r.Prerelease && !pre) {
			continue
		}
		v, err := semver.NewVersion(r.TagName)
		if err != nil || (v.Prerelease() != "" && !pre) {
			continue
		}
		if bestV == nil || v.GreaterThan(bestV) {
			best, bestV = r, v
		}
	}
	if bestV == nil {
		what := "stable release"
		if pre {
			what = "release"
		}
		return Release{}, fmt.Errorf("no %s with a semantic version tag", what)
	}
	return best, nil
}

// platformAsset is the release's archive for goos/goarch, named as AWF
// names them: NAME_VERSION_OS_ARCH.tar.gz.
func platformAsset(r Release, goos, goarch string) (Asset, error) {
	suffix := fmt.Sprintf("_%s_%s.tar.gz", goos, goarch)
	var have []string
	for _, a := range r.Assets {
		if !strings.HasSuffix(a.Name, ".tar.gz") {
			continue
		}
		if strings.HasSuffix(a.Name, suffix) {
			return a, nil
		}
		parts := strings.Split(strings.TrimSuffix(a.Name, ".tar.gz"), "_")
		if len(parts) >= 3 {
			have = append(have, parts[len(parts)-2]+"/"+parts[len(parts)-1])
		}
	}
	if len(have) > 0 {
		return Asset{}, fmt.Errorf("release %s has no archive for %s/%s (it has: %s)", r.TagName, goos, goarch, strings.Join(have, ", "))
	}
	return Asset{}, fmt.Errorf("release %s has no archive named NAME_VERSION_%s_%s.tar.gz", r.TagName, goos, goarch)
}

// checksumAsset is the release's checksum file (checksums.txt,
// *_checksums.txt, SHA256SUMS).
func checksumAsset(r Release) (Asset, bool) {
	for _, a := range r.Assets {
		n := strings.ToLower(a.Name)
		if strings.HasSuffix(n, "checksums.txt") || n == "sha256sums" || strings.HasSuffix(n, "sha256sums.txt") {
			return a, true
		}
	}
	return Asset{}, false
}

// checksumFor reads the SHA-256 of name from a checksum file (lines of
// "HEX  NAME", the name possibly marked binary with '*').
func checksumFor(sums, name string) string {
	for line := range strings.SplitSeq(sums, "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 && strings.TrimPrefix(f[1], "*") == name {
			return strings.ToLower(f[0])
		}
	}
	return ""
}

// Search lists GitHub repositories with the awf-plugin topic matching
// query, most starred first.
func (i *Installer) Search(ctx context.Context, query string) ([]SearchResult, error) {
	q := "topic:awf-plugin"
	if query != "" {
		q += " " + query
	}
	b, err := i.get(ctx, i.api()+"/search/repositories?sort=stars&order=desc&q="+url.QueryEscape(q), maxAPIBody, true)
	if err != nil {
		return nil, fmt.Errorf("search GitHub: %w", err)
	}
	var r struct {
		Items []SearchResult `json:"items"`
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("search GitHub: %w", err)
	}
	return r.Items, nil
}
