package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/reelhq/reel/internal/proctest"
	"github.com/reelhq/reel/internal/verify"
)

// runReel runs the command tree in-process and returns stdout, stderr and
// the error the command returned; exitStatus maps that error to the exit
// status and message main would give.
func runReel(t testing.TB, ctx context.Context, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	cmd := newRootCmd()
	var out, errb bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&errb)
	cmd.SetArgs(args)
	err = cmd.ExecuteContext(ctx)
	return out.String(), errb.String(), err
}

// reelBinary returns the path of reel built from this package, once per
// test binary, for the tests that must see a real process (signals, exit
// statuses, environment).
func reelBinary(t testing.TB) string {
	t.Helper()
	return proctest.Build(t, "github.com/reelhq/reel/cmd/reel")
}

// cliResult is what a run of the reel binary left.
type cliResult struct {
	stdout, stderr string
	code           int
}

// runBinary runs the reel binary in dir with REEL_STORAGE cleared.
func runBinary(t testing.TB, dir string, args ...string) cliResult {
	t.Helper()
	return runBinaryEnv(t, dir, append(os.Environ(), "REEL_STORAGE="), args...)
}

// runBinaryEnv runs the reel binary in dir with the environment env.
func runBinaryEnv(t testing.TB, dir string, env []string, args ...string) cliResult {
	t.Helper()
	cmd := exec.Command(reelBinary(t), args...)
	cmd.Dir = dir
	cmd.Env = env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return cliResult{out.String(), errb.String(), code}
}

// verifyStorage fails the test unless dir holds at least one transcript
// and reel's verifier finds every transcript there readable and valid.
func verifyStorage(t testing.TB, dir string) {
	t.Helper()
	rep := verify.Paths([]string{dir}, verify.Options{})
	if rep.Violations() > 0 || len(rep.Unreadable) > 0 || len(rep.Files) == 0 {
		t.Fatalf("verify %s: files %d, problems %v, unreadable %v", dir, len(rep.Files), rep.Problems, rep.Unreadable)
	}
}

// copyTree copies the files under src into dst, keeping their executable
// bits (script fixtures run by their shebang).
func copyTree(t testing.TB, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Join(dst, filepath.Dir(rel)), 0o755); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, fi.Mode().Perm()|0o600)
	})
	if err != nil {
		t.Fatalf("copy %s: %v", src, err)
	}
}

// waitForFile waits up to 10 seconds for path to exist (a step's sign
// that it started), failing with msg otherwise.
func waitForFile(t testing.TB, path, msg string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; {
		if _, err := os.Stat(path); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal(msg)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
