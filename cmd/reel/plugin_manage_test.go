package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/reelhq/reel/internal/plugin"
	"github.com/reelhq/reel/internal/plugin/plugintest"
)

// pluginArchive is a release archive of test plugin name at version: its
// executable and its manifest with that version.
func pluginArchive(t *testing.T, name, version string) []byte {
	t.Helper()
	archivesMu.Lock()
	defer archivesMu.Unlock()
	key := name + "@" + version
	if b, ok := archives[key]; ok {
		return b
	}
	bin, err := os.ReadFile(filepath.Join(plugintest.Binaries(t), name))
	if err != nil {
		t.Fatal(err)
	}
	manifest, err := os.ReadFile(filepath.Join(plugintest.Source(t, name), "plugin.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	manifest = regexpVersion.ReplaceAll(manifest, []byte("version: "+version))
	var b bytes.Buffer
	// stored, not compressed: the test is about the layout and the
	// checksums, and compressing 20 MB under the race detector is slow
	gz, _ := gzip.NewWriterLevel(&b, gzip.NoCompression)
	tw := tar.NewWriter(gz)
	for _, f := range []struct {
		name string
		mode int64
		data []byte
	}{{plugin.BinaryPrefix + name, 0o755, bin}, {"plugin.yaml", 0o644, manifest}} {
		if err := tw.WriteHeader(&tar.Header{Name: f.name, Mode: f.mode, Size: int64(len(f.data)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		tw.Write(f.data)
	}
	tw.Close()
	gz.Close()
	archives[key] = b.Bytes()
	return b.Bytes()
}

var (
	archivesMu sync.Mutex
	archives   = map[string][]byte{}
)

var regexpVersion = regexp.MustCompile(`(?m)^version: .*$`)

func regexpMatch(re, s string) bool { return regexp.MustCompile(re).MatchString(s) }

// fakeGitHub serves releases and search results as GitHub's API does.
type fakeGitHub struct {
	*httptest.Server
	mu       sync.Mutex
	releases map[string][]map[string]any // repo -> releases, newest first
	files    map[string][]byte
	auth     []string
}

func newFakeGitHub(t *testing.T) *fakeGitHub {
	g := &fakeGitHub{releases: map[string][]map[string]any{}, files: map[string][]byte{}}
	g.Server = httptest.NewServer(http.HandlerFunc(g.serve))
	t.Cleanup(g.Close)
	return g
}

func (g *fakeGitHub) serve(w http.ResponseWriter, r *http.Request) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.auth = append(g.auth, r.URL.Path+" "+r.Header.Get("Authorization"))
	switch {
	case strings.HasPrefix(r.URL.Path, "/repos/") && strings.HasSuffix(r.URL.Path, "/releases"):
		repo := strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/repos/"), "/releases")
		rs, ok := g.releases[repo]
		if !ok {
			http.Error(w, `{"message":"Not Found"}`, http.StatusNotFound)
			return
		}
		json.NewEncoder(w).Encode(rs)
	case r.URL.Path == "/search/repositories":
		q := r.URL.Query().Get("q")
		items := []map[string]any{}
		if strings.HasPrefix(q, "topic:awf-plugin") && (strings.Contains(q, "echo") || q == "topic:awf-plugin") {
			items = append(items, map[string]any{"full_name": "acme/awf-plugin-echo", "description": "Echo text", "stargazers_count": 42, "html_url": "https://github.com/acme/awf-plugin-echo"})
		}
		json.NewEncoder(w).Encode(map[string]any{"items": items})
	case strings.HasPrefix(r.URL.Path, "/dl/"):
		b, ok := g.files[strings.TrimPrefix(r.URL.Path, "/dl/")]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Write(b)
	default:
		http.NotFound(w, r)
	}
}

// release publishes a release of test plugin name in repo, as AWF's
// release workflow does: the platform archive and checksums.txt (whose
// sum for the archive is wrongSum when set).
func (g *fakeGitHub) release(t *testing.T, repo, name, version string, pre bool, wrongSum string) {
	archive := pluginArchive(t, name, version)
	asset := fmt.Sprintf("%s%s_%s_%s_%s.tar.gz", plugin.BinaryPrefix, name, version, runtime.GOOS, runtime.GOARCH)
	other := fmt.Sprintf("%s%s_%s_plan9_mips.tar.gz", plugin.BinaryPrefix, name, version)
	sum := sha256.Sum256(archive)
	hexSum := hex.EncodeToString(sum[:])
	if wrongSum != "" {
		hexSum = wrongSum
	}
	key := repo + "/" + version + "/"
	g.mu.Lock()
	defer g.mu.Unlock()
	g.files[key+asset] = archive
	g.files[key+"checksums.txt"] = []byte(fmt.Sprintf("%s  %s\n%s  %s\n", strings.Repeat("0", 64), other, hexSum, asset))
	rel := map[string]any{"tag_name": "v" + version, "prerelease": pre, "assets": []map[string]any{
		{"name": other, "browser_download_url": g.URL + "/dl/" + key + other},
		{"name": asset, "browser_download_url": g.URL + "/dl/" + key + asset},
		{"name": "checksums.txt", "browser_download_url": g.URL + "/dl/" + key + "checksums.txt"},
	}}
	g.releases[repo] = append([]map[string]any{rel}, g.releases[repo]...)
}

func TestPluginInstallFromGitHub(t *testing.T) {
	t.Parallel()
	p := newPluginProject(t)
	os.MkdirAll(p.plugins, 0o755)
	gh := newFakeGitHub(t)
	p.env = append(p.env, "GITHUB_API_URL="+gh.URL, "GITHUB_TOKEN=tok")
	gh.release(t, "acme/awf-plugin-echo", "echo", "1.2.0", false, "")
	gh.release(t, "acme/awf-plugin-echo", "echo", "1.3.0-rc.1", true, "")

	r := p.reel(t, "plugin", "install", "acme/awf-plugin-echo")
	if r.code != 0 || !strings.Contains(r.stdout, "plugin echo 1.2.0 installed in "+filepath.Join(p.plugins, "echo")+" (from acme/awf-plugin-echo)") ||
		!strings.Contains(r.stdout, "archive verified against checksums.txt") {
		t.Fatalf("install: %+v", r)
	}
	gh.mu.Lock()
	for _, a := range gh.auth {
		if !strings.HasSuffix(a, "Bearer tok") {
			t.Errorf("request without the token: %s", a)
		}
	}
	gh.mu.Unlock()
	st, err := plugin.LoadState(filepath.Join(p.data, "awf", "plugins", plugin.StateFile), "")
	if err != nil {
		t.Fatal(err)
	}
	if src := st.Source("echo"); src == nil || src.Repository != "acme/awf-plugin-echo" || src.Version != "v1.2.0" || st.Checksum("echo") == "" {
		t.Errorf("state: %+v %q", src, st.Checksum("echo"))
	}
	if r := p.reel(t, "plugin", "install", "acme/awf-plugin-echo"); r.code != 1 || !strings.Contains(r.stderr, "already installed") {
		t.Errorf("second install: %+v", r)
	}
	if r := p.reel(t, "plugin", "install", "acme/awf-plugin-echo@9.9.9"); r.code != 1 || !strings.Contains(r.stderr, "no release 9.9.9") {
		t.Errorf("missing version: %+v", r)
	}
	if r := p.reel(t, "plugin", "install", "acme/awf-plugin-echo@>=1.0"); r.code != 1 || !strings.Contains(r.stderr, "is not an exact version") {
		t.Errorf("a range: %+v", r)
	}
	if r := p.reel(t, "plugin", "install", "--force", "acme/awf-plugin-echo@v1.3.0-rc.1"); r.code != 0 || !strings.Contains(r.stdout, "1.3.0-rc.1 replaced") {
		t.Errorf("exact pre-release: %+v", r)
	}

	// a download whose checksum does not match is refused, nothing installed
	gh.release(t, "acme/awf-plugin-steps", "steps", "2.0.0", false, strings.Repeat("ab", 32))
	r = p.reel(t, "plugin", "install", "acme/awf-plugin-steps")
	if r.code != 1 || !strings.Contains(r.stderr, "the download is corrupt or was tampered with") {
		t.Errorf("bad checksum: %+v", r)
	}
	if _, err := os.Stat(filepath.Join(p.plugins, "steps")); !os.IsNotExist(err) {
		t.Errorf("a refused plugin was installed: %v", err)
	}
	entries, _ := os.ReadDir(p.plugins)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			t.Errorf("leftover %s", e.Name())
		}
	}

	// it runs, verified
	p.write(t, ".awf/workflows/say.yaml", "name: say\nstates:\n  initial: s\n  s:\n    type: operation\n    operation: echo.echo\n    inputs:\n      text: hey\n    on_success: done\n  done:\n    type: terminal\n")
	r = p.reel(t, "run", "say")
	if r.code != 0 || strings.Contains(r.stderr, "unverified") {
		t.Errorf("run: %+v", r)
	}

	// update to the newest stable release, then nothing to do
	gh.release(t, "acme/awf-plugin-echo", "echo", "1.4.0", false, "")
	if r := p.reel(t, "plugin", "update", "echo"); r.code != 0 || !strings.Contains(r.stdout, "plugin echo updated to 1.4.0") {
		t.Errorf("update: %+v", r)
	}
	if r := p.reel(t, "plugin", "update", "--all"); r.code != 0 || !strings.Contains(r.stdout, "plugin echo is up to date (1.4.0)") {
		t.Errorf("update again: %+v", r)
	}
	if r := p.reel(t, "plugin", "verify"); r.code != 0 || !strings.Contains(r.stdout, "echo    pass") {
		t.Errorf("verify: %+v", r)
	}

	r = p.reel(t, "plugin", "list")
	if r.code != 0 || !regexpMatch(`(?m)^echo\s+external\s+1\.4\.0\s+installed\s+yes\s+operations,events\s+acme/awf-plugin-echo$`, r.stdout) ||
		!regexpMatch(`(?m)^http\s+builtin\s+`, r.stdout) {
		t.Errorf("list:\n%s", r.stdout)
	}

	r = p.reel(t, "plugin", "search", "echo")
	if r.code != 0 || !regexpMatch(`acme/awf-plugin-echo\s+42\s+Echo text`, r.stdout) {
		t.Errorf("search: %+v", r)
	}
	r = p.reel(t, "plugin", "search", "nothing-like-it", "--json")
	if r.code != 0 || strings.TrimSpace(r.stdout) != "[]" {
		t.Errorf("search --json: %+v", r)
	}

	if r := p.reel(t, "plugin", "remove", "awf-plugin-echo"); r.code != 0 {
		t.Errorf("remove: %+v", r)
	}
	if _, err := os.Stat(filepath.Join(p.plugins, "echo")); !os.IsNotExist(err) {
		t.Errorf("echo still installed: %v", err)
	}
	st, _ = plugin.LoadState(filepath.Join(p.data, "awf", "plugins", plugin.StateFile), "")
	if st.Source("echo") != nil || st.Checksum("echo") != "" {
		t.Error("state left after remove")
	}
	if r := p.reel(t, "plugin", "remove", "http"); r.code != 1 || !strings.Contains(r.stderr, "built into reel") {
		t.Errorf("remove a built-in: %+v", r)
	}
}

func TestPluginInstallLocal(t *testing.T) {
	t.Parallel()
	p := newPluginProject(t)
	src := t.TempDir()
	dir := filepath.Join(src, "db-plugin")
	os.MkdirAll(dir, 0o755)
	plugintest.Copy(t, filepath.Join(plugintest.Binaries(t), "db"), filepath.Join(dir, "awf-plugin-db"), 0o644)
	plugintest.Copy(t, filepath.Join(plugintest.Source(t, "db"), "plugin.yaml"), filepath.Join(dir, "plugin.yaml"), 0o644)
	r := p.reel(t, "plugin", "install", dir)
	if r.code != 0 || !strings.Contains(r.stdout, "plugin db 0.3.0 installed in "+filepath.Join(p.plugins, "db")) {
		t.Fatalf("install a directory: %+v", r)
	}
	if fi, err := os.Stat(filepath.Join(p.plugins, "db", "awf-plugin-db")); err != nil || fi.Mode()&0o111 == 0 {
		t.Errorf("the executable: %v %v", fi, err)
	}

	archive := filepath.Join(src, "awf-plugin-steps_2.1.0_linux_amd64.tar.gz")
	data := pluginArchive(t, "steps", "2.1.0")
	os.WriteFile(archive, data, 0o644)
	sum := sha256.Sum256(data)
	os.WriteFile(filepath.Join(src, "checksums.txt"), []byte(hex.EncodeToString(sum[:])+"  "+filepath.Base(archive)+"\n"), 0o644)
	r = p.reel(t, "plugin", "install", archive)
	if r.code != 0 || !strings.Contains(r.stdout, "plugin steps 2.1.0 installed") || !strings.Contains(r.stdout, "verified against checksums.txt") {
		t.Fatalf("install an archive: %+v", r)
	}
	os.WriteFile(filepath.Join(src, "checksums.txt"), []byte(strings.Repeat("1", 64)+"  "+filepath.Base(archive)+"\n"), 0o644)
	if r := p.reel(t, "plugin", "install", "--force", archive); r.code != 1 || !strings.Contains(r.stderr, "but checksums.txt says 1111") {
		t.Errorf("a tampered archive: %+v", r)
	}

	r = p.reel(t, "plugin", "list", "--step-types")
	if r.code != 0 || !regexpMatch(`(?m)^steps\.greet\s+steps\s+test step type greet$`, r.stdout) {
		t.Errorf("list --step-types: %+v", r)
	}
	r = p.reel(t, "plugin", "list", "--operations", "--json")
	var ops []plugin.Operation
	if err := json.Unmarshal([]byte(r.stdout), &ops); err != nil {
		t.Fatalf("list --operations --json: %v\n%+v", err, r)
	}
	names := map[string]bool{}
	for _, o := range ops {
		names[o.QualifiedName()] = true
	}
	// db needs its database setting to start: it is reported, the rest listed
	if !names["http.request"] || names["db.query"] || !strings.Contains(r.stderr, "plugin db: start: config database is required") {
		t.Errorf("operations %v\n%s", names, r.stderr)
	}
	p.write(t, ".awf/config.yaml", "plugins:\n  db:\n    database: "+filepath.Join(p.root, "x.db")+"\n")
	if r := p.reel(t, "plugin", "list", "--operations"); !regexpMatch(`(?m)^db\.query\s+db\s+Run a query\.$`, r.stdout) {
		t.Errorf("list --operations:\n%s%s", r.stdout, r.stderr)
	}

	if r := p.reel(t, "plugin", "disable", "db"); r.code != 0 || r.stdout != "plugin db disabled\n" {
		t.Errorf("disable: %+v", r)
	}
	if r := p.reel(t, "plugin", "list"); !regexpMatch(`(?m)^db\s+external\s+0\.3\.0\s+disabled\s+no\s`, r.stdout) {
		t.Errorf("list after disable:\n%s", r.stdout)
	}
	p.write(t, ".awf/workflows/q.yaml", "name: q\nstates:\n  initial: q\n  q:\n    type: operation\n    operation: db.query\n    inputs:\n      sql: SELECT 1\n    on_success: done\n  done:\n    type: terminal\n")
	if r := p.reel(t, "validate", "q"); r.code != 0 || !strings.Contains(r.stdout, "warning: state q: plugin db is disabled (reel plugin enable db)") {
		t.Errorf("validate with db disabled: %+v", r)
	}
	if r := p.reel(t, "validate", "--strict", "q"); r.code != 2 {
		t.Errorf("validate with db disabled: %+v", r)
	}
	if r := p.reel(t, "plugin", "enable", "db"); r.code != 0 {
		t.Errorf("enable: %+v", r)
	}
	if r := p.reel(t, "run", "q"); r.code != 0 {
		t.Errorf("run after enable: %+v", r)
	}
	// removed with --keep-config, its state stays for a reinstall
	p.reel(t, "plugin", "disable", "steps")
	if r := p.reel(t, "plugin", "remove", "--keep-config", "steps"); r.code != 0 {
		t.Errorf("remove --keep-config: %+v", r)
	}
	st, _ := plugin.LoadState(filepath.Join(p.data, "awf", "plugins", plugin.StateFile), "")
	if st.Enabled("steps") || st.Checksum("steps") != "" {
		t.Errorf("kept state: enabled %v checksum %q", st.Enabled("steps"), st.Checksum("steps"))
	}
}

func TestPluginInit(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, kind := range []string{"operation", "step-type", "validator", "event"} {
		name := "awf-plugin-" + strings.ReplaceAll(kind, "-", "")
		r := runBinaryEnv(t, dir, os.Environ(), "plugin", "init", name, "--kind", kind)
		if r.code != 0 {
			t.Fatalf("init %s: %+v", kind, r)
		}
		root := filepath.Join(dir, name)
		for _, f := range []string{"go.mod", "main.go", "main_test.go", "plugin.yaml", "Makefile", "README.md", "examples/demo.yaml", ".github/workflows/release.yml"} {
			if _, err := os.Stat(filepath.Join(root, f)); err != nil {
				t.Errorf("%s: %v", kind, err)
			}
		}
		m, err := plugin.ReadManifest(filepath.Join(root, "plugin.yaml"))
		if err != nil || m.Name != strings.TrimPrefix(name, "awf-plugin-") {
			t.Errorf("%s manifest: %+v %v", kind, m, err)
		}
		gomod, _ := os.ReadFile(filepath.Join(root, "go.mod"))
		if !strings.Contains(string(gomod), "require github.com/awf-project/cli v"+plugin.AWFVersion) {
			t.Errorf("%s go.mod:\n%s", kind, gomod)
		}
	}
	if r := runBinaryEnv(t, dir, os.Environ(), "plugin", "init", "awf-plugin-operation"); r.code != 1 || !strings.Contains(r.stderr, "exists and is not empty") {
		t.Errorf("init over an existing directory: %+v", r)
	}
	if r := runBinaryEnv(t, dir, os.Environ(), "plugin", "init", "x", "--kind", "teleport"); r.code != 1 || !strings.Contains(r.stderr, `kind "teleport" is not one of operation, step-type, validator, event`) {
		t.Errorf("bad kind: %+v", r)
	}
}
