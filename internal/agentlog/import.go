package agentlog

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/reelhq/reel/transcript"
)

// ImportResult is a trace converted to transcript events: run.started
// first, run.completed last, steps and tool pairs balanced. Seq and RunID
// are left for the recorder to fill.
type ImportResult struct {
	Events []transcript.ExchangeEvent
	// Warnings lists what could not be represented as events; the data
	// itself is kept in the step or run result under "agentlog".
	Warnings []string
}

// StepResult is the Result reel writes on an imported agent step: an
// AgentResult, plus what Shadow records that has no transcript event.
type StepResult struct {
	transcript.AgentResult
	Agentlog *Extras `json:"agentlog,omitempty"`
}

// RunResult is the Result of an imported run.completed.
type RunResult struct {
	transcript.RunResult
	Agentlog *Extras `json:"agentlog,omitempty"`
}

// Extras keeps Shadow records that have no transcript counterpart, raw.
type Extras struct {
	Metadata json.RawMessage `json:"metadata,omitempty"`
	// Sessions holds the later metadata records (session boundaries).
	Sessions      []json.RawMessage `json:"sessions,omitempty"`
	Errors        []json.RawMessage `json:"errors,omitempty"`
	HarnessEvents []json.RawMessage `json:"harness_events,omitempty"`
	Blobs         []json.RawMessage `json:"blobs,omitempty"`
	ReplaySummary []json.RawMessage `json:"replay_summaries,omitempty"`
	Unknown       []json.RawMessage `json:"unknown_records,omitempty"`
}

func (e *Extras) empty() bool {
	return e == nil || (len(e.Metadata) == 0 && len(e.Sessions) == 0 && len(e.Errors) == 0 && len(e.HarnessEvents) == 0 &&
		len(e.Blobs) == 0 && len(e.ReplaySummary) == 0 && len(e.Unknown) == 0)
}

type stepKey struct {
	path      string
	iteration int
	attempt   int
}

type openStep struct {
	key     stepKey
	name    string
	kind    string
	start   time.Time
	end     time.Time
	usage   transcript.Usage
	latency int64
	model   string
	output  string
	turns   int
	errs    []string
	extras  Extras
	final   *stepFinal
	calls   []openCall
	chunks  []transcript.ContentBlock
	chunkTS time.Time
}

type openCall struct {
	id, name string
}

type importer struct {
	res       ImportResult
	step      *openStep
	session   string
	sessions  int
	runExtras Extras
	runErrs   []string
	total     transcript.Usage
	failed    bool
	nextCall  int
	stepsMS   int64
}

var unsafePath = regexp.MustCompile(`[^A-Za-z0-9_-]+`)

// ToTranscript converts the records of one trace into transcript events.
// name is the run's name when the trace does not carry reel's workflow tag.
//
// Mapping: each session (the root metadata and every later metadata
// boundary) becomes one agent step named after its session tag; a trace
// reel exported keeps its own steps through the "reel" key of each
// record's meta. chat_request → message.user (the last user message as
// blocks[0], the system prompt as blocks[1]); chat_response →
// message.assistant (text, thinking, tool_use) and its usage and latency
// into the step's AgentResult; tool_call/tool_result → tool.call/
// tool.result; chunk records → a message.assistant of stream blocks;
// error records → the step's error; harness_event, blob_ref,
// replay_summary and unknown kinds → kept raw under "agentlog" in the step
// or run result.
func ToTranscript(recs []Record, name string) (*ImportResult, error) {
	if len(recs) == 0 {
		return nil, fmt.Errorf("empty trace")
	}
	im := &importer{}
	root := recs[0]
	t0, err := root.Time()
	if err != nil {
		return nil, err
	}
	var rootMeta recordMeta
	decodeMeta(root.Meta, &rootMeta)
	var md struct {
		Tags map[string]any `json:"tags"`
	}
	_ = json.Unmarshal(root.Payload, &md)
	if w, ok := md.Tags["reel.workflow"].(string); ok && w != "" {
		name = w
	} else if name == "" {
		name = rootMeta.SessionTag
	}
	if name == "" {
		name = "agentlog"
	}
	im.emit(t0, transcript.RunStarted, "", 0, &transcript.StepPayload{Name: name, Kind: transcript.KindWorkflow})
	last := t0
	for i := range recs {
		rec := &recs[i]
		ts, err := rec.Time()
		if err != nil {
			return nil, err
		}
		if ts.Before(last) {
			ts = last
		}
		last = ts
		if err := im.record(rec, ts); err != nil {
			return nil, fmt.Errorf("record %d (%s %s): %w", i+1, rec.Kind, rec.ID, err)
		}
	}
	im.closeStep(last, "trace ended")
	rr := RunResult{RunResult: transcript.RunResult{
		Status:     "success",
		DurationMS: max(last.Sub(t0).Milliseconds(), im.stepsMS),
		Usage:      im.total,
	}}
	if im.failed || len(im.runErrs) > 0 {
		rr.Status, rr.ExitCode = "failure", 1
	}
	if !im.runExtras.empty() {
		rr.Agentlog = &im.runExtras
	}
	im.emit(last, transcript.RunCompleted, "", 0, &transcript.StepPayload{
		Name: name, Kind: transcript.KindWorkflow, Error: strings.Join(im.runErrs, "; "), Result: rr,
	})
	return &im.res, nil
}

func decodeMeta(raw json.RawMessage, m *recordMeta) {
	if len(raw) > 0 {
		_ = json.Unmarshal(raw, m)
	}
}

func (im *importer) emit(ts time.Time, typ transcript.EventType, path string, iter int, payload any) {
	im.res.Events = append(im.res.Events, transcript.ExchangeEvent{
		Type: typ, Path: path, Iteration: iter, Timestamp: ts, Payload: payload,
	})
}

func (im *importer) warn(format string, args ...any) {
	im.res.Warnings = append(im.res.Warnings, fmt.Sprintf(format, args...))
}

func (im *importer) record(rec *Record, ts time.Time) error {
	var meta recordMeta
	decodeMeta(rec.Meta, &meta)
	switch rec.Kind {
	case KindMetadata:
		im.closeStep(ts, "session ended")
		im.sessions++
		base := unsafePath.ReplaceAllString(meta.SessionTag, "_")
		if base == "" {
			base = "session"
		}
		if im.sessions > 1 {
			base = fmt.Sprintf("%s_%d", base, im.sessions)
		}
		im.session = base
		if im.sessions == 1 {
			im.runExtras.Metadata = rec.Payload
		} else {
			im.runExtras.Sessions = append(im.runExtras.Sessions, recordJSON(rec))
		}
		return nil
	case KindReplaySummary:
		im.runExtras.ReplaySummary = append(im.runExtras.ReplaySummary, rec.Payload)
		return nil
	}
	if meta.Reel != nil && meta.Reel.Run {
		if rec.Kind == KindError {
			var p errorPayload
			if err := json.Unmarshal(rec.Payload, &p); err != nil {
				return fmt.Errorf("error payload: %w", err)
			}
			im.runErrs = append(im.runErrs, p.Message)
			return nil
		}
	}
	if !KnownKind(rec.Kind) {
		im.warn("record %s: unknown kind %q kept in the run result", rec.ID, rec.Kind)
		im.runExtras.Unknown = append(im.runExtras.Unknown, recordJSON(rec))
		return nil
	}
	st := im.stepFor(&meta, ts)
	if rec.Kind != KindChunk {
		im.flushChunks(st)
	}
	st.end = ts
	if meta.Reel != nil && meta.Reel.Final != nil {
		st.final = meta.Reel.Final
	}
	switch rec.Kind {
	case KindChatRequest:
		return im.chatRequest(st, rec, &meta, ts)
	case KindChatResponse:
		return im.chatResponse(st, rec, &meta, ts)
	case KindToolCall:
		var p toolCall
		if err := json.Unmarshal(rec.Payload, &p); err != nil {
			return fmt.Errorf("tool_call payload: %w", err)
		}
		id := p.ToolCallID
		if id == "" {
			im.nextCall++
			id = fmt.Sprintf("agentlog-call-%d", im.nextCall)
		}
		for i, c := range st.calls {
			if c.id == id {
				im.closeCall(st, i, ts, "the call id was reused")
				break
			}
		}
		st.calls = append(st.calls, openCall{id: id, name: p.ToolName})
		input := rawOrNil(p.Arguments)
		if meta.Reel != nil && meta.Reel.InputWrapped {
			var w struct {
				Input json.RawMessage `json:"input"`
			}
			if json.Unmarshal(p.Arguments, &w) == nil {
				input = rawOrNil(w.Input)
			}
		}
		im.emit(ts, transcript.ToolCall, st.key.path, st.key.iteration, &transcript.ToolPayload{
			Name: p.ToolName, CallID: id, Input: input, Fidelity: transcript.FidelityAgentEmitted,
		})
	case KindToolResult:
		var p toolResult
		if err := json.Unmarshal(rec.Payload, &p); err != nil {
			return fmt.Errorf("tool_result payload: %w", err)
		}
		idx := -1
		for i, c := range st.calls {
			if c.id == p.ToolCallID || p.ToolCallID == "" {
				idx = i
				break
			}
		}
		var call openCall
		if idx < 0 {
			// A result without its call: write the call so the pair balances.
			id := p.ToolCallID
			if id == "" {
				im.nextCall++
				id = fmt.Sprintf("agentlog-call-%d", im.nextCall)
			}
			im.warn("record %s: tool_result for %q has no tool_call; a call was added", rec.ID, id)
			call = openCall{id: id, name: "unknown"}
			im.emit(ts, transcript.ToolCall, st.key.path, st.key.iteration, &transcript.ToolPayload{
				Name: call.name, CallID: id, Fidelity: transcript.FidelityAgentEmitted,
			})
		} else {
			call = st.calls[idx]
			st.calls = append(st.calls[:idx], st.calls[idx+1:]...)
		}
		tp := &transcript.ToolPayload{Name: call.name, CallID: call.id, Output: rawOrNil(p.Output), Fidelity: transcript.FidelityAgentEmitted}
		if p.IsError {
			tp.Error = "tool error"
			if s, ok := jsonString(p.Output); ok && s != "" {
				tp.Error = s
			}
		}
		if r := meta.Reel; r != nil {
			if r.ToolError != "" {
				tp.Error = r.ToolError
			}
			if r.OutputNull {
				tp.Output = nil
			}
		}
		st.latency += int64(p.LatencyMS)
		im.emit(ts, transcript.ToolResult, st.key.path, st.key.iteration, tp)
	case KindError:
		var p errorPayload
		if err := json.Unmarshal(rec.Payload, &p); err != nil {
			return fmt.Errorf("error payload: %w", err)
		}
		msg := p.Message
		if p.Code != "" && meta.Reel == nil {
			msg = p.Code + ": " + msg
		}
		if p.Source != "" && meta.Reel == nil {
			msg = p.Source + " " + msg
		}
		st.errs = append(st.errs, msg)
		if meta.Reel == nil {
			st.extras.Errors = append(st.extras.Errors, rec.Payload)
		}
	case KindChunk:
		var p chunkPayload
		if err := json.Unmarshal(rec.Payload, &p); err != nil {
			return fmt.Errorf("chunk payload: %w", err)
		}
		if len(st.chunks) == 0 {
			st.chunkTS = ts
		}
		delta := "null"
		if len(p.Delta) > 0 {
			if c, err := Canonical(p.Delta); err == nil {
				delta = string(c)
			}
		}
		st.chunks = append(st.chunks, transcript.ContentBlock{
			Type: transcript.BlockStream, Fidelity: transcript.FidelityAgentEmitted, Chunk: delta,
		})
	case KindHarnessEvent:
		st.extras.HarnessEvents = append(st.extras.HarnessEvents, rec.Payload)
	case KindBlobRef:
		st.extras.Blobs = append(st.extras.Blobs, rec.Payload)
	}
	return nil
}

func recordJSON(rec *Record) json.RawMessage {
	b, err := AppendRecord(nil, rec)
	if err != nil {
		return rec.Payload
	}
	return b
}

func rawOrNil(raw json.RawMessage) any {
	if len(raw) == 0 {
		return nil
	}
	return raw
}

// stepFor returns the step a record belongs to, opening it (and closing
// the previous one) when the record starts a new one.
func (im *importer) stepFor(meta *recordMeta, ts time.Time) *openStep {
	key := stepKey{path: im.session}
	name, kind := im.session, transcript.KindAgent
	if key.path == "" {
		key.path, name = "session", "session"
	}
	if r := meta.Reel; r != nil && r.Path != "" {
		key = stepKey{path: r.Path, iteration: max(r.Iteration, 0), attempt: max(r.Attempt, 0)}
		name, kind = r.Step, r.Kind
		if name == "" {
			name = r.Path
		}
		if kind == "" {
			kind = transcript.KindAgent
		}
	}
	if im.step != nil && im.step.key == key {
		return im.step
	}
	im.closeStep(ts, "step ended")
	im.step = &openStep{key: key, name: name, kind: kind, start: ts, end: ts}
	im.emit(ts, transcript.StepStarted, key.path, key.iteration, &transcript.StepPayload{Name: name, Kind: kind, Attempt: key.attempt})
	return im.step
}

func (im *importer) flushChunks(st *openStep) {
	if len(st.chunks) == 0 {
		return
	}
	im.emit(st.chunkTS, transcript.MessageAssistant, st.key.path, st.key.iteration, &transcript.MessagePayload{Role: "assistant", Blocks: st.chunks})
	st.chunks = nil
}

func (im *importer) closeCall(st *openStep, i int, ts time.Time, reason string) {
	c := st.calls[i]
	st.calls = append(st.calls[:i], st.calls[i+1:]...)
	im.emit(ts, transcript.ToolResult, st.key.path, st.key.iteration, &transcript.ToolPayload{
		Name: c.name, CallID: c.id, Error: "no result: " + reason, Fidelity: transcript.FidelityAgentEmitted,
	})
}

func (im *importer) closeStep(ts time.Time, reason string) {
	st := im.step
	if st == nil {
		return
	}
	im.step = nil
	im.flushChunks(st)
	if ts.Before(st.end) {
		ts = st.end
	}
	for len(st.calls) > 0 {
		im.closeCall(st, 0, ts, reason)
	}
	p := &transcript.StepPayload{Name: st.name, Kind: st.kind, Attempt: st.key.attempt, Error: strings.Join(st.errs, "; ")}
	if st.final != nil {
		p.Error = st.final.Error
		if len(st.final.Result) > 0 {
			p.Result = st.final.Result
		}
		var ar transcript.AgentResult
		if transcript.DecodeResult(st.final.Result, &ar) == nil {
			im.total.Add(ar.Usage)
		}
	} else if st.kind == transcript.KindAgent {
		// Shadow's timestamps are often written in one burst after the
		// fact; the recorded latencies are then the better measure.
		dur := max(st.end.Sub(st.start).Milliseconds(), st.latency)
		im.stepsMS += dur
		res := StepResult{AgentResult: transcript.AgentResult{
			Output: st.output, Model: st.model, Usage: st.usage, DurationMS: dur, Turns: st.turns,
		}}
		if !st.extras.empty() {
			res.Agentlog = &st.extras
		}
		p.Result = res
		im.total.Add(st.usage)
	} else if !st.extras.empty() {
		p.Result = map[string]any{"agentlog": &st.extras}
	}
	if p.Error != "" {
		im.failed = true
	}
	im.emit(ts, transcript.StepCompleted, st.key.path, st.key.iteration, p)
}

func (im *importer) chatRequest(st *openStep, rec *Record, meta *recordMeta, ts time.Time) error {
	var p chatRequest
	if err := json.Unmarshal(rec.Payload, &p); err != nil {
		return fmt.Errorf("chat_request payload: %w", err)
	}
	if p.Model != "" {
		st.model = p.Model
	}
	if meta.Reel != nil && len(meta.Reel.Blocks) > 0 {
		if blocks, ok := exactBlocks(meta.Reel.Blocks); ok {
			im.emit(ts, transcript.MessageUser, st.key.path, st.key.iteration, &transcript.MessagePayload{Role: "user", Blocks: blocks})
			return nil
		}
	}
	var prompt, system string
	var haveSystem bool
	for _, m := range p.Messages {
		switch m.Role {
		case "system":
			if !haveSystem {
				system, haveSystem = contentText(m.Content), true
			}
		case "user":
			prompt = contentText(m.Content)
		}
	}
	blocks := []transcript.ContentBlock{{Type: transcript.BlockText, Fidelity: transcript.FidelityRouter, Text: prompt}}
	if system != "" {
		blocks = append(blocks, transcript.ContentBlock{Type: transcript.BlockText, Fidelity: transcript.FidelityRouter, Text: system})
	}
	im.emit(ts, transcript.MessageUser, st.key.path, st.key.iteration, &transcript.MessagePayload{Role: "user", Blocks: blocks})
	return nil
}

// contentText flattens a message's content: a string, or a list of parts
// whose text parts are joined.
func contentText(raw json.RawMessage) string {
	if s, ok := jsonString(raw); ok {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		if len(raw) == 0 || string(raw) == "null" {
			return ""
		}
		return string(raw)
	}
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

func (im *importer) chatResponse(st *openStep, rec *Record, meta *recordMeta, ts time.Time) error {
	var p chatResponse
	if err := json.Unmarshal(rec.Payload, &p); err != nil {
		return fmt.Errorf("chat_response payload: %w", err)
	}
	if p.Model != "" {
		st.model = p.Model
	}
	if p.Usage != nil {
		st.usage.Add(p.Usage.toReel())
	}
	st.latency += int64(p.LatencyMS)
	if meta.Reel != nil && meta.Reel.Synthetic {
		return nil
	}
	st.turns++
	var blocks []transcript.ContentBlock
	if meta.Reel != nil && len(meta.Reel.Blocks) > 0 {
		blocks, _ = exactBlocks(meta.Reel.Blocks)
	}
	if blocks == nil {
		blocks = make([]transcript.ContentBlock, 0, len(p.Content))
		for _, b := range p.Content {
			switch b.Type {
			case "text":
				blocks = append(blocks, transcript.ContentBlock{Type: transcript.BlockText, Fidelity: transcript.FidelityAgentEmitted, Text: b.Text})
			case "thinking":
				t := b.Text
				if t == "" {
					t = b.Thinking
				}
				blocks = append(blocks, transcript.ContentBlock{Type: transcript.BlockThinking, Fidelity: transcript.FidelityAgentEmitted, Thinking: t})
			case "tool_use":
				blocks = append(blocks, transcript.ContentBlock{Type: transcript.BlockToolUse, Fidelity: transcript.FidelityAgentEmitted,
					ToolName: b.Name, ToolID: b.ID, ToolInput: rawOrNil(b.Input)})
			default:
				im.warn("record %s: content block type %q kept as text", rec.ID, b.Type)
				raw, _ := json.Marshal(b)
				blocks = append(blocks, transcript.ContentBlock{Type: transcript.BlockText, Fidelity: transcript.FidelityAgentEmitted, Text: string(raw)})
			}
		}
	}
	var text strings.Builder
	for _, b := range blocks {
		if b.Type == transcript.BlockText {
			text.WriteString(b.Text)
		}
	}
	if text.Len() > 0 {
		st.output = text.String()
	}
	im.emit(ts, transcript.MessageAssistant, st.key.path, st.key.iteration, &transcript.MessagePayload{Role: "assistant", Blocks: blocks})
	return nil
}

// exactBlocks decodes the blocks reel kept in meta, refusing any the strict
// transcript writer would.
func exactBlocks(raw json.RawMessage) ([]transcript.ContentBlock, bool) {
	var blocks []transcript.ContentBlock
	if err := json.Unmarshal(raw, &blocks); err != nil {
		return nil, false
	}
	for _, b := range blocks {
		if !b.Type.Known() || !b.Fidelity.Known() {
			return nil, false
		}
	}
	return blocks, true
}
