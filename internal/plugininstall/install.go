// Package plugininstall installs AWF plugins: from a GitHub repository's
// releases as AWF publishes them (OWNER/REPO[@VERSION]: the archive
// NAME_VERSION_OS_ARCH.tar.gz, verified against the release's checksum
// file), or from a local directory or .tar.gz archive, so that it works
// offline; and updates and removes them.
//
// What it decides:
//
//   - An install unpacks into a temporary directory beside its target,
//     checks the manifest as the host will, makes the awf-plugin-NAME
//     executable executable, and only then renames it into place, so
//     that a failed install leaves the previous one as it was. The plugin's
//     directory is named for its executable (awf-plugin-NAME goes to
//     NAME), the layout under which AWF finds it too.
//   - The state file records where the plugin came from and its binary's
//     SHA-256, which the host checks before every start. A GitHub archive
//     whose checksum is not in the release's checksum file is refused; a
//     local archive is checked against a checksum file beside it when
//     there is one (checksums.txt, SHA256SUMS, ARCHIVE.sha256).
//   - GitHub is reached at $GITHUB_API_URL (default api.github.com) with
//     $GITHUB_TOKEN, or gh's token, when set; the token goes to the API's
//     host only.
package plugininstall

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"time"

	"github.com/Masterminds/semver/v3"

	"github.com/reelhq/reel/internal/plugin"
)

// Installer installs plugins. The zero value uses GitHub's API, no token,
// a default HTTP client and the running platform.
type Installer struct {
	// API is GitHub's API base URL (DefaultAPI when "").
	API string
	// Token authenticates GitHub requests ("" for none).
	Token string
	// HTTP is the client (a 60-second one when nil).
	HTTP *http.Client
	// GOOS and GOARCH select a release's archive (the running platform's
	// when "").
	GOOS, GOARCH string
}

// FromEnv is an Installer configured as AWF's: $GITHUB_API_URL, and
// $GITHUB_TOKEN or else `gh auth token`.
func FromEnv(getenv func(string) string) *Installer {
	i := &Installer{API: getenv("GITHUB_API_URL"), Token: getenv("GITHUB_TOKEN")}
	if i.Token == "" && i.API == "" {
		if gh, err := exec.LookPath("gh"); err == nil {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if out, err := exec.CommandContext(ctx, gh, "auth", "token").Output(); err == nil {
				i.Token = strings.TrimSpace(string(out))
			}
		}
	}
	return i
}

func (i *Installer) api() string {
	if i.API != "" {
		return strings.TrimRight(i.API, "/")
	}
	return DefaultAPI
}

func (i *Installer) client() *http.Client {
	if i.HTTP != nil {
		return i.HTTP
	}
	return &http.Client{Timeout: 60 * time.Second}
}

func (i *Installer) platform() (string, string) {
	goos, goarch := i.GOOS, i.GOARCH
	if goos == "" {
		goos = runtime.GOOS
	}
	if goarch == "" {
		goarch = runtime.GOARCH
	}
	return goos, goarch
}

// Options of an install.
type Options struct {
	// Dir is the plugin directory to install into.
	Dir string
	// State records the plugin's source and checksum (saved by Install).
	State *plugin.State
	// Force replaces an installed plugin of the same name.
	Force bool
	// PreRelease lets the newest pre-release be picked when no version
	// is given.
	PreRelease bool
}

// Result is what an install did.
type Result struct {
	// Name is the manifest's name, Dir where the plugin now is.
	Name, Dir string
	// Version is the manifest's version; Release the release's tag ("" for
	// a local install).
	Version, Release string
	// Source is owner/repo, or the local path installed from.
	Source   string
	Checksum string
	// Replaced: an installed plugin was replaced (Force).
	Replaced bool
	// Verified says what the archive was checked against ("" when
	// nothing was).
	Verified string
}

var repoRE = regexp.MustCompile(`^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$`)

// IsLocal reports whether source names a local directory or archive
// rather than a GitHub repository.
func IsLocal(source string) bool {
	if _, err := os.Stat(source); err == nil {
		return true
	}
	return strings.HasPrefix(source, ".") || filepath.IsAbs(source) || strings.HasSuffix(source, ".tar.gz") || strings.HasSuffix(source, ".tgz")
}

// Install installs the plugin source names: OWNER/REPO[@VERSION], a local
// directory holding plugin.yaml and its executable, or a local .tar.gz.
func (i *Installer) Install(ctx context.Context, source string, o Options) (*Result, error) {
	if IsLocal(source) {
		return i.installLocal(source, o)
	}
	repo, version, _ := strings.Cut(source, "@")
	if !repoRE.MatchString(repo) {
		return nil, fmt.Errorf("install %s: want OWNER/REPO[@VERSION], a plugin directory or a .tar.gz archive", source)
	}
	if version != "" {
		if _, err := parseVersion(version); err != nil {
			return nil, fmt.Errorf("install %s: %q is not an exact version (such as 1.2.3 or v1.2.3): %v", source, version, err)
		}
	}
	rs, err := i.Releases(ctx, repo)
	if err != nil {
		return nil, fmt.Errorf("install %s: %w", source, err)
	}
	r, err := pickRelease(rs, version, o.PreRelease)
	if err != nil {
		return nil, fmt.Errorf("install %s: %w", source, err)
	}
	return i.installRelease(ctx, repo, r, o)
}

// installRelease downloads, verifies and installs a release's archive.
func (i *Installer) installRelease(ctx context.Context, repo string, r Release, o Options) (*Result, error) {
	what := fmt.Sprintf("install %s@%s", repo, r.TagName)
	goos, goarch := i.platform()
	asset, err := platformAsset(r, goos, goarch)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	sumsAsset, ok := checksumAsset(r)
	if !ok {
		return nil, fmt.Errorf("%s: the release has no checksum file (checksums.txt); AWF plugins publish one and reel will not install without it", what)
	}
	sums, err := i.get(ctx, sumsAsset.URL, maxChecksums, false)
	if err != nil {
		return nil, fmt.Errorf("%s: checksum file: %w", what, err)
	}
	want := checksumFor(string(sums), asset.Name)
	if want == "" {
		return nil, fmt.Errorf("%s: %s does not list %s", what, sumsAsset.Name, asset.Name)
	}
	data, err := i.get(ctx, asset.URL, maxArchive, false)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if got := sha256Hex(data); got != want {
		return nil, fmt.Errorf("%s: %s's SHA-256 is %s, but %s says %s: the download is corrupt or was tampered with", what, asset.Name, got, sumsAsset.Name, want)
	}
	res, err := stage(o, func(dir string) error { return extract(data, dir) }, repoShort(repo))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	res.Source, res.Release, res.Verified = repo, r.TagName, sumsAsset.Name
	return res, record(o, res)
}

// installLocal installs from a directory or an archive on disk.
func (i *Installer) installLocal(source string, o Options) (*Result, error) {
	abs, err := filepath.Abs(source)
	if err != nil {
		return nil, err
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return nil, fmt.Errorf("install %s: %w", source, err)
	}
	var res *Result
	verified := ""
	if fi.IsDir() {
		res, err = stage(o, func(dir string) error { return copyFiles(abs, dir) }, "")
	} else {
		data, rerr := os.ReadFile(abs)
		if rerr != nil {
			return nil, fmt.Errorf("install %s: %w", source, rerr)
		}
		if verified, err = checkBeside(abs, data); err != nil {
			return nil, fmt.Errorf("install %s: %w", source, err)
		}
		res, err = stage(o, func(dir string) error { return extract(data, dir) }, "")
	}
	if err != nil {
		return nil, fmt.Errorf("install %s: %w", source, err)
	}
	res.Source, res.Verified = abs, verified
	return res, record(o, res)
}

// checkBeside verifies a local archive against a checksum file beside it,
// when there is one; it says which.
func checkBeside(archive string, data []byte) (string, error) {
	dir, name := filepath.Dir(archive), filepath.Base(archive)
	for _, f := range []string{name + ".sha256", "checksums.txt", "SHA256SUMS", "sha256sums.txt"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			continue
		}
		want := checksumFor(string(b), name)
		if want == "" && f == name+".sha256" {
			if fs := strings.Fields(string(b)); len(fs) > 0 {
				want = strings.ToLower(fs[0])
			}
		}
		if want == "" {
			continue
		}
		if got := sha256Hex(data); got != want {
			return "", fmt.Errorf("%s's SHA-256 is %s, but %s says %s", name, got, f, want)
		}
		return f, nil
	}
	return "", nil
}

// stage fills a temporary directory beside the target with fill, checks
// the plugin it holds and renames it into place.
func stage(o Options, fill func(dir string) error, fallbackName string) (*Result, error) {
	if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp(o.Dir, ".install-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	if err := fill(tmp); err != nil {
		return nil, err
	}
	root, err := pluginRoot(tmp)
	if err != nil {
		return nil, err
	}
	m, err := plugin.ReadManifest(filepath.Join(root, plugin.ManifestFile))
	if err != nil {
		return nil, err
	}
	bin, err := findBinary(root, m.Name, fallbackName)
	if err != nil {
		return nil, err
	}
	if err := os.Chmod(filepath.Join(root, bin), 0o755); err != nil {
		return nil, err
	}
	name := strings.TrimPrefix(bin, plugin.BinaryPrefix)
	target := filepath.Join(o.Dir, name)
	res := &Result{Name: m.Name, Dir: target, Version: m.Version}
	if res.Checksum, err = plugin.FileSHA256(filepath.Join(root, bin)); err != nil {
		return nil, err
	}
	if _, err := os.Stat(target); err == nil {
		if !o.Force {
			return nil, fmt.Errorf("plugin %s is already installed in %s; --force replaces it", m.Name, target)
		}
		old, err := os.MkdirTemp(o.Dir, ".replaced-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(old)
		if err := os.Rename(target, filepath.Join(old, name)); err != nil {
			return nil, err
		}
		res.Replaced = true
	}
	if err := os.Rename(root, target); err != nil {
		return nil, err
	}
	return res, nil
}

// findBinary picks the plugin's executable: the only awf-plugin-* file,
// or awf-plugin-NAME for the manifest's name or the repository's.
func findBinary(dir, manifestName, repoName string) (string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return "", err
	}
	var bins []string
	for _, e := range entries {
		if e.Type().IsRegular() && strings.HasPrefix(e.Name(), plugin.BinaryPrefix) {
			bins = append(bins, e.Name())
		}
	}
	switch len(bins) {
	case 0:
		return "", fmt.Errorf("no executable named %sNAME beside plugin.yaml", plugin.BinaryPrefix)
	case 1:
		return bins[0], nil
	}
	for _, want := range []string{plugin.BinaryName(manifestName), plugin.BinaryName(repoName)} {
		for _, b := range bins {
			if b == want {
				return b, nil
			}
		}
	}
	return "", fmt.Errorf("several executables (%s) and none is %s", strings.Join(bins, ", "), plugin.BinaryName(manifestName))
}

// record stores the plugin's source and checksum in the state file.
func record(o Options, res *Result) error {
	if o.State == nil {
		return nil
	}
	now := time.Now().UTC()
	version := res.Release
	if version == "" {
		version = res.Version
	}
	src := plugin.Source{Repository: res.Source, Version: version, InstalledAt: now, UpdatedAt: now}
	if prev := o.State.Source(res.Name); prev != nil && res.Replaced {
		src.InstalledAt = prev.InstalledAt
	}
	o.State.SetSource(res.Name, src)
	o.State.SetChecksum(res.Name, res.Checksum)
	return o.State.Save()
}

// copyFiles copies a plugin directory's files (not its subdirectories).
func copyFiles(from, to string) error {
	entries, err := os.ReadDir(from)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		fi, err := e.Info()
		if err != nil {
			return err
		}
		if err := copyFile(filepath.Join(from, e.Name()), filepath.Join(to, e.Name()), fi.Mode().Perm()); err != nil {
			return err
		}
	}
	return nil
}

func copyFile(from, to string, mode os.FileMode) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_EXCL|os.O_WRONLY, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

func sha256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// repoShort is a repository's name without AWF's awf-plugin- prefix.
func repoShort(repo string) string {
	_, name, _ := strings.Cut(repo, "/")
	return strings.TrimPrefix(name, plugin.BinaryPrefix)
}

// Update brings an installed plugin to its source's newest release (or
// reinstalls it from the local directory or archive it came from, when
// that holds another version or binary). up is false when it was already
// current.
func (i *Installer) Update(ctx context.Context, in *plugin.Installed, st *plugin.State) (res *Result, up bool, err error) {
	src := st.Source(in.Name)
	if src == nil {
		return nil, false, fmt.Errorf("update %s: it was not installed with reel or awf plugin install, so its source is unknown; install it again", in.Name)
	}
	o := Options{Dir: filepath.Dir(in.Dir), State: st, Force: true}
	if IsLocal(src.Repository) {
		res, err := i.installLocal(src.Repository, Options{Dir: filepath.Join(o.Dir, ".update-"+in.Name), State: nil})
		if err != nil {
			return nil, false, fmt.Errorf("update %s: %w", in.Name, err)
		}
		defer os.RemoveAll(filepath.Dir(res.Dir))
		if res.Checksum == st.Checksum(in.Name) {
			return res, false, nil
		}
		res, err = i.installLocal(src.Repository, o)
		return res, err == nil, err
	}
	rs, err := i.Releases(ctx, src.Repository)
	if err != nil {
		return nil, false, fmt.Errorf("update %s: %w", in.Name, err)
	}
	r, err := pickRelease(rs, "", false)
	if err != nil {
		return nil, false, fmt.Errorf("update %s: %w", in.Name, err)
	}
	if strings.TrimPrefix(r.TagName, "v") == strings.TrimPrefix(src.Version, "v") {
		version := src.Version
		if in.Manifest != nil {
			version = in.Manifest.Version
		}
		return &Result{Name: in.Name, Dir: in.Dir, Version: version, Release: src.Version, Source: src.Repository}, false, nil
	}
	res, err = i.installRelease(ctx, src.Repository, r, o)
	return res, err == nil, err
}

// Remove deletes an installed plugin and its state; keepConfig keeps its
// configuration and enabled state for a later install.
func Remove(in *plugin.Installed, st *plugin.State, keepConfig bool) error {
	if in.Dir == "" || filepath.Base(in.Dir) == "." {
		return errors.New("remove: no plugin directory")
	}
	if err := os.RemoveAll(in.Dir); err != nil {
		return fmt.Errorf("remove %s: %w", in.Name, err)
	}
	st.Remove(in.Name, keepConfig)
	return st.Save()
}

// parseVersion reads an exact version, v optional; a range is refused.
func parseVersion(v string) (*semver.Version, error) {
	return semver.StrictNewVersion(strings.TrimPrefix(v, "v"))
}
