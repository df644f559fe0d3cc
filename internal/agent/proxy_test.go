package agent

import (
	"strings"
	"testing"
)

// The proxy's flags go where each CLI still reads options: before the
// "--" that ends claude's and codex's (and before codex's resume
// subcommand), before gemini's and copilot's --prompt=, last otherwise.
func TestInsertFlags(t *testing.T) {
	px := []string{"-X", "y"}
	for _, c := range []struct {
		provider string
		resume   string
		want     string
	}{
		{"claude", "", "-p --output-format stream-json --verbose -X y -- hi"},
		{"claude", "s1", "-p --output-format stream-json --verbose --resume s1 -X y -- hi"},
		{"codex", "", "exec --json --skip-git-repo-check -X y -- hi"},
		{"codex", "t1", "exec --json --skip-git-repo-check -X y resume t1 -- hi"},
		{"gemini", "", "--output-format stream-json -X y --prompt=hi"},
		{"github_copilot", "c1", "--output-format json --resume=c1 -X y --prompt=hi"},
		{"opencode", "", "run --format json -X y"},
		{"mistral_vibe", "", "--prompt=hi --output streaming -X y"},
	} {
		spec, _ := specFor(c.provider)
		prompt := "hi"
		if spec.alwaysStdin {
			prompt = ""
		}
		got := strings.Join(insertFlags(c.provider, spec.args(prompt, c.resume, nil), px), " ")
		if got != c.want {
			t.Errorf("%s: %q\nwant %q", c.provider, got, c.want)
		}
	}
}
