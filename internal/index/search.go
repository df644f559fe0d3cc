package index

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/reelhq/reel/internal/safefile"
)

// Query is a parsed search: every term, prefix and phrase must occur in one
// event, and no excluded term may.
//
//	word        the term (case-insensitive; "read_file" is the phrase read file)
//	pre*        a term starting with pre
//	"two words" the terms next to each other, in this order
//	-word       events holding the term are left out
type Query struct {
	Terms    []string   `json:"terms,omitempty"`
	Prefixes []string   `json:"prefixes,omitempty"`
	Phrases  [][]string `json:"phrases,omitempty"`
	Exclude  []string   `json:"exclude,omitempty"`
}

// ErrEmptyQuery is returned for a query with nothing to look for.
var ErrEmptyQuery = errors.New("the query has no word to search for")

// The largest query searched: a longer one is refused before any work
// (ErrQueryTooLarge). A query is parsed, matched against every candidate
// event and turned into one FTS5 expression, each at a cost that grows
// with its words: a 50,000-word query cost 47 s of CPU.
const (
	MaxQueryBytes = 2048 // bytes of query text
	MaxQueryWords = 64   // words, counted as written (repeats, phrases' words, -words and pre* included)
)

// ErrQueryTooLarge is returned for a query over MaxQueryBytes or
// MaxQueryWords.
var ErrQueryTooLarge = errors.New("the query is too large")

// ErrQueryTooCostly is returned for a search whose first look-up in the
// index did not end within its budget (SearchOptions.Budget): a query of
// many short prefixes.
var ErrQueryTooCostly = errors.New("the query costs too much to answer: use fewer or longer prefixes (pre*)")

// ParseQuery parses the search syntax above.
func ParseQuery(q string) (*Query, error) {
	if len(q) > MaxQueryBytes {
		return nil, fmt.Errorf("%w: %d bytes, at most %d", ErrQueryTooLarge, len(q), MaxQueryBytes)
	}
	pq := &Query{}
	words := 0
	addTerm := func(t string) {
		if !slices.Contains(pq.Terms, t) {
			pq.Terms = append(pq.Terms, t)
		}
	}
	addWords := func(ts []string) {
		for _, t := range ts {
			addTerm(t)
		}
		if len(ts) > 1 {
			pq.Phrases = append(pq.Phrases, ts)
		}
	}
	wordsOf := func(s string) []string {
		ts := tokens(s)
		words += len(ts)
		return ts
	}
	for i := 0; i < len(q) && words <= MaxQueryWords; {
		c := q[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '"':
			j := strings.IndexByte(q[i+1:], '"')
			var s string
			if j < 0 {
				s, i = q[i+1:], len(q)
			} else {
				s, i = q[i+1:i+1+j], i+j+2
			}
			addWords(wordsOf(s))
		default:
			j := i
			for j < len(q) && q[j] != ' ' && q[j] != '\t' && q[j] != '\n' && q[j] != '\r' && q[j] != '"' {
				j++
			}
			w := q[i:j]
			i = j
			switch {
			case len(w) > 1 && w[0] == '-':
				for _, t := range wordsOf(w[1:]) {
					if !slices.Contains(pq.Exclude, t) {
						pq.Exclude = append(pq.Exclude, t)
					}
				}
			case strings.HasSuffix(w, "*"):
				ts := wordsOf(strings.TrimRight(w, "*"))
				if len(ts) == 0 {
					continue
				}
				for _, t := range ts[:len(ts)-1] {
					addTerm(t)
				}
				if p := ts[len(ts)-1]; !slices.Contains(pq.Prefixes, p) {
					pq.Prefixes = append(pq.Prefixes, p)
				}
			default:
				addWords(wordsOf(w))
			}
		}
	}
	if words > MaxQueryWords {
		return nil, fmt.Errorf("%w: over %d words", ErrQueryTooLarge, MaxQueryWords)
	}
	if len(pq.Terms) == 0 && len(pq.Prefixes) == 0 {
		return nil, ErrEmptyQuery
	}
	return pq, nil
}

// tokens returns the terms of s in order, repeats kept.
func tokens(s string) []string {
	var out []string
	tk := tokenizer{emit: func(b []byte) { out = append(out, string(b)) }}
	tk.text([]byte(s))
	return out
}

// match is the FTS5 expression selecting the chunks that may hold a hit.
func (q *Query) match() string {
	var b strings.Builder
	for _, t := range q.Terms {
		b.WriteString(`"` + t + `" `)
	}
	for _, p := range q.Prefixes {
		b.WriteString(`"` + p + `"* `)
	}
	return strings.TrimSpace(b.String())
}

// firstLookup is the least time a search's first look-up in the index is
// given, whatever the budget.
const firstLookup = time.Second

// Segment is a piece of a snippet; Match marks the query's terms.
type Segment struct {
	Text  string `json:"text"`
	Match bool   `json:"match,omitempty"`
}

// Hit is one event that matches a search.
type Hit struct {
	RunID     string    `json:"run_id"`
	Workflow  string    `json:"workflow"`
	Seq       uint64    `json:"seq"`
	Type      string    `json:"type"`
	Path      string    `json:"path"`
	Iteration int       `json:"iteration"`
	Time      time.Time `json:"timestamp"`
	Snippet   []Segment `json:"snippet"`
}

// SearchOptions tune Search.
type SearchOptions struct {
	// Limit is the page size (default 20, at most 500).
	Limit int
	// After is the cursor of the previous page (SearchPage.Next).
	After string
	// Budget bounds the time spent checking candidates (default 150ms);
	// a page cut short by it still has a Next cursor.
	Budget time.Duration
}

// SearchPage is one page of hits, newest first.
type SearchPage struct {
	Query *Query `json:"query"`
	Hits  []Hit  `json:"hits"`
	// Next is the cursor of the following page, empty when there is none.
	Next string `json:"next,omitempty"`
}

// Search finds the events that match q (see Query), newest first.
func (ix *Index) Search(ctx context.Context, q string, opts SearchOptions) (*SearchPage, error) {
	return repaired(ctx, ix, func() (*SearchPage, error) { return ix.search(ctx, q, opts) })
}

func (ix *Index) search(ctx context.Context, q string, opts SearchOptions) (*SearchPage, error) {
	pq, err := ParseQuery(q)
	if err != nil {
		return nil, err
	}
	if opts.Limit <= 0 {
		opts.Limit = 20
	}
	opts.Limit = min(opts.Limit, 500)
	if opts.Budget <= 0 {
		opts.Budget = 150 * time.Millisecond
	}
	below, belowSeq, err := parseSearchCursor(opts.After)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	s := &searcher{
		ix: ix, ctx: ctx, q: pq, limit: opts.Limit, m: newMatcher(pq),
		start: start, budget: opts.Budget, deadline: start.Add(opts.Budget),
		below: below, belowSeq: belowSeq,
		page:      &SearchPage{Query: pq, Hits: []Hit{}},
		workflows: map[string]string{}, files: map[string]*os.File{},
	}
	defer s.close()
	for looked := false; ; looked = true {
		cands, err := s.lookup(looked)
		if errors.Is(err, errBudgetOut) {
			s.page.Next = fmt.Sprintf("%d:%d", s.below, s.belowSeq)
			return s.finish()
		}
		if err != nil {
			return nil, err
		}
		if len(cands) == 0 {
			return s.finish()
		}
		for _, c := range cands {
			full, err := s.check(c)
			if err != nil {
				return nil, err
			}
			if full {
				return s.finish()
			}
		}
		s.below, s.belowSeq = cands[len(cands)-1].id-1, 0
		if s.below < 1 {
			return s.finish()
		}
	}
}

// parseSearchCursor reads a SearchPage.Next cursor: the chunk to start below (or
// at) and, in it, the seq to start below (0: the whole chunk).
func parseSearchCursor(after string) (int64, uint64, error) {
	if after == "" {
		return 1 << 62, 0, nil
	}
	a, b, ok := strings.Cut(after, ":")
	n, err1 := strconv.ParseInt(a, 10, 64)
	s, err2 := strconv.ParseUint(b, 10, 64)
	if !ok || err1 != nil || err2 != nil {
		return 0, 0, fmt.Errorf("%w %q", ErrBadCursor, after)
	}
	return n, s, nil
}

// searcher is one search: it looks up candidate chunks in the index,
// newest first, and checks each against the query until the page is full,
// the chunks run out or the budget does.
type searcher struct {
	ix    *Index
	ctx   context.Context
	q     *Query
	limit int
	m     *matcher

	start, deadline time.Time
	budget          time.Duration
	// below and belowSeq are where the look-ups stand: chunks at or below
	// below, and in that chunk events below belowSeq (0: all of them).
	below     int64
	belowSeq  uint64
	lastChunk int64 // the chunk of the page's last hit

	page      *SearchPage
	workflows map[string]string   // run id -> workflow, for the hits
	files     map[string]*os.File // the transcripts read, by run id
}

// cand is a chunk the index says may hold a match.
type cand struct {
	id         int64
	run        string
	start, end int64
}

// errBudgetOut is lookup's answer when the budget ran out in a look-up
// after the first.
var errBudgetOut = errors.New("search budget spent")

// lookup returns the next candidate chunks, newest first.
func (s *searcher) lookup(looked bool) ([]cand, error) {
	// The budget bounds the look-ups in SQLite too: a query of many short
	// prefixes makes each one merge the postings of thousands of terms.
	// The first gets at least firstLookup, so that a loaded machine does
	// not refuse an ordinary query.
	until := s.deadline
	if !looked {
		until = s.start.Add(max(s.budget, firstLookup))
	}
	lctx, cancel := context.WithDeadline(s.ctx, until)
	var cands []cand
	err := func() error {
		rows, err := s.ix.conn().QueryContext(lctx, `SELECT c.id, c.run_id, c.start, c.end FROM chunks c
			WHERE c.id IN (SELECT rowid FROM fts WHERE fts MATCH ? AND rowid <= ? ORDER BY rowid DESC LIMIT 32)
			ORDER BY c.id DESC`, s.q.match(), s.below)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var c cand
			if err := rows.Scan(&c.id, &c.run, &c.start, &c.end); err != nil {
				return err
			}
			cands = append(cands, c)
		}
		return rows.Err()
	}()
	budgetOut := lctx.Err() != nil
	cancel()
	switch {
	case err == nil:
		return cands, nil
	case s.ctx.Err() != nil:
		return nil, s.ctx.Err() // the caller gave up
	case budgetOut && !looked:
		return nil, ErrQueryTooCostly
	case budgetOut:
		return nil, errBudgetOut
	default:
		return nil, fmt.Errorf("search: %w", err)
	}
}

// check reads candidate chunk c from its transcript and adds its matches
// to the page. full says the page is done: full, or cut short by the
// budget with a cursor to go on from.
func (s *searcher) check(c cand) (full bool, _ error) {
	maxSeq := uint64(0) // 0: the whole chunk
	if c.id == s.below {
		maxSeq = s.belowSeq
	}
	buf, ok := s.read(c)
	if !ok {
		return false, nil
	}
	hits := s.m.chunk(buf, maxSeq)
	page := s.page
	for k := len(hits) - 1; k >= 0; k-- {
		if len(page.Hits) == s.limit {
			page.Next = fmt.Sprintf("%d:%d", s.lastChunk, page.Hits[len(page.Hits)-1].Seq)
			return true, nil
		}
		page.Hits = append(page.Hits, hits[k])
		s.lastChunk = c.id
	}
	if s.ctx.Err() != nil {
		return false, s.ctx.Err()
	}
	if time.Now().After(s.deadline) && c.id > 1 {
		page.Next = fmt.Sprintf("%d:0", c.id-1)
		return true, nil
	}
	return false, nil
}

// read returns chunk c's bytes, or false when its transcript is gone or
// cannot be read.
func (s *searcher) read(c cand) ([]byte, bool) {
	f := s.files[c.run]
	if f == nil {
		var err error
		if f, err = safefile.Open(s.ix.file(c.run)); err != nil {
			return nil, false // removed since it was indexed
		}
		s.files[c.run] = f
	}
	buf := make([]byte, c.end-c.start)
	if _, err := f.ReadAt(buf, c.start); err != nil && !errors.Is(err, io.EOF) {
		return nil, false
	}
	return buf, true
}

// finish names the hits' workflows and returns the page.
func (s *searcher) finish() (*SearchPage, error) {
	return s.ix.withWorkflows(s.ctx, s.page, s.workflows)
}

func (s *searcher) close() {
	for _, f := range s.files {
		f.Close()
	}
}

func (ix *Index) withWorkflows(ctx context.Context, page *SearchPage, cache map[string]string) (*SearchPage, error) {
	for i := range page.Hits {
		h := &page.Hits[i]
		w, ok := cache[h.RunID]
		if !ok {
			if err := ix.conn().QueryRowContext(ctx, `SELECT workflow FROM runs WHERE run_id = ?`, h.RunID).Scan(&w); err != nil {
				w = ""
			}
			cache[h.RunID] = w
		}
		h.Workflow = w
	}
	return page, nil
}
