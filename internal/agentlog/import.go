package agentlog

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/reelhq/reel/internal/rawjson"
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

// Extras keeps Shadow records that have no transcript counterpart, raw,
// and the trace as imported (Trace), so it exports back unchanged.
type Extras struct {
	Metadata json.RawMessage `json:"metadata,omitempty"`
	// Sessions holds the later metadata records (session boundaries).
	Sessions      []json.RawMessage `json:"sessions,omitempty"`
	Errors        []json.RawMessage `json:"errors,omitempty"`
	HarnessEvents []json.RawMessage `json:"harness_events,omitempty"`
	Blobs         []json.RawMessage `json:"blobs,omitempty"`
	ReplaySummary []json.RawMessage `json:"replay_summaries,omitempty"`
	Unknown       []json.RawMessage `json:"unknown_records,omitempty"`
	Trace         *Trace            `json:"trace,omitempty"`
}

func (e *Extras) empty() bool {
	return e == nil || (len(e.Metadata) == 0 && len(e.Sessions) == 0 && len(e.Errors) == 0 && len(e.HarnessEvents) == 0 &&
		len(e.Blobs) == 0 && len(e.ReplaySummary) == 0 && len(e.Unknown) == 0 && e.Trace == nil)
}

// keep adds a source record to the extras' trace.
func (e *Extras) keep(src SourceRecord) {
	if e.Trace == nil {
		e.Trace = &Trace{}
	}
	e.Trace.Records = append(e.Trace.Records, src)
}

func (e *Extras) synthetic(call bool, id string) {
	if e.Trace == nil {
		e.Trace = &Trace{}
	}
	if call {
		e.Trace.SyntheticCalls = append(e.Trace.SyntheticCalls, id)
	} else {
		e.Trace.SyntheticResults = append(e.Trace.SyntheticResults, id)
	}
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
	// uses are tool_use blocks of responses whose tool_call the trace has
	// not recorded (yet).
	uses []openCall
}

type openCall struct {
	id, name string
	input    any
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

	// src is the record being imported; d is what its event gives back
	// (set by the handler that emits it), and owner the step it belongs to.
	src   SourceRecord
	d     derived
	owner *openStep
	// prevMessages are the last request's messages, which the next one
	// usually repeats.
	prevMessages []json.RawMessage
}

var unsafePath = regexp.MustCompile(`[^A-Za-z0-9_-]+`)

// ToTranscript converts the records of one trace into transcript events.
// name is the run's name when the trace does not carry reel's workflow tag.
//
// Mapping: each session (the root metadata and every later metadata
// boundary) becomes one agent step named after its session tag; a trace
// reel exported keeps its own steps through the "reel" key of each
// record's meta. chat_request → message.user (what the request adds to the
// conversation: the new user text as blocks[0], the system prompt as
// blocks[1], tool results as tool_result blocks); chat_response →
// message.assistant (text, thinking, tool_use) and its usage and latency
// into the step's AgentResult; tool_call/tool_result → tool.call/
// tool.result; a tool_use whose call the trace does not record gets its
// pair too, its result taken from the next request's tool messages;
// chunk records → a message.assistant of stream blocks; error records →
// the step's error; harness_event, blob_ref, replay_summary and unknown
// kinds → kept raw under "agentlog" in the step or run result. Every
// record is also kept under agentlog.trace (see Trace) so FromTranscript
// gives the same records back.
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
		if err := im.record(i, rec, ts); err != nil {
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

// record imports one record and keeps its source record.
func (im *importer) record(i int, rec *Record, ts time.Time) error {
	im.src = SourceRecord{Index: i, ID: rec.ID, Kind: rec.Kind, TS: rec.TS, Parent: rec.Parent, Meta: rec.Meta}
	if rec.Version != Version {
		im.src.Version = rec.Version
	}
	im.d, im.owner = nil, nil
	if err := im.dispatch(rec, ts); err != nil {
		return err
	}
	src := im.src
	src.Event = im.d != nil
	if err := src.diff(rec.Payload, im.d); err != nil {
		return err
	}
	if rec.Kind == KindChatRequest {
		src.shareMessages(im.prevMessages)
		im.prevMessages = requestMessagesOf(rec.Payload)
	}
	if im.owner != nil {
		im.owner.extras.keep(src)
	} else {
		im.runExtras.keep(src)
	}
	return nil
}

// derive notes the payload the record's event gives back.
func (im *importer) derive(d derived, err error) error {
	if err != nil {
		return fmt.Errorf("%s: %w", im.src.Kind, err)
	}
	im.d = d
	return nil
}

func (im *importer) dispatch(rec *Record, ts time.Time) error {
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
	im.owner = st
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
		return im.toolCall(st, rec, &meta, ts)
	case KindToolResult:
		return im.toolResult(st, rec, &meta, ts)
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
		b := transcript.ContentBlock{Type: transcript.BlockStream, Fidelity: transcript.FidelityAgentEmitted, Chunk: delta}
		st.chunks = append(st.chunks, b)
		return im.derive(chunkDelta(b))
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
	im.openUses(st, ts)
	for len(st.calls) > 0 {
		im.closeCall(st, 0, ts, reason)
	}
	p := &transcript.StepPayload{Name: st.name, Kind: st.kind, Attempt: st.key.attempt, Error: strings.Join(st.errs, "; ")}
	if st.final != nil {
		p.Error = st.final.Error
		p.Result = withExtras(st.final.Result, &st.extras)
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

// withExtras returns the exact step result a reel export carried, with the
// import's extras added under "agentlog" when the result is an object.
func withExtras(result json.RawMessage, ex *Extras) any {
	if len(result) == 0 {
		if ex.empty() {
			return nil
		}
		return map[string]any{"agentlog": ex}
	}
	if ex.empty() {
		return result
	}
	return resultWithExtras{result: result, extras: ex}
}

// resultWithExtras marshals as result with the member "agentlog": extras
// added (replacing one it has), spliced into the raw object rather than
// decoded and encoded again.
type resultWithExtras struct {
	result json.RawMessage
	extras *Extras
}

func (r resultWithExtras) MarshalJSON() ([]byte, error) {
	ex, err := json.Marshal(r.extras)
	if err != nil {
		return nil, err
	}
	obj := bytes.TrimSpace(r.result)
	if len(obj) < 2 || obj[0] != '{' {
		return r.result, nil
	}
	var kept [][]byte
	err = rawjson.Each(obj, func(k, v []byte) bool {
		if string(k) != "agentlog" {
			kept = append(kept, append(append(append([]byte(`"`), k...), `":`...), v...))
		}
		return true
	})
	if err != nil {
		return nil, err
	}
	kept = append(kept, append([]byte(`"agentlog":`), ex...))
	return append(append([]byte{'{'}, bytes.Join(kept, []byte{','})...), '}'), nil
}
