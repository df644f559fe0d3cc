package pack

import (
	"archive/tar"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzParseManifest: any text parses to a manifest or an error, and a
// parsed manifest is checked without a panic; a manifest that passes
// names only files inside the pack.
func FuzzParseManifest(f *testing.F) {
	f.Add([]byte("name: kit\nversion: 1.0.0\nawf_version: '>=0.5.0'\nworkflows: [a]\n"))
	f.Add([]byte("name: ../x\nworkflows: ['../../etc/passwd', a/b]\nplugins: {x: '>=1'}\n"))
	f.Add([]byte("workflows: {a: b}\n"))
	f.Add([]byte("- a\n- b\n"))
	dir := f.TempDir()
	os.MkdirAll(filepath.Join(dir, "workflows"), 0o755)
	os.WriteFile(filepath.Join(dir, "workflows", "a.yaml"), []byte("x"), 0o644)
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := ParseManifest(b)
		if err != nil {
			return
		}
		if m.Check(dir) == nil {
			for _, w := range m.Workflows {
				if strings.ContainsAny(w, "/\\.") {
					t.Fatalf("workflow name %q passed the checks", w)
				}
			}
		}
		_ = m.CheckCompatible()
	})
}

// FuzzExtract: whatever an archive holds, extraction writes nothing
// outside the directory it is given and never panics.
func FuzzExtract(f *testing.F) {
	f.Add(archive(&testing.T{}, []entry{{name: "manifest.yaml", body: "name: a\n"}, {name: "workflows/", typ: tar.TypeDir}}))
	f.Add(archive(&testing.T{}, []entry{{name: "../evil", body: "x"}}))
	f.Add(archive(&testing.T{}, []entry{{name: "a/../../evil", body: "x"}, {name: "l", body: "/etc", typ: tar.TypeSymlink}}))
	f.Add([]byte("not an archive"))
	f.Fuzz(func(t *testing.T, data []byte) {
		root := t.TempDir()
		dir := filepath.Join(root, "pack")
		os.Mkdir(dir, 0o755)
		extract(data, dir)
		entries, err := os.ReadDir(root)
		if err != nil {
			t.Fatal(err)
		}
		if len(entries) != 1 || entries[0].Name() != "pack" {
			t.Fatalf("extraction wrote outside its directory: %v", entries)
		}
	})
}

// FuzzParseSpec: an install argument parses to exactly one kind of
// source, or an error.
func FuzzParseSpec(f *testing.F) {
	for _, s := range []string{"acme/kit", "acme/kit@v1.2.3", "acme/kit@>=1", "https://x/y", "a/b/c", "./x", "x.tar.gz", "a:b", "@", "/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sp, err := ParseSpec(s)
		if err != nil {
			return
		}
		if (sp.Path == "") == (sp.Repo == "") {
			t.Fatalf("%q: %+v", s, sp)
		}
		if sp.Repo != "" {
			owner, repo, _ := strings.Cut(sp.Repo, "/")
			for _, part := range []string{owner, repo} {
				if part == "" || part == "." || part == ".." || strings.ContainsAny(part, "/\\?#% ") {
					t.Fatalf("%q: repository %q", s, sp.Repo)
				}
			}
		}
	})
}
