package index

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/reelhq/reel/internal/rawjson"
	"github.com/reelhq/reel/internal/runs"
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

// ParseQuery parses the search syntax above.
func ParseQuery(q string) (*Query, error) {
	pq := &Query{}
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
	for i := 0; i < len(q); {
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
			addWords(tokens(s))
		default:
			j := i
			for j < len(q) && q[j] != ' ' && q[j] != '\t' && q[j] != '\n' && q[j] != '\r' && q[j] != '"' {
				j++
			}
			w := q[i:j]
			i = j
			switch {
			case len(w) > 1 && w[0] == '-':
				for _, t := range tokens(w[1:]) {
					if !slices.Contains(pq.Exclude, t) {
						pq.Exclude = append(pq.Exclude, t)
					}
				}
			case strings.HasSuffix(w, "*"):
				ts := tokens(strings.TrimRight(w, "*"))
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
				addWords(tokens(w))
			}
		}
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
	deadline := time.Now().Add(opts.Budget)
	page := &SearchPage{Query: pq, Hits: []Hit{}}
	below, belowSeq := int64(1<<62), uint64(0)
	if opts.After != "" {
		a, b, ok := strings.Cut(opts.After, ":")
		n, err1 := strconv.ParseInt(a, 10, 64)
		s, err2 := strconv.ParseUint(b, 10, 64)
		if !ok || err1 != nil || err2 != nil {
			return nil, fmt.Errorf("%w %q", ErrBadCursor, opts.After)
		}
		below, belowSeq = n, s
	}
	workflows := map[string]string{}
	files := map[string]*os.File{}
	defer func() {
		for _, f := range files {
			f.Close()
		}
	}()
	m := newMatcher(pq)
	var lastChunk int64 // the chunk of the page's last hit
	for {
		type cand struct {
			id         int64
			run        string
			start, end int64
		}
		var cands []cand
		rows, err := ix.db.QueryContext(ctx, `SELECT c.id, c.run_id, c.start, c.end FROM chunks c
			WHERE c.id IN (SELECT rowid FROM fts WHERE fts MATCH ? AND rowid <= ? ORDER BY rowid DESC LIMIT 32)
			ORDER BY c.id DESC`, pq.match(), below)
		if err != nil {
			return nil, fmt.Errorf("search: %w", err)
		}
		for rows.Next() {
			var c cand
			if err := rows.Scan(&c.id, &c.run, &c.start, &c.end); err != nil {
				rows.Close()
				return nil, fmt.Errorf("search: %w", err)
			}
			cands = append(cands, c)
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, fmt.Errorf("search: %w", err)
		}
		if len(cands) == 0 {
			return ix.withWorkflows(ctx, page, workflows)
		}
		for _, c := range cands {
			maxSeq := uint64(0) // 0: the whole chunk
			if c.id == below {
				maxSeq = belowSeq
			}
			f := files[c.run]
			if f == nil {
				if f, err = safefile.Open(ix.file(c.run)); err != nil {
					continue // removed since it was indexed
				}
				files[c.run] = f
			}
			buf := make([]byte, c.end-c.start)
			if _, err := f.ReadAt(buf, c.start); err != nil && !errors.Is(err, io.EOF) {
				continue
			}
			hits := m.chunk(buf, maxSeq)
			for k := len(hits) - 1; k >= 0; k-- {
				h := hits[k]
				if len(page.Hits) == opts.Limit {
					page.Next = fmt.Sprintf("%d:%d", lastChunk, page.Hits[len(page.Hits)-1].Seq)
					return ix.withWorkflows(ctx, page, workflows)
				}
				page.Hits = append(page.Hits, h)
				lastChunk = c.id
			}
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			if time.Now().After(deadline) && c.id > 1 {
				page.Next = fmt.Sprintf("%d:0", c.id-1)
				return ix.withWorkflows(ctx, page, workflows)
			}
		}
		below, belowSeq = cands[len(cands)-1].id-1, 0
		if below < 1 {
			return ix.withWorkflows(ctx, page, workflows)
		}
	}
}

func (ix *Index) withWorkflows(ctx context.Context, page *SearchPage, cache map[string]string) (*SearchPage, error) {
	for i := range page.Hits {
		h := &page.Hits[i]
		w, ok := cache[h.RunID]
		if !ok {
			if err := ix.db.QueryRowContext(ctx, `SELECT workflow FROM runs WHERE run_id = ?`, h.RunID).Scan(&w); err != nil {
				w = ""
			}
			cache[h.RunID] = w
		}
		h.Workflow = w
	}
	return page, nil
}

// matcher checks events against a query.
type matcher struct {
	q     *Query
	found []bool // per term, then per prefix
	phr   []int  // progress through each phrase
	phOK  []bool
	excl  bool
	tk    tokenizer
	first int // index of the first string value holding a positive match
	str   int
	env   runs.Envelope
}

func newMatcher(q *Query) *matcher {
	m := &matcher{q: q, found: make([]bool, len(q.Terms)+len(q.Prefixes)), phr: make([]int, len(q.Phrases)), phOK: make([]bool, len(q.Phrases))}
	m.tk.emit = m.term
	return m
}

func (m *matcher) term(t []byte) {
	hit := false
	for i, qt := range m.q.Terms {
		if string(t) == qt {
			m.found[i], hit = true, true
		}
	}
	for i, p := range m.q.Prefixes {
		if strings.HasPrefix(string(t), p) {
			m.found[len(m.q.Terms)+i], hit = true, true
		}
	}
	for i, ph := range m.q.Phrases {
		switch k := m.phr[i]; {
		case string(t) == ph[k]:
			m.phr[i]++
			if m.phr[i] == len(ph) {
				m.phOK[i], m.phr[i] = true, 0
			}
		case string(t) == ph[0]:
			m.phr[i] = 1
		default:
			m.phr[i] = 0
		}
	}
	for _, x := range m.q.Exclude {
		if string(t) == x {
			m.excl = true
		}
	}
	if hit && m.first < 0 {
		m.first = m.str
	}
}

// event reports whether the event's payload matches, and which string value
// to cut the snippet from.
func (m *matcher) event(payload []byte) (bool, int) {
	clear(m.found)
	clear(m.phOK)
	m.excl, m.first, m.str = false, -1, 0
	searchable(m.env.Type, payload, func(s []byte) {
		clear(m.phr) // phrases do not cross string values
		m.tk.jsonString(s)
		m.str++
	})
	if m.excl || slices.Contains(m.found, false) || slices.Contains(m.phOK, false) {
		return false, 0
	}
	return true, m.first
}

// chunk returns the events of a chunk of transcript lines that match, in
// file order; maxSeq > 0 keeps only events before it.
func (m *matcher) chunk(buf []byte, maxSeq uint64) []Hit {
	var hits []Hit
	for len(buf) > 0 {
		i := bytes.IndexByte(buf, '\n')
		if i < 0 {
			i = len(buf)
		}
		line := buf[:i]
		buf = buf[min(i+1, len(buf)):]
		if m.env.Parse(line) != nil {
			continue
		}
		seq := seqOf(line)
		if maxSeq > 0 && seq >= maxSeq {
			continue
		}
		ok, first := m.event(m.env.Payload)
		if !ok {
			continue
		}
		hits = append(hits, Hit{
			RunID: m.env.RunID, Seq: seq, Type: string(m.env.Type), Path: string(m.env.Path),
			Iteration: m.env.Iteration, Time: m.env.Time(), Snippet: m.snippet(m.env.Payload, first),
		})
	}
	return hits
}

func seqOf(line []byte) uint64 {
	v, ok, _ := rawjson.Field(line, "seq")
	if !ok {
		return 0
	}
	n, _ := strconv.ParseUint(string(v), 10, 64)
	return n
}

// snippetWidth is about how many bytes of text a snippet shows.
const snippetWidth = 180

// snippet cuts the text around the first match in the payload's string
// value number idx and marks the query's terms in it.
func (m *matcher) snippet(payload []byte, idx int) []Segment {
	var raw []byte
	n := 0
	searchable(m.env.Type, payload, func(s []byte) {
		if n == idx {
			raw = s
		}
		n++
	})
	text := unescape(raw)
	type span struct{ start, end int }
	var spans []span
	pos := 0
	q := m.q
	isMatch := func(t string) bool {
		if slices.Contains(q.Terms, t) {
			return true
		}
		for _, p := range q.Prefixes {
			if strings.HasPrefix(t, p) {
				return true
			}
		}
		return false
	}
	// Walk the text once, noting where each matching term starts and ends.
	var tk tokenizer
	start := -1
	tk.emit = func(t []byte) {
		if isMatch(string(t)) {
			spans = append(spans, span{start, pos})
		}
	}
	for pos < len(text) {
		r, size := utf8.DecodeRuneInString(text[pos:])
		before := len(tk.term)
		tk.rune(r)
		if len(tk.term) > 0 && before == 0 {
			start = pos
		}
		pos += size
	}
	tk.flush()
	lo := 0
	if len(spans) > 0 {
		lo = max(0, spans[0].start-snippetWidth/3)
	}
	hi := min(len(text), lo+snippetWidth)
	for lo > 0 && !utf8.RuneStart(text[lo]) {
		lo++
	}
	for hi < len(text) && !utf8.RuneStart(text[hi]) {
		hi++
	}
	var segs []Segment
	add := func(s string, match bool) {
		if s = squash(s); s != "" {
			segs = append(segs, Segment{Text: s, Match: match})
		}
	}
	if lo > 0 {
		add("…", false)
	}
	at := lo
	for _, sp := range spans {
		if sp.start < at || sp.end > hi {
			continue
		}
		add(text[at:sp.start], false)
		add(text[sp.start:sp.end], true)
		at = sp.end
	}
	add(text[at:hi], false)
	if hi < len(text) {
		add("…", false)
	}
	return segs
}

// squash turns every run of white space into one space, so a snippet of a
// multi-line output reads as one line.
func squash(s string) string {
	var b strings.Builder
	space := false
	for _, r := range s {
		if r == ' ' || r == '\n' || r == '\t' || r == '\r' {
			space = true
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteRune(r)
	}
	if space {
		b.WriteByte(' ')
	}
	return b.String()
}

// unescape decodes the contents of a JSON string as written.
func unescape(raw []byte) string {
	buf := make([]byte, 0, len(raw)+2)
	buf = append(buf, '"')
	buf = append(buf, raw...)
	buf = append(buf, '"')
	s, _, err := rawjson.Unquote(buf, 0)
	if err != nil {
		return string(raw)
	}
	return s
}
