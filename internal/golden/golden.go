// Package golden compares test output with golden files kept under a
// package's testdata directory.
//
// Running the tests with -update rewrites the golden files with the output
// the tests produce instead of comparing, so a deliberate change of format
// is accepted by running the tests once with -update and reviewing the diff.
package golden

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// The flag is registered here, once, because a test binary panics when two
// packages it links register the same flag name.
var update = flag.Bool("update", false, "rewrite golden files with the output the tests produce")

// Check compares got with the golden file at path, or writes got to path
// (creating its directory) when the tests run with -update. A difference is
// reported with t.Errorf, naming the first differing line; a missing golden
// file stops the test.
func Check(t testing.TB, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatalf("golden: %v", err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatalf("golden: %v", err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("golden: %v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("output differs from golden file %s (check, then run go test -update to accept):\n%s", path, Diff(want, got))
	}
}

// Diff describes the first line where got differs from want: its number,
// the column of the first differing byte and both versions of the line. It
// returns "" when want and got are equal.
func Diff(want, got []byte) string {
	if bytes.Equal(want, got) {
		return ""
	}
	wl, gl := bytes.SplitAfter(want, []byte("\n")), bytes.SplitAfter(got, []byte("\n"))
	i := 0
	for i < len(wl) && i < len(gl) && bytes.Equal(wl[i], gl[i]) {
		i++
	}
	w, g := at(wl, i), at(gl, i)
	col := 0
	for col < len(w) && col < len(g) && w[col] == g[col] {
		col++
	}
	return fmt.Sprintf("line %d, column %d:\nwant: %s\n got: %s", i+1, col+1, show(w), show(g))
}

func at(lines [][]byte, i int) []byte {
	if i < len(lines) {
		return lines[i]
	}
	return nil
}

// show prints a line without its newline, and says so when the line has
// none, so that a missing final newline or a missing line is visible.
func show(line []byte) string {
	switch {
	case len(line) == 0:
		return "(end of text)"
	case line[len(line)-1] != '\n':
		return string(line) + " (no newline at end)"
	}
	return string(line[:len(line)-1])
}
