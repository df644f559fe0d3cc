package index

import (
	"math/rand"
	"strings"
	"testing"
)

// TestTermSetMatchesMap: the term set keeps exactly the distinct terms, in
// order of first appearance, across growth and resets (a property test
// against a map).
func TestTermSetMatchesMap(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	s := newTermSet()
	for round := range 50 {
		var want []string
		seen := map[string]bool{}
		n := r.Intn(40000)
		for range n {
			b := make([]byte, 1+r.Intn(6))
			for i := range b {
				b[i] = byte('a' + r.Intn(4+round%20))
			}
			if !seen[string(b)] {
				seen[string(b)] = true
				want = append(want, string(b))
			}
			s.add(b)
		}
		got := strings.Fields(string(s.text))
		if len(got) != len(want) {
			t.Fatalf("round %d: %d terms, want %d", round, len(got), len(want))
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("round %d: term %d is %q, want %q", round, i, got[i], want[i])
			}
		}
		s.reset()
	}
}
