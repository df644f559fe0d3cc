// Package textview renders a run's transcript as a readable conversation:
// prompts, system prompts, assistant text, thinking, tool calls with their
// inputs and results, and command steps, in order, as terminal text or
// Markdown, optionally paced by the original timestamps.
package textview

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/reelhq/reel/internal/pricing"
	"github.com/reelhq/reel/internal/promptkind"
	"github.com/reelhq/reel/internal/rawjson"
	"github.com/reelhq/reel/internal/runs"
	"github.com/reelhq/reel/internal/termtext"
	"github.com/reelhq/reel/internal/warn"
	"github.com/reelhq/reel/transcript"
	"github.com/reelhq/reel/transcript/secrets"
)

// Format is the output format.
type Format string

// Formats.
const (
	Text     Format = "text"
	Markdown Format = "markdown"
)

// Options tune Replay.
type Options struct {
	Format Format
	// Step keeps only the events of this step path and the steps below it;
	// a pattern with '*' or '?' matches dot-separated segments.
	Step string
	// Thinking shows thinking blocks; otherwise they are folded.
	Thinking bool
	// Color uses ANSI colours (text format only).
	Color bool
	// Speed > 0 paces the output by the original timestamps, Speed times
	// faster; 0 writes everything at once. Gaps are capped at MaxGap
	// (before the speed-up) so a run that waited an hour does not.
	Speed  float64
	MaxGap time.Duration
	// MaxLines cuts tool outputs and command outputs to this many lines
	// (0: no limit).
	MaxLines int
	// Masker, when set, masks secrets in every event before it is
	// rendered (--mask-secrets).
	Masker *secrets.Masker
	// Prices price the agent steps whose provider reported no cost (nil:
	// pricing.Default()), as every reader does.
	Prices *pricing.Table
}

// Replay renders the run, with the sub-workflows it called inline (as deep
// as runs.MaxDepth), to w. Damage in the transcripts is returned in the
// warnings (the run's, repeated ones summarised); the error is for an
// unreadable root file, the output failing or ctx ending.
func Replay(ctx context.Context, w io.Writer, run *runs.Run, opts Options) (warnings []string, err error) {
	if opts.Format == "" {
		opts.Format = Text
	}
	if opts.Format != Text && opts.Format != Markdown {
		return nil, fmt.Errorf("unknown format %q (want text or markdown)", opts.Format)
	}
	if opts.MaxGap <= 0 {
		opts.MaxGap = 10 * time.Second
	}
	if opts.Step != "" {
		if _, err := path.Match(strings.ReplaceAll(opts.Step, ".", "/"), ""); err != nil {
			return nil, fmt.Errorf("--step %q: %w", opts.Step, err)
		}
	}
	if opts.Prices == nil {
		opts.Prices = pricing.Default()
	}
	bw := bufio.NewWriter(w)
	r := &renderer{w: bw, opts: opts, md: opts.Format == Markdown, seen: map[string]bool{}, paths: map[string]bool{}, warns: run.Warnings()}
	if opts.Color && !r.md {
		r.pal = ansi
	}
	err = r.file(ctx, run)
	if ferr := bw.Flush(); err == nil && ferr != nil {
		err = fmt.Errorf("write output: %w", ferr)
	}
	if err == nil && opts.Step != "" && !r.matched {
		err = &NoStepError{Step: opts.Step, Paths: sortedPaths(r.paths)}
	}
	return r.warns.Strings(), err
}

// NoStepError reports a --step that matches no step of the run.
type NoStepError struct {
	Step  string
	Paths []string
}

func (e *NoStepError) Error() string {
	if len(e.Paths) == 0 {
		return fmt.Sprintf("--step %s: the run recorded no steps", e.Step)
	}
	return fmt.Sprintf("--step %s matches no step of the run (its steps: %s)", e.Step, strings.Join(e.Paths, ", "))
}

func sortedPaths(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for p := range m {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

type palette struct{ bold, dim, user, asst, tool, ok, bad, reset string }

var ansi = palette{
	bold: "\x1b[1m", dim: "\x1b[2m", user: "\x1b[36m", asst: "\x1b[32m",
	tool: "\x1b[33m", ok: "\x1b[32m", bad: "\x1b[31m", reset: "\x1b[0m",
}

type renderer struct {
	w       *bufio.Writer
	opts    Options
	md      bool
	pal     palette
	seen    map[string]bool // files rendered
	paths   map[string]bool // step paths met, to name them when --step matches none
	matched bool            // --step matched a step event
	warns   *warn.List
	last    time.Time
	// spent is the cost of the agent steps of each file being rendered,
	// innermost last: a run.completed shows pricing.RunTotal of it.
	spent []pricing.Total
	// untimed holds the runs whose recording gave no times
	// (runs.Untimed): their start and duration show "—".
	untimed map[string]bool
	// compaction is the figures of the compaction summary being rendered,
	// when its step's result records them (compacted).
	compaction transcript.Compaction
	compacted  bool
}

// warn records damage; the caller reports it on stderr, where it does not
// mix with the conversation.
func (r *renderer) warn(format string, args ...any) { r.warns.Addf(format, args...) }

func (r *renderer) line(color, s string) {
	s = termtext.Strip(s)
	if r.md {
		fmt.Fprintf(r.w, "%s\n\n", s)
		return
	}
	fmt.Fprintf(r.w, "%s%s%s\n", color, s, r.pal.reset)
}

func (r *renderer) event(ev *transcript.ExchangeEvent, depth int, calls, results map[string]bool) {
	stripEnvelope(ev)
	sp := ev.Step()
	switch ev.Type {
	case transcript.RunStarted:
		r.runStarted(ev, sp, depth)
	case transcript.RunCompleted:
		r.runCompleted(ev, sp)
	case transcript.StepStarted:
		if sp == nil {
			return
		}
		head := fmt.Sprintf("%s (%s", stepLabel(ev), sp.Kind)
		if sp.Attempt > 1 {
			head += fmt.Sprintf(", attempt %d", sp.Attempt)
		}
		head += ")"
		if r.md {
			fmt.Fprintf(r.w, "%s %s\n\n", strings.Repeat("#", min(depth+2, 6)), head)
			if sp.Command != "" {
				fmt.Fprintf(r.w, "```sh\n$ %s\n```\n\n", sp.Command)
			}
			return
		}
		fmt.Fprintf(r.w, "%s▶ %s%s\n", r.pal.bold, head, r.pal.reset)
		if sp.Command != "" {
			fmt.Fprintf(r.w, "  %s$ %s%s\n", r.pal.tool, sp.Command, r.pal.reset)
		}
	case transcript.StepCompleted:
		if sp == nil {
			return
		}
		r.stepCompleted(ev, sp)
	case transcript.CallWorkflowStarted:
		r.line(r.pal.dim, fmt.Sprintf("  ↳ %s calls sub-workflow run %s", ev.Path, ev.ChildRunID))
	case transcript.CallWorkflowCompleted:
		r.line(r.pal.dim, fmt.Sprintf("  ↲ sub-workflow run %s returned", ev.ChildRunID))
	case transcript.MessageUser, transcript.MessageAssistant:
		if mp := ev.Message(); mp != nil {
			r.message(ev, mp, calls, results)
		}
	case transcript.ToolCall, transcript.ToolResult:
		if tp := ev.Tool(); tp != nil {
			r.tool(ev, tp)
		}
	default:
		r.line(r.pal.dim, fmt.Sprintf("  (event of unknown type %q)", ev.Type))
	}
}

// runStarted heads a run: its name, id and start ("—" when its recording
// gave no times), or the attempt a resume started.
func (r *renderer) runStarted(ev *transcript.ExchangeEvent, sp *transcript.StepPayload, depth int) {
	name := "(unnamed)"
	if sp != nil {
		name = sp.Name
	}
	if sp != nil && sp.Attempt > 1 {
		if r.md {
			fmt.Fprintf(r.w, "%s Resumed: attempt %d\n\n`%s` · %s\n\n", strings.Repeat("#", min(depth+1, 6)), sp.Attempt, ev.RunID, transcript.FormatTime(ev.Timestamp))
			return
		}
		fmt.Fprintf(r.w, "%s━━ resumed %s  attempt %d  %s%s\n", r.pal.bold, name, sp.Attempt, transcript.FormatTime(ev.Timestamp), r.pal.reset)
		return
	}
	started := transcript.FormatTime(ev.Timestamp)
	if runs.Untimed(sp) {
		if r.untimed == nil {
			r.untimed = map[string]bool{}
		}
		r.untimed[ev.RunID] = true
		started = "—"
	}
	if r.md {
		fmt.Fprintf(r.w, "%s Run %s\n\n`%s` · started %s\n\n", strings.Repeat("#", min(depth+1, 6)), name, ev.RunID, started)
		return
	}
	fmt.Fprintf(r.w, "%s━━ run %s  %s  %s%s\n", r.pal.bold, name, ev.RunID, started, r.pal.reset)
}

// runCompleted closes a run: its status, duration, tokens, cost and error.
func (r *renderer) runCompleted(ev *transcript.ExchangeEvent, sp *transcript.StepPayload) {
	status, color := "success", r.pal.ok
	var extra string
	if sp != nil {
		var rr transcript.RunResult
		if sp.Result != nil && transcript.DecodeResult(sp.Result, &rr) == nil {
			if rr.Status != "" {
				status = rr.Status
			}
			extra = fmt.Sprintf("  %s", (time.Duration(rr.DurationMS) * time.Millisecond).String())
			if r.untimed[ev.RunID] {
				extra = "  —"
			}
			if u := rr.Usage; u.InputTokens+u.OutputTokens > 0 {
				extra += fmt.Sprintf("  %d in / %d out tokens", u.InputTokens, u.OutputTokens)
			}
			extra += "  " + pricing.RunTotal(rr.CostUSD, r.spent[len(r.spent)-1]).String()
		}
		if sp.Error != "" {
			if status == "success" {
				status = "failure"
			}
			extra += "  error: " + sp.Error
		}
	}
	if status != "success" {
		color = r.pal.bad
	}
	if r.md {
		fmt.Fprintf(r.w, "**Run %s**%s\n\n", status, extra)
		return
	}
	fmt.Fprintf(r.w, "%s━━ run %s%s%s\n", color, status, extra, r.pal.reset)
}

// stripEnvelope removes escape sequences from the fields of ev that are
// written as they are (ids, path, the step's name, command and error); the
// bodies go through block and line, which strip them.
func stripEnvelope(ev *transcript.ExchangeEvent) {
	ev.RunID, ev.ChildRunID, ev.Path = termtext.Strip(ev.RunID), termtext.Strip(ev.ChildRunID), termtext.Strip(ev.Path)
	if sp := ev.Step(); sp != nil && (termtext.HasControls(sp.Name) || termtext.HasControls(sp.Command) || termtext.HasControls(sp.Error)) {
		c := *sp
		c.Name, c.Command, c.Error = termtext.Strip(c.Name), termtext.Strip(c.Command), termtext.Strip(c.Error)
		ev.Payload = &c
	}
}

// turn heads turn n of a conversation step's of turns, as reel tree counts
// them.
func (r *renderer) turn(n, of int) {
	if r.md {
		fmt.Fprintf(r.w, "**turn %d/%d**\n\n", n, of)
		return
	}
	fmt.Fprintf(r.w, "  %s── turn %d/%d ──%s\n", r.pal.bold, n, of, r.pal.reset)
}

func stepLabel(ev *transcript.ExchangeEvent) string {
	if ev.Iteration != 0 {
		return fmt.Sprintf("%s [%d]", ev.Path, ev.Iteration)
	}
	return ev.Path
}

func (r *renderer) stepCompleted(ev *transcript.ExchangeEvent, sp *transcript.StepPayload) {
	status, color := "✓", r.pal.ok
	if sp.Error != "" {
		status, color = "✗", r.pal.bad
	}
	var extra []string
	switch sp.Kind {
	case transcript.KindCommand:
		var cr transcript.CommandResult
		if sp.Result != nil && transcript.DecodeResult(sp.Result, &cr) == nil {
			extra = append(extra, fmt.Sprintf("exit %d", cr.ExitCode))
			if cr.Output != "" {
				r.block("output", cr.Output, r.pal.reset)
			}
			if cr.Stderr != "" {
				r.block("stderr", cr.Stderr, r.pal.bad)
			}
			if cr.Truncated {
				extra = append(extra, "output truncated")
			}
		}
	case transcript.KindAgent:
		var ar transcript.AgentResult
		if sp.Result != nil && transcript.DecodeResult(sp.Result, &ar) == nil {
			u := ar.Usage
			extra = append(extra, fmt.Sprintf("%d in / %d out tokens", u.InputTokens, u.OutputTokens))
			if c := r.opts.Prices.Step(&ar); c.Known || c.Unpriced > 0 {
				extra = append(extra, c.String())
			}
			if ar.Model != "" {
				extra = append(extra, ar.Model)
			}
		}
	}
	if sp.Error != "" {
		extra = append(extra, "error: "+sp.Error)
	}
	msg := fmt.Sprintf("%s %s", status, stepLabel(ev))
	if len(extra) > 0 {
		msg += "  " + strings.Join(extra, "  ")
	}
	if r.md {
		fmt.Fprintf(r.w, "*%s*\n\n", mdEscape(msg))
		return
	}
	r.line(color, msg)
}

func (r *renderer) message(ev *transcript.ExchangeEvent, mp *transcript.MessagePayload, calls, results map[string]bool) {
	for i, b := range mp.Blocks {
		switch b.Type {
		case transcript.BlockText:
			who, color := "assistant", r.pal.asst
			if ev.Type == transcript.MessageUser {
				who, color = "prompt", r.pal.user
				// blocks[1] of a user message with router fidelity is the
				// composed system prompt (docs/decisions.md §5).
				if i == 1 && b.Fidelity == transcript.FidelityRouter {
					who = "system prompt"
				} else if b.Fidelity != transcript.FidelityRouter {
					who = "user"
					text, shown := r.noise(b.Text)
					if shown {
						continue
					}
					b.Text = text
				}
			}
			r.block(who, b.Text, color)
		case transcript.BlockThinking:
			if r.opts.Thinking {
				r.block("thinking", b.Thinking, r.pal.dim)
			} else if r.md {
				fmt.Fprintf(r.w, "<details><summary>Thinking</summary>\n\n%s\n\n</details>\n\n", termtext.Strip(b.Thinking))
			} else {
				n, unit := strings.Count(strings.TrimRight(b.Thinking, "\n"), "\n")+1, "lines"
				if n == 1 {
					unit = "line"
				}
				r.line(r.pal.dim, fmt.Sprintf("  thinking … (%d %s folded; --thinking shows it)", n, unit))
			}
		case transcript.BlockToolUse:
			if calls[b.ToolID] {
				continue
			}
			r.block(fmt.Sprintf("tool call %s (%s, %s)", b.ToolName, b.ToolID, b.Fidelity), jsonText(b.ToolInput), r.pal.tool)
		case transcript.BlockToolResult:
			if results[b.ToolID] {
				continue
			}
			r.block(fmt.Sprintf("tool result %s", b.ToolID), jsonText(b.ToolContent), r.pal.tool)
		case transcript.BlockCommand:
			r.block("command", "$ "+b.Command, r.pal.tool)
		case transcript.BlockStream:
			r.block("stream", b.Chunk, r.pal.dim)
		default:
			r.line(r.pal.dim, fmt.Sprintf("  (block of unknown type %q)", b.Type))
		}
	}
}

// noise shows what an agent CLI wrote as a user turn without the user
// typing it (a slash command, its output, context for the model, a
// compaction summary) as what it is, and reports whether it did; when it
// did not, it returns the text to show as the user's (a request behind an
// IDE preamble, the preamble shown folded).
func (r *renderer) noise(text string) (string, bool) {
	t := promptkind.Classify(text)
	switch t.Kind {
	case promptkind.SlashCommand:
		r.line(r.pal.user, "  › "+strings.TrimSpace(t.Command+" "+t.Args))
	case promptkind.CommandOutput:
		if strings.TrimSpace(t.Text) == "" {
			r.line(r.pal.dim, "  ("+t.Label+": nothing)")
		} else {
			r.block(t.Label, t.Text, r.pal.dim)
		}
	case promptkind.Context:
		r.folded(t.Label, t.Text)
	case promptkind.Compaction:
		r.folded(Compacted(r.compaction, r.compacted)+": the conversation above was replaced by its summary", t.Text)
	case promptkind.Prompt:
		if t.Context != "" {
			r.folded(t.Label, t.Context)
		}
		return t.Text, false
	}
	return "", true
}

// folded shows text behind its label: its line count in text, a
// <details> in Markdown.
func (r *renderer) folded(label, text string) {
	text = strings.TrimSpace(termtext.Strip(text))
	if r.md {
		fmt.Fprintf(r.w, "<details><summary>%s</summary>\n\n%s\n\n</details>\n\n", label, text)
		return
	}
	n, unit := strings.Count(text, "\n")+1, "lines"
	if n == 1 {
		unit = "line"
	}
	r.line(r.pal.dim, fmt.Sprintf("  %s … (%d %s folded)", label, n, unit))
}

func (r *renderer) tool(ev *transcript.ExchangeEvent, tp *transcript.ToolPayload) {
	if ev.Type == transcript.ToolCall {
		r.block(fmt.Sprintf("tool call %s (%s, %s)", tp.Name, tp.CallID, tp.Fidelity), jsonText(tp.Input), r.pal.tool)
		return
	}
	switch {
	case strings.HasPrefix(tp.Error, "no result"):
		r.block(fmt.Sprintf("tool %s DANGLING (%s)", tp.Name, tp.CallID), tp.Error, r.pal.bad)
	case tp.Error != "":
		// Claude Code records a failed tool's output as its error too:
		// the same text is shown once.
		out := jsonText(tp.Output)
		if strings.TrimSpace(out) == strings.TrimSpace(tp.Error) || strings.TrimSpace(out) == "" {
			r.block(fmt.Sprintf("tool result %s (%s) error", tp.Name, tp.CallID), tp.Error, r.pal.bad)
			return
		}
		r.block(fmt.Sprintf("tool result %s (%s) error: %s", tp.Name, tp.CallID, firstLine(tp.Error)), out, r.pal.bad)
	default:
		r.block(fmt.Sprintf("tool result %s (%s)", tp.Name, tp.CallID), jsonText(tp.Output), r.pal.tool)
	}
}

// block writes a labelled piece of text: indented in text mode, a bold
// label and a quote or code block in Markdown.
func (r *renderer) block(label, body, color string) {
	label = termtext.Strip(label)
	body = strings.TrimRight(termtext.Strip(body), "\n")
	prose := label == "prompt" || label == "system prompt" || label == "assistant" || label == "user" || label == "thinking"
	if !prose {
		// MaxLines is for outputs: what was said is shown whole (a cut
		// reply can end inside its own Markdown code fence or table)
		body = r.cut(body)
	}
	if r.md {
		fmt.Fprintf(r.w, "**%s**\n\n", mdEscape(label))
		if body == "" {
			return
		}
		if prose {
			fmt.Fprintf(r.w, "%s\n\n", body)
			return
		}
		fence := "```"
		for strings.Contains(body, fence) {
			fence += "`"
		}
		fmt.Fprintf(r.w, "%s\n%s\n%s\n\n", fence, body, fence)
		return
	}
	if body == "" {
		fmt.Fprintf(r.w, "  %s%s%s\n", color, label, r.pal.reset)
		return
	}
	if !strings.Contains(body, "\n") && len(body) < 100 {
		fmt.Fprintf(r.w, "  %s%s ›%s %s\n", color, label, r.pal.reset, body)
		return
	}
	fmt.Fprintf(r.w, "  %s%s ›%s\n", color, label, r.pal.reset)
	for _, l := range strings.Split(body, "\n") {
		fmt.Fprintf(r.w, "    %s\n", l)
	}
}

func (r *renderer) cut(s string) string {
	if r.opts.MaxLines <= 0 {
		return s
	}
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' {
			n++
			if n == r.opts.MaxLines {
				rest := strings.Count(s[i+1:], "\n") + 1
				return s[:i] + fmt.Sprintf("\n… %d more lines", rest)
			}
		}
	}
	return s
}

// jsonText shows a free-form value: a string as itself, anything else as
// indented JSON.
func jsonText(v any) string {
	var raw []byte
	switch x := v.(type) {
	case nil:
		return ""
	case json.RawMessage:
		raw = x
	default:
		b, err := json.Marshal(v)
		if err != nil {
			return fmt.Sprint(v)
		}
		raw = b
	}
	if s, ok := rawjson.String(raw); ok {
		return s
	}
	if string(raw) == "null" {
		return ""
	}
	var out bytes.Buffer
	if err := json.Indent(&out, raw, "", "  "); err == nil {
		return out.String()
	}
	return string(raw)
}

func mdEscape(s string) string {
	return strings.NewReplacer("*", `\*`, "_", `\_`, "`", "\\`").Replace(s)
}

// firstLine is s up to its first newline, marked when cut.
func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " …"
	}
	return s
}
