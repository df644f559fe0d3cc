package normalize

import "github.com/reelhq/reel/transcript"

// TextFirst reorders the events of a recording read whole so that each
// tool.call comes right after the message.assistant whose tool_use block
// issued it. A parser emits a call as soon as it sees the tool_use, before
// the message carrying it is complete (so a live reader sees a long tool
// run start at once); read whole, the text that introduced a call belongs
// before it. A call moves only past events of its own step up to that
// message; when its tool.result came before that message too (a server
// tool, run by the provider inside the message), the result moves with
// it. Moved events take the message's time when theirs is earlier, so time
// never goes back.
func TextFirst(events []transcript.ExchangeEvent) []transcript.ExchangeEvent {
	target := map[int][]int{} // message index → calls moved after it
	moved := map[int]bool{}
	for i := range events {
		tp := events[i].Tool()
		if events[i].Type != transcript.ToolCall || tp == nil {
			continue
		}
		result := -1
	scan:
		for j := i + 1; j < len(events); j++ {
			e := &events[j]
			if e.Path != events[i].Path || e.Iteration != events[i].Iteration {
				continue
			}
			switch e.Type {
			case transcript.ToolResult:
				if r := e.Tool(); r != nil && r.CallID == tp.CallID && result < 0 {
					result = j
				}
			case transcript.StepCompleted, transcript.StepStarted:
				break scan
			case transcript.MessageAssistant:
				if issues(e.Message(), tp.CallID) {
					target[j] = append(target[j], i)
					moved[i] = true
					if result >= 0 {
						target[j] = append(target[j], result)
						moved[result] = true
					}
					break scan
				}
				if result >= 0 {
					break scan // answered before a message that is not its own
				}
			}
		}
	}
	if len(moved) == 0 {
		return events
	}
	out := make([]transcript.ExchangeEvent, 0, len(events))
	for j := range events {
		if moved[j] {
			continue
		}
		out = append(out, events[j])
		for _, i := range target[j] {
			c := events[i]
			if c.Timestamp.Before(events[j].Timestamp) {
				c.Timestamp = events[j].Timestamp
			}
			out = append(out, c)
		}
	}
	return out
}

// issues reports whether message m holds the tool_use block of call id.
func issues(m *transcript.MessagePayload, id string) bool {
	if m == nil {
		return false
	}
	for _, b := range m.Blocks {
		if b.Type == transcript.BlockToolUse && b.ToolID == id {
			return true
		}
	}
	return false
}
