// Package agent runs one agent step: it hands a prompt, and the follow-ups
// of a multi-turn step, to a provider (an agent CLI such as claude or
// codex, or an OpenAI-compatible HTTP endpoint), streams what the provider
// does as transcript events, and returns the step's result.
//
// CLI providers run as a subprocess in their own process group, in
// Request.Dir with Request.Env, stdout parsed live by package normalize:
//
//	claude          claude -p --output-format stream-json --verbose [--resume ID] [--append-system-prompt S] [--model M] [--max-turns N] [ARGS] -- PROMPT
//	codex           codex exec --json --skip-git-repo-check [--model M] [ARGS] [resume ID] -- PROMPT
//	gemini          gemini --output-format stream-json [--resume=ID] [--model M] [ARGS] --prompt=PROMPT
//	github_copilot  copilot --output-format json [--resume=ID] [--model M] [ARGS] --prompt=PROMPT
//
// The executable is options.command, else $REEL_<PROVIDER>_BIN (REEL_CLAUDE_BIN,
// REEL_CODEX_BIN, REEL_GEMINI_BIN, REEL_GITHUB_COPILOT_BIN), else the name
// above searched in the step's PATH; a relative path is taken from Dir.
// ARGS is options.args, passed through verbatim (permission flags such as
// claude's --permission-mode or copilot's --allow-all-tools go there). CLIs
// without a system prompt flag get the system prompt ahead of the prompt. A
// prompt over 64 KiB goes to claude and codex on stdin instead of argv.
//
// A multi-turn step (workflow conversation) is a Session: the first Send
// starts the provider's session and every later Send continues it. The
// CLIs continue through their own resume flag (the bracketed parts above)
// with the session id the previous turn's stream reported (claude's
// system/init or result session_id, codex's thread.started thread_id,
// gemini's init session_id, copilot's sessionId), so the agent keeps its
// full context, tool results included; a turn whose predecessor reported
// no session id fails rather than silently starting over. The system
// prompt goes with every claude turn (--append-system-prompt configures one
// process only); the CLIs without such a flag got it ahead of the first
// prompt, inside the resumed session already.
//
// openai_compatible speaks Chat Completions over HTTP with streaming
// (options: base_url, default https://api.openai.com/v1; model, required;
// api_key_env, default OPENAI_API_KEY, looked up in Env, and no key at all
// is fine for local servers; api_key; max_turns, default 20; max_retries,
// default 2; temperature; max_tokens; tools, a subset of the builtin tools;
// bash_timeout in seconds). reel serves its builtin tools through one
// tools.Router confined to Dir, so each call is recorded once with router
// fidelity. A conversation keeps the whole chat history (system prompt,
// user messages, assistant replies with their tool calls, tool messages)
// and sends it with each next user message; max_turns bounds the model
// requests of each user turn.
package agent

import (
	"context"
	"errors"

	"github.com/reelhq/reel/transcript"
)

// Providers returns the provider names Run accepts.
func Providers() []string {
	return []string{"claude", "codex", "gemini", "github_copilot", "openai_compatible"}
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
	// OutputFormat is "text" (or empty) or "json".
	OutputFormat string
	// Dir is the working directory; builtin tools are confined to it.
	Dir string
	// Env is the environment of subprocesses (nil = os.Environ()).
	Env []string
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
