// Package testfixtures locates the shared recordings that tests read in
// place (../shared/fixtures beside the checkout) and skips a test clearly
// when they are absent, generates the inputs of size tests, and writes the
// small files a test lays out for itself.
package testfixtures

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Root returns the shared directory (the checkout's sibling "shared"), or
// skips the test when it is missing.
func Root(t testing.TB) string {
	t.Helper()
	dir, err := moduleRoot()
	if errors.Is(err, errNoModule) {
		t.Skipf("shared fixtures not found: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	shared := filepath.Join(dir, "..", "shared")
	if _, err := os.Stat(shared); err != nil {
		t.Skipf("shared fixtures not found at %s (CI places ../shared beside the checkout): %v", shared, err)
	}
	return shared
}

// ModuleRoot returns the directory of reel's go.mod: the first above the
// working directory, which is a package's directory in a test.
func ModuleRoot(t testing.TB) string {
	t.Helper()
	dir, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

var errNoModule = errors.New("no go.mod above the working directory")

func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("getwd: %w", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errNoModule
		}
		dir = parent
	}
}

// Dir returns ../shared/fixtures/<sub>, or skips the test when it is missing.
func Dir(t testing.TB, sub string) string {
	t.Helper()
	p := filepath.Join(Root(t), "fixtures", sub)
	if _, err := os.Stat(p); err != nil {
		t.Skipf("fixture %s not found: %v", p, err)
	}
	return p
}

// Bench returns ../shared/bench/<name>, or skips when it is missing.
func Bench(t testing.TB, name string) string {
	t.Helper()
	p := filepath.Join(Root(t), "bench", name)
	if _, err := os.Stat(p); err != nil {
		t.Skipf("bench file %s not found: %v", p, err)
	}
	return p
}

// LinearWorkflow is a workflow of n command states run one after the
// other, each rendering an input: what dry-run and load size tests scale.
func LinearWorkflow(n int) string {
	var b strings.Builder
	b.WriteString("name: linear\ninputs:\n  - name: who\n    default: world\nstates:\n  initial: s0\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "  s%d:\n    type: step\n    command: echo \"step %d {{.inputs.who}}\"\n    on_success: s%d\n", i, i, i+1)
	}
	fmt.Fprintf(&b, "  s%d:\n    type: terminal\n", n)
	return b.String()
}

// WriteFile writes text to path, making the directories above it, and
// fails the test on any error: the one way a test lays out a file of its
// own (a workflow, a project file, a recording).
func WriteFile(t testing.TB, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}
