// Package transcript records and reads reel's canonical agent exchange
// transcripts: one append-only JSONL file per workflow run that captures
// the step lifecycle, every prompt, every reply normalized into one block
// vocabulary, and every tool call with its result.
//
// The package stands alone. A Go program that is not reel can record a
// transcript with a Recorder, read one with a Reader or ReadFile, follow a
// live one with Follow, and get exactly the files reel itself writes and
// reads.
//
// # Model
//
// Every line is one ExchangeEvent: an envelope (seq, run_id, optional
// parent_run_id and child_run_id, type, path, iteration, timestamp) and a
// payload whose shape follows the type:
//
//	run.started, run.completed           *StepPayload (kind "workflow") or null
//	step.started, step.completed         *StepPayload
//	step.call_workflow.started/completed *StepPayload, envelope carries child_run_id
//	message.user, message.assistant      *MessagePayload (role + blocks)
//	tool.call, tool.result               *ToolPayload
//
// Messages are made of ContentBlocks of six types: text, thinking,
// tool_use, tool_result, command and stream. Every block and every tool
// payload carries a Fidelity: "router" for what reel synthesized (prompts
// it composed, tools its own router served) and "agent_emitted" for what an
// agent reported in its own stream. Counting tool calls means counting
// tool.call events: one invocation has exactly one tool.call and one
// tool.result, whichever seam saw it.
//
// A CLI agent whose tools go through reel's MCP server (a step's
// mcp_proxy) is recorded the same way: each call through the server is one
// router pair, and the agent's own report of it (its stream's tool use
// and result) is never a second pair. The two are tied by the call id:
// the router's pair is recorded under the id the agent's stream reports
// the call by, so the tool_use block in the agent's message.assistant
// names its pair by tool_id exactly as an unproxied block names the
// agent's own pair. The step's AgentResult.Proxy (ToolProxy) names the
// server and the names the agent calls its tools by. In such a step a
// tool_use of a proxied tool names a router pair, or an agent_emitted
// pair whose result is an error: a call the agent refused itself before
// it reached reel.
//
// path is the dot-separated location of the step in the workflow
// definition ("build_all.lint", "each_file.review"); run events have an
// empty path. iteration is the zero-based index of the innermost enclosing
// loop. Retry attempts are separate step.started/step.completed pairs with
// StepPayload.Attempt set. Together with the order of start and complete
// events this rebuilds the exact tree of step executions.
//
// StepPayload.Result is free-form in the schema; reel writes the shapes in
// results.go (AgentResult, CommandResult, RunResult) so that tokens and
// cost can be counted without knowing which provider ran.
//
// # Wire format
//
// The encoder (AppendEvent, Recorder.Record) is strict: it refuses event
// types, block types and fidelity values outside the closed vocabularies
// and payloads that do not fit their event type. Fields are written in a
// fixed order, timestamps in UTC with fixed-width microseconds
// (TimeLayout) so they compare as bytes, free-form values compacted onto
// the line. Strings are escaped so that any input, NUL bytes and invalid
// UTF-8 included, becomes one valid JSON line: control characters get
// escapes, invalid sequences become U+FFFD, U+2028 and U+2029 are escaped.
// HTML characters are not escaped, so the file reads naturally with jq
// and grep.
//
// The decoder (DecodeEvent, Reader) is tolerant, per the schema's
// forward-compatibility rules: unknown fields are ignored; an unknown event
// type comes back with its payload intact as json.RawMessage together with
// an error matching ErrUnknownEventType; an unknown block type comes back
// with its bytes in ContentBlock.Raw and an error matching
// ErrUnknownBlockType. Callers treat both as warnings. The payload is
// dispatched by shape in the schema's probe order: an array is blocks; an
// object with "role" is a message, with "call_id" a tool payload, with
// "kind" a step payload; anything else stays json.RawMessage. Free-form
// values (tool inputs and outputs, results) are returned as
// json.RawMessage, so a read-then-write round trip is byte-exact.
//
// Lines are limited to 16 MiB and files to 1 GiB by default (Limits), for
// writer and reader alike; going over either is an error that names the
// limit, never a silent cut. A final line without its newline is reported
// as ErrTornLine, distinct from a malformed line in the middle of a file.
//
// # Recording
//
// Create opens <dir>/<run-id>.jsonl, creating the directory with mode 0700
// and the file with mode 0600, O_APPEND. The run id must be a canonical
// UUID v4 (ValidRunID), which also keeps it from ever escaping the
// directory. A symlink at the file's name is refused (O_NOFOLLOW), and so
// is anything but a regular file, without blocking (a FIFO planted there
// would otherwise hang the open). While open, the recorder holds an
// exclusive lock (flock) on the file: a second recorder is refused with
// ErrLocked, and Writing and a Follower tell a live writer from a dead
// one. Record assigns seq and the line's place in the file under one
// lock, so seq reads 1, 2, 3, … in file order with any number of
// concurrent producers, and returns only after the write(2) holding the
// line returned: a process killed after Record returned loses nothing.
// Concurrent producers share writes (group commit); a line is never split
// across writes. FsyncPolicy adds fsync for machine crashes.
//
// Opening an existing transcript resumes it: seq continues from the last
// complete line, and a torn final line is moved to <run-id>.jsonl.torn
// (.torn.1, .torn.2 … when earlier recoveries saved theirs; none is ever
// overwritten) so the transcript stays valid JSONL; Recorder.TornTail
// reports it.
//
// A write error (a full disk, an I/O error) is sticky: the recorder cuts
// the file back to its last complete line and refuses every later event,
// so the transcript keeps every line that was whole and has no hole. The
// file limit stops the recording too, not just one line; room is kept
// below it for the events that close what is open (step.completed,
// tool.result, run.completed), so the run can end its record saying why. A recorder that could not
// write a single line (a disk full from the start) removes the file it
// created when closed, rather than leave an empty transcript.
//
// # Live consumers
//
// Events are written first and broadcast second. Subscribe returns a
// Subscription with a bounded buffer (256 by default); a slow subscriber
// loses events (drop-newest), counted in Stats and warned about at most
// once a second, and never slows the writer. A consumer that must see
// everything uses Follow (or Recorder.Follow), which reads the file from a
// given seq and then waits for it to grow; it ends after run.completed,
// or with ErrWriterGone when the file stopped growing, has no
// run.completed and no recorder holds its lock (the writer was killed).
//
// # Threat model
//
// A transcript holds prompts, system prompts, tool inputs and outputs
// verbatim: treat it like a raw command log. Files are 0600 and
// directories 0700 so that only the owner reads them. Nothing is masked by
// default, because a transcript that silently differs from what the agent
// saw defeats its purpose. Masking is opt-in: Options.Masker masks each
// event before it is written or broadcast; the secrets subpackage
// (transcript/secrets) provides one that replaces secret-looking
// environment values and credential shapes with "[MASKED]".
//
// Transcripts may come from other machines and other tools. The reader
// bounds memory by the line limit, never panics on hostile bytes (fuzzed),
// and reports problems per line with its number and byte offset. ReadFile
// and Follow refuse a FIFO or device at the path without blocking.
//
// # Versioning
//
// The wire shape is pinned by a golden file (testdata/wire.golden.jsonl)
// that CI checks. Adding an optional field is compatible: readers ignore
// fields they do not know. Adding an event or block type requires every
// consumer to handle the unknown-type path, which this package's decoder
// already does. Removing or renaming a type or field is a schema change
// and needs a coordinated version bump.
package transcript
