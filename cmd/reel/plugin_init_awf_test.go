package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestPluginInitBuildsWithAWFSDK scaffolds a plugin of each kind, builds
// and tests it against AWF's SDK (a checkout of AWF named by
// $REEL_AWF_SRC, since AWF is not on the Go module proxy), installs it and
// runs its demo workflow under reel.
func TestPluginInitBuildsWithAWFSDK(t *testing.T) {
	src := os.Getenv("REEL_AWF_SRC")
	if src == "" {
		t.Skip("REEL_AWF_SRC is not set: it names a checkout of github.com/awf-project/cli (at 9971294) that the scaffolded plugins build against")
	}
	for _, kind := range []string{"operation", "step-type", "validator", "event"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			p := newPluginProject(t)
			work := t.TempDir()
			name := "awf-plugin-k" + strings.ReplaceAll(kind, "-", "")
			id := strings.TrimPrefix(name, "awf-plugin-")
			if r := runBinaryEnv(t, work, p.env, "plugin", "init", name, "--kind", kind, "--awf-module", src); r.code != 0 {
				t.Fatalf("init: %+v", r)
			}
			dir := filepath.Join(work, name)
			goEnv := append(os.Environ(), "GOFLAGS=-mod=mod")
			for _, args := range [][]string{{"mod", "tidy"}, {"test", "./..."}, {"build", "-o", filepath.Join("bin", name), "."}} {
				cmd := exec.Command("go", args...)
				cmd.Dir, cmd.Env = dir, goEnv
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
				}
			}
			dist := filepath.Join(work, "dist")
			os.MkdirAll(dist, 0o755)
			copyFile(t, filepath.Join(dir, "bin", name), filepath.Join(dist, name))
			copyFile(t, filepath.Join(dir, "plugin.yaml"), filepath.Join(dist, "plugin.yaml"))
			if r := p.reel(t, "plugin", "install", dist); r.code != 0 {
				t.Fatalf("install: %+v", r)
			}
			copyFile(t, filepath.Join(dir, "examples", "demo.yaml"), filepath.Join(p.root, "demo.yaml"))
			r := p.reel(t, "run", "demo.yaml")
			if r.code != 0 {
				t.Fatalf("run the demo: %+v", r)
			}
			steps := p.steps(t, r)
			switch kind {
			case "operation":
				want := fmt.Sprintf("%s: hello (%d characters)\n", id, len(id+": hello"))
				if out := result(t, steps["show"])["output"]; out != want {
					t.Errorf("demo: %q", out)
				}
			case "step-type":
				if out := result(t, steps["show"])["output"]; out != "hello world (world)\n" {
					t.Errorf("demo: %q", out)
				}
			case "validator":
				p.write(t, "bad.yaml", "name: bad\nversion: '1'\nstates:\n  initial: a\n  a:\n    type: step\n    command: rm -rf /\n    timeout: 1s\n    on_success: done\n  done:\n    type: terminal\n")
				if r := p.reel(t, "validate", "bad.yaml"); r.code != 2 || !strings.Contains(r.stdout, "state a: command: deletes from the root (plugin "+id+")") {
					t.Errorf("validate bad: %+v", r)
				}
			case "event":
				b, err := os.ReadFile(filepath.Join(p.root, ".awf", "logs", id+".log"))
				// the last line is the event it emitted through its HostClient
				if err != nil || !strings.Contains(string(b), "step.completed  one") || !strings.Contains(string(b), "workflow.completed "+id+"-demo") ||
					!strings.HasSuffix(string(b), id+".logged "+id+"-demo \n") {
					t.Errorf("event log: %q %v", b, err)
				}
			}
		})
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(from)
	if err := os.WriteFile(to, b, fi.Mode().Perm()); err != nil {
		t.Fatal(err)
	}
}
