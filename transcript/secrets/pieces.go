package secrets

import (
	"sort"
	"strings"
)

// MaskPieces masks a text that arrived in pieces, such as the deltas of a
// streamed reply, as one text: a secret split across pieces is found in
// their concatenation, and the masking is carried back onto the pieces.
// The piece holding the start of a masked span gets Masked in its place;
// the pieces holding the rest of the span lose those bytes. So the result
// has as many pieces as pieces, in the same order, every byte that
// MaskString keeps stays in the piece it came in, and
//
//	strings.Join(m.MaskPieces(pieces), "") == m.MaskString(strings.Join(pieces, ""))
//
// A piece wholly inside a secret becomes empty. pieces is not modified.
func (m *Masker) MaskPieces(pieces []string) []string {
	out := make([]string, len(pieces))
	copy(out, pieces)
	if m == nil || len(pieces) == 0 {
		return out
	}
	if len(pieces) == 1 {
		out[0] = m.MaskString(pieces[0])
		return out
	}
	whole := strings.Join(pieces, "")
	edits := m.edits(whole)
	if len(edits) == 0 {
		return out
	}
	// bounds[j] is where piece j starts in whole.
	bounds := make([]int, len(pieces)+1)
	for j, p := range pieces {
		bounds[j+1] = bounds[j] + len(p)
	}
	// The masked pieces are written in order into one buffer; ends[j] is
	// where piece j ends in it.
	var buf strings.Builder
	buf.Grow(len(whole))
	ends := make([]int, len(pieces))
	j := 0
	to := func(k int) {
		for ; j < k; j++ {
			ends[j] = buf.Len()
		}
	}
	// keep copies whole[x:y] into the pieces it spans.
	keep := func(x, y int) {
		for x < y {
			k := j
			for bounds[k+1] <= x {
				k++
			}
			to(k)
			e := min(y, bounds[j+1])
			buf.WriteString(whole[x:e])
			x = e
		}
	}
	// at returns the piece holding byte x, the last one for x at the end.
	at := func(x int) int {
		k := j
		for k < len(pieces)-1 && bounds[k+1] <= x {
			k++
		}
		return k
	}
	last := 0
	for _, e := range edits {
		keep(last, e.start)
		to(at(e.start))
		buf.WriteString(e.repl)
		last = e.end
	}
	keep(last, len(whole))
	to(len(pieces))
	all := buf.String()
	from := 0
	for j := range out {
		out[j] = all[from:ends[j]]
		from = ends[j]
	}
	return out
}

// edit replaces whole[start:end] by repl. MaskString's result is its input
// with its edits applied, in order.
type edit struct {
	start, end int
	repl       string
}

// edits returns what MaskString(s) replaces, in s's coordinates: the
// secret values, then the shapes found in the text with the values
// masked. A shape span that takes in part of a masked value (rare: the
// shape rules see "[MASKED]" as text) keeps the part of "[MASKED]" it
// leaves, as MaskString does; the value's bytes go with whichever edit
// covers the first byte of its "[MASKED]".
func (m *Masker) edits(s string) []edit {
	vals := m.valueSpans(s)
	s1 := s
	if len(vals) > 0 {
		s1 = maskSpans(s, vals)
	}
	shapes := shapeSpans(s1)
	if len(shapes) == 0 {
		out := make([]edit, len(vals))
		for i, v := range vals {
			out[i] = edit{v.start, v.end, Masked}
		}
		return out
	}
	// ins[k] is where value k's "[MASKED]" starts in s1.
	ins := make([]int, len(vals))
	shift := 0
	for k, v := range vals {
		ins[k] = v.start + shift
		shift += len(Masked) - (v.end - v.start)
	}
	// orig maps a position of s1 to s: inside a value's "[MASKED]", its
	// first byte maps to the value's start, the others to its end.
	orig := func(p int) int {
		// k: the last value whose "[MASKED]" starts at or before p.
		k := sort.SearchInts(ins, p+1) - 1
		if k < 0 {
			return p
		}
		v := vals[k]
		switch {
		case p == ins[k]:
			return v.start
		case p < ins[k]+len(Masked):
			return v.end
		}
		return p - (ins[k] + len(Masked) - v.end)
	}
	var out []edit
	// copyS1 emits s1[a:b], which the shape rules keep: the parts from s
	// are not edits, the parts of a value's "[MASKED]" are. Calls come in
	// order, so k only moves on.
	k := 0
	copyS1 := func(a, b int) {
		for k < len(vals) && ins[k]+len(Masked) <= a {
			k++
		}
		for ; k < len(vals) && ins[k] < b; k++ {
			lo, hi := max(a, ins[k]), min(b, ins[k]+len(Masked))
			out = append(out, edit{orig(lo), orig(hi), s1[lo:hi]})
			if ins[k]+len(Masked) > b {
				break // the rest of this one comes after a shape span
			}
		}
	}
	last := 0
	for _, sp := range shapes {
		copyS1(last, sp.start)
		out = append(out, edit{orig(sp.start), orig(sp.end), Masked})
		last = sp.end
	}
	copyS1(last, len(s1))
	return out
}

// valueSpans returns where the masker's secret values occur in s, as its
// strings.Replacer replaces them: leftmost first, the longest value at a
// position, not overlapping.
func (m *Masker) valueSpans(s string) []span {
	if m.replacer == nil {
		return nil
	}
	var out []span
	// next[k] is where values[k] next occurs at or after pos (-1: never
	// again; below pos: look again).
	next := make([]int, len(m.values))
	for k := range next {
		next[k] = -2
	}
	for pos := 0; pos <= len(s); {
		best, bestK := -1, -1
		for k, v := range m.values {
			if next[k] != -1 && next[k] < pos {
				next[k] = -1
				if i := strings.Index(s[pos:], v); i >= 0 {
					next[k] = pos + i
				}
			}
			// values are longest first: on a tie the longer stays.
			if next[k] >= 0 && (best < 0 || next[k] < best) {
				best, bestK = next[k], k
			}
		}
		if best < 0 {
			break
		}
		end := best + len(m.values[bestK])
		out = append(out, span{start: best, end: end})
		pos = end
	}
	return out
}
