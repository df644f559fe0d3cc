package index

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"runtime"
	"sort"
	"strings"

	"github.com/reelhq/reel/internal/rawjson"
	"github.com/reelhq/reel/internal/runs"
	"github.com/reelhq/reel/internal/runstatus"
	"github.com/reelhq/reel/internal/safefile"
	"github.com/reelhq/reel/transcript"
)

// candidate is a transcript to bring up to date.
type candidate struct {
	path    string
	size    int64
	started string // first line's timestamp, for ordering a scan
}

// headSize is how much of a file's start identifies it: a transcript
// replaced by another one differs there (run id, first timestamp).
const headSize = 160

// orderByStart sorts candidates by their first event's time, so chunk
// rowids, and with them search results, follow the runs' order.
func orderByStart(cands []candidate) {
	if len(cands) < 2 {
		return
	}
	finder := rawjson.NewFinder("timestamp")
	buf := make([]byte, 1024)
	for i := range cands {
		f, err := safefile.Open(cands[i].path)
		if err != nil {
			continue
		}
		n, _ := io.ReadFull(f, buf)
		f.Close()
		line := buf[:n]
		if j := bytes.IndexByte(line, '\n'); j >= 0 {
			line = line[:j]
		}
		if ts, ok, _ := finder.String(line); ok {
			cands[i].started = string(ts)
		}
	}
	sort.SliceStable(cands, func(i, j int) bool { return cands[i].started < cands[j].started })
}

// prepared is one file's update, computed outside the write transaction.
type prepared struct {
	path, runID string
	base        row // the row it was computed from
	gone        bool
	reset       bool // the row and chunks are replaced
	size, mtime int64
	head        string
	offset      int64 // new offset: end of the last complete line read
	fold        fold
	chunks      []chunk
	redoLast    bool // base.lastChunk is replaced by the first chunk
	bytes       int64
	skipped     int // lines over maxLine, left out
}

// maxLine is the longest line the index reads: the readers' own limit
// (transcript.DefaultMaxLineSize), past which they leave a line out. A
// longer line is streamed past, never held.
const maxLine = transcript.DefaultMaxLineSize

type chunk struct {
	start, end int64
	terms      []byte
}

func runIDOf(path string) (string, error) {
	id := strings.TrimSuffix(filepath.Base(path), ".jsonl")
	if err := transcript.ValidRunID(id); err != nil {
		return "", fmt.Errorf("index %s: not a transcript of the storage: %w", path, err)
	}
	return id, nil
}

// updateCandidates brings the files up to date: several read and tokenize
// in parallel, one writes, in the candidates' order.
func (ix *Index) updateCandidates(ctx context.Context, cands []candidate) (Stats, error) {
	var stats Stats
	if len(cands) == 0 {
		return stats, nil
	}
	workers := min(runtime.GOMAXPROCS(0), len(cands))
	type job struct {
		c   candidate
		out chan result
	}
	jobs := make(chan job)
	queue := make(chan chan result, workers*2)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		defer close(queue)
		for _, c := range cands {
			out := make(chan result, 1)
			select {
			case queue <- out:
			case <-ctx.Done():
				return
			}
			select {
			case jobs <- job{c, out}:
			case <-ctx.Done():
				return
			}
		}
		close(jobs)
	}()
	for range workers {
		go func() {
			sc := newScratch()
			for j := range jobs {
				p, err := ix.prepare(ctx, sc, j.c.path, nil)
				j.out <- result{p, err}
			}
		}()
	}
	// Batches of files share a transaction: one commit per file would
	// cost a WAL sync each.
	var tx *txWriter
	pending := int64(0)
	commit := func() error {
		if tx == nil {
			return nil
		}
		if err := tx.rollUps(ctx); err != nil {
			return err
		}
		err := tx.Commit()
		tx, pending = nil, 0
		return err
	}
	defer func() {
		if tx != nil {
			tx.Rollback()
		}
	}()
	for out := range queue {
		r := <-out
		if r.err != nil {
			return stats, r.err
		}
		if tx == nil {
			var err error
			if tx, err = ix.begin(ctx); err != nil {
				return stats, fmt.Errorf("index: %w", err)
			}
		}
		n, err := ix.apply(ctx, tx, r.p)
		if err != nil {
			return stats, err
		}
		if n > 0 {
			stats.Files++
			stats.Bytes += n
			stats.Skipped += r.p.skipped
		}
		pending += n + 1
		if pending > 64<<20 {
			if err := commit(); err != nil {
				return stats, fmt.Errorf("index: %w", err)
			}
		}
	}
	if err := commit(); err != nil {
		return stats, fmt.Errorf("index: %w", err)
	}
	return stats, ctx.Err()
}

type result struct {
	p   *prepared
	err error
}

// txWriter is a write transaction with the statements every file's update
// runs prepared once: compiling them for each chunk and file was a few
// percent of the one writer's time.
type txWriter struct {
	*sql.Tx
	chunk, terms, run *sql.Stmt
	// dirty are the runs whose children's rows changed: their figures
	// are worked out again once, before the commit (rollUps), rather
	// than once per child, which for a run of thousands of sub-workflow
	// runs would read its children's rows thousands of times.
	dirty map[string]bool
}

// above marks the parent run id of a row written or removed (rollUp).
func (tx *txWriter) above(parent string) {
	if parent == "" {
		return
	}
	if tx.dirty == nil {
		tx.dirty = map[string]bool{}
	}
	tx.dirty[parent] = true
}

// rollUps works out again the figures of the runs marked and of those
// above them.
func (tx *txWriter) rollUps(ctx context.Context) error {
	for id := range tx.dirty {
		if err := rollUp(ctx, tx, id); err != nil {
			return err
		}
	}
	tx.dirty = nil
	return nil
}

const insertRun = `INSERT OR REPLACE INTO runs(run_id, parent_run_id, workflow, imported, untimed, started, last_event, ended, status,
	exit_code, duration_ms, error, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, reasoning_tokens, total_tokens,
	cost_usd, computed_usd, unpriced_steps, steps, failed_steps, tool_calls, tool_errors, events, providers, models, file, size, mtime, head,
	offset, fold, own)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

func (ix *Index) begin(ctx context.Context) (*txWriter, error) {
	tx, err := ix.conn().BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	w := &txWriter{Tx: tx}
	for _, s := range []struct {
		stmt **sql.Stmt
		sql  string
	}{
		{&w.chunk, `INSERT INTO chunks(run_id, start, end) VALUES (?, ?, ?)`},
		{&w.terms, `INSERT INTO fts(rowid, terms) VALUES (?, ?)`},
		{&w.run, insertRun},
	} {
		if *s.stmt, err = tx.PrepareContext(ctx, s.sql); err != nil {
			tx.Rollback()
			return nil, err
		}
	}
	return w, nil
}

// scratch is the memory one reader of transcripts reuses from file to
// file: without it, the read buffer and the term set were most of what
// indexing allocated, and the garbage collections they caused stopped the
// database writer over and over.
type scratch struct {
	r   *bufio.Reader
	set *termSet
}

func newScratch() *scratch {
	return &scratch{r: bufio.NewReaderSize(nil, 1<<20), set: newTermSet()}
}

// prepare reads what is new in the file at path. base is the row to start
// from; nil reads it from the database. sc may be nil.
func (ix *Index) prepare(ctx context.Context, sc *scratch, path string, base *row) (*prepared, error) {
	id, err := runIDOf(path)
	if err != nil {
		return nil, err
	}
	p := &prepared{path: path, runID: id}
	if base == nil {
		r, err := ix.readRowDB(ctx, id)
		if err != nil {
			return nil, fmt.Errorf("index %s: %w", path, err)
		}
		base = &r
	}
	p.base = *base
	f, err := safefile.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		p.gone = true
		return p, nil
	}
	if err != nil {
		return nil, fmt.Errorf("index %s: %w", path, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("index %s: %w", path, err)
	}
	p.size, p.mtime = st.Size(), st.ModTime().UnixNano()
	head := make([]byte, headSize)
	n, _ := io.ReadFull(f, head)
	p.head = string(head[:n])
	b := p.base
	if b.found && b.size == p.size && b.mtime == p.mtime && b.head == p.head {
		p.offset, p.fold = b.offset, b.fold
		return p, nil // unchanged
	}
	from, foldFrom := int64(0), int64(0)
	if b.found && p.size >= b.offset && strings.HasPrefix(p.head, b.head[:min(len(b.head), len(p.head))]) && len(b.head) <= len(p.head) {
		p.fold, foldFrom, from = b.fold, b.offset, b.offset
		if b.lastChunkFound && b.lastEnd == b.offset && b.lastEnd-b.lastStart < chunkSize/4 {
			from, p.redoLast = b.lastStart, true
		}
	} else {
		p.reset = true
	}
	if _, err := f.Seek(from, io.SeekStart); err != nil {
		return nil, fmt.Errorf("index %s: %w", path, err)
	}
	if sc == nil {
		sc = newScratch()
	}
	sc.r.Reset(f)
	sc.set.reset()
	if err := p.read(ctx, sc.r, sc.set, from, foldFrom); err != nil {
		return nil, fmt.Errorf("index %s: %w", path, err)
	}
	return p, nil
}

// read folds and tokenizes the complete lines from offset from; lines
// before foldFrom were folded by an earlier update and are only tokenized.
func (p *prepared) read(ctx context.Context, r *bufio.Reader, set *termSet, from, foldFrom int64) error {
	var (
		env  runs.Envelope
		cur  = chunk{start: from, end: from}
		pos  = from
		long []byte
	)
	tk := tokenizer{emit: set.add}
	flush := func() {
		if cur.end > cur.start {
			cur.terms = bytes.Clone(set.text)
			p.chunks = append(p.chunks, cur)
		}
		cur = chunk{start: pos, end: pos}
		set.reset()
	}
	lines := 0
	for {
		line, err := r.ReadSlice('\n')
		over := false
		if errors.Is(err, bufio.ErrBufferFull) {
			long = append(long[:0], line...)
			n := int64(len(line))
			for errors.Is(err, bufio.ErrBufferFull) {
				line, err = r.ReadSlice('\n')
				n += int64(len(line))
				if over = over || n > maxLine+1; !over {
					long = append(long, line...)
				}
			}
			if over {
				// Past the readers' line limit: they leave the line out,
				// and so does the index, streaming past it rather than
				// holding it (a 300 MB line cost a gigabyte). It ends a
				// chunk and starts none, so a search never reads it.
				if err != nil {
					if errors.Is(err, io.EOF) {
						break // not complete yet: counted once it is
					}
					return err
				}
				p.skipped++
				flush()
				pos += n
				cur = chunk{start: pos, end: pos}
				continue
			}
			line = long
		}
		if err != nil {
			// io.EOF: what is left has no newline yet (being written,
			// or torn); it is read once it is complete.
			if errors.Is(err, io.EOF) {
				break
			}
			return err
		}
		lines++
		if lines%4096 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		body := line[:len(line)-1]
		if pos >= foldFrom {
			if ferr := p.fold.line(&env, body); ferr == nil {
				searchable(env.Type, env.Payload, tk.jsonString)
			}
		} else if env.Parse(body) == nil {
			searchable(env.Type, env.Payload, tk.jsonString)
		}
		pos += int64(len(line))
		cur.end = pos
		if cur.end-cur.start >= chunkSize {
			flush()
		}
	}
	flush()
	p.offset = pos
	p.bytes = pos - from
	return nil
}

// readRowDB reads a row outside any transaction: the connections are opened
// with BEGIN IMMEDIATE, which would wait for the writer, while a plain read
// in WAL mode does not. apply rereads the row inside its transaction.
func (ix *Index) readRowDB(ctx context.Context, runID string) (row, error) {
	return ix.readRow(ctx, ix.conn(), runID)
}

// apply writes a prepared update inside tx. When the row changed since p
// was prepared (another process updated the file's row), p is prepared
// again from the current row first. It returns the bytes indexed.
func (ix *Index) apply(ctx context.Context, tx *txWriter, p *prepared) (int64, error) {
	cur, err := ix.readRow(ctx, tx, p.runID)
	if err != nil {
		return 0, fmt.Errorf("index %s: %w", p.path, err)
	}
	if cur.found != p.base.found || cur.offset != p.base.offset || cur.size != p.base.size || cur.mtime != p.base.mtime {
		if p, err = ix.prepare(ctx, nil, p.path, &cur); err != nil {
			return 0, err
		}
	}
	if p.gone {
		if !cur.found {
			return 0, nil
		}
		if err := ix.deleteRun(ctx, tx.Tx, p.runID); err != nil {
			return 0, err
		}
		tx.above(cur.fold.ParentRunID)
		return 0, nil
	}
	if cur.found && !p.reset && p.size == cur.size && p.mtime == cur.mtime && p.head == cur.head {
		return 0, nil
	}
	if p.reset && cur.found {
		if err := ix.deleteRun(ctx, tx.Tx, p.runID); err != nil {
			return 0, fmt.Errorf("index %s: %w", p.path, err)
		}
	}
	if p.redoLast && !p.reset {
		if _, err := tx.ExecContext(ctx, `DELETE FROM fts WHERE rowid = ?`, cur.lastChunk); err != nil {
			return 0, fmt.Errorf("index %s: %w", p.path, err)
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM chunks WHERE id = ?`, cur.lastChunk); err != nil {
			return 0, fmt.Errorf("index %s: %w", p.path, err)
		}
	}
	for _, c := range p.chunks {
		res, err := tx.chunk.ExecContext(ctx, p.runID, c.start, c.end)
		if err != nil {
			return 0, fmt.Errorf("index %s: %w", p.path, err)
		}
		id, err := res.LastInsertId()
		if err != nil {
			return 0, fmt.Errorf("index %s: %w", p.path, err)
		}
		if len(c.terms) > 0 {
			if _, err := tx.terms.ExecContext(ctx, id, c.terms); err != nil {
				return 0, fmt.Errorf("index %s: %w", p.path, err)
			}
		}
	}
	f := &p.fold
	if f.RunID == "" {
		f.RunID = p.runID
	}
	foldJSON, err := json.Marshal(f)
	if err != nil {
		return 0, fmt.Errorf("index %s: %w", p.path, err)
	}
	steps := f.Steps.Counts(runstatus.Running) // an open execution is neither failed nor anything Total leaves out
	var exit any
	if f.ExitCode != nil {
		exit = *f.ExitCode
	}
	o := f.own(ix.prices)
	ownJSON, err := json.Marshal(o)
	if err != nil {
		return 0, fmt.Errorf("index %s: %w", p.path, err)
	}
	kids, err := childFigures(ctx, tx, p.runID)
	if err != nil {
		return 0, fmt.Errorf("index %s: %w", p.path, err)
	}
	fig := o.with(kids)
	u := fig.usage
	_, err = tx.run.ExecContext(ctx,
		p.runID, f.ParentRunID, f.Workflow, f.imported(), f.Untimed, f.Started, f.Last, f.Ended, f.Status,
		exit, f.durationMS(), f.Error, u.InputTokens, u.OutputTokens, u.CacheReadTokens, u.CacheWriteTokens, u.ReasoningTokens, u.TotalTokens,
		nullCost(fig.cost), fig.cost.Computed, fig.cost.Unpriced, steps.Total(), steps.Failed, f.ToolCalls, f.ToolErrors, f.Events,
		joinSet(f.Providers), joinSet(f.Models), p.path, p.size, p.mtime, p.head, p.offset, string(foldJSON), string(ownJSON))
	if err != nil {
		return 0, fmt.Errorf("index %s: %w", p.path, err)
	}
	// The runs above it show its figures in theirs; so did the parent it
	// had before its file was replaced.
	tx.above(f.ParentRunID)
	if cur.found {
		tx.above(cur.fold.ParentRunID)
	}
	return max(p.bytes, 1), nil
}
