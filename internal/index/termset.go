package index

import (
	"bytes"
	"hash/maphash"
)

// termSet collects the distinct terms of one chunk as the text the FTS
// table is given: each term once, followed by a space. It is an
// open-addressing hash set over that text itself, so adding a term already
// seen (most of them: a chunk repeats its words) costs a hash and a
// compare, and a new term one append; a map[string] would allocate a
// string per distinct term and was half of the tokenizing time.
type termSet struct {
	seed  maphash.Seed
	slots []uint32 // 1 + index into ents, 0 when free; len is a power of 2
	ents  []termEnt
	text  []byte
}

type termEnt struct {
	hash uint64
	off  uint32
	n    uint32
}

func newTermSet() *termSet {
	return &termSet{seed: maphash.MakeSeed(), slots: make([]uint32, 1<<14), text: make([]byte, 0, 64<<10)}
}

// add adds t unless it is already in the set.
func (s *termSet) add(t []byte) {
	h := maphash.Bytes(s.seed, t)
	mask := uint64(len(s.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		k := s.slots[i]
		if k == 0 {
			s.ents = append(s.ents, termEnt{hash: h, off: uint32(len(s.text)), n: uint32(len(t))})
			s.slots[i] = uint32(len(s.ents))
			s.text = append(s.text, t...)
			s.text = append(s.text, ' ')
			if 2*len(s.ents) > len(s.slots) {
				s.grow()
			}
			return
		}
		if e := s.ents[k-1]; e.hash == h && bytes.Equal(s.text[e.off:e.off+e.n], t) {
			return
		}
	}
}

func (s *termSet) grow() {
	s.slots = make([]uint32, 2*len(s.slots))
	mask := uint64(len(s.slots) - 1)
	for k, e := range s.ents {
		i := e.hash & mask
		for s.slots[i] != 0 {
			i = (i + 1) & mask
		}
		s.slots[i] = uint32(k + 1)
	}
}

// reset empties the set, keeping its memory.
func (s *termSet) reset() {
	if len(s.ents) > 0 {
		clear(s.slots)
	}
	s.ents, s.text = s.ents[:0], s.text[:0]
}
