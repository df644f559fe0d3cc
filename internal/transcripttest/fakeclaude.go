package transcripttest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reelhq/reel/internal/testfixtures"
)

// FakeClaude writes into dir, and returns the path of, a claude CLI that
// answers with the repository's example fake agent
// (examples/agents/fake-cli.sh) and fails once, "rate limited", the first
// time the prompt (its last argument) contains each of failOnce: how the
// tests make an agent step fail in one attempt and succeed when resumed.
func FakeClaude(t testing.TB, dir string, failOnce ...string) string {
	t.Helper()
	root := testfixtures.ModuleRoot(t)
	var b strings.Builder
	b.WriteString("#!/bin/sh\nfor a in \"$@\"; do last=$a; done\ncase \"$last\" in\n")
	for i, p := range failOnce {
		fmt.Fprintf(&b, "*%s*) [ -e \"$0.f%d\" ] || { : > \"$0.f%d\"; echo 'rate limited' >&2; exit 1; } ;;\n", p, i, i)
	}
	fmt.Fprintf(&b, "esac\nexec %s \"$@\"\n", filepath.Join(root, "examples", "agents", "fake-cli.sh"))
	fake := filepath.Join(dir, "fake-claude")
	if err := os.WriteFile(fake, []byte(b.String()), 0o755); err != nil {
		t.Fatal(err)
	}
	return fake
}
