package normalize

import (
	"bufio"
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/reelhq/reel/transcript"
)

// The invariants below are checked against facts read out of each
// recording independently, with encoding/json into map[string]any, so a
// mistake in the parsers' own scanner cannot hide itself.

// jsonValues decodes every JSON value of a recording: JSONL lines, SSE data
// payloads, or one (pretty-printed) document.
func jsonValues(t *testing.T, data []byte) []map[string]any {
	t.Helper()
	var out []map[string]any
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) > 0 && (trimmed[0] == '[' || bytes.HasPrefix(trimmed, []byte("{\n"))) {
		var v any
		if err := json.Unmarshal(trimmed, &v); err == nil {
			switch x := v.(type) {
			case map[string]any:
				if msgs, ok := x["messages"].([]any); ok {
					for _, m := range msgs {
						if mm, ok := m.(map[string]any); ok {
							out = append(out, mm)
						}
					}
					return out
				}
				return []map[string]any{x}
			case []any:
				for _, m := range x {
					if mm, ok := m.(map[string]any); ok {
						out = append(out, mm)
					}
				}
				return out
			}
		}
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, MaxLineSize)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		line = strings.TrimPrefix(line, "data: ")
		if line == "" || line[0] != '{' {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err == nil {
			out = append(out, m)
		}
	}
	return out
}

func obj(v any, keys ...string) map[string]any {
	m, _ := v.(map[string]any)
	for _, k := range keys {
		m, _ = m[k].(map[string]any)
	}
	return m
}

func arr(v any) []any { a, _ := v.([]any); return a }

func s(v any) string { x, _ := v.(string); return x }

func n(v any) int64 { x, _ := v.(float64); return int64(x) }

// providerToolIDs lists the tool invocation ids a recording names.
func providerToolIDs(f Format, vals []map[string]any) map[string]bool {
	ids := map[string]bool{}
	add := func(id string) {
		if id != "" {
			ids[id] = true
		}
	}
	for _, v := range vals {
		switch f {
		case ClaudeStreamJSON, ClaudeSessionLog:
			if v["isSidechain"] == true {
				continue
			}
			for _, b := range arr(obj(v, "message")["content"]) {
				bm := obj(b)
				switch s(bm["type"]) {
				case "tool_use", "server_tool_use", "mcp_tool_use":
					add(s(bm["id"]))
				case "tool_result":
					add(s(bm["tool_use_id"]))
				}
			}
		case CodexExecJSON:
			it := obj(v, "item")
			typ := s(it["type"])
			if typ == "" {
				typ = s(it["item_type"]) // the 0.4x spelling
			}
			switch typ {
			case "command_execution", "file_change", "mcp_tool_call", "web_search", "todo_list", "collab_tool_call":
				add(s(it["id"]))
			}
			add(s(obj(v, "msg")["call_id"]))
		case CodexRollout:
			if s(v["type"]) == "response_item" {
				add(s(obj(v, "payload")["call_id"]))
			}
		case GeminiStreamJSON:
			add(s(v["tool_id"]))
		case GeminiSession:
			for _, tc := range arr(v["toolCalls"]) {
				add(s(obj(tc)["id"]))
			}
		case CopilotJSON:
			add(s(obj(v, "data")["toolCallId"]))
		case OpenAIChatStream:
			for _, c := range arr(v["choices"]) {
				for _, key := range []string{"delta", "message"} {
					for _, tc := range arr(obj(c, key)["tool_calls"]) {
						add(s(obj(tc)["id"]))
					}
				}
			}
		case AnthropicSSE:
			b := obj(v, "content_block")
			switch typ := s(b["type"]); {
			case typ == "tool_use" || typ == "server_tool_use" || typ == "mcp_tool_use":
				add(s(b["id"]))
			case strings.HasSuffix(typ, "_tool_result"):
				add(s(b["tool_use_id"]))
			}
		case VibeStreaming:
			for _, tc := range arr(v["tool_calls"]) {
				add(s(obj(tc)["id"]))
			}
			add(s(v["tool_call_id"]))
		case OpencodeJSON:
			add(s(obj(v, "part")["callID"]))
		}
	}
	return ids
}

// anthropicUsage reads an Anthropic usage object (input without the
// cache) into reel's convention (input with it).
func anthropicUsage(m map[string]any) transcript.Usage {
	in := n(m["input_tokens"]) + n(m["cache_read_input_tokens"]) + n(m["cache_creation_input_tokens"])
	return transcript.Usage{InputTokens: in, OutputTokens: n(m["output_tokens"]),
		CacheReadTokens: n(m["cache_read_input_tokens"]), CacheWriteTokens: n(m["cache_creation_input_tokens"]),
		CacheWrite1hTokens: n(obj(m, "cache_creation")["ephemeral_1h_input_tokens"]),
		ReasoningTokens:    n(obj(m, "output_tokens_details")["thinking_tokens"]), TotalTokens: in + n(m["output_tokens"])}
}

// providerUsage is the token totals a recording reports, or ok=false, and
// the cost it reports (nil when none). Each format is read the way its own
// documentation and data say it counts (see usage.go), independently of
// the parsers.
func providerUsage(f Format, vals []map[string]any) (u transcript.Usage, cost *float64, ok bool) {
	switch f {
	case ClaudeStreamJSON:
		// modelUsage and total_cost_usd are each process's running totals;
		// in these recordings a process is a session id.
		type proc struct {
			snap transcript.Usage
			own  int64 // one-hour cache writes, from the queries' own usage
			cost float64
		}
		var procs []*proc
		var sid string
		snapshots := true
		for _, v := range vals {
			if s(v["type"]) != "result" {
				continue
			}
			if len(procs) == 0 || s(v["session_id"]) != sid {
				procs = append(procs, &proc{})
				sid = s(v["session_id"])
			}
			p := procs[len(procs)-1]
			var snap transcript.Usage
			models := obj(v, "modelUsage")
			if len(models) == 0 {
				snapshots = false
			}
			for _, m := range models {
				mm := obj(m)
				pick := func(camel, snake string) int64 { return n(mm[camel]) + n(mm[snake]) }
				in := pick("inputTokens", "input_tokens") + pick("cacheReadInputTokens", "cache_read_input_tokens") + pick("cacheCreationInputTokens", "cache_creation_input_tokens")
				snap.Add(transcript.Usage{InputTokens: in, OutputTokens: pick("outputTokens", "output_tokens"),
					CacheReadTokens: pick("cacheReadInputTokens", "cache_read_input_tokens"), CacheWriteTokens: pick("cacheCreationInputTokens", "cache_creation_input_tokens"),
					ReasoningTokens: n(mm["thinkingTokens"])})
			}
			own := anthropicUsage(obj(v, "usage"))
			if len(models) == 0 {
				snap = p.snap
				snap.Add(own)
			}
			p.snap = snap
			p.own += own.CacheWrite1hTokens
			if c, isNum := v["total_cost_usd"].(float64); isNum {
				p.cost = c
				if cost == nil {
					cost = new(float64)
				}
			}
			ok = true
		}
		for _, p := range procs {
			p.snap.CacheWrite1hTokens = min(p.own, p.snap.CacheWriteTokens)
			u.Add(p.snap)
			if cost != nil {
				*cost += p.cost
			}
		}
		_ = snapshots
	case ClaudeSessionLog:
		last := map[string]transcript.Usage{}
		for _, v := range vals {
			m := obj(v, "message")
			if s(v["type"]) == "assistant" && m["usage"] != nil {
				last[s(m["id"])] = anthropicUsage(obj(m, "usage"))
			}
		}
		for _, x := range last {
			u.Add(x)
			ok = true
		}
	case CodexExecJSON:
		// turn.completed is the thread's running total: the last per thread.
		last := map[string]transcript.Usage{}
		var thread string
		for _, v := range vals {
			switch s(v["type"]) {
			case "thread.started":
				thread = s(v["thread_id"])
			case "turn.completed":
				m := obj(v, "usage")
				last[thread] = transcript.Usage{InputTokens: n(m["input_tokens"]), OutputTokens: n(m["output_tokens"]),
					CacheReadTokens: n(m["cached_input_tokens"]), CacheWriteTokens: n(m["cache_write_input_tokens"]),
					ReasoningTokens: n(m["reasoning_output_tokens"])}
				ok = true
			}
		}
		for _, x := range last {
			x.TotalTokens = x.InputTokens + x.OutputTokens
			u.Add(x)
		}
	case CodexRollout:
		// total_token_usage is the session's running total; when it
		// falls, a new count started and the one before it ended.
		var cur transcript.Usage
		for _, v := range vals {
			if m := obj(v, "payload", "info", "total_token_usage"); m != nil {
				next := transcript.Usage{InputTokens: n(m["input_tokens"]), OutputTokens: n(m["output_tokens"]),
					CacheReadTokens: n(m["cached_input_tokens"]), ReasoningTokens: n(m["reasoning_output_tokens"]),
					TotalTokens: n(m["total_tokens"])}
				if next.TotalTokens < cur.TotalTokens {
					u.Add(cur)
				}
				cur = next
				ok = true
			}
		}
		u.Add(cur)
		return u, nil, ok
	case GeminiStreamJSON:
		for _, v := range vals {
			if m := obj(v, "stats"); m != nil {
				in, out := n(m["input_tokens"]), n(m["output_tokens"])
				u.Add(transcript.Usage{InputTokens: in, OutputTokens: out, TotalTokens: in + out, CacheReadTokens: n(m["cached"])})
				ok = true
			}
		}
		return u, nil, ok
	case GeminiSession:
		// total = input + output + thoughts + tool: thoughts are output,
		// the tool-use prompt input.
		for _, v := range vals {
			if m := obj(v, "tokens"); m != nil {
				in, out := n(m["input"])+n(m["tool"]), n(m["output"])+n(m["thoughts"])
				if in+out != n(m["total"]) {
					return u, nil, false
				}
				u.Add(transcript.Usage{InputTokens: in, OutputTokens: out, CacheReadTokens: n(m["cached"]),
					ReasoningTokens: n(m["thoughts"]), TotalTokens: n(m["total"])})
				ok = true
			}
		}
		return u, nil, ok
	case CopilotJSON:
		for _, v := range vals {
			if s(v["type"]) == "assistant.usage" {
				m := obj(v, "data")
				u.Add(transcript.Usage{InputTokens: n(m["inputTokens"]), OutputTokens: n(m["outputTokens"]), CacheReadTokens: n(m["cacheReadTokens"])})
				ok = true
			}
		}
	case OpenAIChatStream:
		for _, v := range vals {
			if m := obj(v, "usage"); m != nil {
				x := transcript.Usage{InputTokens: n(m["prompt_tokens"]), OutputTokens: n(m["completion_tokens"]), TotalTokens: n(m["total_tokens"]),
					CacheReadTokens: n(obj(m, "prompt_tokens_details")["cached_tokens"]), ReasoningTokens: n(obj(m, "completion_tokens_details")["reasoning_tokens"])}
				if x.TotalTokens > x.InputTokens+x.OutputTokens {
					// reasoning counted apart from completion_tokens (xAI)
					x.OutputTokens = x.TotalTokens - x.InputTokens
				}
				u.Add(x)
				ok = true
			}
		}
		return u, nil, ok
	case OpencodeJSON:
		// input excludes the cache; reasoning is apart from output unless
		// the total shows it inside; cost is reported per step.
		for _, v := range vals {
			if s(v["type"]) == "step_finish" {
				m := obj(v, "part", "tokens")
				c := obj(m, "cache")
				in := n(m["input"]) + n(c["read"]) + n(c["write"])
				out := n(m["output"])
				if tot := n(m["total"]); tot == 0 || tot == in+out+n(m["reasoning"]) {
					out += n(m["reasoning"])
				}
				u.Add(transcript.Usage{InputTokens: in, OutputTokens: out, ReasoningTokens: n(m["reasoning"]),
					CacheReadTokens: n(c["read"]), CacheWriteTokens: n(c["write"]), TotalTokens: in + out})
				if x, isNum := obj(v, "part")["cost"].(float64); isNum {
					if cost == nil {
						cost = new(float64)
					}
					*cost += x
				}
				ok = true
			}
		}
	case AnthropicSSE:
		cur := map[string]any{}
		for _, v := range vals {
			switch s(v["type"]) {
			case "message_start":
				cur = map[string]any{}
				for k, x := range obj(v, "message", "usage") {
					cur[k] = x
				}
			case "message_delta":
				for k, x := range obj(v, "usage") {
					cur[k] = x
				}
			case "message_stop":
				u.Add(anthropicUsage(cur))
				ok = true
			}
		}
	}
	if u.TotalTokens == 0 {
		u.TotalTokens = u.InputTokens + u.OutputTokens
	}
	return u, cost, ok
}

// providerFinalTexts are the texts a recording itself reports as the
// agent's final answer.
func providerFinalTexts(f Format, vals []map[string]any) []string {
	var out []string
	switch f {
	case ClaudeStreamJSON:
		for _, v := range vals {
			if s(v["type"]) == "result" && s(v["result"]) != "" {
				out = append(out, s(v["result"]))
			}
		}
	case CodexExecJSON:
		for _, v := range vals {
			if m := obj(v, "msg"); s(m["type"]) == "task_complete" && s(m["last_agent_message"]) != "" {
				out = append(out, s(m["last_agent_message"]))
			}
		}
	case CodexRollout:
		var last string
		for _, v := range vals {
			if p := obj(v, "payload"); s(v["type"]) == "event_msg" && s(p["type"]) == "agent_message" {
				last = s(p["message"])
			}
		}
		if last != "" {
			out = append(out, last)
		}
	case OpenAIChatStream:
		var sb strings.Builder
		for _, v := range vals {
			for _, c := range arr(v["choices"]) {
				sb.WriteString(s(obj(c, "delta")["content"]))
				sb.WriteString(s(obj(c, "message")["content"]))
			}
		}
		if sb.Len() > 0 {
			out = append(out, sb.String())
		}
	case AnthropicSSE:
		// The last message's text.
		var sb strings.Builder
		for _, v := range vals {
			if s(v["type"]) == "message_start" {
				sb.Reset()
			}
			if d := obj(v, "delta"); s(d["type"]) == "text_delta" {
				sb.WriteString(s(d["text"]))
			}
		}
		if sb.Len() > 0 {
			out = append(out, sb.String())
		}
	}
	return out
}

func messageText(ev transcript.ExchangeEvent) string {
	var sb strings.Builder
	for _, b := range ev.Message().Blocks {
		if b.Type == transcript.BlockText {
			sb.WriteString(b.Text)
		}
	}
	return sb.String()
}

func TestInvariants(t *testing.T) {
	forEachRecording(t, func(t *testing.T, f Format, path string) {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		vals := jsonValues(t, data)
		got := parse(t, f, data, nil)

		// Every tool id: one tool.call, then one tool.result.
		calls, results := map[string]int{}, map[string]int{}
		for _, ev := range got.events {
			switch ev.Type {
			case transcript.ToolCall:
				if results[ev.Tool().CallID] > 0 {
					t.Errorf("tool.result of %s before its tool.call", ev.Tool().CallID)
				}
				calls[ev.Tool().CallID]++
			case transcript.ToolResult:
				results[ev.Tool().CallID]++
			}
		}
		for id, c := range calls {
			if c != 1 || results[id] != 1 {
				t.Errorf("tool %s: %d tool.call, %d tool.result; want 1 and 1", id, c, results[id])
			}
		}
		for id := range results {
			if calls[id] == 0 {
				t.Errorf("tool.result %s without tool.call", id)
			}
		}
		want := providerToolIDs(f, vals)
		for id := range want {
			if calls[id] != 1 {
				t.Errorf("provider tool id %s: %d tool.call events, want 1", id, calls[id])
			}
		}
		for id := range calls {
			// Codex item ids restart with each process of a recording: a
			// reused one is renamed id~N.
			base, _, _ := strings.Cut(id, "~")
			if !want[base] && !strings.HasPrefix(id, "reel-tool-") && !strings.HasPrefix(id, "copilot-tool-") {
				t.Errorf("tool.call %s is not an id the recording names", id)
			}
		}

		// Usage totals equal what the provider reported, counted once:
		// cache tokens inside input, reasoning inside output.
		u, cost, ok := providerUsage(f, vals)
		if ok && u != got.res.Agent.Usage {
			t.Errorf("usage %+v, provider reported %+v", got.res.Agent.Usage, u)
		}
		gu := got.res.Agent.Usage
		if gu.CacheReadTokens+gu.CacheWriteTokens > gu.InputTokens || gu.ReasoningTokens > gu.OutputTokens && gu.OutputTokens > 0 ||
			gu.CacheWrite1hTokens > gu.CacheWriteTokens {
			t.Errorf("usage parts exceed their wholes: %+v", gu)
		}
		// Cost: kept exactly when reported, absent when not.
		switch gc := got.res.Agent.CostUSD; {
		case cost == nil && gc != nil:
			t.Errorf("cost %v, but the recording reports none", *gc)
		case cost != nil && (gc == nil || math.Abs(*gc-*cost) > 1e-12):
			t.Errorf("cost %v, provider reported %v", gc, *cost)
		}

		// Text, thinking and errors are kept.
		facts := readFacts(f, vals)
		var all strings.Builder
		thinking := 0
		toolErr := map[string]string{}
		for _, ev := range got.events {
			switch ev.Type {
			case transcript.MessageAssistant:
				for _, b := range ev.Message().Blocks {
					switch b.Type {
					case transcript.BlockText:
						all.WriteString(b.Text)
						all.WriteByte(0)
					case transcript.BlockThinking:
						thinking++
					}
				}
			case transcript.ToolResult:
				toolErr[ev.Tool().CallID] = ev.Tool().Error
			}
		}
		for _, x := range facts.texts {
			if !strings.Contains(all.String(), x) {
				t.Errorf("assistant text %.80q is in no message.assistant", x)
			}
		}
		if facts.thinking >= 0 && thinking != facts.thinking {
			t.Errorf("%d thinking blocks, the recording has %d", thinking, facts.thinking)
		}
		for id := range facts.failed {
			if toolErr[id] == "" {
				t.Errorf("tool %s failed in the recording; its tool.result has no error", id)
			}
		}
		if facts.runError && !got.res.IsError {
			t.Errorf("the recording reports a failure; the result is not an error")
		}

		// Final texts: each equals the text of the assistant message
		// that carried it.
		finals := providerFinalTexts(f, vals)
		var texts []string
		for _, ev := range got.events {
			if ev.Type == transcript.MessageAssistant {
				if x := messageText(ev); x != "" {
					texts = append(texts, x)
				}
			}
		}
		for _, fin := range finals {
			found := false
			for _, x := range texts {
				found = found || x == fin
			}
			if !found {
				t.Errorf("provider final text %.80q is no assistant message's text", fin)
			}
		}
		if len(finals) > 0 && got.res.Agent.Output != finals[len(finals)-1] {
			t.Errorf("Output %.80q, provider's final text %.80q", got.res.Agent.Output, finals[len(finals)-1])
		}
	})
}

// TestClaudeResultFollowsItsMessage checks, line by line, that each Claude
// result's text is the text of the assistant message emitted just before
// it.
func TestClaudeResultFollowsItsMessage(t *testing.T) {
	for _, path := range fixtureFiles(t, ClaudeStreamJSON) {
		data, _ := os.ReadFile(path)
		var lastText string
		p, _ := NewParser(ClaudeStreamJSON, func(ev transcript.ExchangeEvent) error {
			if ev.Type == transcript.MessageAssistant {
				if x := messageText(ev); x != "" {
					lastText = x
				}
			}
			return nil
		})
		for _, line := range bytes.SplitAfter(data, []byte("\n")) {
			var m map[string]any
			_ = json.Unmarshal(line, &m)
			if _, err := p.Write(line); err != nil {
				t.Fatal(err)
			}
			if s(m["type"]) == "result" && s(m["result"]) != "" && s(m["result"]) != lastText {
				t.Errorf("%s: result %q follows assistant text %q", filepath.Base(path), s(m["result"]), lastText)
			}
		}
		if _, err := p.Close("end"); err != nil {
			t.Fatal(err)
		}
	}
}

// ownRecordings lists this package's own recordings of format f.
func ownRecordings(t testing.TB, f Format) []string {
	m, _ := filepath.Glob(filepath.Join("testdata", "recordings", string(f), "*"))
	sort.Strings(m)
	return m
}
