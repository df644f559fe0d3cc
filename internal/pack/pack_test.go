package pack

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reelhq/reel/internal/github"
)

// writePack writes a pack called name at version into dir/name-src and
// returns that directory.
func writePack(t *testing.T, dir, name, version string, extra map[string]string) string {
	t.Helper()
	src := filepath.Join(dir, name+"-src")
	files := map[string]string{
		"manifest.yaml":        fmt.Sprintf("name: %s\nversion: %q\ndescription: test pack\nawf_version: \">=0.5.0\"\nworkflows:\n  - hello\n", name, version),
		"workflows/hello.yaml": "name: hello\nstates:\n  initial: a\n  a:\n    type: step\n    command: echo hi\n    on_success: done\n  done:\n    type: terminal\n",
		"scripts/run.sh":       "#!/bin/sh\necho run\n",
		"prompts/p.md":         "a prompt\n",
		"README.md":            "# " + name + "\n",
	}
	for k, v := range extra {
		files[k] = v
	}
	for rel, body := range files {
		p := filepath.Join(src, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		mode := os.FileMode(0o644)
		if strings.HasSuffix(rel, ".sh") {
			mode = 0o755
		}
		if body == "" {
			continue
		}
		if err := os.WriteFile(p, []byte(body), mode); err != nil {
			t.Fatal(err)
		}
	}
	return src
}

// archive is a .tar.gz of entries, in order.
type entry struct {
	name, body string
	typ        byte
	mode       int64
}

func archive(t *testing.T, entries []entry) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, e := range entries {
		typ := e.typ
		if typ == 0 {
			typ = tar.TypeReg
		}
		mode := e.mode
		if mode == 0 {
			mode = 0o644
		}
		h := &tar.Header{Name: e.name, Typeflag: typ, Mode: mode, Size: int64(len(e.body))}
		if typ == tar.TypeSymlink {
			h.Linkname, h.Size = e.body, 0
		}
		if typ == tar.TypeDir {
			h.Size = 0
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if h.Size > 0 {
			tw.Write([]byte(e.body))
		}
	}
	tw.Close()
	zw.Close()
	return buf.Bytes()
}

// packArchive archives a pack written by writePack, flat, with prefix
// before every name.
func packArchive(t *testing.T, src, prefix string) []byte {
	t.Helper()
	var entries []entry
	filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		b, _ := os.ReadFile(p)
		fi, _ := d.Info()
		entries = append(entries, entry{name: prefix + filepath.ToSlash(rel), body: string(b), mode: int64(fi.Mode().Perm())})
		return nil
	})
	return archive(t, entries)
}

func TestManifestCheck(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "workflows"), 0o755)
	os.WriteFile(filepath.Join(dir, "workflows", "a.yaml"), []byte("x"), 0o644)
	valid := Manifest{Name: "kit", Version: "1.0.0", AWFVersion: ">=0.5.0", Workflows: []string{"a"}}
	if err := valid.Check(dir); err != nil {
		t.Fatalf("valid manifest: %v", err)
	}
	for _, c := range []struct {
		edit func(m *Manifest)
		want string
	}{
		{func(m *Manifest) { m.Name = "Kit" }, "must match ^[a-z][a-z0-9-]*$"},
		{func(m *Manifest) { m.Name = "../evil" }, "invalid name"},
		{func(m *Manifest) { m.Name = "local" }, `"local" is reserved`},
		{func(m *Manifest) { m.Name = "global" }, `"global" is reserved`},
		{func(m *Manifest) { m.Name = "env" }, `"env" is reserved`},
		{func(m *Manifest) { m.Version = "1.0" }, "not a semantic version"},
		{func(m *Manifest) { m.AWFVersion = "" }, "awf_version: missing"},
		{func(m *Manifest) { m.AWFVersion = ">=banana" }, `awf_version ">=banana"`},
		{func(m *Manifest) { m.Workflows = nil }, "the list is empty"},
		{func(m *Manifest) { m.Workflows = []string{"b"} }, "workflows/b.yaml not found"},
		{func(m *Manifest) { m.Workflows = []string{"../../etc/passwd"} }, "invalid name"},
		{func(m *Manifest) { m.Workflows = []string{"a", "a"} }, `"a" is listed twice`},
	} {
		m := valid
		c.edit(&m)
		if err := m.Check(dir); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", m, err, c.want)
		}
	}
	// every problem at once
	bad := Manifest{Name: "X", Version: "x"}
	if err := bad.Check(dir); err == nil || strings.Count(err.Error(), "\n") < 3 {
		t.Errorf("all problems: %v", err)
	}
	if err := (&Manifest{AWFVersion: ">=99.0.0"}).CheckCompatible(); err == nil || !strings.Contains(err.Error(), "reel follows AWF "+AWFVersion) {
		t.Errorf("incompatible: %v", err)
	}
	if err := (&Manifest{AWFVersion: ">=0.5.0, <1.0.0"}).CheckCompatible(); err != nil {
		t.Errorf("compatible: %v", err)
	}
}

func TestParseSpec(t *testing.T) {
	dir := t.TempDir()
	for in, want := range map[string]Spec{
		"acme/awf-workflow-kit":        {Repo: "acme/awf-workflow-kit"},
		"acme/awf-workflow-kit@1.2.0":  {Repo: "acme/awf-workflow-kit", Version: "1.2.0"},
		"acme/awf-workflow-kit@v1.2.0": {Repo: "acme/awf-workflow-kit", Version: "1.2.0"},
		"acme/kit@1.2.0-rc.1":          {Repo: "acme/kit", Version: "1.2.0-rc.1"},
		dir:                            {Path: dir},
	} {
		got, err := ParseSpec(in)
		if err != nil || got != want {
			t.Errorf("%s: %+v %v, want %+v", in, got, err, want)
		}
	}
	for in, want := range map[string]string{
		"":                       "nothing to install",
		"https://github.com/a/b": "not a URL",
		"acme":                   "expected owner/repo",
		"acme/":                  "expected owner/repo",
		"a/b/c":                  "expected owner/repo",
		"acme/kit:1.0.0":         "use owner/repo@version",
		"acme/kit@>=1.0.0":       "ranges are not accepted",
		"./missing":              "no such file or directory",
		"missing.tar.gz":         "no such file or directory",
		"ac me/kit":              "expected owner/repo",
	} {
		if _, err := ParseSpec(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", in, err, want)
		}
	}
	if NameFromRepo("acme/awf-workflow-kit") != "kit" || NameFromRepo("acme/tools") != "tools" {
		t.Error("NameFromRepo")
	}
}

func TestInstallFromDirectory(t *testing.T) {
	dir := t.TempDir()
	src := writePack(t, dir, "kit", "1.0.0", map[string]string{".git/HEAD": "ref\n", ".gitignore": "x\n", "state.json": "{}"})
	packs := filepath.Join(dir, "project", ".awf", "workflow-packs")
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	in := &Installer{Dir: packs, Now: func() time.Time { return now }}
	res, err := in.Install(context.Background(), Spec{Path: src})
	if err != nil {
		t.Fatal(err)
	}
	p := res.Pack
	if p.Name != "kit" || p.Dir != filepath.Join(packs, "kit") || res.Replaced != "" {
		t.Fatalf("pack %+v", p)
	}
	for _, f := range []string{".git", ".gitignore"} {
		if _, err := os.Stat(filepath.Join(p.Dir, f)); err == nil {
			t.Errorf("%s was copied", f)
		}
	}
	if fi, err := os.Stat(filepath.Join(p.Dir, "scripts", "run.sh")); err != nil || fi.Mode().Perm() != 0o755 {
		t.Errorf("script mode: %v %v", fi, err)
	}
	st := p.State
	if !st.Recorded() || !st.Enabled || st.Source.Path != src || st.Source.Version != "1.0.0" || !st.Source.InstalledAt.Equal(now) {
		t.Errorf("state %+v", st)
	}
	// AWF reads the same state.json
	var awf struct {
		Name       string         `json:"name"`
		Enabled    bool           `json:"enabled"`
		SourceData map[string]any `json:"source_data"`
	}
	b, _ := os.ReadFile(filepath.Join(p.Dir, StateFile))
	if err := json.Unmarshal(b, &awf); err != nil || awf.Name != "kit" || !awf.Enabled || awf.SourceData["version"] != "1.0.0" || awf.SourceData["repository"] != "" {
		t.Errorf("state.json %s: %v", b, err)
	}
	if _, err := in.Install(context.Background(), Spec{Path: src}); err == nil || !strings.Contains(err.Error(), "already installed") {
		t.Errorf("second install: %v", err)
	}
	// --force replaces, and a failed install leaves the old pack
	src2 := writePack(t, filepath.Join(dir, "v2"), "kit", "2.0.0", nil)
	in.Force = true
	res, err = in.Install(context.Background(), Spec{Path: src2})
	if err != nil || res.Replaced != "1.0.0" || res.Pack.Manifest.Version != "2.0.0" {
		t.Fatalf("force: %+v %v", res, err)
	}
	broken := writePack(t, filepath.Join(dir, "broken"), "kit", "3.0.0", map[string]string{"manifest.yaml": "name: kit\nversion: 3.0.0\nawf_version: '>=0.5.0'\nworkflows: [gone]\n"})
	if _, err := in.Install(context.Background(), Spec{Path: broken}); err == nil || !strings.Contains(err.Error(), "manifest validation failed") {
		t.Fatalf("broken: %v", err)
	}
	if p, err := Open(filepath.Join(packs, "kit")); err != nil || p.Manifest.Version != "2.0.0" {
		t.Fatalf("after a failed install: %+v %v", p, err)
	}
	if left, _ := filepath.Glob(filepath.Join(packs, ".pack-*")); len(left) > 0 {
		t.Errorf("temporary directories left: %v", left)
	}
	// a symlink in the source is left out, with a warning
	linked := writePack(t, filepath.Join(dir, "linked"), "linked", "1.0.0", nil)
	os.Symlink("/etc/passwd", filepath.Join(linked, "prompts", "secret.md"))
	res, err = in.Install(context.Background(), Spec{Path: linked})
	if err != nil || len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "secret.md left out") {
		t.Fatalf("symlink: %+v %v", res, err)
	}
	if _, err := os.Lstat(filepath.Join(res.Pack.Dir, "prompts", "secret.md")); err == nil {
		t.Error("the symlink was installed")
	}
}

func TestInstallFromArchive(t *testing.T) {
	dir := t.TempDir()
	src := writePack(t, dir, "kit", "1.0.0", map[string]string{"manifest.yaml": "name: kit\nversion: 1.0.0\nawf_version: '>=0.5.0'\nworkflows: [hello]\nplugins:\n  jira: '>=1.0.0'\n"})
	packs := filepath.Join(dir, "packs")
	in := &Installer{Dir: packs}
	// wrapped in a top-level folder, as GitHub's source archives are
	arc := filepath.Join(dir, "kit-1.0.0.tar.gz")
	os.WriteFile(arc, packArchive(t, src, "awf-workflow-kit-1.0.0/"), 0o644)
	res, err := in.Install(context.Background(), Spec{Path: arc})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(res.Pack.Dir, "workflows", "hello.yaml")); err != nil {
		t.Fatal(err)
	}
	if len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], `requires plugin "jira" (>=1.0.0)`) {
		t.Errorf("warnings %v", res.Warnings)
	}
	// a checksums.txt beside the archive is checked
	os.WriteFile(filepath.Join(dir, "checksums.txt"), []byte(strings.Repeat("0", 64)+"  kit-1.0.0.tar.gz\n"), 0o644)
	in.Force = true
	if _, err := in.Install(context.Background(), Spec{Path: arc}); err == nil || !strings.Contains(err.Error(), "checksum mismatch") {
		t.Errorf("bad checksum: %v", err)
	}
	os.Remove(filepath.Join(dir, "checksums.txt"))

	// hostile archives: nothing is written outside, nothing is installed
	for name, entries := range map[string][]entry{
		"traversal": {{name: "manifest.yaml", body: "name: evil\n"}, {name: "../../evil.txt", body: "x"}},
		"absolute":  {{name: "/tmp/evil.txt", body: "x"}},
		"deep":      {{name: "workflows/../../evil.txt", body: "x"}},
	} {
		p := filepath.Join(dir, name+".tar.gz")
		os.WriteFile(p, archive(t, entries), 0o644)
		if _, err := in.Install(context.Background(), Spec{Path: p}); err == nil || !strings.Contains(err.Error(), "leaves the pack directory") {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "evil.txt")); err == nil {
		t.Error("an archive wrote outside the pack")
	}
	// links are skipped, with a warning
	p := filepath.Join(dir, "link.tar.gz")
	es := []entry{{name: "manifest.yaml", body: "name: lnk\nversion: 1.0.0\nawf_version: '>=0.5.0'\nworkflows: [w]\n"},
		{name: "workflows/w.yaml", body: "name: w\n"}, {name: "prompts/pw", body: "/etc/passwd", typ: tar.TypeSymlink}}
	os.WriteFile(p, archive(t, es), 0o644)
	res, err = in.Install(context.Background(), Spec{Path: p})
	if err != nil || len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "prompts/pw left out") {
		t.Fatalf("symlink entry: %+v %v", res, err)
	}
	// not an archive
	os.WriteFile(filepath.Join(dir, "junk.tar.gz"), []byte("not gzip"), 0o644)
	if _, err := in.Install(context.Background(), Spec{Path: filepath.Join(dir, "junk.tar.gz")}); err == nil || !strings.Contains(err.Error(), "not gzip") {
		t.Errorf("junk: %v", err)
	}
}

// gitHubServer serves releases of acme/awf-workflow-kit: each version
// maps to the archive served for it; broken names versions whose
// checksums.txt lies.
type gitHubServer struct {
	*httptest.Server
	releases []map[string]any
	files    map[string][]byte
}

func newGitHub(t *testing.T) *gitHubServer {
	g := &gitHubServer{files: map[string][]byte{}}
	g.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/repos/acme/awf-workflow-kit/releases":
			json.NewEncoder(w).Encode(g.releases)
		case r.URL.Path == "/search/repositories":
			if r.URL.Query().Get("q") == "topic:awf-workflow limited" {
				w.WriteHeader(http.StatusForbidden)
				w.Write([]byte(`{"message":"API rate limit exceeded for 127.0.0.1."}`))
				return
			}
			json.NewEncoder(w).Encode(map[string]any{"items": []map[string]any{{"full_name": "acme/awf-workflow-kit", "description": r.URL.Query().Get("q"), "stargazers_count": 7}}})
		case g.files[r.URL.Path] != nil:
			w.Write(g.files[r.URL.Path])
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(g.Close)
	return g
}

// release adds a release whose archive is data; sum overrides the
// checksum checksums.txt lists.
func (g *gitHubServer) release(tag string, pre bool, data []byte, sum string) {
	name := "awf-workflow-kit_" + strings.TrimPrefix(tag, "v") + ".tar.gz"
	if sum == "" {
		s := sha256.Sum256(data)
		sum = hex.EncodeToString(s[:])
	}
	g.files["/dl/"+tag+"/"+name] = data
	g.files["/dl/"+tag+"/checksums.txt"] = []byte(sum + "  " + name + "\n")
	g.releases = append(g.releases, map[string]any{"tag_name": tag, "prerelease": pre, "assets": []map[string]any{
		{"name": name, "browser_download_url": g.URL + "/dl/" + tag + "/" + name},
		{"name": "checksums.txt", "browser_download_url": g.URL + "/dl/" + tag + "/checksums.txt"},
	}})
}

func (g *gitHubServer) client() *github.Client {
	return github.New([]string{"GITHUB_API_URL=" + g.URL, "GITHUB_TOKEN=t"}, ".")
}

func TestInstallFromGitHub(t *testing.T) {
	dir := t.TempDir()
	g := newGitHub(t)
	for _, v := range []string{"1.0.0", "1.1.0", "2.0.0-rc.1"} {
		g.release("v"+v, strings.Contains(v, "rc"), packArchive(t, writePack(t, filepath.Join(dir, v), "kit", v, nil), ""), "")
	}
	g.release("v1.2.0", false, packArchive(t, writePack(t, filepath.Join(dir, "1.2.0"), "kit", "1.2.0", nil), ""), strings.Repeat("ab", 32))
	g.release("v1.3.0", false, packArchive(t, writePack(t, filepath.Join(dir, "1.3.0"), "other", "1.3.0", nil), ""), "")
	g.release("v1.4.0", false, packArchive(t, writePack(t, filepath.Join(dir, "1.4.0"), "kit", "1.4.0",
		map[string]string{"manifest.yaml": "name: kit\nversion: 1.4.0\nawf_version: '>=9.0.0'\nworkflows: [hello]\n"}), ""), "")
	packs := filepath.Join(dir, "packs")
	in := &Installer{Dir: packs, GitHub: g.client()}
	ctx := context.Background()
	for version, want := range map[string]string{
		"1.2.0": "checksum mismatch",
		"1.3.0": `the manifest names the pack "other"`,
		"1.4.0": "AWF version not compatible",
		"9.9.9": "release version 9.9.9 not found",
	} {
		if _, err := in.Install(ctx, Spec{Repo: "acme/awf-workflow-kit", Version: version}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", version, err, want)
		}
	}
	if _, err := os.Stat(filepath.Join(packs, "kit")); err == nil {
		t.Fatal("a refused release was installed")
	}
	res, err := in.Install(ctx, Spec{Repo: "acme/awf-workflow-kit", Version: "1.0.0"})
	if err != nil || res.Pack.Manifest.Version != "1.0.0" || res.Pack.State.Source.Repository != "acme/awf-workflow-kit" || res.Pack.State.Source.Version != "1.0.0" {
		t.Fatalf("exact version: %+v %v", res, err)
	}
	installedAt := res.Pack.State.Source.InstalledAt
	// update: the newest stable release whose install succeeds is 1.1.0
	// (1.2.0+ are broken, the rc is a prerelease); the newest stable tag
	// is 1.4.0, so update reports its failure
	if _, err := in.Update(ctx, res.Pack); err == nil || !strings.Contains(err.Error(), "AWF version not compatible") {
		t.Fatalf("update to a refused release: %v", err)
	}
	g.releases = g.releases[:3] // 1.0.0, 1.1.0, 2.0.0-rc.1
	up, err := in.Update(ctx, res.Pack)
	if err != nil || up.Pack == nil || up.Pack.Manifest.Version != "1.1.0" || up.Replaced != "1.0.0" {
		t.Fatalf("update: %+v %v", up, err)
	}
	if st := up.Pack.State.Source; !st.InstalledAt.Equal(installedAt) || !st.UpdatedAt.After(installedAt.Add(-time.Second)) {
		t.Errorf("update state %+v", st)
	}
	if again, err := in.Update(ctx, up.Pack); err != nil || again.Pack != nil {
		t.Errorf("up to date: %+v %v", again, err)
	}
	// no version: the newest stable release
	in.Force = true
	res, err = in.Install(ctx, Spec{Repo: "acme/awf-workflow-kit"})
	if err != nil || res.Pack.Manifest.Version != "1.1.0" {
		t.Fatalf("latest: %+v %v", res, err)
	}
	if _, err := in.Install(ctx, Spec{Repo: "acme/awf-workflow-none"}); err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("unknown repository: %v", err)
	}
	// search
	repos, err := Search(ctx, g.client(), "speckit")
	if err != nil || len(repos) != 1 || repos[0].Description != "topic:awf-workflow speckit" || repos[0].Stars != 7 {
		t.Errorf("search: %+v %v", repos, err)
	}
	if _, err := Search(ctx, g.client(), "limited"); err == nil || !strings.Contains(err.Error(), "rate limit exceeded; set GITHUB_TOKEN") {
		t.Errorf("rate limit: %v", err)
	}
}

func TestUpdateFromDirectory(t *testing.T) {
	dir := t.TempDir()
	src := writePack(t, dir, "kit", "1.0.0", nil)
	in := &Installer{Dir: filepath.Join(dir, "packs")}
	res, err := in.Install(context.Background(), Spec{Path: src})
	if err != nil {
		t.Fatal(err)
	}
	if up, err := in.Update(context.Background(), res.Pack); err != nil || up.Pack != nil {
		t.Fatalf("same version: %+v %v", up, err)
	}
	os.WriteFile(filepath.Join(src, "manifest.yaml"), []byte("name: kit\nversion: 1.1.0\nawf_version: '>=0.5.0'\nworkflows: [hello]\n"), 0o644)
	up, err := in.Update(context.Background(), res.Pack)
	if err != nil || up.Pack == nil || up.Pack.Manifest.Version != "1.1.0" || up.Replaced != "1.0.0" {
		t.Fatalf("newer: %+v %v", up, err)
	}
	os.RemoveAll(src)
	if _, err := in.Update(context.Background(), up.Pack); err == nil || !strings.Contains(err.Error(), "which is gone") {
		t.Errorf("gone: %v", err)
	}
	// a pack copied by hand has no state.json and no source
	hand := filepath.Join(dir, "packs", "hand")
	os.MkdirAll(filepath.Join(hand, "workflows"), 0o755)
	os.WriteFile(filepath.Join(hand, "manifest.yaml"), []byte("name: hand\nversion: 1.0.0\nawf_version: '>=0.5.0'\nworkflows: [w]\n"), 0o644)
	os.WriteFile(filepath.Join(hand, "workflows", "w.yaml"), []byte("name: w\n"), 0o644)
	p, err := Open(hand)
	if err != nil || !p.State.Enabled || p.State.Recorded() {
		t.Fatalf("hand: %+v %v", p, err)
	}
	if _, err := in.Update(context.Background(), p); err == nil || !strings.Contains(err.Error(), "its source is unknown") {
		t.Errorf("hand update: %v", err)
	}
	if err := Remove(p); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(hand); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("removed: %v", err)
	}
}

func TestDiscoverAndFind(t *testing.T) {
	dir := t.TempDir()
	local, global := filepath.Join(dir, "local"), filepath.Join(dir, "global")
	for _, d := range []string{local, global} {
		in := &Installer{Dir: d}
		for _, name := range []string{"kit", "only-" + filepath.Base(d)} {
			if _, err := in.Install(context.Background(), Spec{Path: writePack(t, filepath.Join(dir, "src-"+filepath.Base(d)), name, "1.0.0", nil)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	// a directory that is not a pack, and one whose manifest names
	// another pack
	os.MkdirAll(filepath.Join(local, "junk"), 0o755)
	os.MkdirAll(filepath.Join(local, "misnamed", "workflows"), 0o755)
	os.WriteFile(filepath.Join(local, "misnamed", "manifest.yaml"), []byte("name: other\nversion: 1.0.0\nawf_version: '>=0.5.0'\nworkflows: [w]\n"), 0o644)
	os.WriteFile(filepath.Join(local, "misnamed", "workflows", "w.yaml"), []byte("name: w\n"), 0o644)
	packs, probs := Discover([]string{local, global, filepath.Join(dir, "missing")})
	var names []string
	for _, p := range packs {
		names = append(names, p.Name+"@"+filepath.Base(filepath.Dir(p.Dir)))
	}
	if got := strings.Join(names, " "); got != "kit@local only-local@local only-global@global" {
		t.Errorf("discovered %s", got)
	}
	if len(probs) != 2 || !strings.Contains(probs[0].Err.Error(), "junk") || !strings.Contains(probs[1].Err.Error(), `the manifest names it "other"`) {
		t.Errorf("problems %v", probs)
	}
	p, err := Find("kit", []string{local, global})
	if err != nil || p.Dir != filepath.Join(local, "kit") {
		t.Errorf("find: %+v %v", p, err)
	}
	if _, err := Find("../local/kit", []string{global}); err == nil || !strings.Contains(err.Error(), "invalid name") {
		t.Errorf("traversal: %v", err)
	}
	if _, err := Find("nope", []string{local}); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing: %v", err)
	}
	if _, err := p.Workflow("hello"); err != nil {
		t.Error(err)
	}
	for _, w := range []string{"nope", "../manifest", "Hello"} {
		if _, err := p.Workflow(w); err == nil {
			t.Errorf("workflow %q: no error", w)
		}
	}
}
