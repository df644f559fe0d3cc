package runstatus

import (
	"testing"

	"github.com/reelhq/reel/transcript"
)

func TestVocabulary(t *testing.T) {
	for _, s := range All {
		if !Valid(s) {
			t.Fatal(s)
		}
	}
	if Valid("incomplete") || Ended(Running) || Ended(Interrupted) || !Ended(Cancelled) {
		t.Fatal("vocabulary")
	}
	if st, _ := Completed(&transcript.StepPayload{Error: "x"}); st != Failure {
		t.Fatal(st)
	}
}

// A step.completed closes the latest open execution at its path and
// iteration, else the latest at its path, else none.
func TestCloses(t *testing.T) {
	type ex struct {
		p string
		i int
	}
	open := []ex{{"a", 0}, {"a", 1}, {"b", 0}, {"a", 0}, {"a", 2}}
	at := func(e ex) (string, int) { return e.p, e.i }
	for _, c := range []struct {
		p    string
		i    int
		want int
	}{
		{"a", 0, 3}, // the latest of the two at a, 0
		{"a", 1, 1},
		{"a", 7, 4}, // no a, 7: the latest at a
		{"b", 3, 2},
		{"c", 0, -1},
	} {
		if got := Closes(open, c.p, c.i, at); got != c.want {
			t.Errorf("Closes(%s, %d) = %d, want %d", c.p, c.i, got, c.want)
		}
	}
	if got := Closes(nil, "a", 0, at); got != -1 {
		t.Errorf("Closes of none = %d", got)
	}
}
