package agentlog

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	"github.com/reelhq/reel/transcript"
)

// ExportOptions tune FromTranscript.
type ExportOptions struct {
	// SDKVersion is written as metadata.sdk.version (reel's version).
	SDKVersion string
}

type execInfo struct {
	started   *transcript.ExchangeEvent
	completed *transcript.ExchangeEvent
	lastIdx   int // index of the step's last exchange event, -1 if none
	lastAsst  int // index of its last message.assistant, -1 if none
	emitted   bool
}

type execKey struct {
	path string
	iter int
}

// FromTranscript converts the events of one run into the records of one
// trace. A run ToTranscript imported is written back as the records it
// came from (see Trace); any other run as follows. The root metadata record carries sdk {name: reel}, and the tags
// reel.run_id and reel.workflow; every other record's meta carries the
// session tag and a "reel" object (path, iteration, attempt, step, kind)
// that Shadow ignores and ToTranscript uses to rebuild the same steps.
//
// message.user → chat_request (system prompt and prompt as messages);
// message.assistant → chat_response (text, thinking and tool_use blocks;
// stop_reason tool_use or end_turn; latency since the previous record of
// the step); the step's usage goes on its last chat_response; tool.call →
// tool_call; tool.result → tool_result (is_error, latency since its call);
// a failed step or run → an error record.
func FromTranscript(events []transcript.ExchangeEvent, opts ExportOptions) ([]Record, error) {
	if len(events) == 0 {
		return nil, fmt.Errorf("export agentlog: no events")
	}
	if events[0].Type != transcript.RunStarted {
		return nil, fmt.Errorf("export agentlog: transcript does not start with run.started")
	}
	// A run imported from a trace goes back as that trace.
	if recs, ok, err := fromSource(events); err != nil {
		return nil, fmt.Errorf("export agentlog: %w", err)
	} else if ok {
		return recs, nil
	}
	workflow := ""
	if sp := events[0].Step(); sp != nil {
		workflow = sp.Name
	}
	execs, owner := tieExecs(events)
	x := &exporter{b: NewBuilder(), tag: workflow, execs: execs, owner: owner,
		lastTS: map[int]time.Time{}, callTS: map[string]time.Time{}}
	if err := x.metadata(&events[0], workflow, opts.SDKVersion); err != nil {
		return nil, err
	}
	for i := range events {
		if err := x.event(i, &events[i]); err != nil {
			return nil, err
		}
	}
	return x.b.Records(), nil
}

// tieExecs ties every exchange event to its step execution: owner[i] is
// the index in execs of the execution event i belongs to, -1 for none.
func tieExecs(events []transcript.ExchangeEvent) (execs []*execInfo, owner []int) {
	owner = make([]int, len(events))
	open := map[execKey]int{}
	for i := range events {
		e := &events[i]
		owner[i] = -1
		k := execKey{e.Path, e.Iteration}
		switch e.Type {
		case transcript.StepStarted:
			execs = append(execs, &execInfo{started: e, lastIdx: -1, lastAsst: -1})
			open[k] = len(execs) - 1
			owner[i] = len(execs) - 1
		case transcript.StepCompleted:
			if x, ok := open[k]; ok {
				execs[x].completed = e
				owner[i] = x
				delete(open, k)
			}
		case transcript.MessageUser, transcript.MessageAssistant, transcript.ToolCall, transcript.ToolResult:
			x, ok := open[k]
			if !ok {
				// An exchange outside any step: give it a step of its own.
				execs = append(execs, &execInfo{lastIdx: -1, lastAsst: -1})
				x = len(execs) - 1
				open[k] = x
			}
			owner[i] = x
			execs[x].lastIdx = i
			if e.Type == transcript.MessageAssistant {
				execs[x].lastAsst = i
			}
		}
	}
	return execs, owner
}

// exporter writes the records of one run's events, in order.
type exporter struct {
	b      *Builder
	tag    string // the session tag: the workflow's name
	execs  []*execInfo
	owner  []int                // event index -> index in execs, -1 for none
	lastTS map[int]time.Time    // exec -> time of its previous record
	callTS map[string]time.Time // call id -> time of its tool_call
}

// metadata writes the root metadata record: reel as the SDK, and the run's
// ids and workflow as tags.
func (x *exporter) metadata(first *transcript.ExchangeEvent, workflow, version string) error {
	tags := map[string]string{"reel.run_id": first.RunID}
	if workflow != "" {
		tags["reel.workflow"] = workflow
	}
	if p := first.ParentRunID; p != "" {
		tags["reel.parent_run_id"] = p
	}
	if version == "" {
		version = "dev"
	}
	rootMeta := map[string]any{}
	if x.tag != "" {
		rootMeta["session_tag"] = x.tag
	}
	_, err := x.b.Add(KindMetadata, first.Timestamp, map[string]any{
		"sdk":  map[string]string{"name": "reel", "version": version},
		"tags": tags,
	}, rootMeta)
	return err
}

// event writes the records event i stands for, if any.
func (x *exporter) event(i int, e *transcript.ExchangeEvent) error {
	switch e.Type {
	case transcript.MessageUser, transcript.MessageAssistant, transcript.ToolCall, transcript.ToolResult:
		return x.exchange(i, e)
	case transcript.StepCompleted:
		if xi := x.owner[i]; xi >= 0 {
			return x.stepEnd(xi, e)
		}
	case transcript.RunCompleted:
		if sp := e.Step(); sp != nil && sp.Error != "" {
			_, err := x.b.Add(KindError, e.Timestamp, errorPayload{Source: "sdk", Code: "run_failed", Message: sp.Error},
				recordMeta{SessionTag: x.tag, Reel: &reelMeta{Path: "", Run: true}})
			return err
		}
	}
	return nil
}

// exchange writes a message or tool event as its chat or tool record.
func (x *exporter) exchange(i int, e *transcript.ExchangeEvent) error {
	xi := x.owner[i]
	ex := x.execs[xi]
	rm := stepMeta(ex, e)
	if i == ex.lastIdx && ex.completed != nil {
		rm.Final = finalOf(ex.completed)
	}
	meta := recordMeta{SessionTag: x.tag, Reel: rm}
	model, _ := stepModel(ex)
	var err error
	switch e.Type {
	case transcript.MessageUser:
		err = exportUser(x.b, e, model, &meta)
	case transcript.MessageAssistant:
		var u *transcript.Usage
		if i == ex.lastAsst {
			u = stepUsage(ex)
		}
		prev, ok := x.lastTS[xi]
		if !ok {
			prev = e.Timestamp
		}
		err = exportAssistant(x.b, e, model, u, e.Timestamp.Sub(prev).Milliseconds(), &meta)
	case transcript.ToolCall, transcript.ToolResult:
		tp := e.Tool()
		if tp == nil {
			return fmt.Errorf("export agentlog: event %d: %s without a tool payload", e.Seq, e.Type)
		}
		err = x.tool(e, tp, &meta)
	}
	if err != nil {
		return fmt.Errorf("export agentlog: event %d (%s): %w", e.Seq, e.Type, err)
	}
	ex.emitted = true
	x.lastTS[xi] = e.Timestamp
	return nil
}

// tool writes a tool.call as a tool_call record, a tool.result as a
// tool_result with its latency since the call.
func (x *exporter) tool(e *transcript.ExchangeEvent, tp *transcript.ToolPayload, meta *recordMeta) error {
	meta.Reel.Fidelity = routerOnly(tp.Fidelity)
	if e.Type == transcript.ToolCall {
		x.callTS[tp.CallID] = e.Timestamp
		meta.Reel.InputWrapped = !isObject(tp.Input)
		_, err := x.b.Add(KindToolCall, e.Timestamp, toolCall{ToolName: tp.Name, ToolCallID: tp.CallID, Arguments: arguments(tp.Input)}, *meta)
		return err
	}
	var lat int64
	if t, ok := x.callTS[tp.CallID]; ok {
		lat = e.Timestamp.Sub(t).Milliseconds()
	}
	out, null := toolOutput(tp)
	meta.Reel.ToolError = tp.Error
	meta.Reel.OutputNull = null
	_, err := x.b.Add(KindToolResult, e.Timestamp, toolResult{ToolCallID: tp.CallID, Output: out, IsError: tp.Error != "", LatencyMS: float64(lat)}, *meta)
	return err
}

func stepMeta(ex *execInfo, e *transcript.ExchangeEvent) *reelMeta {
	rm := &reelMeta{Path: e.Path, Iteration: e.Iteration, Kind: transcript.KindAgent, Step: e.Path}
	if ex.started != nil {
		if sp := ex.started.Step(); sp != nil {
			rm.Step, rm.Kind, rm.Attempt = sp.Name, sp.Kind, sp.Attempt
		}
	}
	return rm
}

func finalOf(completed *transcript.ExchangeEvent) *stepFinal {
	sp := completed.Step()
	if sp == nil {
		return &stepFinal{}
	}
	f := &stepFinal{Error: sp.Error}
	if sp.Result != nil {
		if raw, err := json.Marshal(sp.Result); err == nil && string(raw) != "null" {
			f.Result = raw
		}
	}
	return f
}

func stepModel(ex *execInfo) (string, string) {
	if ex.completed == nil {
		return "", ""
	}
	var ar transcript.AgentResult
	if sp := ex.completed.Step(); sp != nil && transcript.DecodeResult(sp.Result, &ar) == nil {
		return ar.Model, ar.Provider
	}
	return "", ""
}

func stepUsage(ex *execInfo) *transcript.Usage {
	u := &transcript.Usage{}
	if ex.completed == nil {
		return u
	}
	var ar transcript.AgentResult
	if sp := ex.completed.Step(); sp != nil && transcript.DecodeResult(sp.Result, &ar) == nil {
		*u = ar.Usage
	}
	return u
}

// stepEnd writes what a step's end needs: an error record for a
// failed step, and for an agent step that has no reply but consumed
// tokens, a synthetic chat_response carrying its usage.
func (x *exporter) stepEnd(xi int, e *transcript.ExchangeEvent) error {
	ex := x.execs[xi]
	sp := e.Step()
	if sp == nil {
		return nil
	}
	rm := &reelMeta{Path: e.Path, Iteration: e.Iteration, Step: sp.Name, Kind: sp.Kind, Attempt: sp.Attempt}
	if ex.started != nil {
		if s := ex.started.Step(); s != nil {
			rm.Attempt = s.Attempt
		}
	}
	if ex.lastAsst < 0 && sp.Kind == transcript.KindAgent {
		u := stepUsage(ex)
		if *u != (transcript.Usage{}) {
			model, _ := stepModel(ex)
			rm.Synthetic = true
			rm.Final = finalOf(e)
			su := usageFromReel(*u)
			if _, err := x.b.Add(KindChatResponse, e.Timestamp, chatResponse{Model: model, Content: []contentBlock{}, StopReason: "end_turn", Usage: &su},
				recordMeta{SessionTag: x.tag, Reel: rm}); err != nil {
				return err
			}
			ex.emitted = true
			x.lastTS[xi] = e.Timestamp
			if sp.Error == "" {
				return nil
			}
			rm = &reelMeta{Path: rm.Path, Iteration: rm.Iteration, Step: rm.Step, Kind: rm.Kind, Attempt: rm.Attempt}
		}
	}
	if sp.Error == "" {
		return nil
	}
	source := "sdk"
	if sp.Kind == transcript.KindAgent {
		source = "llm"
	}
	if rm.Final == nil && !ex.emitted {
		rm.Final = finalOf(e)
	}
	_, err := x.b.Add(KindError, e.Timestamp, errorPayload{Source: source, Code: "step_failed", Message: sp.Error}, recordMeta{SessionTag: x.tag, Reel: rm})
	return err
}

func exportUser(b *Builder, e *transcript.ExchangeEvent, model string, meta *recordMeta) error {
	mp := e.Message()
	if mp == nil {
		return fmt.Errorf("message.user without a message payload")
	}
	msgs, standard := requestMessages(mp)
	if !standard {
		raw, err := json.Marshal(mp.Blocks)
		if err != nil {
			return err
		}
		meta.Reel.Blocks = raw
	}
	_, err := b.Add(KindChatRequest, e.Timestamp, chatRequest{Model: model, Messages: msgs, Tools: json.RawMessage("[]"), Params: json.RawMessage("{}")}, meta)
	return err
}

// requestMessages renders a message.user as a request's messages: the
// system prompt (blocks[1]) and the prompt (blocks[0]). standard is false
// when the blocks are more than that (other block types or fidelities, more
// blocks), so the exact blocks must travel in meta.
func requestMessages(mp *transcript.MessagePayload) (msgs []message, standard bool) {
	standard = len(mp.Blocks) >= 1 && len(mp.Blocks) <= 2
	for _, bl := range mp.Blocks {
		if bl.Type != transcript.BlockText || bl.Fidelity != transcript.FidelityRouter {
			standard = false
		}
	}
	if len(mp.Blocks) > 1 {
		msgs = append(msgs, message{Role: "system", Content: mustJSON(mp.Blocks[1].Text)})
	}
	prompt := ""
	if len(mp.Blocks) > 0 {
		prompt = blockText(mp.Blocks[0])
	}
	return append(msgs, message{Role: "user", Content: mustJSON(prompt)}), standard
}

func blockText(bl transcript.ContentBlock) string {
	switch bl.Type {
	case transcript.BlockThinking:
		return bl.Thinking
	case transcript.BlockCommand:
		return bl.Command
	case transcript.BlockStream:
		return bl.Chunk
	}
	return bl.Text
}

func exportAssistant(b *Builder, e *transcript.ExchangeEvent, model string, u *transcript.Usage, latency int64, meta *recordMeta) error {
	mp := e.Message()
	if mp == nil {
		return fmt.Errorf("message.assistant without a message payload")
	}
	content, stop, standard := responseContent(mp)
	if !standard {
		raw, err := json.Marshal(mp.Blocks)
		if err != nil {
			return err
		}
		meta.Reel.Blocks = raw
	}
	su := usage{}
	if u != nil {
		su = usageFromReel(*u)
	}
	if latency < 0 {
		latency = 0
	}
	_, err := b.Add(KindChatResponse, e.Timestamp, chatResponse{Model: model, Content: content, StopReason: stop, LatencyMS: float64(latency), Usage: &su}, meta)
	return err
}

// responseContent renders a message.assistant as a response's content
// blocks and stop reason (tool_use when it holds a tool_use, else
// end_turn). standard is false when Shadow's block shapes cannot hold the
// blocks exactly (command or stream blocks, router fidelity, a tool input
// that is not an object).
func responseContent(mp *transcript.MessagePayload) (content []contentBlock, stop string, standard bool) {
	content = make([]contentBlock, 0, len(mp.Blocks))
	standard = true
	stop = "end_turn"
	for _, bl := range mp.Blocks {
		if bl.Fidelity != transcript.FidelityAgentEmitted {
			standard = false
		}
		switch bl.Type {
		case transcript.BlockText:
			content = append(content, contentBlock{Type: "text", Text: bl.Text})
		case transcript.BlockThinking:
			content = append(content, contentBlock{Type: "thinking", Text: bl.Thinking})
		case transcript.BlockToolUse:
			content = append(content, contentBlock{Type: "tool_use", ID: bl.ToolID, Name: bl.ToolName, Input: arguments(bl.ToolInput)})
			stop = "tool_use"
			if !isObject(bl.ToolInput) {
				standard = false
			}
		case transcript.BlockCommand:
			content = append(content, contentBlock{Type: "text", Text: "$ " + bl.Command})
			standard = false
		default:
			content = append(content, contentBlock{Type: "text", Text: blockText(bl)})
			standard = false
		}
	}
	return content, stop, standard
}

// routerOnly returns f when it is not the agent's own report, the
// fidelity an agentlog record otherwise implies.
func routerOnly(f transcript.Fidelity) transcript.Fidelity {
	if f == transcript.FidelityAgentEmitted {
		return ""
	}
	return f
}

// arguments renders a tool input as Shadow's arguments object; a value
// that is not an object is wrapped as {"input": value}.
func arguments(v any) json.RawMessage {
	raw, err := json.Marshal(v)
	if err != nil || string(raw) == "null" {
		return json.RawMessage("{}")
	}
	if len(raw) > 0 && raw[0] == '{' {
		return raw
	}
	w, _ := json.Marshal(map[string]json.RawMessage{"input": raw})
	return w
}

// isObject reports whether v encodes as a JSON object (or is absent).
func isObject(v any) bool {
	raw, err := json.Marshal(v)
	if err != nil {
		return false
	}
	raw = bytes.TrimSpace(raw)
	return string(raw) == "null" || (len(raw) > 0 && raw[0] == '{')
}

// toolOutput renders a tool result's output; a null output of a failed
// call carries the error text, since Shadow expects a string or object.
func toolOutput(tp *transcript.ToolPayload) (json.RawMessage, bool) {
	raw, err := json.Marshal(tp.Output)
	if err != nil || string(raw) == "null" {
		return mustJSON(tp.Error), true
	}
	return raw, false
}

func mustJSON(s string) json.RawMessage {
	raw, _ := json.Marshal(s)
	return raw
}
