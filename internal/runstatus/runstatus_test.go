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
