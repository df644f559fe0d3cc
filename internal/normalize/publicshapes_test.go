package normalize

import (
	"strings"
	"testing"
	"time"

	"github.com/reelhq/reel/transcript"
)

// Shapes found importing public recordings that are not in ../shared
// (docs/import.md, "Checked against public recordings"), each on a small
// recording of our own in the same shape.

// A rollout whose user turns are only user_message events (as in
// claude-replay's Codex samples: response items for the model's side,
// events for the user's), one turn sent as "## My request for Codex:"
// with no editor context before it, and a turn recorded both ways (the
// usual order: the item, then its event). Every turn once, the title the
// request; each assistant message item its own reply at its own time;
// the session's span from session_meta to the last token count.
func TestCodexRolloutTurnsOnlyInEvents(t *testing.T) {
	p := parseFile(t, CodexRollout, "testdata/recordings/codex-rollout/event-user-turns.jsonl")
	var users, replies []string
	var replyTimes []time.Time
	for _, ev := range p.events {
		m := ev.Message()
		if m == nil {
			continue
		}
		var texts []string
		for _, b := range m.Blocks {
			if b.Type == transcript.BlockText {
				texts = append(texts, b.Text)
			}
		}
		switch ev.Type {
		case transcript.MessageUser:
			users = append(users, strings.Join(texts, "|"))
		case transcript.MessageAssistant:
			if len(texts) > 0 {
				replies = append(replies, strings.Join(texts, "|"))
				replyTimes = append(replyTimes, ev.Timestamp)
			}
		}
	}
	wantUsers := []string{"## My request for Codex:\nlist the files in src\n", "and how many lines?", "thanks, that is all"}
	if strings.Join(users, "‖") != strings.Join(wantUsers, "‖") {
		t.Errorf("user turns %q, want %q", users, wantUsers)
	}
	if p.res.Prompt != "list the files in src" {
		t.Errorf("prompt %q, want the request without its heading", p.res.Prompt)
	}
	wantReplies := []string{"Checking what each file holds.", "src has three Go files.", "120 lines in all.", "You are welcome."}
	if strings.Join(replies, "‖") != strings.Join(wantReplies, "‖") {
		t.Errorf("replies %q, want %q", replies, wantReplies)
	}
	if len(replyTimes) == 4 && !replyTimes[1].Equal(time.Date(2026, 3, 10, 9, 0, 5, 0, time.UTC)) {
		t.Errorf("the final answer at %v, want its own time 09:00:05", replyTimes[1])
	}
	if p.res.Agent.Output != "You are welcome." {
		t.Errorf("output %q", p.res.Agent.Output)
	}
	start, end := time.Date(2026, 3, 10, 9, 0, 0, 0, time.UTC), time.Date(2026, 3, 10, 9, 2, 9, 0, time.UTC)
	if !p.res.Start.Equal(start) || !p.res.End.Equal(end) {
		t.Errorf("span %v – %v, want %v – %v", p.res.Start, p.res.End, start, end)
	}
}

// A Gemini session's startTime and lastUpdated bound it; a reply's own
// time comes after the thoughts that began it.
func TestGeminiSessionSpan(t *testing.T) {
	p := parseFile(t, GeminiSession, "testdata/recordings/gemini-session/session.json")
	start, end := time.Date(2025, 10, 27, 19, 55, 0, 0, time.UTC), time.Date(2025, 10, 27, 19, 56, 10, 0, time.UTC)
	if !p.res.Start.Equal(start) || !p.res.End.Equal(end) {
		t.Errorf("span %v – %v, want %v – %v", p.res.Start, p.res.End, start, end)
	}
}
