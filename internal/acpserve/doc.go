// Package acpserve is reel's Agent Client Protocol server (`reel
// acp-serve`): an editor's agent panel (Zed, acp.nvim) spawns it and
// speaks ACP over its stdin and stdout, through the official Go SDK
// (github.com/coder/acp-go-sdk), as AWF's `awf acp-serve` does.
//
// What it decides:
//
//   - A session is the editor's conversation in one working directory
//     (session/new's cwd): the project found from there, its own engine
//     (configured as `reel run` configures one, AWF's plugins included)
//     and run launcher, and its own state directory,
//     <storage>/acp/sessions/<session-id>/session.json, which lists the
//     runs the session started and how they ended. Two sessions share
//     nothing but the storage their runs are recorded in.
//   - Workflows are slash commands: every workflow `reel list` shows from
//     the session's directory (PACK/WORKFLOW as /PACK:WORKFLOW), with its
//     description and its inputs as the command's hint, sent after
//     session/new and again when a command names a workflow added since.
//     A command takes AWF's input syntax (key=value, --input=key=value,
//     --input key=value, shell-style quotes); reel adds --interactive and
//     --breakpoint STATE,… (AWF ignores flags it does not know).
//   - Every run is an ordinary reel run, started through package launch:
//     recorded in the storage, in the run index, resumable from the CLI.
//     What the editor sees is projected from its transcripts as they are
//     written (the run's and its sub-workflows'): each step a tool call
//     (in progress, then completed or failed, with its command or prompt
//     and its output), the agents' replies the agent's message, their
//     thinking thoughts, their tool calls tool calls of their own; then a
//     closing line with the status, time, tokens, cost, the workflow's
//     outputs and the run id.
//   - A turn ends when the run ends, or when a conversation step (mode:
//     conversation) waits for the user: the run stays parked and the next
//     prompt is its next message (turn-boundary resume); an empty
//     message, exit or quit ends the conversation.
//   - Approval gates are the CLI's interactive pauses: with --interactive
//     (every step) or --breakpoint (those states), the editor is asked
//     session/request_permission before the step, with what it is about
//     to run: run it, run it and every later step, skip it, or abort the
//     run. No answer aborts.
//   - session/cancel cancels the session's run, parked or running: its
//     processes get SIGTERM then SIGKILL, it ends `cancelled` with its
//     run.completed, and the prompt ends with stopReason cancelled. A
//     cancel is taken in the order the editor sent it (the SDK would let
//     the next prompt overtake it): it applies to the prompts sent
//     before it, never to the next one. When the editor goes (stdin
//     ends) or the server is signalled, every run still going is
//     cancelled the same way.
//   - stdout carries protocol frames alone: a frame that is not JSON or
//     is over 10 MiB is answered with a JSON-RPC parse error and skipped
//     (the SDK alone drops the first silently and hangs up on the
//     second); diagnostics go to the logger (stderr).
package acpserve
