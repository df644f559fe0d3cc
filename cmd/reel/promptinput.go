package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/reelhq/reel/internal/catalog"
)

// promptPrefix marks an --input value that names a prompt file, as AWF's
// `--input prompt=@prompts/system.md` does.
const promptPrefix = "@prompts/"

// resolvePromptInputs replaces each input value written @prompts/PATH with
// the content of that file, trimmed, as AWF does. PATH is looked for in
// $AWF_PROMPTS_PATH, then the project's .reel/prompts and .awf/prompts,
// then AWF's global prompts directory; the first file found wins. A path
// leaving those directories, a directory, or a file found nowhere is an
// error naming the input and where it was looked for.
func resolvePromptInputs(inputs map[string]string, projectRoot string, getenv func(string) string) error {
	var dirs []string
	for _, d := range (&catalog.Catalog{ProjectDir: projectRoot, Getenv: getenv}).PromptDirs() {
		dirs = append(dirs, d.Path)
	}
	for k, v := range inputs {
		rel, ok := strings.CutPrefix(v, promptPrefix)
		if !ok {
			continue
		}
		content, err := readPromptInput(rel, dirs)
		if err != nil {
			return fmt.Errorf("--input %s=%s: %w", k, v, err)
		}
		inputs[k] = content
	}
	return nil
}

func readPromptInput(rel string, dirs []string) (string, error) {
	if rel == "" || filepath.IsAbs(rel) || slices.Contains(strings.Split(filepath.ToSlash(rel), "/"), "..") {
		return "", errors.New("a prompt path must be relative and stay inside the prompts directory")
	}
	var tried []string
	for _, d := range dirs {
		p := filepath.Join(d, rel)
		tried = append(tried, p)
		fi, err := os.Stat(p)
		if err != nil {
			continue
		}
		if fi.IsDir() {
			return "", fmt.Errorf("%s is a directory, not a prompt file", p)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return "", fmt.Errorf("read prompt: %w", err)
		}
		return strings.TrimSpace(string(b)), nil
	}
	return "", fmt.Errorf("prompt %q not found (looked in %s)", rel, strings.Join(tried, ", "))
}
