// Package testfixtures locates the shared recordings that tests read in
// place (../shared/fixtures beside the checkout) and skips a test clearly
// when they are absent.
package testfixtures

import (
	"os"
	"path/filepath"
	"testing"
)

// Root returns the shared directory (the checkout's sibling "shared"), or
// skips the test when it is missing.
func Root(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatalf("getwd: %v", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			shared := filepath.Join(dir, "..", "shared")
			if _, err := os.Stat(shared); err != nil {
				t.Skipf("shared fixtures not found at %s (CI places ../shared beside the checkout): %v", shared, err)
			}
			return shared
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Skip("shared fixtures not found: no go.mod above the working directory")
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
