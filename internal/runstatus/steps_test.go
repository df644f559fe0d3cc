package runstatus

import (
	"encoding/json"
	"math/rand/v2"
	"testing"
)

// tallyEvent is one event a Tally is fed.
type tallyEvent struct {
	kind      byte // 'r' run.started, 's' step.started, 'c' step.completed
	path      string
	iteration int
	attempt   int
	err       string
	reused    [][2]int
	known     bool
}

func feed(t *Tally, evs []tallyEvent) {
	for _, e := range evs {
		switch e.kind {
		case 'r':
			t.RunStarted(e.reused, e.known)
		case 's':
			t.StepStarted(e.path, e.iteration, e.attempt)
		case 'c':
			t.StepCompleted(e.path, e.iteration, e.err)
		}
	}
}

func TestStepCounts(t *testing.T) {
	run := func(reused [][2]int, known bool) tallyEvent {
		return tallyEvent{kind: 'r', reused: reused, known: known}
	}
	start := func(p string, it, attempt int) tallyEvent {
		return tallyEvent{kind: 's', path: p, iteration: it, attempt: attempt}
	}
	done := func(p string, it int, err string) tallyEvent {
		return tallyEvent{kind: 'c', path: p, iteration: it, err: err}
	}
	for _, c := range []struct {
		name string
		evs  []tallyEvent
		open string
		want StepCounts
	}{
		{"retry made good", []tallyEvent{run(nil, true), start("a", 0, 1), done("a", 0, "exit 1"), start("a", 0, 2), done("a", 0, "")},
			"", StepCounts{Succeeded: 1}},
		{"retries exhausted", []tallyEvent{run(nil, true), start("a", 0, 1), done("a", 0, "exit 1"), start("a", 0, 2), done("a", 0, "exit 1")},
			"", StepCounts{Failed: 1}},
		{"a failure the flow went past, then the state again", []tallyEvent{run(nil, true), start("a", 0, 0), done("a", 0, "exit 1"), start("a", 0, 0), done("a", 0, "")},
			"", StepCounts{Succeeded: 1, Failed: 1}},
		{"loop iterations count apart", []tallyEvent{run(nil, true), start("l", 0, 0), start("l.x", 0, 0), done("l.x", 0, ""), start("l.x", 1, 0), done("l.x", 1, "exit 2"), done("l", 0, "exit 2")},
			"", StepCounts{Succeeded: 1, Failed: 2}},
		{"cancelled, resumed to success", []tallyEvent{run(nil, true), start("a", 0, 0), done("a", 0, ""), start("b", 0, 0), done("b", 0, "cancelled: received SIGINT"),
			run([][2]int{{1, 1}}, true), start("b", 0, 0), done("b", 0, ""), start("c", 0, 0), done("c", 0, "")},
			"", StepCounts{Succeeded: 3, Rerun: 1}},
		{"killed, resumed, still running", []tallyEvent{run(nil, true), start("a", 0, 0), done("a", 0, ""), start("b", 0, 0),
			run([][2]int{{1, 1}}, true), start("b", 0, 0)},
			Running, StepCounts{Succeeded: 1, Running: 1, Rerun: 1}},
		{"killed and not resumed", []tallyEvent{run(nil, true), start("a", 0, 0), done("a", 0, ""), start("b", 0, 0)},
			Interrupted, StepCounts{Succeeded: 1, Interrupted: 1}},
		{"resume --from runs a success again", []tallyEvent{run(nil, true), start("a", 0, 0), done("a", 0, ""), start("b", 0, 0), done("b", 0, "exit 1"),
			run(nil, true), start("a", 0, 0), done("a", 0, ""), start("b", 0, 0), done("b", 0, "")},
			"", StepCounts{Succeeded: 2, Rerun: 2}},
		{"a resume whose run.started names nothing keeps the successes", []tallyEvent{run(nil, false), start("a", 0, 0), done("a", 0, ""), start("b", 0, 0), done("b", 0, "exit 1"),
			run(nil, false), start("b", 0, 0), done("b", 0, "")},
			"", StepCounts{Succeeded: 2, Rerun: 1}},
		{"a third attempt drops what the second kept", []tallyEvent{run(nil, true), start("a", 0, 0), done("a", 0, ""), start("b", 0, 0),
			run([][2]int{{1, 1}}, true), start("b", 0, 0), done("b", 0, "exit 1"),
			run([][2]int{{1, 1}}, true), start("b", 0, 0), done("b", 0, "")},
			"", StepCounts{Succeeded: 2, Rerun: 2}},
	} {
		var tl Tally
		feed(&tl, c.evs)
		if got := tl.Counts(c.open); got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}

// A tally saved as JSON at any point and read back goes on to the same
// counts as one fed without a break: the run index keeps it between reads.
func TestTallyJSONResumes(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	paths := []string{"a", "b", "l.x"}
	for trial := 0; trial < 200; trial++ {
		var evs []tallyEvent
		evs = append(evs, tallyEvent{kind: 'r', known: true})
		open := 0
		for n := r.IntN(30); n > 0; n-- {
			switch k := r.IntN(10); {
			case k == 0:
				evs = append(evs, tallyEvent{kind: 'r', known: r.IntN(2) == 0, reused: [][2]int{{1, r.IntN(len(evs) + 1)}}})
				open = 0
			case k < 5 || open == 0:
				evs = append(evs, tallyEvent{kind: 's', path: paths[r.IntN(3)], iteration: r.IntN(2), attempt: r.IntN(3)})
				open++
			default:
				err := []string{"", "exit 1", "cancelled"}[r.IntN(3)]
				evs = append(evs, tallyEvent{kind: 'c', path: paths[r.IntN(3)], iteration: r.IntN(2), err: err})
				open--
			}
		}
		var whole Tally
		feed(&whole, evs)
		cut := r.IntN(len(evs) + 1)
		var first Tally
		feed(&first, evs[:cut])
		b, err := json.Marshal(first)
		if err != nil {
			t.Fatal(err)
		}
		var second Tally
		if err := json.Unmarshal(b, &second); err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		feed(&second, evs[cut:])
		if w, g := whole.Counts(Running), second.Counts(Running); w != g {
			t.Fatalf("trial %d, cut at %d of %d (%s): %+v, want %+v", trial, cut, len(evs), b, g, w)
		}
		if w, g := whole.Counts(Running).Total()+whole.Counts(Running).Rerun, whole.Executions(); w > g {
			t.Fatalf("trial %d: %d counted of %d executions", trial, w, g)
		}
	}
}

func TestTallyJSONRefusesDamage(t *testing.T) {
	for _, s := range []string{`{"state":"so","open":[{"p":"a","o":3}]}`, `{"state":"f","failed":{"a":9}}`, `{"state":"ss","attempt":[1]}`, `[]`} {
		var tl Tally
		if err := json.Unmarshal([]byte(s), &tl); err == nil {
			t.Errorf("%s: accepted", s)
		}
	}
}
