package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/reelhq/reel/internal/exitcode"
)

// awfProxyVerdicts are AWF's own validate verdicts (awf at 9971294) on its
// mcp_proxy fixtures (tests/fixtures/mcp_proxy) and on mcp-proxy-14, the
// complete workflow of docs/user-guide/mcp-proxy.md ("Example: Code
// Review with Full Observability").
var awfProxyVerdicts = map[string]bool{
	"mcp-proxy-14":                       true,
	"mcp-proxy-codex-warning-test":       true,
	"mcp-proxy-empty-proxy-test":         true,
	"mcp-proxy-valid-enabled":            true,
	"mcp-proxy-empty-proxy-enabled-test": false,
	"mcp-proxy-multi-error-test":         false,
	"mcp-proxy-name-collision-test":      false,
	"mcp-proxy-unknown-key-test":         false,
	"mcp-proxy-unknown-operation-test":   false,
	"mcp-proxy-unknown-plugin-test":      false,
}

// reel validate gives AWF's verdict on AWF's mcp_proxy workflows: its
// fixtures and the documentation's complete example. They are AWF's
// files, read from $REEL_AWF_SRC (never copied here); with $REEL_AWF set
// too, AWF itself is asked again.
func TestAWFMCPProxyWorkflows(t *testing.T) {
	src := os.Getenv("REEL_AWF_SRC")
	if src == "" {
		t.Skip("REEL_AWF_SRC is unset: AWF's source (awf-project/cli at 9971294) is needed for its mcp_proxy workflows")
	}
	proj := t.TempDir()
	wfDir := filepath.Join(proj, ".awf", "workflows")
	if err := os.MkdirAll(wfDir, 0o755); err != nil {
		t.Fatal(err)
	}
	fixtures, _ := filepath.Glob(filepath.Join(src, "tests", "fixtures", "mcp_proxy", "*.yaml"))
	for _, f := range fixtures {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(wfDir, filepath.Base(f)), string(b), 0o644)
	}
	doc, err := os.ReadFile(filepath.Join(src, "docs", "user-guide", "mcp-proxy.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)```yaml\n(.*?)```").FindAllSubmatch(doc, -1)
	if len(blocks) < 15 || !strings.HasPrefix(string(blocks[14][1]), "name: code-review-with-tracing") {
		t.Fatalf("docs/user-guide/mcp-proxy.md: yaml block 14 is not the code review example (%d blocks)", len(blocks))
	}
	writeFile(t, filepath.Join(wfDir, "mcp-proxy-14.yaml"), string(blocks[14][1]), 0o644)
	if len(fixtures)+1 != len(awfProxyVerdicts) {
		t.Fatalf("%d mcp_proxy fixtures, verdicts for %d", len(fixtures), len(awfProxyVerdicts)-1)
	}
	awf := os.Getenv("REEL_AWF")
	for name, valid := range awfProxyVerdicts {
		t.Run(name, func(t *testing.T) {
			if awf != "" {
				cmd := exec.Command(awf, "validate", name)
				cmd.Dir, cmd.Env = proj, append(os.Environ(), "HOME="+proj)
				if err := cmd.Run(); (err == nil) != valid {
					t.Fatalf("AWF's verdict changed: valid %v, err %v", valid, err)
				}
			}
			res := runBinary(t, proj, "validate", name)
			if valid && res.code != exitcode.OK || !valid && res.code != exitcode.Workflow {
				t.Fatalf("AWF says valid=%v; reel validate exits %d:\n%s%s", valid, res.code, res.stdout, res.stderr)
			}
			if !valid && !problemLineRE.MatchString(res.stdout) {
				t.Errorf("the problem names no line:\n%s%s", res.stdout, res.stderr)
			}
		})
	}
}
