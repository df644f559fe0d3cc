// Package scaffold decides what `reel init` writes: AWF's project layout
// (.awf.yaml, .awf/config.yaml, and .awf/workflows, prompts and scripts
// each with an example), so that a project reel starts also runs under
// AWF; and with --global, AWF's global prompts and scripts directories
// with their examples. Existing files are kept unless forced; nothing else
// in the project is touched.
package scaffold

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/reelhq/reel/internal/awfhome"
)

// File is one file init writes.
type File struct {
	// Path is relative to the directory init writes into.
	Path    string
	Mode    fs.FileMode
	Content string
}

// Result says what init did.
type Result struct {
	// Dirs were created (or already existed); Written were written;
	// Kept already existed and were left alone.
	Dirs, Written, Kept []string
	// Already is set when the place was initialized before and nothing
	// was done (no force).
	Already bool
}

// ProjectFiles are the files of a project's layout.
var ProjectFiles = []File{
	{".awf.yaml", 0o644, awfYAML},
	{filepath.Join(".awf", "config.yaml"), 0o644, configYAML},
	{filepath.Join(".awf", "workflows", "example.yaml"), 0o644, exampleWorkflow},
	{filepath.Join(".awf", "prompts", "example.md"), 0o644, examplePrompt},
	{filepath.Join(".awf", "scripts", "example.sh"), 0o755, exampleScript},
}

// Project writes AWF's project layout into dir. A dir that already holds
// .awf/ is left alone unless force, which rewrites every file.
func Project(dir string, force bool) (*Result, error) {
	res := &Result{}
	if _, err := os.Stat(filepath.Join(dir, ".awf")); err == nil && !force {
		res.Already = true
		return res, nil
	}
	for _, d := range []string{"workflows", "prompts", "scripts"} {
		p := filepath.Join(dir, ".awf", d)
		if err := os.MkdirAll(p, 0o755); err != nil {
			return nil, fmt.Errorf("create %s: %w", p, err)
		}
		res.Dirs = append(res.Dirs, p)
	}
	for _, f := range ProjectFiles {
		if err := write(res, filepath.Join(dir, f.Path), f, force); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// Global writes AWF's global prompts directory with its example (left
// alone when it exists, unless force) and its scripts directory with its
// example.
func Global(d awfhome.Dirs, force bool) (*Result, error) {
	if d.Config == "" {
		return nil, errors.New("no home directory and no AWF_CONFIG_HOME or XDG_CONFIG_HOME: nowhere to initialize")
	}
	res := &Result{}
	prompts, scripts := d.Prompts(), d.Scripts()
	if _, err := os.Stat(prompts); err == nil && !force {
		res.Already = true
	} else {
		if err := os.MkdirAll(prompts, 0o755); err != nil {
			return nil, fmt.Errorf("create %s: %w", prompts, err)
		}
		res.Dirs = append(res.Dirs, prompts)
		if err := write(res, filepath.Join(prompts, "example.md"), File{Mode: 0o644, Content: examplePrompt}, force); err != nil {
			return nil, err
		}
	}
	if err := os.MkdirAll(scripts, 0o755); err != nil {
		return nil, fmt.Errorf("create %s: %w", scripts, err)
	}
	res.Dirs = append(res.Dirs, scripts)
	if err := write(res, filepath.Join(scripts, "example.sh"), File{Mode: 0o755, Content: exampleScript}, force); err != nil {
		return nil, err
	}
	return res, nil
}

func write(res *Result, path string, f File, force bool) error {
	if _, err := os.Stat(path); err == nil && !force {
		res.Kept = append(res.Kept, path)
		return nil
	}
	if err := os.WriteFile(path, []byte(f.Content), f.Mode); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Chmod(path, f.Mode); err != nil {
		return err
	}
	res.Written = append(res.Written, path)
	return nil
}

const awfYAML = `# Settings AWF reads from the directory it runs in (reel reads none of
# them: reel's settings live in .reel/config.yaml).
version: "1"

# debug, info, warn or error
log_level: info

# text, json, table or quiet
output_format: text
`

const configYAML = `# Project configuration, read by reel and AWF from here up.
#
# inputs gives workflow inputs a value when --input does not; --input
# wins. Keep secrets out of this file: read them from the environment.
inputs:
  # environment: staging
  # retries: 3
`

const exampleWorkflow = `name: example
version: "1.0.0"
description: A first workflow, written by reel init

states:
  initial: greet

  greet:
    type: step
    command: echo "Hello from reel!"
    on_success: done

  done:
    type: terminal
`

const examplePrompt = `# An example prompt

Files in this directory are prompts a run can be given as an input:

    reel run my-workflow --input prompt=@prompts/example.md

The input's value is the file's content. An agent step can also read a
prompt file itself:

    prompt_file: "{{.awf.prompts_dir}}/example.md"

which finds the project's copy (.awf/prompts/) before the global one.
Subdirectories keep related prompts together (@prompts/review/style.md).
`

const exampleScript = `#!/usr/bin/env bash
# An example script. A step runs it with
#
#   script_file: "{{.awf.scripts_dir}}/example.sh"
#
# which finds the project's copy (.awf/scripts/) before the global one.
echo "Hello from a reel script!"
`
