package plugin

import (
	"os"
	"path/filepath"
	"testing"
)

// ParseManifest refuses or accepts any text without panicking, and what
// it accepts passes its own check again.
func FuzzParseManifest(f *testing.F) {
	f.Add([]byte("name: echo\nversion: 1.0.0\nawf_version: \">=0.4.0\"\ncapabilities: [operations]\n"))
	f.Add([]byte("name: e\nversion: 1.0.0-rc.1\nawf_version: \">=0.4.0 <1.0.0\"\ncapabilities: [events]\nevents:\n  subscribe: [\"*\"]\nconfig:\n  k: {type: integer, default: 3, required: true}\n"))
	f.Add([]byte("name: [\n"))
	f.Add([]byte("config:\n  x: {type: string, enum: [a], default: b}\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := ParseManifest(b)
		if err != nil {
			return
		}
		if err := m.check(); err != nil {
			t.Fatalf("accepted a manifest its check refuses: %v", err)
		}
	})
}

// The project plugins file is read or refused, never a panic.
func FuzzProjectFile(f *testing.F) {
	f.Add([]byte("echo:\n  enabled: false\n  config:\n    k: v\n"))
	f.Add([]byte("echo: 3\n"))
	f.Add([]byte("- a\n"))
	f.Add([]byte("echo:\n  enable: true\n"))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, b []byte) {
		path := filepath.Join(dir, "plugins.yaml")
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		st, err := LoadState(filepath.Join(dir, "none.json"), path)
		if err != nil {
			return
		}
		for name := range st.project {
			st.Enabled(name)
			st.Config(name)
		}
	})
}

// A pattern matches only types with as many segments, '*' alone aside.
func FuzzMatchPattern(f *testing.F) {
	f.Add("workflow.*", "workflow.started")
	f.Add("*", "a.b.c")
	f.Add("a..b", "a..b")
	f.Fuzz(func(t *testing.T, pattern, typ string) {
		if matchPattern(pattern, typ) && pattern != "*" {
			if countDots(pattern) != countDots(typ) {
				t.Fatalf("%q matched %q with another number of segments", pattern, typ)
			}
		}
	})
}

func countDots(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] == '.' {
			n++
		}
	}
	return n
}
