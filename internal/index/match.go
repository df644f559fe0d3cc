package index

import (
	"bytes"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/reelhq/reel/internal/rawjson"
	"github.com/reelhq/reel/internal/runs"
)

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
