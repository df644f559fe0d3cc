package index

// Benchmarks of the run index, each beside a plain standard-library way of
// doing the same job, reporting the ratio as x-vs-stdlib (higher is better
// for reel):
//
//	BenchmarkList10k   the run list API's query at 10,000 runs, against
//	                   reading every transcript's first and last line
//	BenchmarkIndex     indexing transcripts (MB/s), against decoding every
//	                   line with encoding/json
//	BenchmarkSearch    one search once indexed, against scanning every
//	                   transcript for the words (bytes.Contains)
//
// The corpus is generated: runs of realistic shape (prompts, replies,
// thinking, tool calls with code-like output, command steps) whose words
// follow a Zipf distribution over a 50,000-word vocabulary, so posting
// lists and chunk term sets look like real text. REEL_BENCH_SEARCH_MB sets
// the search corpus (default 1024 MB; it is written once per run under the
// test's temporary directory).

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/reelhq/reel/internal/proctest"
	"github.com/reelhq/reel/transcript"
)

type corpus struct {
	words []string
	zipf  *rand.Zipf
	r     *rand.Rand
}

func newCorpus(seed int64) *corpus {
	r := rand.New(rand.NewSource(seed))
	words := make([]string, 50000)
	for i := range words {
		n := 2 + r.Intn(9)
		b := make([]byte, n)
		for j := range b {
			b[j] = byte('a' + r.Intn(26))
		}
		words[i] = string(b)
	}
	return &corpus{words: words, zipf: rand.NewZipf(r, 1.1, 1, uint64(len(words)-1)), r: r}
}

func (c *corpus) text(n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			if c.r.Intn(12) == 0 {
				b.WriteString(".\n")
			} else {
				b.WriteByte(' ')
			}
		}
		b.WriteString(c.words[c.zipf.Uint64()])
	}
	return b.String()
}

// writeRun writes one run of about size bytes into dir, starting at start.
func (c *corpus) writeRun(b testing.TB, dir string, start time.Time, size int) int64 {
	id := transcript.NewRunID()
	var buf []byte
	seq := uint64(0)
	now := start
	add := func(ev transcript.ExchangeEvent) {
		seq++
		now = now.Add(time.Duration(1+c.r.Intn(900)) * time.Millisecond)
		ev.Seq, ev.RunID, ev.Timestamp = seq, id, now
		var err error
		if buf, err = transcript.AppendEvent(buf, &ev); err != nil {
			b.Fatal(err)
		}
		buf = append(buf, '\n')
	}
	wf := fmt.Sprintf("flow-%d", c.r.Intn(20))
	add(transcript.ExchangeEvent{Type: transcript.RunStarted, Payload: &transcript.StepPayload{Name: wf, Kind: transcript.KindWorkflow}})
	var usage transcript.Usage
	for step := 0; len(buf) < size; step++ {
		path := fmt.Sprintf("step%d", step)
		if step%3 == 2 {
			add(transcript.ExchangeEvent{Type: transcript.StepStarted, Path: path, Payload: &transcript.StepPayload{Name: path, Kind: transcript.KindCommand, Command: "go test ./" + c.words[c.zipf.Uint64()]}})
			add(transcript.ExchangeEvent{Type: transcript.StepCompleted, Path: path, Payload: &transcript.StepPayload{Name: path, Kind: transcript.KindCommand,
				Result: transcript.CommandResult{Output: c.text(300 + c.r.Intn(1500))}}})
			continue
		}
		add(transcript.ExchangeEvent{Type: transcript.StepStarted, Path: path, Payload: &transcript.StepPayload{Name: path, Kind: transcript.KindAgent}})
		add(transcript.ExchangeEvent{Type: transcript.MessageUser, Path: path, Payload: &transcript.MessagePayload{Role: "user", Blocks: []transcript.ContentBlock{
			{Type: transcript.BlockText, Fidelity: transcript.FidelityRouter, Text: c.text(40 + c.r.Intn(200))}}}})
		for k := 0; k < 1+c.r.Intn(4); k++ {
			callID := fmt.Sprintf("toolu_%d_%d", step, k)
			input := map[string]any{"file_path": c.words[c.zipf.Uint64()] + ".go"}
			add(transcript.ExchangeEvent{Type: transcript.MessageAssistant, Path: path, Payload: &transcript.MessagePayload{Role: "assistant", Blocks: []transcript.ContentBlock{
				{Type: transcript.BlockThinking, Fidelity: transcript.FidelityAgentEmitted, Thinking: c.text(30 + c.r.Intn(120))},
				{Type: transcript.BlockText, Fidelity: transcript.FidelityAgentEmitted, Text: c.text(20 + c.r.Intn(80))},
				{Type: transcript.BlockToolUse, Fidelity: transcript.FidelityAgentEmitted, ToolName: "Read", ToolID: callID, ToolInput: input}}}})
			add(transcript.ExchangeEvent{Type: transcript.ToolCall, Path: path, Payload: &transcript.ToolPayload{Name: "Read", CallID: callID, Input: input, Fidelity: transcript.FidelityAgentEmitted}})
			add(transcript.ExchangeEvent{Type: transcript.ToolResult, Path: path, Payload: &transcript.ToolPayload{Name: "Read", CallID: callID, Input: input, Output: c.text(200 + c.r.Intn(2000)), Fidelity: transcript.FidelityAgentEmitted}})
		}
		u := transcript.Usage{InputTokens: int64(c.r.Intn(5000)), OutputTokens: int64(c.r.Intn(900))}
		u.TotalTokens = u.InputTokens + u.OutputTokens
		usage.Add(u)
		cost := float64(u.TotalTokens) * 3e-6
		add(transcript.ExchangeEvent{Type: transcript.StepCompleted, Path: path, Payload: &transcript.StepPayload{Name: path, Kind: transcript.KindAgent,
			Result: transcript.AgentResult{Output: "done", Provider: "claude", Model: "claude-sonnet-4-5", Usage: u, CostUSD: &cost}}})
	}
	status := "success"
	if c.r.Intn(10) == 0 {
		status = "failure"
	}
	add(transcript.ExchangeEvent{Type: transcript.RunCompleted, Payload: &transcript.StepPayload{Name: wf, Kind: transcript.KindWorkflow,
		Result: transcript.RunResult{Status: status, DurationMS: now.Sub(start).Milliseconds(), Usage: usage}}})
	if err := os.WriteFile(filepath.Join(dir, id+".jsonl"), buf, 0o600); err != nil {
		b.Fatal(err)
	}
	return int64(len(buf))
}

// writeCorpus writes runs of about runSize bytes until total bytes.
func writeCorpus(b testing.TB, storage string, runs int, runSize int) int64 {
	dir := transcript.Dir(storage)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		b.Fatal(err)
	}
	c := newCorpus(1)
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var total int64
	for i := range runs {
		total += c.writeRun(b, dir, start.Add(time.Duration(i)*time.Minute), runSize)
	}
	return total
}

// BenchmarkList10k: the first page of the run list (what GET /api/runs
// answers) at 10,000 runs, Sync included, against the standard-library
// way: read the first line and the last 64 KiB of every transcript,
// decode both with encoding/json, sort by start.
func BenchmarkList10k(b *testing.B) {
	storage := b.TempDir()
	writeCorpus(b, storage, 10000, 1500)
	ix, _, err := Rebuild(context.Background(), storage)
	if err != nil {
		b.Fatal(err)
	}
	defer ix.Close()
	ctx := context.Background()
	// A filtered page too: the filters must not fall back to a scan.
	for _, f := range []Filter{{}, {Workflow: "flow-3"}, {Status: "failure"}} {
		if p, err := ix.List(ctx, f); err != nil || len(p.Runs) == 0 {
			b.Fatalf("%+v: %v", f, err)
		}
	}
	baseStart := time.Now()
	if n := stdlibList(b, transcript.Dir(storage)); n != 10000 {
		b.Fatalf("baseline listed %d", n)
	}
	baseDur := time.Since(baseStart)
	b.ResetTimer()
	start := time.Now()
	for range b.N {
		if err := ix.Sync(ctx); err != nil {
			b.Fatal(err)
		}
		if _, err := ix.List(ctx, Filter{}); err != nil {
			b.Fatal(err)
		}
	}
	dur := time.Since(start) / time.Duration(b.N)
	b.ReportMetric(float64(dur.Microseconds())/1000, "ms/list")
	b.ReportMetric(float64(baseDur.Microseconds())/1000, "stdlib-ms/list")
	b.ReportMetric(float64(baseDur)/float64(dur), "x-vs-stdlib")
}

func stdlibList(b *testing.B, dir string) int {
	entries, err := os.ReadDir(dir)
	if err != nil {
		b.Fatal(err)
	}
	type row struct {
		id      string
		started string
		status  string
	}
	var rows []row
	for _, e := range entries {
		f, err := os.Open(filepath.Join(dir, e.Name()))
		if err != nil {
			b.Fatal(err)
		}
		first, _ := bufio.NewReader(f).ReadBytes('\n')
		var ev struct {
			RunID     string `json:"run_id"`
			Timestamp string `json:"timestamp"`
		}
		json.Unmarshal(first, &ev)
		st, _ := f.Stat()
		off := max(0, st.Size()-64<<10)
		tail := make([]byte, st.Size()-off)
		f.ReadAt(tail, off)
		f.Close()
		tail = bytes.TrimRight(tail, "\n")
		if i := bytes.LastIndexByte(tail, '\n'); i >= 0 {
			tail = tail[i+1:]
		}
		var last struct {
			Payload struct {
				Result struct {
					Status string `json:"status"`
				} `json:"result"`
			} `json:"payload"`
		}
		json.Unmarshal(tail, &last)
		rows = append(rows, row{ev.RunID, ev.Timestamp, last.Payload.Result.Status})
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].started > rows[j].started })
	return len(rows)
}

// BenchmarkIndex: building the index from 200 transcripts of about 500 KB,
// against decoding every line with encoding/json (what any indexer that
// parses the events must at least do).
func BenchmarkIndex(b *testing.B) {
	src := b.TempDir()
	n := 200
	if v := os.Getenv("REEL_BENCH_INDEX_RUNS"); v != "" {
		n, _ = strconv.Atoi(v)
	}
	total := writeCorpus(b, src, n, 500<<10)
	baseStart, baseCPU0 := time.Now(), proctest.SelfCPU()
	stdlibDecodeAll(b, transcript.Dir(src))
	baseDur, baseCPU := time.Since(baseStart), proctest.SelfCPU()-baseCPU0
	b.SetBytes(total)
	b.ResetTimer()
	var dur, cpu time.Duration
	for range b.N {
		storage := b.TempDir()
		if err := os.Symlink(transcript.Dir(src), transcript.Dir(storage)); err != nil {
			b.Fatal(err)
		}
		start, cpu0 := time.Now(), proctest.SelfCPU()
		ix, st, err := Rebuild(context.Background(), storage)
		if err != nil {
			b.Fatal(err)
		}
		dur += time.Since(start)
		cpu += proctest.SelfCPU() - cpu0
		ix.Close()
		if st.Bytes != total {
			b.Fatalf("indexed %d of %d bytes", st.Bytes, total)
		}
	}
	dur /= time.Duration(b.N)
	cpu /= time.Duration(b.N)
	b.ReportMetric(float64(total)/dur.Seconds()/1e6, "index-MB/s")
	b.ReportMetric(float64(total)/baseDur.Seconds()/1e6, "stdlib-MB/s")
	b.ReportMetric(float64(baseDur)/float64(dur), "x-vs-stdlib")
	if cpu > 0 && baseCPU > 0 {
		// Per CPU second, which a busy machine does not change: the
		// indexer uses every core, the baseline one.
		b.ReportMetric(float64(total)/cpu.Seconds()/1e6, "index-MB/cpu-s")
		b.ReportMetric(float64(total)/baseCPU.Seconds()/1e6, "stdlib-MB/cpu-s")
	}
}

func stdlibDecodeAll(b *testing.B, dir string) {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		f, err := os.Open(filepath.Join(dir, e.Name()))
		if err != nil {
			b.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			var v map[string]any
			if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
				b.Fatal(err)
			}
		}
		f.Close()
	}
}

// BenchmarkSearch: a first page of hits for a two-word query over the
// whole corpus once indexed, against scanning every transcript line for
// both words.
func BenchmarkSearch(b *testing.B) {
	mb := 1024
	if v := os.Getenv("REEL_BENCH_SEARCH_MB"); v != "" {
		mb, _ = strconv.Atoi(v)
	}
	storage := b.TempDir()
	const runSize = 1 << 20
	total := writeCorpus(b, storage, mb, runSize)
	start, cpu0 := time.Now(), proctest.SelfCPU()
	ix, _, err := Rebuild(context.Background(), storage)
	if err != nil {
		b.Fatal(err)
	}
	defer ix.Close()
	took, cpu := time.Since(start), proctest.SelfCPU()-cpu0
	b.Logf("corpus %.0f MB indexed in %s (%.0f MB/s, %.0f MB per CPU second)", float64(total)/1e6, took.Round(time.Millisecond), float64(total)/1e6/took.Seconds(), float64(total)/1e6/cpu.Seconds())
	// Two mid-frequency words of the vocabulary.
	c := newCorpus(1)
	q := c.words[400] + " " + c.words[900]
	ctx := context.Background()
	baseStart := time.Now()
	baseHits := stdlibScan(b, transcript.Dir(storage), c.words[400], c.words[900], 20)
	baseDur := time.Since(baseStart)
	b.ResetTimer()
	var hits int
	for range b.N {
		p, err := ix.Search(ctx, q, SearchOptions{Limit: 20})
		if err != nil {
			b.Fatal(err)
		}
		hits = len(p.Hits)
	}
	b.StopTimer()
	if hits == 0 || baseHits == 0 {
		b.Fatalf("no hits for %q (baseline %d)", q, baseHits)
	}
	per := b.Elapsed() / time.Duration(b.N)
	b.ReportMetric(float64(total)/1e6, "corpus-MB")
	b.ReportMetric(float64(per.Microseconds())/1000, "ms/search")
	b.ReportMetric(float64(baseDur.Microseconds())/1000, "stdlib-ms/search")
	b.ReportMetric(float64(baseDur)/float64(per), "x-vs-stdlib")
}

// stdlibScan reads every transcript, newest last, and counts the lines
// holding both words, up to want (a grep in Go).
func stdlibScan(b *testing.B, dir, w1, w2 string, want int) int {
	entries, _ := os.ReadDir(dir)
	n := 0
	for _, e := range entries {
		f, err := os.Open(filepath.Join(dir, e.Name()))
		if err != nil {
			b.Fatal(err)
		}
		data, err := io.ReadAll(f)
		f.Close()
		if err != nil {
			b.Fatal(err)
		}
		for line := range bytes.SplitSeq(data, []byte("\n")) {
			if bytes.Contains(line, []byte(w1)) && bytes.Contains(line, []byte(w2)) {
				n++
			}
		}
	}
	return min(n, want)
}
