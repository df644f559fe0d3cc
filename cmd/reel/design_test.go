package main

import (
	"bufio"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// TestDesignTableListsEveryPackage holds docs/design.md's package table to
// the tree: every package of the module is listed once, and no row names a
// package that no longer exists, so a newcomer's map does not go stale.
func TestDesignTableListsEveryPackage(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}}", "github.com/reelhq/reel/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	want := map[string]bool{}
	for _, p := range strings.Fields(string(out)) {
		want[strings.TrimPrefix(p, "github.com/reelhq/reel/")] = true
	}

	f, err := os.Open("../../docs/design.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	name := regexp.MustCompile("`([^`]+)`")
	listed := map[string]int{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		cell := strings.SplitN(line, "|", 3)[1]
		for _, m := range name.FindAllStringSubmatch(cell, -1) {
			if strings.HasPrefix(m[1], "internal/") || strings.HasPrefix(m[1], "cmd/") ||
				strings.HasPrefix(m[1], "transcript") || strings.HasPrefix(m[1], "scripts/") {
				listed[m[1]]++
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	for p := range want {
		switch n := listed[p]; {
		case n == 0:
			t.Errorf("docs/design.md: package %s is missing from the package table", p)
		case n > 1:
			t.Errorf("docs/design.md: package %s is listed %d times", p, n)
		}
	}
	for p := range listed {
		if !want[p] {
			t.Errorf("docs/design.md lists %s, which is not a package of the module", p)
		}
	}
}
