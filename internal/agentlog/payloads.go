package agentlog

import (
	"encoding/json"

	"github.com/reelhq/reel/transcript"
)

// The payload shapes reel reads and writes. Decoding ignores unknown
// fields; writing keeps to the fields Shadow's SPEC names.

type message struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	ToolCallID string          `json:"tool_call_id,omitempty"`
}

type chatRequest struct {
	Model    string          `json:"model"`
	Messages []message       `json:"messages"`
	Tools    json.RawMessage `json:"tools,omitempty"`
	Params   json.RawMessage `json:"params,omitempty"`
}

type contentBlock struct {
	Type  string          `json:"type"`
	Text  string          `json:"text,omitempty"`
	ID    string          `json:"id,omitempty"`
	Name  string          `json:"name,omitempty"`
	Input json.RawMessage `json:"input,omitempty"`
	// Thinking is accepted on read: some writers use the Anthropic field
	// name instead of Shadow's "text".
	Thinking string `json:"thinking,omitempty"`
}

type usage struct {
	InputTokens              int64  `json:"input_tokens"`
	OutputTokens             int64  `json:"output_tokens"`
	ThinkingTokens           int64  `json:"thinking_tokens"`
	CacheReadInputTokens     *int64 `json:"cache_read_input_tokens,omitempty"`
	CacheCreationInputTokens *int64 `json:"cache_creation_input_tokens,omitempty"`
}

// toReel converts Shadow's usage, which counts like Anthropic's (input
// without the cache, thinking inside output), into reel's, whose input
// includes the cache.
func (u usage) toReel() transcript.Usage {
	r := transcript.Usage{
		InputTokens:     u.InputTokens,
		OutputTokens:    u.OutputTokens,
		ReasoningTokens: u.ThinkingTokens,
	}
	if u.CacheReadInputTokens != nil {
		r.CacheReadTokens = *u.CacheReadInputTokens
	}
	if u.CacheCreationInputTokens != nil {
		r.CacheWriteTokens = *u.CacheCreationInputTokens
	}
	r.InputTokens += r.CacheReadTokens + r.CacheWriteTokens
	r.TotalTokens = r.InputTokens + r.OutputTokens
	return r
}

func usageFromReel(u transcript.Usage) usage {
	in := max(u.InputTokens-u.CacheReadTokens-u.CacheWriteTokens, 0)
	s := usage{InputTokens: in, OutputTokens: u.OutputTokens, ThinkingTokens: u.ReasoningTokens}
	if u.CacheReadTokens != 0 {
		v := u.CacheReadTokens
		s.CacheReadInputTokens = &v
	}
	if u.CacheWriteTokens != 0 {
		v := u.CacheWriteTokens
		s.CacheCreationInputTokens = &v
	}
	return s
}

type chatResponse struct {
	Model      string         `json:"model"`
	Content    []contentBlock `json:"content"`
	StopReason string         `json:"stop_reason"`
	LatencyMS  float64        `json:"latency_ms"`
	Usage      *usage         `json:"usage,omitempty"`
}

type toolCall struct {
	ToolName   string          `json:"tool_name"`
	ToolCallID string          `json:"tool_call_id"`
	Arguments  json.RawMessage `json:"arguments"`
}

type toolResult struct {
	ToolCallID string          `json:"tool_call_id"`
	Output     json.RawMessage `json:"output"`
	IsError    bool            `json:"is_error"`
	LatencyMS  float64         `json:"latency_ms"`
}

type errorPayload struct {
	Source         string `json:"source"`
	Code           string `json:"code"`
	Message        string `json:"message"`
	Retriable      bool   `json:"retriable"`
	UpstreamStatus *int   `json:"upstream_status,omitempty"`
}

type chunkPayload struct {
	ChunkIndex   int64           `json:"chunk_index"`
	TimeUnixNano int64           `json:"time_unix_nano"`
	Delta        json.RawMessage `json:"delta"`
	IsFinal      bool            `json:"is_final,omitempty"`
}

// reelMeta travels in a record's meta (which is not hashed) so a trace reel
// exported imports back into the same steps, paths and results. Shadow
// ignores it.
type reelMeta struct {
	RunID     string `json:"run_id,omitempty"`
	Path      string `json:"path"`
	Iteration int    `json:"iteration"`
	Attempt   int    `json:"attempt,omitempty"`
	Step      string `json:"step,omitempty"`
	Kind      string `json:"kind,omitempty"`
	// Run marks records about the run rather than a step.
	Run bool `json:"run,omitempty"`
	// Blocks holds the message's reel blocks when Shadow's shapes cannot
	// carry them (command or stream blocks, router fidelity, extra parts).
	Blocks json.RawMessage `json:"blocks,omitempty"`
	// Synthetic marks a record written only to carry usage; it is not a
	// message.
	Synthetic bool `json:"synthetic,omitempty"`
	// ToolError is reel's error text of a tool result.
	ToolError string `json:"tool_error,omitempty"`
	// OutputNull says the tool result's output was null in reel.
	OutputNull bool `json:"output_null,omitempty"`
	// InputWrapped says a tool call's input was not an object and went
	// into arguments as {"input": value}.
	InputWrapped bool `json:"input_wrapped,omitempty"`
	// Fidelity is a tool call's or result's when reel's router captured
	// it (an HTTP provider's tools, a CLI agent's through mcp_proxy);
	// absent for what the agent reported.
	Fidelity transcript.Fidelity `json:"fidelity,omitempty"`
	// Final is set on the last record of a step: how the step completed.
	Final *stepFinal `json:"final,omitempty"`
}

type stepFinal struct {
	Error  string          `json:"error,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
}

type recordMeta struct {
	SessionTag string    `json:"session_tag,omitempty"`
	Reel       *reelMeta `json:"reel,omitempty"`
}
