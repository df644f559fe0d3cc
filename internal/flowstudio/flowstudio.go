// Package flowstudio reads and writes Flow Studio run directories
// (swarm/runs/<run-id>/): meta.json, spec.json, events.jsonl, and per agent
// step a transcript <flow>/llm/<step_id>-<agent_key>-<engine>.jsonl and a
// receipt <flow>/receipts/<step_id>-<agent_key>.json, converting them to
// and from reel's canonical transcript events.
//
// # Mapping between reel and Flow Studio
//
// Export (reel → Flow Studio):
//
//   - The run's workflow becomes one flow: flow_key is the workflow name
//     reduced to [a-z0-9_-] ("reel" when empty). A child run started by
//     call_workflow becomes a flow of its own, named after its workflow
//     (with _2, _3… when two flows would share a key), and its steps' reel
//     paths are prefixed with the call_workflow step's path. Flow Studio
//     cannot nest flows, so spec.json's params.reel_children (ChildInfo)
//     records which run and step started each child run.
//   - Every step execution gets a step_id built from its reel path with
//     every character outside [A-Za-z0-9_] turned into "_" (so
//     "each_file.review" → "each_file_review"), then "_i<N>" for loop
//     iteration N > 0 and "_a<N>" for retry attempt N > 1, and "_2", "_3"…
//     if that id is already taken. Step ids never contain "-", which Flow
//     Studio's file-name patterns need: transcript
//     ^([a-zA-Z0-9_]+)-(.+)-([a-zA-Z0-9]+)\.jsonl$ and receipt
//     ^([a-zA-Z0-9_]+)-(.+)\.json$.
//   - agent_key is the step's name reduced to [A-Za-z0-9_-] ("agent" when
//     empty); engine is the provider reduced to [a-z0-9] (claude, gemini,
//     codex…; "agent" when unknown), and the receipt's engine is
//     "<engine>-step".
//   - Agent steps get a transcript in the documented line form and a
//     receipt with token counts, duration, status, model and
//     transcript_path. Every step, of any kind, gets step_start/step_end
//     in events.jsonl.
//   - Where the documented form cannot hold what reel recorded, extra keys
//     carry it and Flow Studio ignores them: "reel_blocks" (a message's
//     exact blocks), "call_id", "call_timestamp", "error", "reel_output"
//     (a non-string tool output) and "reel_input_wrapped" (an input that is
//     not an object, written as {"input": value}) on tool lines, "reel" in
//     receipts and step events (path, iteration, attempt, kind, name and
//     the step's exact result).
//
// Import (Flow Studio → reel): a step execution is a step_start/step_end
// pair of events.jsonl (or, without events, a receipt or transcript file).
// Its reel path is "<flow_key>.<step_id>" and its iteration counts earlier
// executions of the same path, unless the files carry reel's own "reel"
// keys, which restore the original path, iteration and result. A step
// that ran several times (Flow Studio loops) has its files attached to its
// last execution, since Flow Studio overwrites them. A reel export's
// params.reel_children turns its child flows back into child runs
// (ImportResult.Children) with their call_workflow events in the parent.
package flowstudio

import (
	"fmt"
	"regexp"
	"strings"
	"time"
)

// The file-name patterns Flow Studio parses artifacts with.
var (
	TranscriptName = regexp.MustCompile(`^([a-zA-Z0-9_]+)-(.+)-([a-zA-Z0-9]+)\.jsonl$`)
	ReceiptName    = regexp.MustCompile(`^([a-zA-Z0-9_]+)-(.+)\.json$`)
	// RunID is the shape of Flow Studio's run ids.
	RunID = regexp.MustCompile(`^run-\d{8}-\d{6}-[a-z0-9]{6}$`)
)

// TimeLayout is how Flow Studio's documented artifacts write timestamps.
const TimeLayout = "2006-01-02T15:04:05.000000Z"

func formatTime(t time.Time) string { return t.UTC().Format(TimeLayout) }

var (
	notStepID   = regexp.MustCompile(`[^A-Za-z0-9_]`)
	notAgentKey = regexp.MustCompile(`[^A-Za-z0-9_-]+`)
	notFlowKey  = regexp.MustCompile(`[^a-z0-9_-]+`)
	notEngine   = regexp.MustCompile(`[^a-z0-9]+`)
)

// StepID turns a reel path, iteration and attempt into a Flow Studio step
// id (without the collision suffix).
func StepID(path string, iteration, attempt int) string {
	id := notStepID.ReplaceAllString(path, "_")
	if id == "" {
		id = "step"
	}
	if iteration > 0 {
		id += fmt.Sprintf("_i%d", iteration)
	}
	if attempt > 1 {
		id += fmt.Sprintf("_a%d", attempt)
	}
	return id
}

// AgentKey turns a step name into an agent key.
func AgentKey(name string) string {
	k := strings.Trim(notAgentKey.ReplaceAllString(name, "-"), "-")
	if k == "" {
		return "agent"
	}
	return k
}

// FlowKey turns a workflow name into a flow key.
func FlowKey(name string) string {
	k := strings.Trim(notFlowKey.ReplaceAllString(strings.ToLower(name), "_"), "_")
	if k == "" {
		return "reel"
	}
	return k
}

// Engine turns a provider name into the engine of a transcript file name.
func Engine(provider string) string {
	p := strings.ToLower(provider)
	switch {
	case strings.Contains(p, "claude"), p == "anthropic":
		return "claude"
	case strings.Contains(p, "gemini"), p == "google":
		return "gemini"
	case strings.Contains(p, "codex"), p == "openai":
		return "codex"
	}
	e := notEngine.ReplaceAllString(p, "")
	if e == "" {
		return "agent"
	}
	return e
}

// providerOf reads a receipt's engine ("claude-step") back as a provider.
func providerOf(engine string) string {
	e, _, _ := strings.Cut(engine, "-")
	return e
}
