package transcript

import "encoding/json"

// The types below are the shapes reel writes into StepPayload.Result. The
// schema leaves Result free-form; fixing these shapes lets readers count
// tokens and cost without knowing which provider ran.

// Usage is what a model consumed. Token counts are as the provider reported
// them; TotalTokens is input + output (cache and reasoning tokens are parts
// of those as the provider defines them and are reported separately).
type Usage struct {
	InputTokens      int64 `json:"input_tokens"`
	OutputTokens     int64 `json:"output_tokens"`
	CacheReadTokens  int64 `json:"cache_read_tokens,omitempty"`
	CacheWriteTokens int64 `json:"cache_write_tokens,omitempty"`
	ReasoningTokens  int64 `json:"reasoning_tokens,omitempty"`
	TotalTokens      int64 `json:"total_tokens"`
}

// Add accumulates o into u.
func (u *Usage) Add(o Usage) {
	u.InputTokens += o.InputTokens
	u.OutputTokens += o.OutputTokens
	u.CacheReadTokens += o.CacheReadTokens
	u.CacheWriteTokens += o.CacheWriteTokens
	u.ReasoningTokens += o.ReasoningTokens
	u.TotalTokens += o.TotalTokens
}

// AgentResult is the Result of an agent step's step.completed.
type AgentResult struct {
	// Output is the agent's final reply text (or its JSON when the step
	// asked for output_format json).
	Output   string `json:"output"`
	Provider string `json:"provider,omitempty"`
	Model    string `json:"model,omitempty"`
	Usage    Usage  `json:"usage"`
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
	Status     string   `json:"status"`
	ExitCode   int      `json:"exit_code"`
	DurationMS int64    `json:"duration_ms"`
	Usage      Usage    `json:"usage"`
	CostUSD    *float64 `json:"cost_usd,omitempty"`
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
