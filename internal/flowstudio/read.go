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
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

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

// ReadReceipt reads and checks one receipt file.
func ReadReceipt(path string) (*Receipt, error) {
	data, err := readSmall(os.DirFS(filepath.Dir(path)), filepath.Base(path))
	if err != nil {
		return nil, fmt.Errorf("read receipt %s: %w", path, err)
	}
	return ParseReceipt(data)
}

// maxDocument bounds the JSON documents of a run (receipts, meta.json,
// spec.json), which are small; a huge one is refused, not loaded.
const maxDocument = 16 << 20

func readSmall(fsys fs.FS, name string) ([]byte, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxDocument+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxDocument {
		return nil, fmt.Errorf("over %d bytes", maxDocument)
	}
	return data, nil
}

// ParseReceipt decodes a receipt: exactly one JSON object holding the
// fields Flow Studio's contract requires.
func ParseReceipt(data []byte) (*Receipt, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	var fields map[string]json.RawMessage
	if err := dec.Decode(&fields); err != nil {
		return nil, fmt.Errorf("invalid receipt: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("invalid receipt: more than one JSON value")
	}
	var missing []string
	for _, k := range receiptRequired {
		if _, ok := fields[k]; !ok {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("invalid receipt: missing %s", strings.Join(missing, ", "))
	}
	var r Receipt
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("invalid receipt: %w", err)
	}
	switch r.Status {
	case "succeeded", "failed", "skipped":
	default:
		return nil, fmt.Errorf("invalid receipt: status %q", r.Status)
	}
	return &r, nil
}

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
	return ImportFS(os.DirFS(dir), filepath.Base(filepath.Clean(dir)), opts)
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
	start := firstTime(meta.CreatedAt, meta.StartedAt)
	if len(events) > 0 {
		// run_created can precede meta's times; the run starts with its
		// first event.
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
	// Artifacts no step event names still become steps, in flow order.
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
	rr := transcript.RunResult{Status: "success", Usage: im.total}
	switch meta.Status {
	case "failed":
		rr.Status, rr.ExitCode = "failure", 1
	case "canceled", "cancelled":
		rr.Status, rr.ExitCode = "cancelled", 1
	case "pending", "running":
		rr.Status = "interrupted"
	case "", "succeeded":
		if im.failed && meta.Status == "" {
			rr.Status, rr.ExitCode = "failure", 1
		}
	}
	if !end.IsZero() && !start.IsZero() {
		rr.DurationMS = end.Sub(start).Milliseconds()
	}
	if end.IsZero() {
		end = im.last
	}
	im.run = ""
	im.emit(end, transcript.RunCompleted, "", 0, &transcript.StepPayload{
		Name: name, Kind: transcript.KindWorkflow, Error: rawErrorText(meta.Error),
		Result: struct {
			transcript.RunResult
			FlowStudio map[string]any `json:"flowstudio"`
		}{rr, runInfo},
	})
	im.splitChildren(spec.Params)
	return &im.res, nil
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

// scanFlows finds the flow directories (spec order first) and their
// artifacts.
func (im *importer) scanFlows(specFlows []string) ([]string, []*artifact) {
	entries, err := fs.ReadDir(im.fsys, ".")
	if err != nil {
		im.warn("list %s: %v", im.dir, err)
		return nil, nil
	}
	var found []string
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		if im.isDir(path.Join(e.Name(), "llm")) || im.isDir(path.Join(e.Name(), "receipts")) {
			found = append(found, e.Name())
		}
	}
	var flows []string
	seen := map[string]bool{}
	for _, f := range specFlows {
		if !seen[f] {
			flows = append(flows, f)
			seen[f] = true
		}
	}
	for _, f := range found {
		if !seen[f] {
			flows = append(flows, f)
			seen[f] = true
		}
	}
	var arts []*artifact
	for _, flow := range flows {
		arts = append(arts, im.scanFlow(flow)...)
	}
	return flows, arts
}

func (im *importer) isDir(p string) bool {
	st, err := fs.Stat(im.fsys, p)
	return err == nil && st.IsDir()
}

func (im *importer) scanFlow(flow string) []*artifact {
	byKey := map[artKey]*artifact{}
	var order []artKey
	get := func(k artKey) *artifact {
		if a, ok := byKey[k]; ok {
			return a
		}
		a := &artifact{key: k}
		byKey[k] = a
		order = append(order, k)
		return a
	}
	transcripts := map[string]artKey{}
	llm, _ := fs.ReadDir(im.fsys, path.Join(flow, "llm"))
	for _, e := range llm {
		if e.IsDir() {
			continue
		}
		m := TranscriptName.FindStringSubmatch(e.Name())
		if m == nil {
			im.warn("%s/llm/%s: not a transcript name, skipped", flow, e.Name())
			continue
		}
		k := artKey{flow, m[1], m[2]}
		a := get(k)
		a.transcriptFile = path.Join(flow, "llm", e.Name())
		a.engine = m[3]
		transcripts["llm/"+e.Name()] = k
	}
	recs, _ := fs.ReadDir(im.fsys, path.Join(flow, "receipts"))
	for _, e := range recs {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		rel := path.Join(flow, "receipts", e.Name())
		m := ReceiptName.FindStringSubmatch(e.Name())
		if m == nil {
			im.warn("%s: not a receipt name, skipped", rel)
			continue
		}
		data, err := readSmall(im.fsys, rel)
		var r *Receipt
		if err == nil {
			r, err = ParseReceipt(data)
		}
		if err != nil {
			im.warn("%s: %v; skipped", rel, err)
			continue
		}
		k := artKey{flow, m[1], m[2]}
		if r.StepID != "" && r.AgentKey != "" {
			k = artKey{flow, r.StepID, r.AgentKey}
		}
		if tk, ok := transcripts[filepath.ToSlash(r.TranscriptPath)]; ok && tk != k {
			// The receipt names its transcript; trust it over the file name.
			if a, ok := byKey[tk]; ok && a.receipt == nil {
				delete(byKey, tk)
				for i := range order {
					if order[i] == tk {
						order[i] = k
					}
				}
				a.key = k
				byKey[k] = a
			}
		}
		a := get(k)
		a.receipt, a.receiptFile = r, rel
	}
	out := make([]*artifact, 0, len(order))
	for _, k := range order {
		if a, ok := byKey[k]; ok && a.key == k {
			out = append(out, a)
		}
	}
	return out
}

func (im *importer) artifactStart(a *artifact) time.Time {
	if a.receipt != nil {
		if t, err := ParseTime(a.receipt.StartedAt); err == nil {
			return t
		}
	}
	return im.last
}

func strp(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

type stepEventPayload struct {
	Status     string          `json:"status"`
	DurationMS *int64          `json:"duration_ms"`
	Error      json.RawMessage `json:"error"`
	Reel       *ReelInfo       `json:"reel"`
}

// executions pairs step_start and step_end events. lastExec maps an
// artifact key to its last execution.
func (im *importer) executions(events []Event) ([]*execution, map[artKey]int) {
	var execs []*execution
	last := map[artKey]int{}
	for _, e := range events {
		if e.Kind != "step_start" {
			continue
		}
		k := artKey{strp(e.FlowKey), strp(e.StepID), strp(e.AgentKey)}
		last[k] = len(execs)
		execs = append(execs, &execution{key: k})
	}
	return execs, last
}

func (im *importer) emitExecutions(events []Event, execs []*execution, lastExec map[artKey]int, arts map[artKey]*artifact) {
	next := 0
	open := map[artKey][]int{}
	var order []int
	for n, e := range events {
		ts, err := ParseTime(e.TS)
		if err != nil {
			im.warn("events.jsonl: event %d (%s): %v", n+1, e.Kind, err)
		}
		k := artKey{strp(e.FlowKey), strp(e.StepID), strp(e.AgentKey)}
		var p stepEventPayload
		if len(e.Payload) > 0 {
			_ = json.Unmarshal(e.Payload, &p)
		}
		switch e.Kind {
		case "step_start":
			x := execs[next]
			next++
			x.start, x.reel = ts, p.Reel
			open[k] = append(open[k], next-1)
			order = append(order, next-1)
			im.startStep(x, im.artifactFor(x, lastExec, arts, next-1))
		case "step_end", "step_error":
			idx := open[k]
			if len(idx) == 0 {
				if e.Kind == "step_end" {
					im.warn("events.jsonl: event %d: step_end for %s/%s without step_start", n+1, k.flow, k.step)
				}
				continue
			}
			x := execs[idx[len(idx)-1]]
			if t := rawErrorText(p.Error); t != "" {
				x.errText = t
			}
			if e.Kind == "step_error" {
				if x.status == "" {
					x.status = "failed"
				}
				continue
			}
			open[k] = idx[:len(idx)-1]
			x.end, x.ended, x.duration = ts, true, p.DurationMS
			if p.Status != "" {
				x.status = p.Status
			}
			if p.Reel != nil && x.reel != nil {
				// A non-agent step's outcome travels in its step_end.
				x.reel.Result, x.reel.Error = p.Reel.Result, p.Reel.Error
			}
			im.endStep(x, im.artifactFor(x, lastExec, arts, idx[len(idx)-1]))
		}
	}
	// Steps that never ended close at the end, innermost first.
	for i := len(order) - 1; i >= 0; i-- {
		x := execs[order[i]]
		if x.ended {
			continue
		}
		x.ended = true
		if x.errText == "" {
			x.errText = "no step_end: the run stopped before the step finished"
		}
		x.status = "failed"
		im.endStep(x, im.artifactFor(x, lastExec, arts, order[i]))
	}
}

func (im *importer) artifactFor(x *execution, lastExec map[artKey]int, arts map[artKey]*artifact, idx int) *artifact {
	if lastExec[x.key] != idx {
		return nil
	}
	return arts[x.key]
}

// step is an execution being emitted.
type stepState struct {
	path string
	iter int
	name string
	kind string
	att  int
}

func (im *importer) stepOf(x *execution, a *artifact) stepState {
	ri := x.reel
	if a != nil && a.receipt != nil && a.receipt.Reel != nil {
		ri = a.receipt.Reel
		x.reel = ri
	}
	if ri != nil && ri.Path != "" {
		kind := ri.Kind
		if kind == "" {
			kind = transcript.KindAgent
		}
		name := ri.Name
		if name == "" {
			name = ri.Path
		}
		return stepState{path: ri.Path, iter: max(ri.Iteration, 0), name: name, kind: kind, att: max(ri.Attempt, 0)}
	}
	step := x.key.step
	if step == "" {
		step = "step"
	}
	path := step
	if x.key.flow != "" {
		path = x.key.flow + "." + step
	}
	return stepState{path: path, name: step, kind: transcript.KindAgent}
}

func (im *importer) startStep(x *execution, a *artifact) {
	s := im.stepOf(x, a)
	if x.reel == nil || x.reel.Path == "" {
		s.iter = im.iters[s.path]
		im.iters[s.path]++
		x.reel = &ReelInfo{Path: s.path, Iteration: s.iter, Name: s.name, Kind: s.kind}
	}
	im.run = x.reel.RunID
	sp := &transcript.StepPayload{Name: s.name, Kind: s.kind, Attempt: s.att}
	if x.reel.Command != "" {
		sp.Command = x.reel.Command
	}
	im.emit(x.start, transcript.StepStarted, s.path, s.iter, sp)
}

// emitStep emits a whole step from its artifacts (no step events).
func (im *importer) emitStep(x *execution, a *artifact) {
	x.start = im.artifactStart(a)
	im.startStep(x, a)
	if a.receipt != nil {
		x.status = a.receipt.Status
		if t, err := ParseTime(a.receipt.CompletedAt); err == nil {
			x.end = t
		}
	}
	im.endStep(x, a)
}

func (im *importer) endStep(x *execution, a *artifact) {
	s := im.stepOf(x, a)
	s.path, s.iter = x.reel.Path, max(x.reel.Iteration, 0)
	im.run = x.reel.RunID
	info := &StepInfo{FlowKey: x.key.flow, StepID: x.key.step, AgentKey: x.key.agent, Status: x.status}
	var ar transcript.AgentResult
	var usageFromLines *transcript.Usage
	errText := x.errText
	if a != nil {
		a.used = true
		info.ReceiptFile, info.TranscriptFile, info.Engine = a.receiptFile, a.transcriptFile, a.engine
		if a.transcriptFile != "" {
			usageFromLines = im.emitTranscript(a, s, info, &ar, &errText)
		}
		if r := a.receipt; r != nil {
			info.Engine, info.Mode, info.Routing = r.Engine, r.Mode, r.Routing
			info.Status = r.Status
			ar.Provider = r.Provider
			if ar.Provider == "" {
				ar.Provider = providerOf(r.Engine)
			}
			ar.Model = r.Model
			ar.Usage = transcript.Usage{InputTokens: r.Tokens.Prompt, OutputTokens: r.Tokens.Completion, TotalTokens: r.Tokens.Total}
			ar.DurationMS = r.DurationMS
			if t := rawErrorText(r.Error); t != "" {
				errText = t
			}
			if r.Status == "failed" && errText == "" {
				errText = "step failed"
			}
			if r.Tokens == (Tokens{}) && usageFromLines != nil {
				ar.Usage = *usageFromLines
			}
		} else if usageFromLines != nil {
			ar.Usage = *usageFromLines
		}
	}
	if ar.Provider == "" && a != nil {
		ar.Provider = a.engine
	}
	if ar.DurationMS == 0 && x.duration != nil {
		ar.DurationMS = *x.duration
	}
	if x.status == "failed" && errText == "" {
		errText = "step failed"
	}
	sp := &transcript.StepPayload{Name: s.name, Kind: s.kind, Attempt: s.att, Error: errText}
	switch {
	case x.reel != nil && len(x.reel.Result) > 0:
		sp.Result = x.reel.Result
		sp.Error = x.reel.Error
		if s.kind == transcript.KindAgent {
			var r transcript.AgentResult
			if transcript.DecodeResult(x.reel.Result, &r) == nil {
				im.total.Add(r.Usage)
			}
		}
	case s.kind == transcript.KindAgent:
		sp.Result = StepResult{AgentResult: ar, FlowStudio: info}
		im.total.Add(ar.Usage)
	default:
		if x.reel != nil && x.reel.Error != "" {
			sp.Error = x.reel.Error
		}
	}
	if sp.Error != "" {
		im.failed = true
	}
	end := x.end
	if end.IsZero() {
		end = im.last
	}
	im.emit(end, transcript.StepCompleted, s.path, s.iter, sp)
}

type call struct{ id, name string }

// emitTranscript emits a step's transcript as message and tool events and
// returns the usage its lines report, if any.
func (im *importer) emitTranscript(a *artifact, s stepState, info *StepInfo, ar *transcript.AgentResult, errText *string) *transcript.Usage {
	f, err := im.fsys.Open(a.transcriptFile)
	if err != nil {
		im.warn("%s: %v", a.transcriptFile, err)
		return nil
	}
	defer f.Close()
	var usage *transcript.Usage
	var system *string
	var open []call
	router, agent := transcript.FidelityRouter, transcript.FidelityAgentEmitted
	flushSystem := func(ts time.Time) {
		if system == nil {
			return
		}
		im.emit(ts, transcript.MessageUser, s.path, s.iter, &transcript.MessagePayload{Role: "user", Blocks: []transcript.ContentBlock{
			{Type: transcript.BlockText, Fidelity: router}, {Type: transcript.BlockText, Fidelity: router, Text: *system}}})
		system = nil
	}
	newID := func() string {
		im.nextCall++
		return fmt.Sprintf("flowstudio-%d", im.nextCall)
	}
	toolCall := func(ts time.Time, id, name string, in json.RawMessage) {
		var input any
		if len(in) > 0 {
			input = in
		}
		im.emit(ts, transcript.ToolCall, s.path, s.iter, &transcript.ToolPayload{Name: name, CallID: id, Input: input, Fidelity: agent})
	}
	toolResult := func(ts time.Time, id, name string, out json.RawMessage, errT string) {
		var output any
		if len(out) > 0 && string(out) != "null" {
			output = out
		}
		im.emit(ts, transcript.ToolResult, s.path, s.iter, &transcript.ToolPayload{Name: name, CallID: id, Output: output, Error: errT, Fidelity: agent})
	}
	err = eachLine(f, im.maxLine, func(n int, line []byte) {
		entries, err := ParseLine(line)
		if err != nil {
			im.warn("%s:%d: skipped: %v", a.transcriptFile, n, err)
			info.Skipped++
			return
		}
		for _, e := range entries {
			switch e.Kind {
			case EntryMessage:
				switch e.Role {
				case "system":
					flushSystem(e.Time)
					t := e.Text
					system = &t
				case "user":
					blocks := e.Blocks
					if !e.Exact {
						blocks = []transcript.ContentBlock{{Type: transcript.BlockText, Fidelity: router, Text: e.Text}}
						if system != nil && *system != "" {
							blocks = append(blocks, transcript.ContentBlock{Type: transcript.BlockText, Fidelity: router, Text: *system})
						}
					}
					system = nil
					im.emit(e.Time, transcript.MessageUser, s.path, s.iter, &transcript.MessagePayload{Role: "user", Blocks: blocks})
				default:
					flushSystem(e.Time)
					blocks := e.Blocks
					if blocks == nil {
						blocks = []transcript.ContentBlock{{Type: transcript.BlockText, Fidelity: agent, Text: e.Text}}
					}
					im.emit(e.Time, transcript.MessageAssistant, s.path, s.iter, &transcript.MessagePayload{Role: "assistant", Blocks: blocks})
					ar.Turns++
					if e.Text != "" {
						ar.Output = e.Text
					}
					if e.Model != "" {
						ar.Model = e.Model
					}
				}
			case EntryToolUse:
				flushSystem(e.Time)
				id := e.ToolID
				if id == "" {
					id = newID()
				}
				open = append(open, call{id, e.ToolName})
				toolCall(e.Time, id, e.ToolName, e.Input)
			case EntryToolResult:
				i := -1
				for j, c := range open {
					if (e.ToolID != "" && c.id == e.ToolID) || (e.ToolID == "" && c.name == e.ToolName) {
						i = j
						break
					}
				}
				var c call
				if i < 0 {
					c = call{e.ToolID, e.ToolName}
					if c.id == "" {
						c.id = newID()
					}
					toolCall(e.Time, c.id, c.name, nil)
				} else {
					c = open[i]
					open = append(open[:i], open[i+1:]...)
				}
				if c.name == "" {
					c.name = e.ToolName
				}
				toolResult(e.Time, c.id, c.name, e.Output, e.Error)
			case EntryTool:
				flushSystem(e.Time)
				id := e.ToolID
				if id == "" {
					id = newID()
				}
				callT := e.CallTime
				if callT.IsZero() {
					callT = e.Time
				}
				toolCall(callT, id, e.ToolName, e.Input)
				toolResult(e.Time, id, e.ToolName, e.Output, e.Error)
			case EntryUsage:
				if e.Usage != nil {
					if usage == nil {
						usage = &transcript.Usage{}
					}
					usage.Add(*e.Usage)
				}
			case EntryError:
				if *errText == "" {
					*errText = e.Text
				} else {
					*errText += "; " + e.Text
				}
			case EntryOther:
				if e.Model != "" && ar.Model == "" {
					ar.Model = e.Model
				}
			}
		}
	})
	if err != nil {
		im.warn("%s: %v", a.transcriptFile, err)
	}
	flushSystem(im.last)
	for _, c := range open {
		toolResult(im.last, c.id, c.name, nil, "no result: the transcript ended before the tool result")
	}
	return usage
}
