package engine

import (
	"context"
	"fmt"
	"maps"
	"strings"

	"github.com/reelhq/reel/internal/agent"
	"github.com/reelhq/reel/internal/workflow"
	"github.com/reelhq/reel/transcript"
)

// converse runs an agent step's turns in one provider session: the step's
// prompt, then each conversation follow-up, rendered with the data of the
// step plus .turn, the previous turn's reply. The first failing turn ends
// the step; the result covers every turn that ran. show receives each
// turn's reply as soon as it is complete, numbered from 1.
func converse(ctx context.Context, sess *agent.Session, st *workflow.State, data map[string]any, prompt string, show func(turn int, output string)) (*transcript.AgentResult, error) {
	turn, err := sess.Send(ctx, prompt)
	show(1, turn.Output)
	for i, t := range st.Conversation {
		if err != nil {
			break
		}
		// A step cancelled or timed out between turns records no
		// follow-up it will never send.
		if err = ctx.Err(); err != nil {
			break
		}
		d := maps.Clone(data)
		d["turn"] = turnValue(turn.Output, i+2)
		var p string
		if p, err = t.Execute(d); err != nil {
			err = fmt.Errorf("conversation[%d]: %w", i, err)
			break
		}
		turn, err = sess.Send(ctx, p)
		show(i+2, turn.Output)
	}
	res, rerr := sess.Result()
	if err == nil {
		err = rerr
	}
	return res, err
}

// turnValue is what a follow-up prompt sees as .turn: the previous reply
// like a state's .Output (and .JSON when it is JSON), and the number of the
// turn being prompted (the step's prompt is turn 1).
func turnValue(output string, number int) map[string]any {
	v := map[string]any{"Output": strings.TrimRight(output, "\r\n"), "Number": number}
	if js := parseJSON(output); js != nil {
		v["JSON"] = js
	}
	return v
}
