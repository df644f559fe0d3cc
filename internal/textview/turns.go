package textview

import (
	"strconv"

	"github.com/reelhq/reel/transcript"
)

// Turns numbers the turns of agent steps as reel tree counts them
// (exectree.Node.UserTurns): each message.user of a step execution is a
// turn, numbered from 1 within that execution, unless it is noise (what
// an agent CLI wrote as a user message: promptkind.Noise), which takes no
// number. A resumed run's re-run of a
// step is an execution of its own, so its numbering starts again at 1 and
// never runs on from the attempt that was cut short; neither does a step's
// retry. The same walk runs in the first pass (counting each execution's
// turns) and in the rendering pass (numbering them), so both name
// executions alike: by the ordinal of their step.started.
//
// Feed every event of a file to Event in a counting pass, call Rewind,
// then feed them again: the second pass returns each message.user's turn
// and its execution's number of turns.
type Turns struct {
	open  map[string][]int // executions open, by path and iteration
	total []int32          // turns by ordinal-1, from the first pass
	seen  []int32          // turns rendered so far, by ordinal-1
	count bool             // first pass: count into total
}

func turnKey(path string, iteration int) string { return path + "\x00" + strconv.Itoa(iteration) }

// maxExecutions bounds the executions whose turns are counted; past it,
// turns are not numbered.
const maxExecutions = 1 << 22

// Event follows one event and, for a message.user, returns its turn and the
// execution's number of turns (0, 0 when it belongs to no open execution
// or is noise, as the caller tells: promptkind.Noise or NoiseJSON).
func (t *Turns) Event(typ transcript.EventType, path string, iteration int, noise bool) (n, of int) {
	switch typ {
	case transcript.RunStarted:
		// A resume: what the attempt before left open was cut short.
		clear(t.open)
	case transcript.StepStarted:
		ord := len(t.seen) + 1
		if ord > maxExecutions {
			return 0, 0
		}
		t.seen = append(t.seen, 0)
		if t.count {
			t.total = append(t.total, 0)
		}
		if t.open == nil {
			t.open = map[string][]int{}
		}
		k := turnKey(path, iteration)
		t.open[k] = append(t.open[k], ord)
	case transcript.StepCompleted:
		k := turnKey(path, iteration)
		if s := t.open[k]; len(s) > 0 {
			if len(s) == 1 {
				delete(t.open, k)
			} else {
				t.open[k] = s[:len(s)-1]
			}
		}
	case transcript.MessageUser:
		if noise {
			return 0, 0
		}
		s := t.open[turnKey(path, iteration)]
		if len(s) == 0 {
			return 0, 0
		}
		i := s[len(s)-1] - 1
		t.seen[i]++
		if t.count {
			t.total[i]++
		}
		if i < len(t.total) {
			return int(t.seen[i]), int(t.total[i])
		}
	}
	return 0, 0
}

// Rewind readies a counted walk for the rendering pass.
func (t *Turns) Rewind() {
	clear(t.open)
	t.seen = t.seen[:0]
	t.count = false
}

// NewTurns returns Turns ready for its counting pass.
func NewTurns() *Turns { return &Turns{count: true} }
