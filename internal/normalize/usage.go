package normalize

import (
	"github.com/reelhq/reel/internal/rawjson"
	"github.com/reelhq/reel/transcript"
)

// Usage accounting. Providers count tokens three ways, and each format is
// read the way its data says it counts:
//
//   - Anthropic (Messages API, Claude Code) reports input_tokens without
//     the cache: cache reads and writes come on top. reel's Usage counts
//     them inside InputTokens (transcript.Usage), so they are added.
//     Thinking tokens are part of output_tokens already.
//   - OpenAI (Chat Completions, Codex) counts cached input inside
//     input/prompt tokens and reasoning inside output/completion tokens:
//     taken as they are.
//   - Gemini counts thoughts apart from candidates (total = prompt +
//     candidates + thoughts + tool-use prompt): thoughts are added to
//     output and the tool-use prompt to input, when the reported total
//     shows they are not in them already.
//
// Per turn versus running totals, by format:
//
//   - Claude stream-json: a result's usage is that query's own; its
//     modelUsage and total_cost_usd are the process's running totals
//     (they restart with each process, also with --resume), and only
//     modelUsage counts calls no query reports, such as a /compact's. So
//     tokens and cost both come from the last modelUsage and
//     total_cost_usd of each process (claudeTotals).
//   - Codex exec JSON: turn.completed's usage is the thread's running
//     total (after a resume it includes the earlier turns): the last one
//     per thread counts (codexExec), and Result.SessionTotal hands it to a
//     caller that knows the earlier turns' total.
//   - Codex rollouts: token_count events carry the session's running
//     total (total_token_usage), which starts again from zero when Codex
//     starts a new conversation in the same file (a compaction, a
//     resumed or forked session): the last total before each restart
//     counts, and they add up (runningTotal). Taking the file's last total
//     alone counted a 1.4M-token session as 37k.
//   - Anthropic SSE, OpenAI chunks, Gemini, Copilot: one report per model
//     call or turn: they add up.

// codexUsage and copilotUsage are transcript.Usage as Codex and Copilot
// spell it: the same fields in the same order, so each converts to it,
// the keys the binder does not find by folding in tags, and "-" on a
// count the provider does not report. They read the counts as the provider
// reports them; its reader brings them to reel's convention where they
// differ.
type codexUsage struct {
	InputTokens        int64
	OutputTokens       int64
	CacheReadTokens    int64 `raw:"cached_input_tokens"`
	CacheWriteTokens   int64 `raw:"cache_write_input_tokens"`
	CacheWrite1hTokens int64 `raw:"-"`
	ReasoningTokens    int64 `raw:"reasoning_output_tokens"`
	TotalTokens        int64
}

type copilotUsage struct {
	InputTokens, OutputTokens, CacheReadTokens, CacheWriteTokens int64
	CacheWrite1hTokens, ReasoningTokens, TotalTokens             int64 `raw:"-"`
}

var (
	codexUsageFields   = rawjson.NewBinder[codexUsage]()
	copilotUsageFields = rawjson.NewBinder[copilotUsage]()
)

func readCodexUsage(v []byte) transcript.Usage {
	var u codexUsage
	_, _ = codexUsageFields.Bind(v, &u)
	return transcript.Usage(u)
}

func readCopilotUsage(v []byte) transcript.Usage {
	var u copilotUsage
	_, _ = copilotUsageFields.Bind(v, &u)
	return transcript.Usage(u)
}

// runningTotal adds up a counter reported as a running total that may
// start again from zero: each run of reports counts by its last, and a
// report below the one before it starts a new run.
type runningTotal struct {
	done, last transcript.Usage
}

func (r *runningTotal) report(u transcript.Usage) {
	if u.InputTokens < r.last.InputTokens || u.OutputTokens < r.last.OutputTokens || u.TotalTokens < r.last.TotalTokens {
		r.done.Add(r.last)
	}
	r.last = u
}

// total is the sum over the runs of reports.
func (r *runningTotal) total() transcript.Usage {
	u := r.done
	u.Add(r.last)
	return u
}

// anUsage is an Anthropic usage object as the provider counts it.
type anUsage struct {
	input, output, cacheRead, cacheWrite, cacheWrite1h, thinking int64
}

// read sets the fields v names, leaving the others as they are (a
// message_delta repeats only what changed).
func (a *anUsage) read(v []byte) {
	_ = eachField(v, func(k, val []byte) {
		switch string(k) {
		case "input_tokens", "inputTokens":
			a.input = rawjson.Int(val)
		case "output_tokens", "outputTokens":
			a.output = rawjson.Int(val)
		case "cache_read_input_tokens", "cacheReadInputTokens":
			a.cacheRead = rawjson.Int(val)
		case "cache_creation_input_tokens", "cacheCreationInputTokens":
			a.cacheWrite = rawjson.Int(val)
		case "cache_creation":
			a.cacheWrite1h = rawjson.Int(field(val, "ephemeral_1h_input_tokens"))
		case "output_tokens_details":
			a.thinking = rawjson.Int(field(val, "thinking_tokens"))
		case "thinkingTokens":
			a.thinking = rawjson.Int(val)
		}
	})
}

func (a *anUsage) add(o anUsage) {
	a.input += o.input
	a.output += o.output
	a.cacheRead += o.cacheRead
	a.cacheWrite += o.cacheWrite
	a.cacheWrite1h += o.cacheWrite1h
	a.thinking += o.thinking
}

// allInput is every input token, the cache included.
func (a anUsage) allInput() int64 { return a.input + a.cacheRead + a.cacheWrite }

// covers reports whether a is at least b in every count: a running total
// that has gone on from b.
func (a anUsage) covers(b anUsage) bool {
	return a.input >= b.input && a.output >= b.output && a.cacheRead >= b.cacheRead && a.cacheWrite >= b.cacheWrite
}

// usage converts to reel's Usage.
func (a anUsage) usage() transcript.Usage {
	in := a.allInput()
	return transcript.Usage{
		InputTokens: in, OutputTokens: a.output,
		CacheReadTokens: a.cacheRead, CacheWriteTokens: a.cacheWrite, CacheWrite1hTokens: min(a.cacheWrite1h, a.cacheWrite),
		ReasoningTokens: a.thinking, TotalTokens: in + a.output,
	}
}

func claudeUsage(v []byte) transcript.Usage {
	var a anUsage
	a.read(v)
	return a.usage()
}

// claudeProcess is one Claude Code process's running totals in a stream.
type claudeProcess struct {
	snap    anUsage // the last modelUsage, summed over models
	cost    float64
	hasCost bool
	// own adds up the results' own usage: the 1-hour cache writes
	// modelUsage does not split out, and the tokens when no result
	// carries a modelUsage.
	own anUsage
}

// claudeTotals reads the usage and cost of a Claude stream's result lines.
type claudeTotals struct {
	procs []claudeProcess
	// noSnapshot is set once a result without a modelUsage is seen (older
	// Claude Code): tokens then add up the results' own usage.
	noSnapshot bool
	lastSID    string
}

// result takes one result line: usage is its own usage, models its
// modelUsage, cost its total_cost_usd.
func (t *claudeTotals) result(sid string, usage, models, cost []byte) {
	var own anUsage
	own.read(usage)
	var snap anUsage
	haveSnap := false
	_ = eachField(models, func(_, m []byte) {
		var one anUsage
		one.read(m)
		snap.add(one)
		haveSnap = true
	})
	c, haveCost := float(cost)
	if !haveSnap {
		t.noSnapshot = true
	}
	cur := t.current()
	// A running total restarts with a new process: the snapshot (or the
	// cost) no longer covers the previous one plus this query's own
	// usage. Without a snapshot, a new session id or a falling cost
	// says the same.
	restart := cur == nil
	if cur != nil {
		switch {
		case haveSnap:
			want := cur.snap
			want.add(own)
			restart = !snap.covers(want) || haveCost && cur.hasCost && c < cur.cost
		case haveCost && cur.hasCost:
			restart = c < cur.cost || sid != t.lastSID
		default:
			restart = sid != t.lastSID
		}
	}
	if restart {
		t.procs = append(t.procs, claudeProcess{})
		cur = &t.procs[len(t.procs)-1]
	}
	t.lastSID = sid
	if haveSnap {
		cur.snap = snap
	}
	cur.own.add(own)
	if haveCost {
		cur.cost, cur.hasCost = c, true
	}
}

func (t *claudeTotals) current() *claudeProcess {
	if len(t.procs) == 0 {
		return nil
	}
	return &t.procs[len(t.procs)-1]
}

// totals returns the stream's usage and cost (nil when no result reported
// one).
func (t *claudeTotals) totals() (transcript.Usage, *float64) {
	var all anUsage
	var cost float64
	hasCost := false
	for _, p := range t.procs {
		all.add(t.procUsage(p))
		if p.hasCost {
			cost += p.cost
			hasCost = true
		}
	}
	if !hasCost {
		return all.usage(), nil
	}
	return all.usage(), &cost
}

// procUsage is what one process reported: its last modelUsage, or the
// sum of its results' own usage when the results carry none.
func (t *claudeTotals) procUsage(p claudeProcess) anUsage {
	if t.noSnapshot {
		return p.own
	}
	s := p.snap
	// modelUsage has no 1-hour split: the queries' own reports give it (a
	// lower bound when a compaction wrote to the cache).
	s.cacheWrite1h = min(p.own.cacheWrite1h, s.cacheWrite)
	if s.thinking == 0 {
		s.thinking = p.own.thinking
	}
	return s
}

// lastProcess returns the last process's running totals (its modelUsage
// and total_cost_usd) and what its queries themselves reported, for
// Result.SessionTotal: a resumed Claude Code process (2.1.332) starts its
// totals from the session's earlier processes. ok is false without a
// modelUsage.
func (t *claudeTotals) lastProcess() (total transcript.Usage, cost *float64, own transcript.Usage, ok bool) {
	p := t.current()
	if p == nil || t.noSnapshot {
		return transcript.Usage{}, nil, transcript.Usage{}, false
	}
	if p.hasCost {
		c := p.cost
		cost = &c
	}
	return t.procUsage(*p).usage(), cost, p.own.usage(), true
}

// geminiCounts are Gemini's token counts; their names are a chat file's
// keys (geminiTokens).
type geminiCounts struct {
	Input, Output, Cached, Thoughts, Tool, Total int64
}

// usage converts Gemini's counts: thoughts and the tool-use prompt are apart
// from output and input when total says so.
func (c geminiCounts) usage() transcript.Usage {
	in, out := c.Input, c.Output
	if c.Total == 0 || c.Total >= c.Input+c.Output+c.Thoughts+c.Tool {
		in += c.Tool
		out += c.Thoughts
	}
	return transcript.Usage{InputTokens: in, OutputTokens: out, CacheReadTokens: c.Cached, ReasoningTokens: c.Thoughts, TotalTokens: in + out}
}
