package transcript

import (
	"encoding/json"
	"errors"
	"time"
)

// EventType names what an ExchangeEvent records. The set is closed: writers
// refuse anything outside it, readers surface unknown values with
// ErrUnknownEventType.
type EventType string

// The closed event vocabulary.
const (
	RunStarted            EventType = "run.started"
	RunCompleted          EventType = "run.completed"
	StepStarted           EventType = "step.started"
	StepCompleted         EventType = "step.completed"
	CallWorkflowStarted   EventType = "step.call_workflow.started"
	CallWorkflowCompleted EventType = "step.call_workflow.completed"
	MessageUser           EventType = "message.user"
	MessageAssistant      EventType = "message.assistant"
	ToolCall              EventType = "tool.call"
	ToolResult            EventType = "tool.result"
)

// EventTypes lists the closed event vocabulary in schema order.
var EventTypes = []EventType{
	RunStarted, RunCompleted, StepStarted, StepCompleted,
	CallWorkflowStarted, CallWorkflowCompleted,
	MessageUser, MessageAssistant, ToolCall, ToolResult,
}

// Known reports whether t belongs to the closed vocabulary.
func (t EventType) Known() bool {
	switch t {
	case RunStarted, RunCompleted, StepStarted, StepCompleted,
		CallWorkflowStarted, CallWorkflowCompleted,
		MessageUser, MessageAssistant, ToolCall, ToolResult:
		return true
	}
	return false
}

// BlockType names the kind of a ContentBlock. The set is closed.
type BlockType string

// The closed block vocabulary.
const (
	BlockText       BlockType = "text"
	BlockThinking   BlockType = "thinking"
	BlockToolUse    BlockType = "tool_use"
	BlockToolResult BlockType = "tool_result"
	BlockCommand    BlockType = "command"
	BlockStream     BlockType = "stream"
)

// BlockTypes lists the closed block vocabulary in schema order.
var BlockTypes = []BlockType{BlockText, BlockThinking, BlockToolUse, BlockToolResult, BlockCommand, BlockStream}

// Known reports whether t belongs to the closed vocabulary.
func (t BlockType) Known() bool {
	switch t {
	case BlockText, BlockThinking, BlockToolUse, BlockToolResult, BlockCommand, BlockStream:
		return true
	}
	return false
}

// Fidelity tells who observed a block or a tool invocation.
type Fidelity string

const (
	// FidelityRouter marks what reel itself synthesized: prompts it
	// composed and tool calls served by its own router.
	FidelityRouter Fidelity = "router"
	// FidelityAgentEmitted marks what an agent reported in its own stream.
	FidelityAgentEmitted Fidelity = "agent_emitted"
)

// Known reports whether f is one of the two fidelity values.
func (f Fidelity) Known() bool { return f == FidelityRouter || f == FidelityAgentEmitted }

// Step kinds recorded in StepPayload.Kind. A custom step type records its own
// name instead.
const (
	KindWorkflow     = "workflow"
	KindAgent        = "agent"
	KindCommand      = "command"
	KindOperation    = "operation"
	KindTerminal     = "terminal"
	KindParallel     = "parallel"
	KindForEach      = "for_each"
	KindWhile        = "while"
	KindCallWorkflow = "call_workflow"
)

// ExchangeEvent is one line of a transcript.
//
// Payload holds, by event type: *StepPayload (or nil) for run.*,
// *StepPayload for step.*, *MessagePayload for message.*, *ToolPayload for
// tool.*. A decoder that meets a payload of another shape follows the
// schema's probe order and may return []ContentBlock or, as a last resort,
// the payload's raw JSON as json.RawMessage.
type ExchangeEvent struct {
	Seq         uint64
	RunID       string
	ParentRunID string
	ChildRunID  string
	Type        EventType
	Path        string
	Iteration   int
	Timestamp   time.Time
	Payload     any
}

// Step returns the payload as a step payload, or nil.
func (e *ExchangeEvent) Step() *StepPayload {
	p, _ := e.Payload.(*StepPayload)
	return p
}

// Message returns the payload as a message payload, or nil.
func (e *ExchangeEvent) Message() *MessagePayload {
	p, _ := e.Payload.(*MessagePayload)
	return p
}

// Tool returns the payload as a tool payload, or nil.
func (e *ExchangeEvent) Tool() *ToolPayload {
	p, _ := e.Payload.(*ToolPayload)
	return p
}

// StepPayload is carried by run.* and step.* events.
//
// Result and the other free-form fields accept any value encoding/json can
// marshal; decoded transcripts hold them as json.RawMessage so that every
// byte round-trips exactly.
type StepPayload struct {
	Name string `json:"name"`
	Kind string `json:"kind"`
	// Command is the resolved shell command of a command step (step.started).
	Command string `json:"command,omitempty"`
	// Attempt is the 1-based retry attempt; 0 means the field is absent.
	// On run.started it counts the runs of the file: 2 for the first
	// resume of an interrupted, failed or cancelled run.
	Attempt int `json:"attempt,omitempty"`
	// Input is what a run was started with (run.started): reel writes a
	// RunInput, so that the run can be resumed or replayed from its
	// transcript alone.
	Input  any    `json:"input,omitempty"`
	Error  string `json:"error,omitempty"`
	Result any    `json:"result,omitempty"`
}

// MessagePayload is carried by message.user and message.assistant.
type MessagePayload struct {
	Role   string         `json:"role"`
	Blocks []ContentBlock `json:"blocks"`
}

// ToolPayload is carried by tool.call and tool.result.
type ToolPayload struct {
	Name     string   `json:"name"`
	CallID   string   `json:"call_id"`
	Input    any      `json:"input"`
	Output   any      `json:"output"`
	Error    string   `json:"error,omitempty"`
	Fidelity Fidelity `json:"fidelity"`
}

// ContentBlock is one typed piece of a message. Only the fields of its Type
// are written.
type ContentBlock struct {
	Type        BlockType `json:"type"`
	Fidelity    Fidelity  `json:"fidelity"`
	Text        string    `json:"text,omitempty"`
	Thinking    string    `json:"thinking,omitempty"`
	ToolName    string    `json:"tool_name,omitempty"`
	ToolID      string    `json:"tool_id,omitempty"`
	ToolInput   any       `json:"tool_input,omitempty"`
	ToolContent any       `json:"tool_content,omitempty"`
	Command     string    `json:"command,omitempty"`
	Chunk       string    `json:"chunk,omitempty"`
	// Raw holds the block's JSON as read when its type is outside the
	// vocabulary, so forward-compatible readers lose nothing. Never written.
	Raw json.RawMessage `json:"-"`
}

// Sentinel errors. Decoding errors wrap them so callers can use errors.Is.
var (
	// ErrUnknownEventType accompanies an event whose type is outside the
	// vocabulary. The event itself is returned intact: treat it as a warning.
	ErrUnknownEventType = errors.New("unknown event type")
	// ErrUnknownBlockType accompanies an event holding a block whose type is
	// outside the vocabulary. The event is returned intact.
	ErrUnknownBlockType = errors.New("unknown block type")
	// ErrMalformed marks a line that is not a valid transcript event.
	ErrMalformed = errors.New("malformed event")
	// ErrTornLine marks an incomplete final line: no trailing newline, as
	// left by a writer killed mid-write.
	ErrTornLine = errors.New("torn final line")
	// ErrLineTooLong marks a line over the configured line limit.
	ErrLineTooLong = errors.New("line exceeds limit")
	// ErrFileTooLarge marks a transcript over the configured file limit.
	ErrFileTooLarge = errors.New("transcript exceeds limit")
	// ErrInvalidEvent marks an event the strict writer refuses to encode.
	ErrInvalidEvent = errors.New("invalid event")
	// ErrClosed is returned by a closed recorder.
	ErrClosed = errors.New("recorder closed")
	// ErrLocked is returned when another recorder, in this process or
	// another, holds the transcript open for writing.
	ErrLocked = errors.New("transcript is being written by another recorder")
	// ErrEmpty is what readers report for a transcript without a single
	// line: not a run that recorded nothing, but a file whose run never
	// wrote run.started. (A Recorder removes such a file when it closes.)
	ErrEmpty = errors.New("empty transcript: no events")
)

// Default limits, for writers and readers alike.
const (
	DefaultMaxLineSize = 16 << 20
	DefaultMaxFileSize = 1 << 30
)

// Limits bound what a reader accepts and a recorder writes. A zero field
// means its default.
type Limits struct {
	MaxLineSize int
	MaxFileSize int64
}

func (l Limits) withDefaults() Limits {
	if l.MaxLineSize <= 0 {
		l.MaxLineSize = DefaultMaxLineSize
	}
	if l.MaxFileSize <= 0 {
		l.MaxFileSize = DefaultMaxFileSize
	}
	return l
}

// MarshalJSON encodes e in the canonical wire shape, refusing values outside
// the closed vocabularies.
func (e ExchangeEvent) MarshalJSON() ([]byte, error) {
	return AppendEvent(nil, &e)
}

// UnmarshalJSON decodes one event tolerantly. An unknown event or block type
// still fills e and returns an error matching ErrUnknownEventType or
// ErrUnknownBlockType.
func (e *ExchangeEvent) UnmarshalJSON(data []byte) error {
	ev, err := DecodeEvent(data)
	if err != nil && !errors.Is(err, ErrUnknownEventType) && !errors.Is(err, ErrUnknownBlockType) {
		return err
	}
	*e = ev
	return err
}

var _ json.Marshaler = ExchangeEvent{}
