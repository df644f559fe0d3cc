package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/reelhq/reel/internal/workflow"
)

// Every complete workflow in docs/workflow-syntax.md (a yaml block that
// starts with name:) validates without a problem or a warning, and each
// one without agent or operation states (which need an agent CLI or a
// network service) runs to success, so that the reference users read
// stays true.
func TestWorkflowSyntaxExamplesRun(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "workflow-syntax.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)```yaml\n(name: .*?)```").FindAllSubmatch(doc, -1)
	if len(blocks) < 9 {
		t.Fatalf("%d examples found", len(blocks))
	}
	summarize, err := os.ReadFile(filepath.Join("..", "..", "examples", "summarize.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range blocks {
		src := string(b[1])
		name := strings.Fields(strings.TrimPrefix(src, "name: "))[0]
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			writeFile(t, filepath.Join(dir, "example.yaml"), src, 0o644)
			writeFile(t, filepath.Join(dir, "summarize.yaml"), string(summarize), 0o644)
			res := runBinary(t, dir, "validate", "example.yaml")
			if res.code != 0 || res.stdout != "example.yaml: ok\n" {
				t.Fatalf("validate: exit %d\n%s%s", res.code, res.stdout, res.stderr)
			}
			wf, err := workflow.Parse([]byte(src), "example.yaml", workflow.Options{})
			if err != nil {
				t.Fatal(err)
			}
			for _, st := range wf.States {
				if st.Type == workflow.TypeAgent || st.Type == workflow.TypeOperation {
					return
				}
			}
			t.Setenv("ATTEMPTS", "3")
			res = runBinary(t, dir, "run", "example.yaml", "--storage", filepath.Join(dir, "st"))
			if res.code != 0 {
				t.Fatalf("run: exit %d\n%s%s", res.code, res.stdout, res.stderr)
			}
			verifyStorage(t, filepath.Join(dir, "st"))
		})
	}
}
