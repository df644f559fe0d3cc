package normalize

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/reelhq/reel/transcript"
)

func describe(evs []transcript.ExchangeEvent) string {
	var parts []string
	for _, e := range evs {
		switch e.Type {
		case transcript.ToolCall, transcript.ToolResult:
			parts = append(parts, fmt.Sprintf("%s:%s", e.Type, e.Tool().CallID))
		case transcript.MessageAssistant:
			var ids []string
			for _, b := range e.Message().Blocks {
				ids = append(ids, string(b.Type)+b.ToolID)
			}
			parts = append(parts, "assistant["+strings.Join(ids, ",")+"]")
		default:
			parts = append(parts, string(e.Type))
		}
	}
	return strings.Join(parts, " ")
}

// Each call comes after the message that issued it, in the message's
// block order; a result that came before that message (a server tool)
// moves with its call; time never goes back.
func TestTextFirst(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	call := func(id string, s int) transcript.ExchangeEvent {
		return transcript.ExchangeEvent{Type: transcript.ToolCall, Timestamp: t0.Add(time.Duration(s) * time.Second), Payload: &transcript.ToolPayload{CallID: id}}
	}
	result := func(id string, s int) transcript.ExchangeEvent {
		return transcript.ExchangeEvent{Type: transcript.ToolResult, Timestamp: t0.Add(time.Duration(s) * time.Second), Payload: &transcript.ToolPayload{CallID: id}}
	}
	msg := func(s int, ids ...string) transcript.ExchangeEvent {
		blocks := []transcript.ContentBlock{{Type: transcript.BlockText, Text: "t"}}
		for _, id := range ids {
			blocks = append(blocks, transcript.ContentBlock{Type: transcript.BlockToolUse, ToolID: id})
		}
		return transcript.ExchangeEvent{Type: transcript.MessageAssistant, Timestamp: t0.Add(time.Duration(s) * time.Second), Payload: &transcript.MessagePayload{Blocks: blocks}}
	}
	in := []transcript.ExchangeEvent{call("a", 1), call("b", 2), msg(3, "a", "b"), result("a", 4), result("b", 5),
		call("c", 6), result("c", 7), msg(8, "c"), call("d", 9), msg(10), call("e", 11), result("e", 12), msg(13, "x")}
	got := TextFirst(in)
	want := "assistant[text,tool_usea,tool_useb] tool.call:a tool.call:b tool.result:a tool.result:b assistant[text,tool_usec] tool.call:c tool.result:c " +
		"tool.call:d assistant[text] tool.call:e tool.result:e assistant[text,tool_usex]"
	if describe(got) != want {
		t.Errorf("got  %s\nwant %s", describe(got), want)
	}
	for i := 1; i < len(got); i++ {
		if got[i].Timestamp.Before(got[i-1].Timestamp) {
			t.Errorf("time goes back at %d", i)
		}
	}
	if describe(in) == describe(got) {
		t.Error("input changed in place")
	}
}

// On every recording, text first keeps every event (a permutation) and
// leaves no call ahead of the message that issued it.
func TestTextFirstOnRecordings(t *testing.T) {
	forEachRecording(t, func(t *testing.T, f Format, path string) {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		evs := parse(t, f, data, nil).events
		got := TextFirst(evs)
		if len(got) != len(evs) {
			t.Fatalf("%d events, want %d", len(got), len(evs))
		}
		seen := map[string]bool{}
		for _, e := range got {
			switch e.Type {
			case transcript.ToolCall:
				seen[e.Tool().CallID] = true
			case transcript.MessageAssistant:
				for _, b := range e.Message().Blocks {
					if b.Type == transcript.BlockToolUse && seen[b.ToolID] {
						t.Errorf("tool.call %s before the message that issued it", b.ToolID)
					}
				}
			}
		}
	})
}
