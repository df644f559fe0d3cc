package flowstudio

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/reelhq/reel/internal/safefile"
	"github.com/reelhq/reel/transcript"
)

// Receipt is a step receipt. Fields beyond the schema page are kept.
type Receipt struct {
	Engine            string          `json:"engine"`
	Mode              string          `json:"mode,omitempty"`
	Provider          string          `json:"provider,omitempty"`
	Model             string          `json:"model"`
	StepID            string          `json:"step_id"`
	FlowKey           string          `json:"flow_key"`
	RunID             string          `json:"run_id"`
	AgentKey          string          `json:"agent_key"`
	StartedAt         string          `json:"started_at"`
	CompletedAt       string          `json:"completed_at"`
	DurationMS        int64           `json:"duration_ms"`
	Status            string          `json:"status"`
	Tokens            Tokens          `json:"tokens"`
	TranscriptPath    string          `json:"transcript_path"`
	Error             json.RawMessage `json:"error,omitempty"`
	ToolsAllowed      json.RawMessage `json:"tools_allowed,omitempty"`
	ContextTruncation json.RawMessage `json:"context_truncation,omitempty"`
	Routing           json.RawMessage `json:"routing,omitempty"`
	Reel              *ReelInfo       `json:"reel,omitempty"`
}

// Tokens is a receipt's token usage.
type Tokens struct {
	Prompt     int64 `json:"prompt"`
	Completion int64 `json:"completion"`
	Total      int64 `json:"total"`
}

// ReelInfo is what reel adds to receipts and step events so its own
// exports import back into the same steps. Flow Studio ignores it.
type ReelInfo struct {
	RunID     string          `json:"run_id,omitempty"`
	Path      string          `json:"path"`
	Iteration int             `json:"iteration"`
	Attempt   int             `json:"attempt,omitempty"`
	Kind      string          `json:"kind,omitempty"`
	Name      string          `json:"name,omitempty"`
	Command   string          `json:"command,omitempty"`
	Error     string          `json:"error,omitempty"`
	Result    json.RawMessage `json:"result,omitempty"`
}

// receiptRequired is what Flow Studio's contract test requires.
var receiptRequired = []string{"engine", "model", "step_id", "flow_key", "run_id", "agent_key", "status", "duration_ms"}

// Meta is a run's meta.json.
type Meta struct {
	ID          string          `json:"id"`
	Status      string          `json:"status"`
	CreatedAt   string          `json:"created_at"`
	UpdatedAt   string          `json:"updated_at"`
	StartedAt   string          `json:"started_at"`
	CompletedAt string          `json:"completed_at"`
	Error       json.RawMessage `json:"error"`
	Tags        []string        `json:"tags"`
	Title       *string         `json:"title"`
	Description *string         `json:"description"`
}

// Spec is a run's spec.json.
type Spec struct {
	FlowKeys  []string        `json:"flow_keys"`
	ProfileID *string         `json:"profile_id"`
	Backend   string          `json:"backend"`
	Initiator string          `json:"initiator"`
	Params    json.RawMessage `json:"params"`
}

// Event is one line of events.jsonl.
type Event struct {
	RunID    string          `json:"run_id"`
	TS       string          `json:"ts"`
	Kind     string          `json:"kind"`
	FlowKey  *string         `json:"flow_key"`
	StepID   *string         `json:"step_id"`
	AgentKey *string         `json:"agent_key"`
	Payload  json.RawMessage `json:"payload"`
}

// ImportResult is a run directory converted to transcript events: run.started
// first, run.completed last, steps and tool pairs balanced. Seq and RunID
// are left for the recorder.
type ImportResult struct {
	RunID    string
	Events   []transcript.ExchangeEvent
	Warnings []string
	// ReelRunID is the reel run id a reel export recorded
	// (spec.json's params.reel_run_id), or "".
	ReelRunID string
	// Children are the child runs a reel export of a run with
	// call_workflow steps carried (see ChildInfo), parents before their
	// children. Events' ChildRunID and the children's RunID and
	// ParentRunID use the exported run ids (ReelRunID for this run).
	Children []ChildRun
}

// ChildRun is one child run rebuilt from a reel export.
type ChildRun struct {
	RunID       string
	ParentRunID string
	Events      []transcript.ExchangeEvent
}

// StepResult is the Result of an imported agent step.
type StepResult struct {
	transcript.AgentResult
	FlowStudio *StepInfo `json:"flowstudio,omitempty"`
}

// StepInfo says where an imported step came from.
type StepInfo struct {
	FlowKey        string          `json:"flow_key"`
	StepID         string          `json:"step_id"`
	AgentKey       string          `json:"agent_key"`
	Engine         string          `json:"engine,omitempty"`
	Mode           string          `json:"mode,omitempty"`
	Status         string          `json:"status,omitempty"`
	ReceiptFile    string          `json:"receipt_file,omitempty"`
	TranscriptFile string          `json:"transcript_file,omitempty"`
	Routing        json.RawMessage `json:"routing,omitempty"`
	Skipped        int             `json:"skipped_lines,omitempty"`
}

type artKey struct{ flow, step, agent string }

type artifact struct {
	key            artKey
	receipt        *Receipt
	receiptFile    string
	transcriptFile string
	engine         string
	used           bool
}

type execution struct {
	key      artKey
	start    time.Time
	end      time.Time
	ended    bool
	status   string
	errText  string
	duration *int64
	reel     *ReelInfo
}

type importer struct {
	fsys     fs.FS
	dir      string
	res      ImportResult
	last     time.Time
	iters    map[string]int
	total    transcript.Usage
	failed   bool
	nextCall int
	maxLine  int
	// run is the exported reel run id of the step being emitted.
	run string
}

// Options tune Import.
type Options struct {
	// MaxLineBytes bounds one transcript line (default 16 MiB).
	MaxLineBytes int
}

// Import reads the Flow Studio run directory dir. Unreadable or invalid
// artifacts (a receipt that is not one JSON object, a transcript line that
// does not parse) are reported in Warnings and skipped; only a directory
// that holds no run at all is an error.
func Import(dir string, opts Options) (*ImportResult, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("flow studio run %s: %w", dir, err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("flow studio run %s: not a directory", dir)
	}
	return ImportFS(safefile.FS(dir), filepath.Base(filepath.Clean(dir)), opts)
}

// ImportFS is Import for a run held in fsys (its root is the run
// directory); name stands for the run in messages and is its id when
// meta.json gives none.
func ImportFS(fsys fs.FS, name string, opts Options) (*ImportResult, error) {
	dir := name
	im := &importer{fsys: fsys, dir: name, iters: map[string]int{}, maxLine: opts.MaxLineBytes}
	if im.maxLine <= 0 {
		im.maxLine = transcript.DefaultMaxLineSize
	}
	var meta Meta
	haveMeta := im.readJSON("meta.json", &meta)
	var spec Spec
	im.readJSON("spec.json", &spec)
	events := im.readEvents()
	flows, arts := im.scanFlows(spec.FlowKeys)
	if !haveMeta && len(events) == 0 && len(arts) == 0 {
		return nil, fmt.Errorf("flow studio run %s: no meta.json, events.jsonl, receipts or transcripts", dir)
	}
	im.res.RunID = meta.ID
	if im.res.RunID == "" {
		im.res.RunID = name
	}
	name = im.res.RunID
	if meta.Title != nil && *meta.Title != "" {
		name = *meta.Title
	}
	start := im.runStart(&meta, events, arts)
	// A reel export keeps the run's own run.started and run.completed in
	// the run events' payloads: they come back exactly.
	runStarted, runCompleted := reelRunEvents(events)
	if runStarted != nil {
		start = runStarted.TS
		if runStarted.Name != "" {
			name = runStarted.Name
		}
	}
	im.last = start
	im.emit(start, transcript.RunStarted, "", 0, &transcript.StepPayload{Name: name, Kind: transcript.KindWorkflow})

	byKey := map[artKey]*artifact{}
	for _, a := range arts {
		byKey[a.key] = a
	}
	execs, lastExec := im.executions(events)
	// Emit in events order: a step starts at its step_start and ends, with
	// its content, at its step_end.
	im.emitExecutions(events, execs, lastExec, byKey)
	im.emitUnnamed(arts, flows)

	runInfo := map[string]any{"run_id": im.res.RunID, "status": meta.Status, "flow_keys": flows, "backend": spec.Backend}
	// The wisdom flow's summary has no step of its own; keep it with the run.
	if data, err := readSmall(im.fsys, "wisdom/wisdom_summary.json"); err == nil {
		if json.Valid(data) {
			runInfo["wisdom_summary"] = json.RawMessage(data)
		} else {
			im.warn("wisdom/wisdom_summary.json: invalid JSON, ignored")
		}
	}
	end := firstTime(meta.CompletedAt, meta.UpdatedAt)
	rr := transcript.RunResult{Usage: im.total}
	rr.Status, rr.ExitCode = runStatus(meta.Status, im.failed)
	if !end.IsZero() && !start.IsZero() {
		rr.DurationMS = end.Sub(start).Milliseconds()
	}
	if end.IsZero() {
		end = im.last
	}
	im.run = ""
	if rc := runCompleted; rc != nil {
		kind := rc.Kind
		if kind == "" {
			kind = transcript.KindWorkflow
		}
		sp := &transcript.StepPayload{Name: rc.Name, Kind: kind, Error: rc.Error}
		if len(rc.Result) > 0 {
			sp.Result = rc.Result
		}
		im.emit(rc.TS, transcript.RunCompleted, "", 0, sp)
	} else {
		im.emit(end, transcript.RunCompleted, "", 0, &transcript.StepPayload{
			Name: name, Kind: transcript.KindWorkflow, Error: rawErrorText(meta.Error),
			Result: struct {
				transcript.RunResult
				FlowStudio map[string]any `json:"flowstudio"`
			}{rr, runInfo},
		})
	}
	im.splitChildren(spec.Params)
	return &im.res, nil
}

// reelRunEvents returns the run.started and run.completed a reel export
// kept in its run_started and run_completed events (payload.reel).
func reelRunEvents(events []Event) (started, completed *EventInfo) {
	for _, e := range events {
		if e.Kind != "run_started" && e.Kind != "run_completed" {
			continue
		}
		var p struct {
			Reel *EventInfo `json:"reel"`
		}
		if json.Unmarshal(e.Payload, &p) != nil || p.Reel == nil || p.Reel.TS.IsZero() {
			continue
		}
		if e.Kind == "run_started" {
			started = p.Reel
		} else {
			completed = p.Reel
		}
	}
	return started, completed
}

func firstTime(ss ...string) time.Time {
	for _, s := range ss {
		if s == "" {
			continue
		}
		if t, err := ParseTime(s); err == nil {
			return t
		}
	}
	return time.Time{}
}

func rawErrorText(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	return errorText(raw)
}

func (im *importer) warn(format string, args ...any) {
	im.res.Warnings = append(im.res.Warnings, fmt.Sprintf(format, args...))
}

func (im *importer) emit(ts time.Time, typ transcript.EventType, path string, iter int, p any) {
	// Events must not go back in time; artifacts written by several
	// processes sometimes do.
	if ts.Before(im.last) || ts.IsZero() {
		ts = im.last
	}
	im.last = ts
	im.res.Events = append(im.res.Events, transcript.ExchangeEvent{RunID: im.run, Type: typ, Path: path, Iteration: iter, Timestamp: ts, Payload: p})
}

func (im *importer) readJSON(name string, v any) bool {
	data, err := readSmall(im.fsys, name)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			im.warn("%s: %v", name, err)
		}
		return false
	}
	if err := json.Unmarshal(data, v); err != nil {
		im.warn("%s: invalid JSON, ignored: %v", name, err)
		return false
	}
	return true
}

func (im *importer) readEvents() []Event {
	f, err := im.fsys.Open("events.jsonl")
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			im.warn("events.jsonl: %v", err)
		}
		return nil
	}
	defer f.Close()
	var out []Event
	err = eachLine(f, im.maxLine, func(n int, line []byte) {
		var e Event
		if err := json.Unmarshal(line, &e); err != nil {
			im.warn("events.jsonl:%d: skipped: %v", n, err)
			return
		}
		out = append(out, e)
	})
	if err != nil {
		im.warn("events.jsonl: %v", err)
	}
	return out
}

// eachLine calls fn for every non-blank line, skipping (with an error at
// the end) lines over max bytes.
func eachLine(r io.Reader, max int, fn func(n int, line []byte)) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var buf []byte
	n := 0
	var tooLong []int
	for {
		buf = buf[:0]
		over := false
		var err error
		for {
			var chunk []byte
			chunk, err = br.ReadSlice('\n')
			if !over {
				if len(buf)+len(chunk) > max+1 {
					over, buf = true, buf[:0]
				} else {
					buf = append(buf, chunk...)
				}
			}
			if !errors.Is(err, bufio.ErrBufferFull) {
				break
			}
		}
		if err != nil && err != io.EOF {
			return err
		}
		if len(buf) > 0 || over {
			n++
			if over {
				tooLong = append(tooLong, n)
			} else if l := bytes.TrimSpace(buf); len(l) > 0 {
				fn(n, l)
			}
		}
		if err == io.EOF {
			break
		}
	}
	if len(tooLong) > 0 {
		return fmt.Errorf("lines %v over %d bytes skipped", tooLong, max)
	}
	return nil
}

// runStart is when a run began: meta's times, or its first event when that
// is earlier (run_created can precede them), else its first receipt's.
func (im *importer) runStart(meta *Meta, events []Event, arts []*artifact) time.Time {
	start := firstTime(meta.CreatedAt, meta.StartedAt)
	if len(events) > 0 {
		if t, err := ParseTime(events[0].TS); err == nil && (start.IsZero() || t.Before(start)) {
			start = t
		}
	}
	if start.IsZero() {
		for _, a := range arts {
			if a.receipt != nil {
				if t, err := ParseTime(a.receipt.StartedAt); err == nil && (start.IsZero() || t.Before(start)) {
					start = t
				}
			}
		}
	}
	return start
}

// emitUnnamed makes steps of the artifacts no step event names, in flow
// order.
func (im *importer) emitUnnamed(arts []*artifact, flows []string) {
	rest := make([]*artifact, 0)
	for _, a := range arts {
		if !a.used {
			rest = append(rest, a)
		}
	}
	order := map[string]int{}
	for i, f := range flows {
		order[f] = i
	}
	sort.SliceStable(rest, func(i, j int) bool {
		a, b := rest[i], rest[j]
		if order[a.key.flow] != order[b.key.flow] {
			return order[a.key.flow] < order[b.key.flow]
		}
		return im.artifactStart(a).Before(im.artifactStart(b))
	})
	for _, a := range rest {
		x := &execution{key: a.key, start: im.artifactStart(a)}
		im.emitStep(x, a)
	}

}

// runStatus maps Flow Studio's run status to reel's (a run without one
// failed when one of its steps did).
func runStatus(status string, stepFailed bool) (string, int) {
	switch status {
	case "failed":
		return "failure", 1
	case "canceled", "cancelled":
		return "cancelled", 1
	case "pending", "running":
		return "interrupted", 0
	case "":
		if stepFailed {
			return "failure", 1
		}
	}
	return "success", 0
}
