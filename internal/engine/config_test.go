package engine

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParseProjectConfig(t *testing.T) {
	cfg, err := ParseProjectConfig([]byte("plugins:\n  a.b:\n    command: ./bin/a\n    args: [x]\n    timeout: 2s\n  c:\n    command: c-on-path\n"), "cfg", "/proj")
	if err != nil {
		t.Fatal(err)
	}
	if a := cfg.Plugins["a.b"]; a.Command != filepath.Join("/proj", "bin/a") || a.Args[0] != "x" || a.Timeout != 2*time.Second {
		t.Fatalf("a.b = %+v", a)
	}
	if c := cfg.Plugins["c"]; c.Command != "c-on-path" {
		t.Fatalf("c = %+v", c)
	}
	for _, bad := range []string{"plugins:\n  a: {}\n", "plugin: {}\n", "plugins:\n  a: {command: x, timeout: soon}\n", "plugins: [1"} {
		if _, err := ParseProjectConfig([]byte(bad), "cfg", "/proj"); err == nil || !strings.HasPrefix(err.Error(), "project config cfg") {
			t.Errorf("%q: err = %v", bad, err)
		}
	}
	if cfg, err := ParseProjectConfig(nil, "cfg", "/proj"); err != nil || len(cfg.Plugins) != 0 {
		t.Fatalf("empty config: %v %v", cfg, err)
	}
}

func FuzzParseProjectConfig(f *testing.F) {
	f.Add([]byte("plugins:\n  a:\n    command: ./a\n    timeout: 1s\n"))
	f.Add([]byte("plugins: &p {a: *p}\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		cfg, err := ParseProjectConfig(b, "cfg", "/proj")
		if err == nil {
			for name, p := range cfg.Plugins {
				if p.Command == "" {
					t.Fatalf("plugin %q without command", name)
				}
			}
		}
	})
}
