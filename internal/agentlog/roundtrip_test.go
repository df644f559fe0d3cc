package agentlog

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/reelhq/reel/internal/transcripttest"
	"github.com/reelhq/reel/transcript"
)

func TestRoundTrip(t *testing.T) {
	dir := t.TempDir()
	src := transcripttest.WriteExchangeSample(t, filepath.Join(dir, "src"))
	orig, err := transcript.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := FromTranscript(orig, ExportOptions{SDKVersion: "test"})
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "run.agentlog")
	if err := WriteFile(out, recs); err != nil {
		t.Fatal(err)
	}
	// The written trace verifies with full id and parent checks.
	back, err := ReadFile(out, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	checkShadowChaining(t, back)
	res, err := ToTranscript(back, "")
	if err != nil {
		t.Fatal(err)
	}
	transcripttest.CheckValid(t, res.Events)
	imported := transcripttest.RecordAll(t, filepath.Join(dir, "imported"), res.Events)
	transcripttest.Verify(t, imported)
	got, err := transcript.ReadFile(imported)
	if err != nil {
		t.Fatal(err)
	}
	want := transcripttest.Summarize(t, orig, Canonical)
	have := transcripttest.Summarize(t, got, Canonical)
	if !reflect.DeepEqual(want, have) {
		t.Errorf("round trip changed the exchange:\nwant %s\n got %s", want, have)
	}
	if n := len(want.Tokens); n != 4 {
		t.Fatalf("sample has %d agent steps, want 4", n)
	}
}

// checkShadowChaining asserts the parent rule of Shadow's writer: the
// previous record, except a chat_response (its chat_request) and a
// tool_result (its tool_call), and that usage and latency are filled in.
func checkShadowChaining(t *testing.T, recs []Record) {
	t.Helper()
	byID := map[string]*Record{}
	var usageSum int64
	for i := range recs {
		r := &recs[i]
		byID[r.ID] = r
		if i == 0 {
			continue
		}
		switch r.Kind {
		case KindChatResponse:
			if p := byID[r.Parent]; p == nil || p.Kind != KindChatRequest {
				t.Errorf("record %d: chat_response parent is not a chat_request", i+1)
			}
			var cr chatResponse
			if err := json.Unmarshal(r.Payload, &cr); err != nil || cr.Usage == nil {
				t.Fatalf("record %d: chat_response without usage: %v", i+1, err)
			}
			usageSum += cr.Usage.toReel().TotalTokens
		case KindToolResult:
			if p := byID[r.Parent]; p == nil || p.Kind != KindToolCall {
				t.Errorf("record %d: tool_result parent is not a tool_call", i+1)
			}
		default:
			if r.Parent != recs[i-1].ID {
				t.Errorf("record %d (%s): parent is not the previous record", i+1, r.Kind)
			}
		}
	}
	// analyze 1545 + loop 120 + 122 + fix 55 (carried by a synthetic response).
	if usageSum != 1545+120+122+55 {
		t.Errorf("usage on chat_responses sums to %d", usageSum)
	}
}
