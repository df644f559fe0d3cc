package transcript

import "encoding/json"

// The types below are the shapes reel writes into StepPayload.Result. The
// schema leaves Result free-form; fixing these shapes lets readers count
// tokens and cost without knowing which provider ran.

// Usage is what a model consumed, counted once whatever the provider's
// convention (the one OpenTelemetry's gen_ai.usage attributes use):
// InputTokens is every input token the model processed, cache reads and
// cache writes included; CacheReadTokens and CacheWriteTokens are the parts
// of it served from and written to the provider's prompt cache, and
// CacheWrite1hTokens the part of CacheWriteTokens written to a one-hour
// cache (Anthropic's extended cache, priced higher); OutputTokens is every
// generated token, reasoning included, and ReasoningTokens the part of it
// spent thinking. TotalTokens is InputTokens + OutputTokens. Readers add
// usages up field by field and never add the parts to their wholes.
type Usage struct {
	InputTokens        int64 `json:"input_tokens"`
	OutputTokens       int64 `json:"output_tokens"`
	CacheReadTokens    int64 `json:"cache_read_tokens,omitempty"`
	CacheWriteTokens   int64 `json:"cache_write_tokens,omitempty"`
	CacheWrite1hTokens int64 `json:"cache_write_1h_tokens,omitempty"`
	ReasoningTokens    int64 `json:"reasoning_tokens,omitempty"`
	TotalTokens        int64 `json:"total_tokens"`
}

// Add accumulates o into u.
func (u *Usage) Add(o Usage) {
	u.InputTokens += o.InputTokens
	u.OutputTokens += o.OutputTokens
	u.CacheReadTokens += o.CacheReadTokens
	u.CacheWriteTokens += o.CacheWriteTokens
	u.CacheWrite1hTokens += o.CacheWrite1hTokens
	u.ReasoningTokens += o.ReasoningTokens
	u.TotalTokens += o.TotalTokens
}

// AgentResult is the Result of an agent step's step.completed.
type AgentResult struct {
	// Output is the agent's final reply text (or its JSON when the step
	// asked for output_format json).
	Output   string `json:"output"`
	Provider string `json:"provider,omitempty"`
	// Model is the model that answered, as the provider named it;
	// RequestModel the one the step asked for (its options.model), when
	// it named one.
	Model        string `json:"model,omitempty"`
	RequestModel string `json:"request_model,omitempty"`
	Usage        Usage  `json:"usage"`
	// CostUSD is set only when the provider reports a cost.
	CostUSD    *float64 `json:"cost_usd,omitempty"`
	DurationMS int64    `json:"duration_ms"`
	Turns      int      `json:"turns,omitempty"`
	SessionID  string   `json:"session_id,omitempty"`
	// UserTurns counts the user messages of a multi-turn step (its prompt
	// and each follow-up); Turns counts the provider's own turns.
	UserTurns int `json:"user_turns,omitempty"`
	// StoppedBy says why a multi-turn step sent no further message:
	// "conversation_end" (its list of follow-ups ran out), "user_exit" (an
	// empty line, exit, quit or the end of input), "stop_condition" or
	// "max_turns".
	StoppedBy string `json:"stopped_by,omitempty"`
	// ContinuedFrom is the path of the step whose provider session this
	// step resumed.
	ContinuedFrom string `json:"continued_from,omitempty"`
	// Skipped counts provider output units the normalizer could not use
	// (noise lines, malformed JSON, unknown event types), by reason.
	Skipped map[string]int `json:"skipped,omitempty"`
	// Captured holds the step's captured variables (AWF's capture:
	// variable name to value).
	Captured map[string]string `json:"captured,omitempty"`
	// ReplayedFrom names the run whose recorded replies this step replayed
	// instead of calling the provider (reel run --replay-from).
	ReplayedFrom string `json:"replayed_from,omitempty"`
	// Proxy is set when the step's CLI agent called its tools through
	// reel's MCP server (mcp_proxy).
	Proxy *ToolProxy `json:"proxy,omitempty"`
	// Compactions are the times the agent compacted its context, in
	// order: the k-th belongs to the k-th compaction summary among the
	// step's user messages.
	Compactions []Compaction `json:"compactions,omitempty"`
}

// Compaction is one compaction of an agent's context: the conversation so
// far replaced by its summary.
type Compaction struct {
	// Trigger is what started it, as the agent says: "auto" (the context
	// was full) or "manual" (/compact).
	Trigger string `json:"trigger,omitempty"`
	// PreTokens is the context's size before, as the agent reports it;
	// PostTokens its size after: the agent's own figure when it gives
	// one, else the input (cache included) of the next model call. 0 is
	// unknown.
	PreTokens  int64 `json:"pre_tokens,omitempty"`
	PostTokens int64 `json:"post_tokens,omitempty"`
}

// ToolProxy describes the MCP server reel put between a CLI agent and its
// tools (mcp_proxy). Each call through it is one router pair (tool.call
// and tool.result with fidelity "router", reel's own timing, input,
// output and error), recorded under the id the agent's own stream reports
// the call by: the agent's tool_use block in its message.assistant names
// its pair by tool_id as any block does. The agent's own report is never
// a second pair. A tool_use of a proxied tool with an agent_emitted pair
// instead is a call the agent refused itself before it reached reel (that
// pair's result carries the agent's error).
type ToolProxy struct {
	// Server is the name the agent knows reel's MCP server by.
	Server string `json:"server"`
	// Tools maps the names the agent calls the proxied tools by (claude's
	// "mcp__reel__Read") to the tools reel serves ("Read").
	Tools map[string]string `json:"tools"`
}

// CommandResult is the Result of a command step's step.completed.
type CommandResult struct {
	ExitCode int    `json:"exit_code"`
	Output   string `json:"output"`
	Stderr   string `json:"stderr"`
	// Truncated is set when output or stderr was cut at the output limit.
	Truncated  bool  `json:"truncated"`
	DurationMS int64 `json:"duration_ms,omitempty"`
	// Captured holds the step's captured variables (AWF's capture:
	// variable name to value).
	Captured map[string]string `json:"captured,omitempty"`
}

// RunResult is the Result of run.completed.
type RunResult struct {
	// Status is "success", "failure", "cancelled" or "interrupted".
	Status   string `json:"status"`
	ExitCode int    `json:"exit_code"`
	// DurationMS is the time the run ran: a resumed run adds the time of
	// its earlier attempts, not the time it lay interrupted.
	DurationMS int64    `json:"duration_ms"`
	Usage      Usage    `json:"usage"`
	CostUSD    *float64 `json:"cost_usd,omitempty"`
	// Outputs are the workflow's declared outputs of a successful run.
	Outputs map[string]any `json:"outputs,omitempty"`
}

// RunInput is the Input of run.started: what the run was started with.
type RunInput struct {
	// Inputs are the workflow inputs as the run resolved them.
	Inputs map[string]any `json:"inputs,omitempty"`
	// Workflow identifies the definition the run executed.
	Workflow *WorkflowSource `json:"workflow,omitempty"`
	// Reused, on the run.started of a resumed attempt, names the step
	// executions of earlier attempts whose results the attempt keeps
	// instead of running them again: inclusive ranges of ordinals, the
	// 1-based positions of their step.started events among all
	// step.started events of the file.
	Reused [][2]int `json:"reused,omitempty"`
	// ReplayFrom names the recorded run whose agent replies a replayed
	// run takes instead of calling providers.
	ReplayFrom string `json:"replay_from,omitempty"`
	// Step names the one state a single-step run ran; Mocks are the
	// results it was given for the states and loop variables it reads.
	Step  string            `json:"step,omitempty"`
	Mocks map[string]string `json:"mocks,omitempty"`
}

// WorkflowSource identifies a workflow definition.
type WorkflowSource struct {
	// File is the workflow file's absolute path when the run started.
	File string `json:"file"`
	// SHA256 is the hex SHA-256 of the file's bytes.
	SHA256 string `json:"sha256"`
	// States holds a digest of each state's definition (its flow fields
	// left out), so that a resume can tell which states changed.
	States map[string]string `json:"states,omitempty"`
}

// DecodeResult decodes a payload's Result (as held by a decoded transcript,
// json.RawMessage, or as a Go value) into v.
func DecodeResult(result any, v any) error {
	switch r := result.(type) {
	case nil:
		return nil
	case json.RawMessage:
		return json.Unmarshal(r, v)
	case []byte:
		return json.Unmarshal(r, v)
	}
	b, err := json.Marshal(result)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}
