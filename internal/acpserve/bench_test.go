package acpserve

import (
	"context"
	"encoding/json"
	"io"
	"path/filepath"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/reelhq/reel/internal/benchratio"
	"github.com/reelhq/reel/internal/testfixtures"
	"github.com/reelhq/reel/transcript"
)

// stdlibUpdate is the baseline: what a hand-written server using only the
// standard library does with an event, one JSON-RPC notification written
// with encoding/json.
func stdlibUpdate(w io.Writer, ev *transcript.ExchangeEvent) error {
	b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "session/update", "params": map[string]any{
		"sessionId": "sess_bench", "update": map[string]any{"sessionUpdate": "tool_call", "toolCallId": ev.RunID, "title": ev.Path, "rawInput": ev.Payload},
	}})
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// BenchmarkProject measures the projection of the shared event mix (a step
// start, an assistant message, a tool result, a step end) into session
// updates written by the SDK's connection, against the baseline.
func BenchmarkProject(b *testing.B) {
	mix, err := transcript.ReadFile(filepath.Join(testfixtures.Root(b), "bench", "mix.jsonl"))
	if err != nil {
		b.Fatal(err)
	}
	const n = 4000
	evs := make([]transcript.ExchangeEvent, 0, n)
	for i := 0; len(evs) < n; i++ {
		e := mix[i%len(mix)]
		e.Seq, e.RunID = uint64(len(evs)+1), "00000000-0000-4000-8000-000000000001"
		evs = append(evs, e)
	}
	idle, _ := io.Pipe() // the editor never speaks
	conn := sdk.NewAgentSideConnection(&server{}, io.Discard, idle)
	out := &stream{conn: conn, session: "sess_bench"}
	ctx := context.Background()
	reel := benchratio.Run(b, func() {
		p := newProjector(out)
		for j := range evs {
			if err := p.project(ctx, &evs[j]); err != nil {
				b.Fatal(err)
			}
		}
	}, func() {
		for j := range evs {
			if err := stdlibUpdate(io.Discard, &evs[j]); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.ReportMetric(float64(reel.Nanoseconds())/float64(b.N*n), "ns/event")
}
