package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// @prompts/PATH reads the first file found in $AWF_PROMPTS_PATH, the
// project's .reel/prompts and .awf/prompts, then AWF's global prompts
// directory, trimmed; other values are left alone; bad paths are errors.
func TestResolvePromptInputs(t *testing.T) {
	root, env, home := t.TempDir(), t.TempDir(), t.TempDir()
	write := func(p, s string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(env, "a.md"), "from env\n")
	write(filepath.Join(root, ".reel", "prompts", "a.md"), "from .reel")
	write(filepath.Join(root, ".reel", "prompts", "b.md"), "  from .reel b\n\n")
	write(filepath.Join(root, ".awf", "prompts", "b.md"), "from .awf b")
	write(filepath.Join(root, ".awf", "prompts", "sub", "c.md"), "from .awf c")
	write(filepath.Join(home, ".config", "awf", "prompts", "d.md"), "from global")
	os.MkdirAll(filepath.Join(root, ".awf", "prompts", "dir"), 0o755)
	getenv := func(withEnv bool) func(string) string {
		return func(k string) string {
			switch k {
			case "AWF_PROMPTS_PATH":
				if withEnv {
					return env
				}
			case "HOME":
				return home
			}
			return ""
		}
	}
	in := map[string]string{"a": "@prompts/a.md", "b": "@prompts/b.md", "c": "@prompts/sub/c.md", "d": "@prompts/d.md", "plain": "prompts/a.md @prompts/x"}
	if err := resolvePromptInputs(in, root, getenv(true)); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"a": "from env", "b": "from .reel b", "c": "from .awf c", "d": "from global", "plain": "prompts/a.md @prompts/x"}
	for k, v := range want {
		if in[k] != v {
			t.Errorf("%s = %q, want %q", k, in[k], v)
		}
	}
	in = map[string]string{"a": "@prompts/a.md"}
	if err := resolvePromptInputs(in, root, getenv(false)); err != nil || in["a"] != "from .reel" {
		t.Errorf("without AWF_PROMPTS_PATH: %q, %v", in["a"], err)
	}
	for v, msg := range map[string]string{
		"@prompts/none.md":   `prompt "none.md" not found (looked in ` + filepath.Join(root, ".reel", "prompts", "none.md"),
		"@prompts/dir":       "is a directory",
		"@prompts/../x.md":   "must be relative and stay inside",
		"@prompts//etc/host": "must be relative",
		"@prompts/":          "must be relative",
	} {
		err := resolvePromptInputs(map[string]string{"p": v}, root, getenv(false))
		if err == nil || !strings.Contains(err.Error(), msg) || !strings.HasPrefix(err.Error(), "--input p="+v+": ") {
			t.Errorf("%s: %v, want an error with %q", v, err, msg)
		}
	}
}
