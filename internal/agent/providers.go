package agent

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/reelhq/reel/internal/normalize"
)

// cliSpec says how to run one agent CLI.
type cliSpec struct {
	bin    string // default executable name
	env    string // executable override variable
	format normalize.Format
	// stdinPrompt is set for CLIs that read the prompt from stdin when it is
	// not on the command line; alwaysStdin for those that always get it
	// there.
	stdinPrompt, alwaysStdin bool
	// systemFlag appends the system prompt; empty means the CLI has none
	// and the system prompt is prepended to the step's first prompt.
	systemFlag string
	// resumeInPrompt is set for CLIs whose stream names no session to
	// resume: a later turn carries the conversation so far in its prompt.
	resumeInPrompt bool
	// options turns the options this CLI understands (besides command and
	// args) into flags and extra environment variables.
	options func(o map[string]any) (flags, env []string, err error)
	// args builds the command line from the prompt ("" when it goes to
	// stdin), the session to resume ("" on a conversation's first turn) and
	// the flags reel composed.
	args func(prompt, resume string, flags []string) []string
}

// cliProviders are the providers that run a CLI.
var cliProviders = []string{"claude", "codex", "gemini", "github_copilot", "mistral_vibe", "opencode"}

// specFor returns how to run provider's CLI.
func specFor(provider string) (cliSpec, bool) {
	switch provider {
	case "claude":
		// claude -p --output-format stream-json --verbose [--resume ID] [flags] -- PROMPT
		return cliSpec{
			bin: "claude", env: "REEL_CLAUDE_BIN", format: normalize.ClaudeStreamJSON, stdinPrompt: true,
			systemFlag: "--append-system-prompt", options: claudeOptions,
			args: func(prompt, resume string, flags []string) []string {
				a := []string{"-p", "--output-format", "stream-json", "--verbose"}
				if resume != "" {
					a = append(a, "--resume", resume)
				}
				a = append(a, flags...)
				if prompt != "" {
					a = append(a, "--", prompt)
				}
				return a
			},
		}, true
	case "codex":
		// codex exec --json [flags] [resume ID] -- PROMPT   (or "-" to read stdin)
		return cliSpec{
			bin: "codex", env: "REEL_CODEX_BIN", format: normalize.CodexExecJSON, stdinPrompt: true,
			options: modelAndSkip("--dangerously-bypass-approvals-and-sandbox"),
			args: func(prompt, resume string, flags []string) []string {
				a := append([]string{"exec", "--json", "--skip-git-repo-check"}, flags...)
				if resume != "" {
					// exec's own flags stay before the subcommand, where
					// codex exec resume takes them too.
					a = append(a, "resume", resume)
				}
				if prompt == "" {
					prompt = "-"
				}
				return append(a, "--", prompt)
			},
		}, true
	case "gemini":
		// gemini --output-format stream-json [--resume=ID] [flags] --prompt=PROMPT
		return cliSpec{
			bin: "gemini", env: "REEL_GEMINI_BIN", format: normalize.GeminiStreamJSON,
			options: modelAndSkip("--approval-mode=yolo"),
			args: func(prompt, resume string, flags []string) []string {
				a := []string{"--output-format", "stream-json"}
				if resume != "" {
					// --resume alone means "latest"; the = form keeps the
					// id attached to it.
					a = append(a, "--resume="+resume)
				}
				return append(append(a, flags...), "--prompt="+prompt)
			},
		}, true
	case "github_copilot":
		// copilot --output-format json [--resume=ID] [flags] --prompt=PROMPT
		return cliSpec{
			bin: "copilot", env: "REEL_GITHUB_COPILOT_BIN", format: normalize.CopilotJSON,
			options: copilotOptions,
			args: func(prompt, resume string, flags []string) []string {
				a := []string{"--output-format", "json"}
				if resume != "" {
					a = append(a, "--resume="+resume)
				}
				return append(append(a, flags...), "--prompt="+prompt)
			},
		}, true
	case "mistral_vibe":
		// vibe --prompt=PROMPT --output streaming --agent PROFILE [flags]
		// (a long prompt: --prompt alone, the text on stdin)
		return cliSpec{
			bin: "vibe", env: "REEL_MISTRAL_VIBE_BIN", format: normalize.VibeStreaming, stdinPrompt: true,
			resumeInPrompt: true, options: vibeOptions,
			args: func(prompt, _ string, flags []string) []string {
				p := "--prompt"
				if prompt != "" {
					// The = form keeps a prompt starting with "-" a value.
					p += "=" + prompt
				}
				return append([]string{p, "--output", "streaming"}, flags...)
			},
		}, true
	case "opencode":
		// opencode run --format json [-s ID] [flags]   (the prompt on stdin)
		return cliSpec{
			bin: "opencode", env: "REEL_OPENCODE_BIN", format: normalize.OpencodeJSON, alwaysStdin: true,
			options: opencodeOptions,
			args: func(_, resume string, flags []string) []string {
				a := []string{"run", "--format", "json"}
				if resume != "" {
					a = append(a, "--session", resume)
				}
				return append(a, flags...)
			},
		}, true
	}
	return cliSpec{}, false
}

// cliFlags composes the flags and extra environment of one CLI step from
// its options: the provider's own, then options.args verbatim.
func cliFlags(spec cliSpec, o map[string]any) (flags, env []string, err error) {
	flags, env, err = spec.options(o)
	if err != nil {
		return nil, nil, err
	}
	extra, _, err := optStrings(o, "args")
	if err != nil {
		return nil, nil, err
	}
	return append(flags, extra...), env, nil
}

// optBool reads a boolean option; YAML and JSON give bool, a template gives
// its text.
func optBool(o map[string]any, key string) (bool, error) {
	v, ok := o[key]
	if !ok || v == nil {
		return false, nil
	}
	switch b := v.(type) {
	case bool:
		return b, nil
	case string:
		if p, err := strconv.ParseBool(strings.TrimSpace(b)); err == nil {
			return p, nil
		}
	}
	return false, fmt.Errorf("options.%s: want true or false, got %v (%T)", key, v, v)
}

// optList reads a list option that AWF also takes as one comma-separated
// string ("bash,read").
func optList(o map[string]any, key string) ([]string, error) {
	if s, ok := o[key].(string); ok {
		var out []string
		for _, p := range strings.Split(s, ",") {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
		return out, nil
	}
	l, _, err := optStrings(o, key)
	return l, err
}

func optModel(o map[string]any) ([]string, error) {
	m, err := optString(o, "model")
	if err != nil || m == "" {
		return nil, err
	}
	return []string{"--model", m}, nil
}

// optMaxTurns reads max_turns as a flag value, at least 1.
func optMaxTurns(o map[string]any, key string) (string, error) {
	n, ok, err := optInt(o, key)
	if err != nil || !ok {
		return "", err
	}
	if n < 1 {
		return "", fmt.Errorf("options.%s %d: want at least 1", key, n)
	}
	return strconv.FormatInt(n, 10), nil
}

// noMaxTurns refuses max_turns for a CLI without such a flag.
func noMaxTurns(o map[string]any) error {
	if _, ok := o["max_turns"]; ok {
		return errors.New("options.max_turns is supported by claude and mistral_vibe only (the other CLIs have no such flag)")
	}
	return nil
}

// baseFlags reads model as --model and refuses max_turns, for the CLIs
// without that flag.
func baseFlags(o map[string]any) ([]string, error) {
	flags, err := optModel(o)
	if err != nil {
		return nil, err
	}
	return flags, noMaxTurns(o)
}

// skipFlag returns flag when dangerously_skip_permissions is true.
func skipFlag(o map[string]any, flag string) ([]string, error) {
	skip, err := optBool(o, "dangerously_skip_permissions")
	if err != nil || !skip {
		return nil, err
	}
	return []string{flag}, nil
}

// modelAndSkip builds the options of a CLI that takes a model and a
// permission bypass flag, and nothing else.
func modelAndSkip(flag string) func(o map[string]any) ([]string, []string, error) {
	return func(o map[string]any) ([]string, []string, error) {
		flags, err := baseFlags(o)
		if err != nil {
			return nil, nil, err
		}
		skip, err := skipFlag(o, flag)
		return append(flags, skip...), nil, err
	}
}

func claudeOptions(o map[string]any) ([]string, []string, error) {
	flags, err := optModel(o)
	if err != nil {
		return nil, nil, err
	}
	if n, err := optMaxTurns(o, "max_turns"); err != nil {
		return nil, nil, err
	} else if n != "" {
		flags = append(flags, "--max-turns", n)
	}
	tools, err := optList(o, "allowed_tools")
	if err != nil {
		return nil, nil, err
	}
	if len(tools) > 0 {
		flags = append(flags, "--allowedTools", strings.Join(tools, ","))
	}
	skip, err := skipFlag(o, "--dangerously-skip-permissions")
	return append(flags, skip...), nil, err
}

func copilotOptions(o map[string]any) ([]string, []string, error) {
	flags, err := baseFlags(o)
	if err != nil {
		return nil, nil, err
	}
	for _, c := range []struct {
		key     string
		allowed []string
	}{{"mode", []string{"interactive", "plan", "autopilot"}}, {"effort", []string{"low", "medium", "high"}}} {
		v, err := optString(o, c.key)
		if err != nil {
			return nil, nil, err
		}
		if v == "" {
			continue
		}
		if !slices.Contains(c.allowed, v) {
			return nil, nil, fmt.Errorf("options.%s %q: want one of %s", c.key, v, strings.Join(c.allowed, ", "))
		}
		flags = append(flags, "--"+c.key+"="+v)
	}
	for _, c := range []struct{ key, flag string }{{"allowed_tools", "--allow-tool="}, {"denied_tools", "--deny-tool="}} {
		tools, err := optList(o, c.key)
		if err != nil {
			return nil, nil, err
		}
		for _, t := range tools {
			flags = append(flags, c.flag+t)
		}
	}
	all, err := optBool(o, "allow_all")
	if err != nil {
		return nil, nil, err
	}
	skip, err := optBool(o, "dangerously_skip_permissions")
	if err != nil {
		return nil, nil, err
	}
	if all || skip {
		flags = append(flags, "--allow-all")
	}
	return flags, nil, nil
}

func opencodeOptions(o map[string]any) ([]string, []string, error) {
	flags, err := baseFlags(o)
	if err != nil {
		return nil, nil, err
	}
	for _, key := range []string{"agent", "variant"} {
		v, err := optString(o, key)
		if err != nil {
			return nil, nil, err
		}
		if v != "" {
			flags = append(flags, "--"+key, v)
		}
	}
	if th, err := optBool(o, "thinking"); err != nil {
		return nil, nil, err
	} else if th {
		flags = append(flags, "--thinking")
	}
	skip, err := skipFlag(o, "--dangerously-skip-permissions")
	return append(flags, skip...), nil, err
}

// vibeOptions maps AWF's mistral_vibe options. vibe has no model flag: the
// model goes to VIBE_ACTIVE_MODEL, which overrides its config's
// active_model.
func vibeOptions(o map[string]any) ([]string, []string, error) {
	fail := func(err error) ([]string, []string, error) { return nil, nil, err }
	profile, err := optString(o, "agent_profile")
	if err != nil {
		return fail(err)
	}
	skip, err := optBool(o, "dangerously_skip_permissions")
	if err != nil {
		return fail(err)
	}
	switch {
	case skip && profile != "" && profile != "auto-approve":
		return fail(fmt.Errorf("options.agent_profile %q contradicts dangerously_skip_permissions (which means auto-approve)", profile))
	case skip:
		profile = "auto-approve"
	case profile == "":
		// Always explicit: vibe's programmatic mode would otherwise
		// auto-approve every tool.
		profile = "default"
	}
	flags := []string{"--agent", profile}
	if of, err := optString(o, "output_format"); err != nil {
		return fail(err)
	} else if of != "" && !slices.Contains([]string{"text", "json", "streaming"}, of) {
		return fail(fmt.Errorf("options.output_format %q: want text, json or streaming", of))
	}
	for _, key := range []string{"max_turns", "max_tokens"} {
		n, err := optMaxTurns(o, key)
		if err != nil {
			return fail(err)
		}
		if n != "" {
			flags = append(flags, "--"+strings.ReplaceAll(key, "_", "-"), n)
		}
	}
	if p, ok, err := optFloat(o, "max_price"); err != nil {
		return fail(err)
	} else if ok {
		if p < 0 {
			return fail(fmt.Errorf("options.max_price %v: want a non-negative number", p))
		}
		flags = append(flags, "--max-price", strconv.FormatFloat(p, 'f', -1, 64))
	}
	tools, _, err := optStrings(o, "enabled_tools")
	if err != nil {
		return fail(err)
	}
	for _, t := range tools {
		flags = append(flags, "--enabled-tools", t)
	}
	if w, err := optString(o, "workdir"); err != nil {
		return fail(err)
	} else if w != "" {
		c, err := cleanDir("workdir", w)
		if err != nil {
			return fail(err)
		}
		flags = append(flags, "--workdir", c)
	}
	dirs, _, err := optStrings(o, "add_dirs")
	if err != nil {
		return fail(err)
	}
	for _, d := range dirs {
		c, err := cleanDir("add_dirs", d)
		if err != nil {
			return fail(err)
		}
		flags = append(flags, "--add-dir", c)
	}
	if trust, err := optBool(o, "trust"); err != nil {
		return fail(err)
	} else if trust {
		flags = append(flags, "--trust")
	}
	var env []string
	if m, err := optString(o, "model"); err != nil {
		return fail(err)
	} else if m != "" {
		env = append(env, "VIBE_ACTIVE_MODEL="+m)
	}
	return flags, env, nil
}

// cleanDir refuses a directory option that climbs out with "..".
func cleanDir(key, p string) (string, error) {
	if strings.TrimSpace(p) == "" {
		return "", fmt.Errorf("options.%s: empty path", key)
	}
	for _, seg := range strings.Split(filepath.ToSlash(p), "/") {
		if seg == ".." {
			return "", fmt.Errorf("options.%s %q: a path must not contain \"..\"", key, p)
		}
	}
	return filepath.Clean(p), nil
}
