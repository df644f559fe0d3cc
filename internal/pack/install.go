package pack

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/Masterminds/semver/v3"

	"github.com/reelhq/reel/internal/github"
)

// Spec is what `workflow install` was given: a GitHub repository with an
// optional exact version, or a local directory or .tar.gz archive.
type Spec struct {
	// Repo is owner/repo; Version the exact version asked for ("" for
	// the latest stable release).
	Repo    string
	Version string
	// Path is a local pack directory or archive.
	Path string
}

func (s Spec) String() string {
	switch {
	case s.Path != "":
		return s.Path
	case s.Version != "":
		return s.Repo + "@" + s.Version
	}
	return s.Repo
}

// ParseSpec reads an install argument. A path that exists is a local
// source; one that looks like a path (./x, /x, x.tar.gz) but does not
// exist is an error; anything else must be owner/repo[@VERSION], the
// version exact (1.2.0 or v1.2.0; ranges are refused, as AWF refuses
// them).
func ParseSpec(arg string) (Spec, error) {
	if arg == "" {
		return Spec{}, errors.New("nothing to install: give owner/repo[@version], a pack directory or a .tar.gz archive")
	}
	if _, err := os.Stat(arg); err == nil {
		abs, err := filepath.Abs(arg)
		if err != nil {
			return Spec{}, err
		}
		return Spec{Path: abs}, nil
	}
	if strings.HasPrefix(arg, ".") || filepath.IsAbs(arg) || isArchive(arg) {
		return Spec{}, fmt.Errorf("%s: no such file or directory", arg)
	}
	if strings.HasPrefix(arg, "https://") || strings.HasPrefix(arg, "http://") {
		return Spec{}, fmt.Errorf("invalid format: use owner/repo, not a URL (%s)", arg)
	}
	repo, version, hasVersion := strings.Cut(arg, "@")
	if !hasVersion && strings.Contains(arg, ":") {
		return Spec{}, errors.New("owner/repo:version is not supported; use owner/repo@version")
	}
	owner, name, ok := strings.Cut(repo, "/")
	if !ok || strings.Contains(name, "/") || !repoPartRE.MatchString(owner) || !repoPartRE.MatchString(name) || strings.Trim(owner, ".") == "" || strings.Trim(name, ".") == "" {
		return Spec{}, fmt.Errorf("invalid format: expected owner/repo[@version], got %q", arg)
	}
	s := Spec{Repo: repo}
	if hasVersion {
		v, err := ParseVersion(version)
		if err != nil {
			return Spec{}, fmt.Errorf("invalid release version: %w (an exact version such as 1.2.0; ranges are not accepted)", err)
		}
		s.Version = v.String()
	}
	return s, nil
}

func isArchive(p string) bool { return strings.HasSuffix(p, ".tar.gz") || strings.HasSuffix(p, ".tgz") }

// NameFromRepo is the name a pack installed from repo gets: the
// repository's name without AWF's awf-workflow- prefix.
func NameFromRepo(repo string) string {
	_, name, _ := strings.Cut(repo, "/")
	return strings.TrimPrefix(name, "awf-workflow-")
}

// Installer installs packs into one packs directory.
type Installer struct {
	// Dir is the packs directory (a project's .awf/workflow-packs, or
	// the global one).
	Dir string
	// Force replaces a pack already installed under the same name.
	Force bool
	// GitHub answers the releases API and serves the assets.
	GitHub *github.Client
	// Now stamps state.json (time.Now when nil).
	Now func() time.Time
}

// Result is what an install or update did.
type Result struct {
	Pack *Pack
	// Replaced is the version of the pack the install replaced ("" when
	// none was installed).
	Replaced string
	// Warnings are what the user should know: plugins the pack needs,
	// archive entries left out.
	Warnings []string
}

// Install installs the pack spec names.
func (in *Installer) Install(ctx context.Context, spec Spec) (*Result, error) {
	if spec.Path != "" {
		return in.installLocal(spec.Path, time.Time{})
	}
	return in.installRelease(ctx, spec, time.Time{})
}

func (in *Installer) now() time.Time {
	if in.Now != nil {
		return in.Now().UTC()
	}
	return time.Now().UTC()
}

// checkTarget refuses to overwrite an installed pack without Force.
func (in *Installer) checkTarget(name string) error {
	if _, err := os.Lstat(filepath.Join(in.Dir, name)); err == nil && !in.Force {
		return fmt.Errorf("workflow pack %q is already installed in %s (use --force to replace it)", name, in.Dir)
	}
	return nil
}

// installRelease installs a GitHub release: the one named, else the
// newest stable one.
func (in *Installer) installRelease(ctx context.Context, spec Spec, installedAt time.Time) (*Result, error) {
	if in.GitHub == nil {
		return nil, errors.New("no GitHub client to install from")
	}
	name := NameFromRepo(spec.Repo)
	if err := CheckName(name); err != nil {
		return nil, fmt.Errorf("repository %s: the pack name would be %q: %w", spec.Repo, name, err)
	}
	if err := in.checkTarget(name); err != nil {
		return nil, err
	}
	releases, err := in.GitHub.Releases(ctx, spec.Repo)
	if err != nil {
		return nil, fmt.Errorf("list releases of %s: %w", spec.Repo, err)
	}
	rel, version, err := selectRelease(releases, spec.Version)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", spec.Repo, err)
	}
	data, err := in.downloadVerified(ctx, rel)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", spec.Repo, rel.TagName, err)
	}
	src := Source{Repository: spec.Repo, Version: version.String(), InstalledAt: installedAt}
	return in.installUnpacked(name, src, func(dir string) ([]string, error) { return extract(data, dir) })
}

// selectRelease picks the release whose tag is version (with or without
// a leading v), or, with no version, the highest stable one.
func selectRelease(releases []github.Release, version string) (github.Release, *semver.Version, error) {
	var best github.Release
	var bestV *semver.Version
	for _, r := range releases {
		v, err := ParseVersion(r.TagName)
		if err != nil || r.Draft {
			continue
		}
		if version != "" {
			if v.String() == version {
				return r, v, nil
			}
			continue
		}
		if r.Prerelease || v.Prerelease() != "" {
			continue
		}
		if bestV == nil || v.GreaterThan(bestV) {
			best, bestV = r, v
		}
	}
	if version != "" {
		return github.Release{}, nil, fmt.Errorf("release version %s not found", version)
	}
	if bestV == nil {
		return github.Release{}, nil, errors.New("no stable release with a semantic version tag")
	}
	return best, bestV, nil
}

// downloadVerified downloads the release's .tar.gz and checks it against
// the SHA-256 its checksums.txt lists.
func (in *Installer) downloadVerified(ctx context.Context, rel github.Release) ([]byte, error) {
	var archive, sums *github.Asset
	for i, a := range rel.Assets {
		switch {
		case a.Name == "checksums.txt":
			sums = &rel.Assets[i]
		case isArchive(a.Name) && archive == nil:
			archive = &rel.Assets[i]
		}
	}
	if archive == nil {
		return nil, errors.New("no .tar.gz archive found in the release's assets")
	}
	if sums == nil {
		return nil, errors.New("checksums.txt not found in the release's assets")
	}
	list, err := in.GitHub.Download(ctx, sums.DownloadURL, 1<<20)
	if err != nil {
		return nil, err
	}
	want := checksumFor(string(list), archive.Name)
	if want == "" {
		return nil, fmt.Errorf("checksums.txt lists no checksum for %s", archive.Name)
	}
	data, err := in.GitHub.Download(ctx, archive.DownloadURL, maxArchive)
	if err != nil {
		return nil, err
	}
	if err := verify(data, want, archive.Name); err != nil {
		return nil, err
	}
	return data, nil
}

// checksumFor finds name's SHA-256 in a checksums.txt ("HEX  NAME" lines,
// as sha256sum and GoReleaser write them).
func checksumFor(list, name string) string {
	for _, line := range strings.Split(list, "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 && strings.TrimPrefix(f[1], "*") == name {
			return strings.ToLower(f[0])
		}
	}
	return ""
}

func verify(data []byte, want, name string) error {
	sum := sha256.Sum256(data)
	if got := hex.EncodeToString(sum[:]); got != want {
		return fmt.Errorf("checksum mismatch for %s: checksums.txt says %s, the file is %s", name, want, got)
	}
	return nil
}

// installLocal installs from a local directory or archive. An archive
// with a checksums.txt beside it listing it is verified against it.
func (in *Installer) installLocal(path string, installedAt time.Time) (*Result, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	var unpack func(dir string) ([]string, error)
	if fi.IsDir() {
		unpack = func(dir string) ([]string, error) { return copyTree(path, dir) }
	} else {
		if fi.Size() > maxArchive {
			return nil, fmt.Errorf("%s is larger than the %d byte limit", path, int64(maxArchive))
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		if list, err := os.ReadFile(filepath.Join(filepath.Dir(path), "checksums.txt")); err == nil {
			if want := checksumFor(string(list), filepath.Base(path)); want != "" {
				if err := verify(data, want, filepath.Base(path)); err != nil {
					return nil, err
				}
			}
		}
		unpack = func(dir string) ([]string, error) { return extract(data, dir) }
	}
	return in.installUnpacked("", Source{Path: path, InstalledAt: installedAt}, unpack)
}

// installUnpacked unpacks a pack beside its target, checks it, writes its
// state.json and moves it into place. name is the name the pack must
// have ("" to take the manifest's).
func (in *Installer) installUnpacked(name string, src Source, unpack func(dir string) ([]string, error)) (*Result, error) {
	if err := os.MkdirAll(in.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("create %s: %w", in.Dir, err)
	}
	tmp, err := os.MkdirTemp(in.Dir, ".pack-install-")
	if err != nil {
		return nil, fmt.Errorf("create a temporary directory in %s: %w", in.Dir, err)
	}
	defer os.RemoveAll(tmp)
	skipped, err := unpack(tmp)
	if err != nil {
		return nil, err
	}
	root := packRoot(tmp)
	m, err := ReadManifest(root)
	if err != nil {
		return nil, fmt.Errorf("read the manifest: %w", err)
	}
	if err := m.Check(root); err != nil {
		return nil, fmt.Errorf("manifest validation failed: %w", err)
	}
	if name == "" {
		name = m.Name
		if err := in.checkTarget(name); err != nil {
			return nil, err
		}
	} else if m.Name != name {
		return nil, fmt.Errorf("the manifest names the pack %q; installed from this repository it must be %q", m.Name, name)
	}
	if err := m.CheckCompatible(); err != nil {
		return nil, fmt.Errorf("AWF version not compatible: %w", err)
	}
	if src.Version == "" {
		src.Version = m.Version
	}
	now := in.now()
	if src.InstalledAt.IsZero() {
		src.InstalledAt = now
	}
	src.UpdatedAt = now
	if err := writeState(root, State{Name: m.Name, Enabled: true, Source: src}); err != nil {
		return nil, fmt.Errorf("write %s: %w", StateFile, err)
	}
	res := &Result{}
	target := filepath.Join(in.Dir, name)
	if old, err := Open(target); err == nil {
		res.Replaced = old.Manifest.Version
	}
	if err := replaceDir(root, target, in.Dir); err != nil {
		return nil, err
	}
	p, err := Open(target)
	if err != nil {
		return nil, err
	}
	res.Pack = p
	for _, s := range skipped {
		res.Warnings = append(res.Warnings, fmt.Sprintf("%s left out: not a regular file or directory", s))
	}
	res.Warnings = append(res.Warnings, pluginWarnings(m)...)
	return res, nil
}

// replaceDir moves src to dst in one rename; an existing dst is moved
// aside first and removed once src is in place, so that a failure leaves
// the old pack installed.
func replaceDir(src, dst, parent string) error {
	if _, err := os.Lstat(dst); err != nil {
		if err := os.Rename(src, dst); err != nil {
			return fmt.Errorf("install into %s: %w", dst, err)
		}
		return nil
	}
	aside, err := os.MkdirTemp(parent, ".pack-old-")
	if err != nil {
		return err
	}
	old := filepath.Join(aside, "pack")
	if err := os.Rename(dst, old); err != nil {
		os.Remove(aside)
		return fmt.Errorf("move the installed pack aside: %w", err)
	}
	if err := os.Rename(src, dst); err != nil {
		if rerr := os.Rename(old, dst); rerr != nil {
			err = errors.Join(err, fmt.Errorf("the previous pack is left in %s: %w", old, rerr))
		}
		return fmt.Errorf("install into %s: %w", dst, err)
	}
	return os.RemoveAll(aside)
}

// pluginWarnings names the plugins the manifest says the pack needs.
func pluginWarnings(m *Manifest) []string {
	var out []string
	for _, name := range sortedKeys(m.Plugins) {
		out = append(out, fmt.Sprintf("pack %s requires plugin %q (%s): install it before running the workflows that use it", m.Name, name, m.Plugins[name]))
	}
	return out
}
