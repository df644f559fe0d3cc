package textview

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/reelhq/reel/internal/promptkind"
	"github.com/reelhq/reel/internal/rawjson"
	"github.com/reelhq/reel/transcript"
)

// Turns numbers the turns of agent steps as reel tree counts them
// (exectree.Node.UserTurns): each message.user of a step execution is a
// turn, numbered from 1 within that execution, unless it is noise (what
// an agent CLI wrote as a user message: promptkind.Message), which takes no
// number. It also pairs an execution's compaction summaries with the
// compactions its result records (AgentResult.Compactions), in order. A resumed run's re-run of a
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
	// comps are the compactions of executions that record some, by
	// ordinal-1 (first pass); compSeen the summaries met so far, and
	// comp the figures of the last one Event met.
	comps    map[int][]transcript.Compaction
	compSeen map[int]int
	comp     *transcript.Compaction
}

func turnKey(path string, iteration int) string { return path + "\x00" + strconv.Itoa(iteration) }

// maxExecutions bounds the executions whose turns are counted; past it,
// turns are not numbered.
const maxExecutions = 1 << 22

// Event follows one event and, for a message.user, returns its turn and the
// execution's number of turns (0, 0 when it belongs to no open execution
// or is noise). kind is what a message.user is (promptkind.Message or
// MessageJSON), Prompt for the other events.
func (t *Turns) Event(typ transcript.EventType, path string, iteration int, kind promptkind.Kind) (n, of int) {
	t.comp = nil
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
		s := t.open[turnKey(path, iteration)]
		if len(s) == 0 {
			return 0, 0
		}
		i := s[len(s)-1] - 1
		if kind == promptkind.Compaction {
			t.compacted(i)
		}
		if kind != promptkind.Prompt {
			return 0, 0
		}
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

// compacted meets a compaction summary of the execution of ordinal i+1.
func (t *Turns) compacted(i int) {
	if t.compSeen == nil {
		t.compSeen = map[int]int{}
	}
	k := t.compSeen[i]
	t.compSeen[i]++
	if cs := t.comps[i]; k < len(cs) {
		t.comp = &cs[k]
	}
}

// Compactions gives, in the counting pass, the compactions the result of
// the step.completed about to be passed to Event records.
func (t *Turns) Compactions(path string, iteration int, cs []transcript.Compaction) {
	s := t.open[turnKey(path, iteration)]
	if !t.count || len(cs) == 0 || len(s) == 0 {
		return
	}
	if t.comps == nil {
		t.comps = map[int][]transcript.Compaction{}
	}
	t.comps[s[len(s)-1]-1] = cs
}

// CompactionsJSON reads the compactions a step.completed payload's result
// records (transcript.AgentResult.Compactions).
func CompactionsJSON(payload []byte) []transcript.Compaction {
	raw, ok, err := rawjson.Lookup(payload, []string{"result", "compactions"})
	if !ok || err != nil {
		return nil
	}
	var cs []transcript.Compaction
	if json.Unmarshal(raw, &cs) != nil {
		return nil
	}
	return cs
}

// StepCompactions reads the compactions a decoded step.completed's result
// records.
func StepCompactions(ev *transcript.ExchangeEvent) []transcript.Compaction {
	sp := ev.Step()
	if ev.Type != transcript.StepCompleted || sp == nil || sp.Result == nil {
		return nil
	}
	var r struct {
		Compactions []transcript.Compaction `json:"compactions"`
	}
	if transcript.DecodeResult(sp.Result, &r) != nil {
		return nil
	}
	return r.Compactions
}

// Compaction returns the figures of the compaction summary Event was last
// given, when its step's result records them.
func (t *Turns) Compaction() (transcript.Compaction, bool) {
	if t.comp == nil {
		return transcript.Compaction{}, false
	}
	return *t.comp, true
}

// Rewind readies a counted walk for the rendering pass.
func (t *Turns) Rewind() {
	clear(t.open)
	clear(t.compSeen)
	t.seen = t.seen[:0]
	t.count = false
	t.comp = nil
}

// Compacted says what a compaction did, as every view heads it: "context
// compacted: 152k → 9k tokens (auto)", with what is known of it.
func Compacted(c transcript.Compaction, known bool) string {
	s := "context compacted"
	switch {
	case !known:
		return s
	case c.PreTokens > 0 && c.PostTokens > 0:
		s += ": " + kTokens(c.PreTokens) + " → " + kTokens(c.PostTokens) + " tokens"
	case c.PreTokens > 0:
		s += ": " + kTokens(c.PreTokens) + " tokens before"
	}
	if c.Trigger != "" {
		s += " (" + c.Trigger + ")"
	}
	return s
}

// kTokens rounds a token count for a heading: 950, 9k, 152k, 1.2M.
func kTokens(n int64) string {
	switch {
	case n >= 1_000_000:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	case n >= 1000:
		return fmt.Sprintf("%.0fk", float64(n)/1e3)
	}
	return strconv.FormatInt(n, 10)
}

// NewTurns returns Turns ready for its counting pass.
func NewTurns() *Turns { return &Turns{count: true} }
