package pack

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"

	"github.com/reelhq/reel/internal/github"
)

// repoPartRE is what an owner or repository name may hold.
var repoPartRE = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

// Update brings an installed pack to the newest version its source has:
// the newest stable release of the repository it came from, or what its
// local directory or archive holds now when that is newer. Result.Pack is
// nil when the pack was already up to date. User overrides live outside
// the pack (.awf/prompts/NAME, .awf/scripts/NAME) and are kept.
func (in *Installer) Update(ctx context.Context, p *Pack) (*Result, error) {
	if !p.State.Recorded() {
		return nil, fmt.Errorf("workflow pack %s has no %s: its source is unknown (reinstall it with workflow install --force)", p.Name, StateFile)
	}
	src := p.State.Source
	current, err := ParseVersion(src.Version)
	if err != nil {
		current, err = ParseVersion(p.Manifest.Version)
		if err != nil {
			return nil, fmt.Errorf("workflow pack %s: installed version: %w", p.Name, err)
		}
	}
	up := *in
	up.Dir, up.Force = filepath.Dir(p.Dir), true
	switch {
	case src.Repository != "":
		if up.GitHub == nil {
			return nil, errors.New("no GitHub client to update from")
		}
		releases, err := up.GitHub.Releases(ctx, src.Repository)
		if err != nil {
			return nil, fmt.Errorf("list releases of %s: %w", src.Repository, err)
		}
		_, latest, err := selectRelease(releases, "")
		if err != nil {
			return nil, fmt.Errorf("%s: %w", src.Repository, err)
		}
		if !latest.GreaterThan(current) {
			return &Result{}, nil
		}
		res, err := up.installRelease(ctx, Spec{Repo: src.Repository, Version: latest.String()}, src.InstalledAt)
		if err != nil {
			return nil, err
		}
		res.Replaced = current.String()
		return res, nil
	case src.Path != "":
		if _, err := os.Stat(src.Path); err != nil {
			return nil, fmt.Errorf("workflow pack %s was installed from %s, which is gone: %w", p.Name, src.Path, err)
		}
		m, err := peekManifest(src.Path)
		if err != nil {
			return nil, err
		}
		v, err := ParseVersion(m.Version)
		if err != nil {
			return nil, fmt.Errorf("%s: version: %w", src.Path, err)
		}
		if !v.GreaterThan(current) {
			return &Result{}, nil
		}
		if m.Name != p.Name {
			return nil, fmt.Errorf("%s now holds pack %q, not %q", src.Path, m.Name, p.Name)
		}
		res, err := up.installLocal(src.Path, src.InstalledAt)
		if err != nil {
			return nil, err
		}
		res.Replaced = current.String()
		return res, nil
	}
	return nil, fmt.Errorf("workflow pack %s: %s records no source to update from", p.Name, StateFile)
}

// peekManifest reads the manifest of a local source without installing
// it.
func peekManifest(path string) (*Manifest, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if fi.IsDir() {
		return ReadManifest(path)
	}
	tmp, err := os.MkdirTemp("", "reel-pack-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	data, err := readLimited(path, maxArchive)
	if err != nil {
		return nil, err
	}
	if _, err := extract(data, tmp); err != nil {
		return nil, err
	}
	return ReadManifest(packRoot(tmp))
}

// Remove deletes an installed pack's directory.
func Remove(p *Pack) error {
	if err := os.RemoveAll(p.Dir); err != nil {
		return fmt.Errorf("remove workflow pack %s: %w", p.Name, err)
	}
	return nil
}

// Topic is the GitHub topic AWF's workflow packs carry.
const Topic = "awf-workflow"

// Search lists the GitHub repositories tagged with Topic matching query
// (all of them when empty), most starred first.
func Search(ctx context.Context, gh *github.Client, query string) ([]github.Repository, error) {
	q := "topic:" + Topic
	if query != "" {
		q += " " + query
	}
	repos, err := gh.SearchRepositories(ctx, q)
	if err != nil {
		if github.IsRateLimit(err) {
			return nil, fmt.Errorf("GitHub API rate limit exceeded; set GITHUB_TOKEN for higher limits: %w", err)
		}
		return nil, fmt.Errorf("search workflow packs: %w", err)
	}
	return repos, nil
}
