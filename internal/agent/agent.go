// Package agent runs one agent step: it hands a prompt, and the follow-ups
// of a multi-turn step, to a provider (an agent CLI such as claude or
// codex, or an OpenAI-compatible HTTP endpoint), streams what the provider
// does as transcript events, and returns the step's result.
//
// CLI providers run as a subprocess in their own process group, in
// Request.Dir with Request.Env, stdout parsed live by package normalize:
//
//	claude          claude -p --output-format stream-json --verbose [--resume ID] [--append-system-prompt S] [FLAGS] -- PROMPT
//	codex           codex exec --json --skip-git-repo-check [FLAGS] [resume ID] -- PROMPT
//	gemini          gemini --output-format stream-json [--resume=ID] [FLAGS] --prompt=PROMPT
//	github_copilot  copilot --output-format json [--resume=ID] [FLAGS] --prompt=PROMPT
//	mistral_vibe    vibe --prompt=PROMPT --output streaming --agent PROFILE [FLAGS]
//	opencode        opencode run --format json [--session ID] [FLAGS]      (PROMPT on stdin)
//
// The executable is options.command, else $REEL_<PROVIDER>_BIN
// (REEL_CLAUDE_BIN, REEL_CODEX_BIN, REEL_GEMINI_BIN, REEL_GITHUB_COPILOT_BIN,
// REEL_MISTRAL_VIBE_BIN, REEL_OPENCODE_BIN), else the name above searched in
// the step's PATH; a relative path is taken from Dir. FLAGS come from the
// options AWF defines for each CLI (model; claude max_turns, allowed_tools,
// dangerously_skip_permissions; codex and gemini dangerously_skip_permissions;
// copilot mode, effort, allowed_tools, denied_tools, allow_all; vibe
// agent_profile, max_turns, max_tokens, max_price, enabled_tools, workdir,
// add_dirs, trust, with model passed as VIBE_ACTIVE_MODEL; opencode agent,
// variant, thinking, dangerously_skip_permissions), then options.args
// verbatim. CheckOptions validates them without running anything. CLIs
// without a system prompt flag get the system prompt ahead of the step's
// first prompt. A prompt over 64 KiB goes to claude, codex and vibe on stdin
// instead of argv; opencode always reads it there.
//
// A multi-turn step (workflow conversation) is a Session: the first Send
// starts the provider's session and every later Send continues it. The
// CLIs continue through their own resume flag (the bracketed parts above)
// with the session id the previous turn's stream reported (claude's
// system/init or result session_id, codex's thread.started thread_id,
// gemini's init session_id, copilot's sessionId, opencode's sessionID), so
// the agent keeps its full context, tool results included; a turn whose
// predecessor reported no session id fails rather than silently starting
// over. vibe reports none, so its later turns carry the conversation so far
// (each user message and reply) in the prompt. The system prompt goes with
// every claude turn (--append-system-prompt configures one process only);
// the CLIs without such a flag got it ahead of the first prompt, inside the
// resumed session already. A step may also continue another step's session
// (Request.Continue, from Session.Snapshot).
//
// openai_compatible speaks Chat Completions over HTTP with streaming
// (options: base_url, default https://api.openai.com/v1; model, required;
// api_key_env, default OPENAI_API_KEY, looked up in Env, and no key at all
// is fine for local servers; api_key; max_turns, default 20; max_retries,
// default 2; temperature; top_p; max_tokens or max_completion_tokens;
// tools, a subset of the builtin tools; bash_timeout in seconds; bash_env,
// the names of more variables the Bash tool passes on).
// anthropic is the same client aimed at Anthropic's Chat Completions
// compatible endpoint (base_url https://api.anthropic.com/v1, api_key_env
// ANTHROPIC_API_KEY). reel serves its builtin tools through one
// tools.Router confined to Dir, so each call is recorded once with router
// fidelity; the Bash tool's commands get only the variables of
// tools.BashEnv (PATH, HOME, LANG, LC_* …) and those bash_env names, never
// the API keys of Env. A CLI step with Request.MCPProxy (the step's
// mcp_proxy) serves those same tools, and the plugin operations the step
// exposes, to its CLI through reel's MCP server:
// each run of the CLI gets a loopback endpoint of its own, wired into its
// command line, configuration and environment, and every call through it
// is recorded once with router fidelity under the agent's own tool id
// (package mcpproxy); the step's result names the proxy. The options
// bash_env and bash_timeout apply to it too.
//
// A conversation keeps the whole chat history (system prompt, user
// messages, assistant replies with their tool calls, tool messages) and
// sends it with each next user message; max_turns bounds the model
// requests of each user turn.
package agent

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/reelhq/reel/internal/mcpproxy"
	"github.com/reelhq/reel/transcript"
)

// Providers returns the provider names Run accepts.
func Providers() []string {
	return append(slices.Clone(cliProviders), "openai_compatible", "anthropic")
}

// CheckOptions checks a step's options for provider the way a run would,
// without looking for the executable or the API key: for validating a
// workflow before it runs.
func CheckOptions(provider string, options map[string]any) error {
	if isHTTP(provider) {
		_, err := openAIConfigFrom(Request{Provider: provider, Options: options})
		return err
	}
	spec, ok := specFor(provider)
	if !ok {
		return fmt.Errorf("%w %q", ErrUnknownProvider, provider)
	}
	if _, err := optString(options, "command"); err != nil {
		return err
	}
	// bash_env and bash_timeout shape the tools of mcp_proxy.
	if _, _, err := routerOptions(options); err != nil {
		return err
	}
	_, _, err := cliFlags(spec, options)
	return err
}

// Request describes one agent step.
type Request struct {
	// Provider is claude, codex, gemini, github_copilot or openai_compatible.
	Provider string
	// Prompt is the resolved prompt.
	Prompt string
	// SystemPrompt is the resolved system prompt; it may be empty.
	SystemPrompt string
	// Options are the state's options: model, command (executable
	// override), args, base_url, api_key_env, max_turns, temperature, …
	Options map[string]any
	// OutputFormat is empty (the reply as it came), "text" (the reply
	// without a code fence around it) or "json".
	OutputFormat string
	// Dir is the working directory; builtin tools are confined to it.
	Dir string
	// Env is the environment of subprocesses (nil = os.Environ()).
	Env []string
	// Continue, when set, resumes another step's session (its Snapshot)
	// instead of starting a new one.
	Continue *Snapshot
	// MCPProxy, when set, puts reel's MCP server between a CLI agent and
	// its tools (the step's mcp_proxy): each run of the CLI gets its own
	// endpoint, and every call through it is recorded once with router
	// fidelity (package mcpproxy). HTTP providers call reel's tools
	// directly and ignore it.
	MCPProxy *mcpproxy.Config
}

// ErrUnknownProvider is returned for a provider Run does not know.
var ErrUnknownProvider = errors.New("unknown agent provider")

// ErrNotJSON is returned when a step asked for output_format json and the
// agent's reply holds no JSON value.
var ErrNotJSON = errors.New("agent reply is not JSON")

// Emit receives the events of an agent step. The caller fills Path,
// Iteration and RunID and records them; an error stops the step.
type Emit func(transcript.ExchangeEvent) error

// Run performs one single-turn agent step: a Session with one Send. It
// emits message.user (blocks[0] the prompt, blocks[1] the system prompt
// when non-empty, both text with router fidelity), then message.assistant,
// tool.call and tool.result events as the provider streams, and returns
// the step's result.
//
// On failure Run returns an error and, when the provider ran at all, the
// partial result (output so far, usage, duration) so the caller can record
// it. Dangling tool uses are closed with a tool.result whose error reads
// "no result: <reason>" before Run returns.
func Run(ctx context.Context, req Request, emit func(transcript.ExchangeEvent) error) (*transcript.AgentResult, error) {
	s, err := NewSession(req, emit)
	if err != nil {
		return nil, err
	}
	if _, err := s.Send(ctx, req.Prompt); err != nil {
		res, _ := s.Result()
		return res, err
	}
	return s.Result()
}
