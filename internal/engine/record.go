package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/reelhq/reel/internal/safefile"
	"github.com/reelhq/reel/internal/workflow"
	"github.com/reelhq/reel/transcript"
	"github.com/reelhq/reel/transcript/secrets"
)

// run is one execution of one workflow (a child run has its own).
type run struct {
	e        *Engine
	wf       *workflow.Workflow
	id       string
	parentID string
	inputs   map[string]any
	env      map[string]any
	context  map[string]any    // the .context namespace
	awf      map[string]string // the .awf namespace
	depth    int
	stack    []string // absolute workflow files from the root run down
	audit    *auditLog
	rec      *transcript.Recorder
	halt     context.CancelCauseFunc // see failure.go

	mu      sync.Mutex
	states  map[string]map[string]any
	tstates map[string]map[string]any // states as templates see them (see data)
	// esnap and tsnap are the states as data() hands them out, until the
	// next setState (see namespaces)
	esnap, tsnap map[string]any
	tinputs      map[string]any // inputs as templates see them
	einputs      map[string]any // inputs as expressions see them
	// lastState is the top-level state started last (.error.State of the
	// workflow_error hook).
	lastState string
	usage     transcript.Usage
	cost      *float64
	recErr    error
	started   time.Time
	// sessions are the provider sessions agent steps left, by state name,
	// for conversation.continue_from.
	sessions map[string]sessionEntry

	lifecycle // resume, replay, interactive and single-step state (lifecycle.go)
}

// emit records e in the transcript. A write error stops the run (see
// failure.go).
func (r *run) emit(ev transcript.ExchangeEvent) {
	if r.rec == nil {
		return
	}
	// The Recorder masks whole values; a step error or a message quoting
	// one line of a multi-line secret needs the line masker too.
	r.e.lineMasker().MaskEvent(&ev)
	if _, err := r.rec.Record(ev); err != nil {
		r.recordFailed(err)
	}
}

// span is one step execution (one attempt) between its started and
// completed events.
type span struct {
	r       *run
	path    string
	iter    int
	name    string
	kind    string
	attempt int
	start   time.Time
	// st and sc are the state and scope of a state's span (nil for a
	// hook's); hookOf is the path of the step a hook span belongs to.
	st     *workflow.State
	sc     scope
	try    *try // the attempt of a state that retries (nil for others)
	hookOf string
	silent bool // writes nothing: see scope.silent
}

func joinPath(prefix, name string) string {
	if prefix == "" {
		return name
	}
	return prefix + "." + name
}

func (r *run) startSpan(sc scope, name, kind, command string, attempt int) *span {
	sp := &span{r: r, path: joinPath(sc.prefix, name), iter: sc.iteration, name: name, kind: kind, attempt: attempt, start: time.Now(), silent: sc.silent}
	if sp.silent {
		return sp
	}
	if sc.prefix == "" {
		r.mu.Lock()
		r.lastState = name
		r.mu.Unlock()
	}
	r.open(sp, command)
	return sp
}

// open writes a span's start: the step.started event, the audit entry and
// the display line.
func (r *run) open(sp *span, command string) {
	name, kind, attempt := sp.name, sp.kind, sp.attempt
	r.emit(transcript.ExchangeEvent{
		Type: transcript.StepStarted, Path: sp.path, Iteration: sp.iter,
		Payload: &transcript.StepPayload{Name: name, Kind: kind, Command: command, Attempt: attempt},
	})
	r.audit.write(auditEntry{Event: "step.started", RunID: r.id, Workflow: r.wf.Name, Path: sp.path, Iteration: sp.iter, Attempt: attempt, Kind: kind})
	r.display(sp.startLine())
}

func (sp *span) startLine() string {
	var b strings.Builder
	b.WriteString(sp.r.indent())
	b.WriteString("▶ ")
	b.WriteString(sp.label())
	return b.String()
}

func (sp *span) label() string {
	l := sp.path
	at := sp.path
	if sp.hookOf != "" {
		// a loop's own hook runs outside its iterations
		at = sp.hookOf
	}
	if sp.r.loopDepthOf(at) > 0 {
		l += fmt.Sprintf(" [%d]", sp.iter)
	}
	if sp.attempt > 1 {
		l += fmt.Sprintf(" (attempt %d)", sp.attempt)
	}
	return l
}

// end closes the span. status is success, failure or cancelled.
func (sp *span) end(status string, result any, errMsg string) {
	r := sp.r
	if sp.silent {
		return
	}
	d := time.Since(sp.start)
	r.emit(transcript.ExchangeEvent{
		Type: transcript.StepCompleted, Path: sp.path, Iteration: sp.iter,
		Payload: &transcript.StepPayload{Name: sp.name, Kind: sp.kind, Attempt: sp.attempt, Error: errMsg, Result: result},
	})
	r.audit.write(auditEntry{Event: "step.completed", RunID: r.id, Workflow: r.wf.Name, Path: sp.path, Iteration: sp.iter, Attempt: sp.attempt, Kind: sp.kind, Status: status, DurationMS: d.Milliseconds(), Error: errMsg})
	mark := "✔"
	switch status {
	case "failure":
		mark = "✘"
	case "cancelled":
		mark = "⊘"
	}
	line := fmt.Sprintf("%s%s %s (%s)", r.indent(), mark, sp.label(), fmtDuration(d))
	if errMsg != "" {
		line += ": " + firstLine(errMsg)
	}
	r.display(line)
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " …"
	}
	return s
}

// loopDepthOf tells whether a path sits inside a loop (its iteration is
// worth showing).
func (r *run) loopDepthOf(path string) int {
	n := 0
	parts := strings.Split(path, ".")
	for _, p := range parts[:len(parts)-1] {
		if s := r.wf.States[p]; s != nil && (s.Type == workflow.TypeForEach || s.Type == workflow.TypeWhile) {
			n++
		}
	}
	return n
}

func (r *run) indent() string { return strings.Repeat("  ", r.depth) }

func fmtDuration(d time.Duration) string {
	switch {
	case d < time.Second:
		return fmt.Sprintf("%dms", d.Milliseconds())
	case d < time.Minute:
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
	return d.Round(time.Second).String()
}

// display writes one line of the human-readable display. The display is
// masked like the transcript: a user who asks for masking expects no secret
// on the terminal or in a captured log either.
func (r *run) display(line string) {
	r.show(r.e.mask(line))
}

// show writes one display line that is masked already.
func (r *run) show(line string) {
	w := r.e.Display
	if w == nil || r.planning {
		return
	}
	r.e.displayMu.Lock()
	defer r.e.displayMu.Unlock()
	fmt.Fprintln(w, line)
}

// StepOutput is how the display shows what a step prints (AWF's run
// --output modes).
type StepOutput int

const (
	// StreamOutput shows each line as the step prints it.
	StreamOutput StepOutput = iota
	// BufferOutput shows a step's lines together once it ends (its
	// stdout, then its stderr), so parallel branches do not interleave.
	BufferOutput
	// HideOutput shows none of them: only steps starting and ending.
	HideOutput
)

// showLines writes lines, masked already, to the display as one block, so
// that no other step's line lands between them.
func (r *run) showLines(lines []string) {
	w := r.e.Display
	if w == nil || r.planning || len(lines) == 0 {
		return
	}
	var b strings.Builder
	for _, l := range lines {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	r.e.displayMu.Lock()
	defer r.e.displayMu.Unlock()
	io.WriteString(w, b.String())
}

// outputWriter streams a step's output to the display line by line, each
// line prefixed with the step's path, so parallel steps stay readable.
// Its owner calls flush once the step's output has ended.
type outputWriter struct {
	r      *run
	prefix string
	// lines masks what is shown: each line, the lines of a private key
	// block, the pieces of a long line (nil: no masking).
	lines *secrets.LineMasker
	buf   []byte
	// held are the lines a BufferOutput display shows at flush.
	held []string
	// live shows every line at once whatever StepOutput says.
	live bool
	// scanned is how much of buf is known to hold no safe cut, so that a
	// process printing a long line byte by byte is not rescanned each time.
	scanned int
}

func (r *run) newOutputWriter(path string) *outputWriter {
	w := &outputWriter{r: r, prefix: r.e.mask(r.indent() + "  " + path + " │ ")}
	if r.e.Masker != nil {
		w.lines = r.e.Masker.Lines(r.e.lineMasker())
	}
	return w
}

// show displays one masked line of output now, or at flush when
// buffering.
func (w *outputWriter) show(masked string) {
	line := w.prefix + masked
	if w.r.e.StepOutput == BufferOutput && !w.live {
		w.held = append(w.held, line)
		return
	}
	w.r.show(line)
}

func (w *outputWriter) Write(p []byte) (int, error) {
	if w.r.e.Display == nil || (w.r.e.StepOutput == HideOutput && !w.live) {
		return len(p), nil
	}
	// Only p can hold a newline: what was held has none. Searching just p
	// keeps a long line written byte by byte linear.
	from := len(w.buf)
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexByte(w.buf[from:], '\n')
		if i < 0 {
			break
		}
		i += from
		w.show(w.lines.MaskLine(strings.TrimRight(string(w.buf[:i]), "\r")))
		w.buf = w.buf[i+1:]
		from, w.scanned = 0, 0
	}
	if len(w.buf) > longLine {
		w.flushLong()
	}
	return len(p), nil
}

// mask masks s for the display and the audit trail.
func (e *Engine) mask(s string) string {
	if e.Masker == nil {
		return s
	}
	return e.lineMasker().MaskString(e.Masker.MaskString(s))
}

// lineMasker is the masker of the lines of multi-line secrets in the
// steps' environment, nil when there are none or masking is off.
func (e *Engine) lineMasker() *secrets.Masker {
	if e.Masker == nil {
		return nil
	}
	e.linesOnce.Do(func() { e.lines = newLineMasker(e.Masker, e.environ()) })
	return e.lines
}

// newLineMasker returns a masker of the lines of the multi-line values in
// environ that m masks (a PEM key in DEPLOY_KEY), or nil when there are
// none. The display and step errors show output line by line, where m,
// which matches whole values, would not find such a secret.
func newLineMasker(m *secrets.Masker, environ []string) *secrets.Masker {
	var entries, lines []string
	for _, kv := range environ {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || !strings.Contains(value, "\n") || m.MaskString(value) == value {
			continue
		}
		for l := range strings.SplitSeq(value, "\n") {
			l = strings.TrimRight(l, "\r")
			entries = append(entries, name+"="+l)
			lines = append(lines, l)
		}
	}
	lm := secrets.NewMasker(entries)
	// NewMasker keeps only values it deems secret; a masker that masks
	// nothing m does not would only cost time
	for _, l := range lines {
		if lm.MaskString(l) != m.MaskString(l) {
			return lm
		}
	}
	return nil
}

// A line without its newline is shown once it is longer than longLine, so
// a process printing a progress bar without newlines cannot grow the
// buffer. Masking works on whole strings, so a masking display cuts such a
// line only where no credential shape can straddle the cut, holding at most
// maxHeldLine bytes while it finds one; past that, LineMasker.Force cuts
// it and carries what it masked across the cut.
const (
	longLine    = 4096
	maxHeldLine = 64 << 10
)

func (w *outputWriter) flushLong() {
	if w.r.e.Masker == nil {
		w.flushLine()
		return
	}
	i := secrets.SafeCut(w.buf, w.scanned)
	if i > 0 {
		w.show(w.lines.MaskLine(string(w.buf[:i])))
		w.buf = w.buf[:copy(w.buf, w.buf[i:])]
	}
	for len(w.buf) > maxHeldLine {
		// Force keeps what may begin a secret and masks a token cut
		// open to its end.
		s, n := w.lines.Force(w.buf)
		w.show(s)
		w.buf = w.buf[:copy(w.buf, w.buf[n:])]
	}
	// i was the last cut: none is left in buf
	w.scanned = len(w.buf)
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'
}

// flush shows what is left once the step's output has ended: the last
// line if it had no newline, and every line a BufferOutput display held.
func (w *outputWriter) flush() {
	w.flushLine()
	w.r.showLines(w.held)
	w.held = nil
}

// flushLine shows the line held so far, newline or not.
func (w *outputWriter) flushLine() {
	if len(w.buf) > 0 && w.r.e.Display != nil {
		w.show(w.lines.MaskLine(string(w.buf)))
	}
	w.buf = w.buf[:0]
	w.scanned = 0
}

// auditLog appends the audit trail: one JSON line per run and step start
// and end. It is written whatever the transcript setting, whole lines only
// (safefile.Appender), and a write error stops the run like a transcript
// write error (onFail, the root run's recordFailed).
type auditLog struct {
	mu     sync.Mutex
	f      *safefile.Appender
	err    error
	mask   func(string) string
	onFail func(error)
}

type auditEntry struct {
	Time        string `json:"time"`
	Event       string `json:"event"`
	RunID       string `json:"run_id"`
	ParentRunID string `json:"parent_run_id,omitempty"`
	Workflow    string `json:"workflow"`
	Path        string `json:"path,omitempty"`
	Iteration   int    `json:"iteration"`
	Attempt     int    `json:"attempt,omitempty"`
	Kind        string `json:"kind"`
	Status      string `json:"status,omitempty"`
	DurationMS  int64  `json:"duration_ms"`
	ExitCode    *int   `json:"exit_code,omitempty"`
	Error       string `json:"error,omitempty"`
}

func openAudit(storage string, mask func(string) string) (*auditLog, error) {
	if storage == "" {
		storage = ".reel/storage"
	}
	p := filepath.Join(storage, "audit.jsonl")
	f, err := safefile.OpenAppender(p)
	if err != nil {
		return nil, fmt.Errorf("open audit trail: %w", err)
	}
	return &auditLog{f: f, mask: mask}, nil
}

func (a *auditLog) write(e auditEntry) {
	if a == nil {
		return
	}
	e.Time = time.Now().UTC().Format(time.RFC3339Nano)
	// Fields are masked before encoding, so a secret is found whatever
	// JSON escaping it would get and the line stays valid JSON.
	for _, f := range []*string{&e.Workflow, &e.Path, &e.Kind, &e.Status, &e.Error} {
		*f = a.mask(*f)
	}
	b, err := json.Marshal(e)
	if err != nil {
		return
	}
	a.mu.Lock()
	if a.err != nil {
		a.mu.Unlock()
		return
	}
	err = a.f.AppendLine(b)
	if err != nil {
		a.err = fmt.Errorf("audit trail: %w", err)
	}
	fail, ferr := a.onFail, a.err
	a.mu.Unlock()
	if err != nil && fail != nil {
		fail(ferr)
	}
}

func (a *auditLog) close() {
	if a != nil && a.f != nil {
		a.f.Close()
	}
}
