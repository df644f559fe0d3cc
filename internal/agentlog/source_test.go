package agentlog

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reelhq/reel/internal/testfixtures"
	"github.com/reelhq/reel/internal/transcripttest"
	"github.com/reelhq/reel/transcript"
)

// roundTrip imports recs, records the events with the real recorder, reads
// the transcript back and exports it again.
func roundTrip(t *testing.T, recs []Record) ([]Record, []transcript.ExchangeEvent) {
	t.Helper()
	res, err := ToTranscript(recs, "trace")
	if err != nil {
		t.Fatal(err)
	}
	transcripttest.CheckValid(t, res.Events)
	path := transcripttest.RecordAll(t, t.TempDir(), res.Events)
	transcripttest.Verify(t, path)
	events, err := transcript.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	back, err := FromTranscript(events, ExportOptions{SDKVersion: "test"})
	if err != nil {
		t.Fatal(err)
	}
	return back, events
}

func canon(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	if len(raw) == 0 {
		return ""
	}
	c, err := Canonical(raw)
	if err != nil {
		t.Fatal(err)
	}
	return string(c)
}

// sameRecords asserts that got are want record for record: kind, ts,
// parent, meta and payload; ids too unless want's ids are not content
// hashes, in which case got's must be, with the parents following them.
func sameRecords(t *testing.T, want, got []Record) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d records back, want %d", len(got), len(want))
	}
	moved := map[string]string{}
	for i := range want {
		w, g := want[i], got[i]
		if g.Kind != w.Kind || g.TS != w.TS || canon(t, g.Meta) != canon(t, w.Meta) || canon(t, g.Payload) != canon(t, w.Payload) {
			t.Errorf("record %d differs:\nwant %s %s %s %s\n got %s %s %s %s", i+1, w.Kind, w.TS, w.Meta, canon(t, w.Payload), g.Kind, g.TS, g.Meta, canon(t, g.Payload))
			continue
		}
		id, _ := ContentID(w.Payload)
		switch {
		case id == w.ID && g.ID != w.ID:
			t.Errorf("record %d (%s): id %s, want %s", i+1, w.Kind, g.ID, w.ID)
		case id != w.ID:
			if g.ID != id {
				t.Errorf("record %d (%s): id %s, want the content hash %s", i+1, w.Kind, g.ID, id)
			}
			moved[w.ID] = g.ID
		}
		parent := w.Parent
		if p, ok := moved[parent]; ok {
			parent = p
		}
		if g.Parent != parent {
			t.Errorf("record %d (%s): parent %s, want %s", i+1, w.Kind, g.Parent, parent)
		}
	}
}

// Every record kind comes back from a transcript as it went in: Shadow's
// demo traces (ids identical), the trace with ids that are not content
// hashes (ids corrected, parents following), a trace with every v0.1 and
// v0.2 kind, one whose tool_use blocks have no tool_call records and whose
// requests repeat the conversation, and a trace reel itself wrote.
func TestSourceRoundTrip(t *testing.T) {
	cases := []struct {
		name string
		recs func(t *testing.T) []Record
	}{
		{"demo-baseline", func(t *testing.T) []Record { return read(t, fixture(t, "demo-baseline.agentlog"), false) }},
		{"demo-candidate", func(t *testing.T) []Record { return read(t, fixture(t, "demo-candidate.agentlog"), false) }},
		{"wrong-ids-baseline", func(t *testing.T) []Record { return read(t, fixture(t, "wrong-ids-baseline.agentlog"), true) }},
		{"all-kinds", func(t *testing.T) []Record { return v02Trace(t) }},
		{"tool-use-without-calls", func(t *testing.T) []Record {
			return read(t, filepath.Join("testdata", "tool-use-without-calls.agentlog"), false)
		}},
		{"reel-sample", func(t *testing.T) []Record { return read(t, filepath.Join("testdata", "sample.agentlog"), false) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want := c.recs(t)
			got, _ := roundTrip(t, want)
			sameRecords(t, want, got)
			// And once more: a trace that went through reel twice is the same.
			again, _ := roundTrip(t, got)
			sameRecords(t, got, again)
			var buf bytes.Buffer
			if err := Encode(&buf, got); err != nil {
				t.Fatal(err)
			}
			if _, err := ReadAll(&buf, ReadOptions{}); err != nil {
				t.Errorf("exported trace does not read back with id and parent checks: %v", err)
			}
		})
	}
}

func read(t *testing.T, path string, acceptBadIDs bool) []Record {
	t.Helper()
	recs, err := ReadFile(path, ReadOptions{AcceptIDMismatch: acceptBadIDs})
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

// A tool_use whose call the trace does not record still becomes one
// tool.call/tool.result pair: answered by the next request's tool result
// (Anthropic's tool_result part, OpenAI's role "tool" message, is_error
// kept), or closed as dangling when no request answers it.
func TestToolUseWithoutCallRecords(t *testing.T) {
	_, events := roundTrip(t, read(t, filepath.Join("testdata", "tool-use-without-calls.agentlog"), false))
	calls, results := map[string]int{}, map[string]*transcript.ToolPayload{}
	uses := map[string]bool{}
	for i := range events {
		e := &events[i]
		switch e.Type {
		case transcript.ToolCall:
			calls[e.Tool().CallID]++
		case transcript.ToolResult:
			results[e.Tool().CallID] = e.Tool()
		case transcript.MessageAssistant:
			for _, b := range e.Message().Blocks {
				if b.Type == transcript.BlockToolUse {
					uses[b.ToolID] = true
				}
			}
		}
	}
	if len(uses) != 4 {
		t.Fatalf("%d tool_use blocks, want 4", len(uses))
	}
	for id := range uses {
		if calls[id] != 1 || results[id] == nil {
			t.Errorf("tool_use %s: %d tool.call, result %v", id, calls[id], results[id])
		}
	}
	if r := results["toolu_01A7kq"]; !strings.Contains(r.Error, "Total = 100, want 108") || r.Name != "run_tests" {
		t.Errorf("run_tests result %+v", r)
	}
	if r := results["toolu_01B3mx"]; r.Error != "" || !strings.Contains(string(r.Output.(json.RawMessage)), "func Total") {
		t.Errorf("read_file result %+v", r)
	}
	if r := results["call_Qw7ErT"]; r.Error != "" || !strings.Contains(string(r.Output.(json.RawMessage)), `rain`) {
		t.Errorf("get_weather result %+v", r)
	}
	if r := results["toolu_01C9zz"]; !strings.HasPrefix(r.Error, "no result:") {
		t.Errorf("unanswered call %+v", r)
	}
	// The request that only sends a result back shows it, not the old prompt.
	var prompts []string
	for i := range events {
		if events[i].Type == transcript.MessageUser {
			b := events[i].Message().Blocks[0]
			prompts = append(prompts, string(b.Type)+":"+b.Text+b.ToolID)
		}
	}
	want := "text:Why does CI fail on main? tool_result:toolu_01A7kq tool_result:toolu_01B3mx text:Is it raining in Lyon? tool_result:call_Qw7ErT"
	if strings.Join(prompts, " ") != want {
		t.Errorf("prompts %q\nwant    %q", strings.Join(prompts, " "), want)
	}
}

// An edit of the transcript shows in the trace it exports: the edited
// record gets a new content id, its children's parents follow, the rest is
// unchanged.
func TestSourceExportFollowsEdits(t *testing.T) {
	want := read(t, fixture(t, "demo-baseline.agentlog"), false)
	res, err := ToTranscript(want, "")
	if err != nil {
		t.Fatal(err)
	}
	path := transcripttest.RecordAll(t, t.TempDir(), res.Events)
	events, err := transcript.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	edited := false
	for i := range events {
		if mp := events[i].Message(); mp != nil && events[i].Type == transcript.MessageAssistant && !edited {
			mp.Blocks[0].Text = "I'll search for Go files."
			edited = true
		}
	}
	got, err := FromTranscript(events, ExportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("%d records", len(got))
	}
	changed := 0
	for i := range want {
		if got[i].ID != want[i].ID {
			changed++
			if !strings.Contains(string(got[i].Payload), "Go files") {
				t.Errorf("record %d changed without an edit", i+1)
			}
		}
	}
	if changed != 1 || got[3].Parent != got[2].ID {
		t.Errorf("%d records changed; the tool_call's parent %s, the edited response %s", changed, got[3].Parent, got[2].ID)
	}
}

// Invariants over every Shadow trace: each tool_use block and each
// tool_call record is one tool.call/tool.result pair, every response's
// text is in a message, and the responses' usage adds up to the steps'.
func TestTraceInvariants(t *testing.T) {
	paths, _ := filepath.Glob(filepath.Join(testfixtures.Dir(t, "agentlog"), "*.agentlog"))
	own, _ := filepath.Glob(filepath.Join("testdata", "*.agentlog"))
	for _, p := range append(paths, own...) {
		t.Run(filepath.Base(p), func(t *testing.T) {
			recs := read(t, p, strings.HasPrefix(filepath.Base(p), "wrong-ids"))
			res, err := ToTranscript(recs, "")
			if err != nil {
				t.Fatal(err)
			}
			transcripttest.CheckValid(t, res.Events)
			ids := map[string]bool{}
			var texts []string
			var usage transcript.Usage
			for _, r := range recs {
				switch r.Kind {
				case KindToolCall:
					var c toolCall
					json.Unmarshal(r.Payload, &c)
					ids[c.ToolCallID] = true
				case KindChatResponse:
					var cr chatResponse
					json.Unmarshal(r.Payload, &cr)
					for _, b := range cr.Content {
						switch b.Type {
						case "tool_use":
							ids[b.ID] = true
						case "text":
							texts = append(texts, b.Text)
						}
					}
					if cr.Usage != nil {
						usage.Add(cr.Usage.toReel())
					}
				}
			}
			calls, results := map[string]int{}, map[string]int{}
			var all strings.Builder
			var steps transcript.Usage
			for _, e := range res.Events {
				switch e.Type {
				case transcript.ToolCall:
					calls[e.Tool().CallID]++
				case transcript.ToolResult:
					results[e.Tool().CallID]++
				case transcript.MessageAssistant:
					for _, b := range e.Message().Blocks {
						all.WriteString(b.Text)
					}
				case transcript.StepCompleted:
					var ar transcript.AgentResult
					if transcript.DecodeResult(e.Step().Result, &ar) == nil {
						steps.Add(ar.Usage)
					}
				}
			}
			for id := range ids {
				if calls[id] != 1 || results[id] != 1 {
					t.Errorf("tool %s: %d calls, %d results", id, calls[id], results[id])
				}
			}
			for _, x := range texts {
				if !strings.Contains(all.String(), x) {
					t.Errorf("text %.60q lost", x)
				}
			}
			if steps != usage {
				t.Errorf("steps' usage %+v, responses' %+v", steps, usage)
			}
		})
	}
}
