package engine

import (
	"context"
	"testing"

	"github.com/reelhq/reel/transcript"
)

// Expressions read a text input as AWF's do (pkg/expression coerceValue):
// the three spellings of true and false, integers, decimals; anything
// else stays text. Values that already have a type are left alone.
func TestExprInput(t *testing.T) {
	for in, want := range map[any]any{
		"true": true, "True": true, "TRUE": true, "false": false, "FALSE": false,
		"yes": "yes", "tRue": "tRue", "": "", "42": int64(42), "-7": int64(-7), "1.5": 1.5, "1e3": 1000.0,
		"0x10": "0x10", "007": int64(7), "abc": "abc", int64(3): int64(3), true: true,
	} {
		if got := exprInput(in); got != want {
			t.Errorf("exprInput(%#v) = %#v, want %#v", in, got, want)
		}
	}
}

// An input declared without a type takes a transition as in AWF: a
// number-shaped value compares as a number, TRUE as a boolean; a
// template and an output still see the text as given.
func TestUntypedInputsInExpressions(t *testing.T) {
	h := newHarness(t)
	wf := `
name: untyped
inputs:
  - name: n
  - name: f
    default: "false"
outputs:
  - name: n
    from: inputs.n
states:
  initial: a
  a:
    type: step
    command: echo "n={{.inputs.n}} f={{.inputs.f}}"
    transitions:
      - when: "inputs.n > 3"
        goto: big
      - when: "inputs.f == true"
        goto: yes
    on_success: done
  big: {type: step, command: echo big, on_success: done}
  "yes": {type: step, command: echo yes, on_success: done}
  done: {type: terminal}
`
	for _, tc := range []struct {
		n, f, want string
	}{{"5", "false", "big"}, {"1", "TRUE", "yes"}, {"1.5", "yes", ""}, {"05", "True", "big"}} {
		rep := h.run(context.Background(), wf, map[string]string{"n": tc.n, "f": tc.f})
		if rep.Status != "success" {
			t.Fatalf("%+v: %+v", tc, rep)
		}
		got, printed := "", ""
		var output any
		for _, e := range readAll(t, rep.TranscriptPath) {
			switch {
			case e.Type == transcript.RunCompleted:
				var rr transcript.RunResult
				transcript.DecodeResult(e.Step().Result, &rr)
				output = rr.Outputs["n"]
			case e.Type == transcript.StepCompleted && e.Path == "a":
				var cr transcript.CommandResult
				transcript.DecodeResult(e.Step().Result, &cr)
				printed = cr.Output
			case e.Type == transcript.StepStarted && (e.Path == "big" || e.Path == "yes"):
				got = e.Path
			}
		}
		if got != tc.want || printed != "n="+tc.n+" f="+tc.f+"\n" || output != tc.n {
			t.Errorf("n=%s f=%s went to %q printing %q, output %#v; want %q", tc.n, tc.f, got, printed, output, tc.want)
		}
	}
}
