package tools

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/reelhq/reel/transcript"
)

// Whatever path a model sends, an accepted one stays inside the working
// directory.
func FuzzRel(f *testing.F) {
	dir := f.TempDir()
	r, err := NewRouter(dir, func(transcript.ExchangeEvent) error { return nil }, Options{})
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{"a.txt", "../x", "/etc/passwd", dir + "/a", dir + "/../x", "a/../../b", "./.", "..", "a\x00b", dir + "x/y"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		rel, err := r.rel(p)
		if err != nil {
			return
		}
		if filepath.IsAbs(rel) || rel == ".." || strings.HasPrefix(rel, "../") {
			t.Fatalf("rel(%q) = %q escapes", p, rel)
		}
		full := filepath.Join(r.dir, rel)
		if full != r.dir && !strings.HasPrefix(full, r.dir+"/") {
			t.Fatalf("rel(%q) = %q resolves to %s outside %s", p, rel, full, r.dir)
		}
	})
}

// matchGlob never panics and "**" matches every path.
func FuzzMatchGlob(f *testing.F) {
	f.Add("**/*.go", "a/b/c.go")
	f.Add("[a-", "x")
	f.Add("a/**/b/**/c", "a/x/b/y/c")
	f.Fuzz(func(t *testing.T, pattern, name string) {
		if len(pattern) > 64 || len(name) > 256 {
			return
		}
		matchGlob(pattern, name)
		if !matchGlob("**", name) {
			t.Fatalf("** does not match %q", name)
		}
	})
}
