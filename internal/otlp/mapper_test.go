package otlp

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/reelhq/reel/transcript"
)

var t0 = time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)

// script builds events with a clock that advances 1s per event.
type script struct {
	evs []transcript.ExchangeEvent
	now time.Time
}

func (s *script) add(e transcript.ExchangeEvent) *script {
	if s.now.IsZero() {
		s.now = t0
	}
	if e.RunID == "" {
		e.RunID = runA
	}
	if e.Timestamp.IsZero() {
		e.Timestamp = s.now
	}
	s.now = s.now.Add(time.Second)
	e.Seq = uint64(len(s.evs) + 1)
	s.evs = append(s.evs, e)
	return s
}

func (s *script) run(name string) *script {
	return s.add(transcript.ExchangeEvent{Type: transcript.RunStarted, Payload: &transcript.StepPayload{Name: name, Kind: transcript.KindWorkflow}})
}

func (s *script) done(errMsg string, result any) *script {
	return s.add(transcript.ExchangeEvent{Type: transcript.RunCompleted, Payload: &transcript.StepPayload{Name: "w", Kind: transcript.KindWorkflow, Error: errMsg, Result: result}})
}

func (s *script) start(path string, iter int, kind string, attempt int) *script {
	return s.add(transcript.ExchangeEvent{Type: transcript.StepStarted, Path: path, Iteration: iter, Payload: &transcript.StepPayload{Name: last(path), Kind: kind, Attempt: attempt}})
}

func (s *script) end(path string, iter int, kind string, attempt int, errMsg string, result any) *script {
	return s.add(transcript.ExchangeEvent{Type: transcript.StepCompleted, Path: path, Iteration: iter, Payload: &transcript.StepPayload{Name: last(path), Kind: kind, Attempt: attempt, Error: errMsg, Result: result}})
}

func (s *script) tool(typ transcript.EventType, path, id, errMsg string) *script {
	return s.add(transcript.ExchangeEvent{Type: typ, Path: path, Payload: &transcript.ToolPayload{Name: "Bash", CallID: id, Error: errMsg, Fidelity: transcript.FidelityAgentEmitted}})
}

func last(p string) string { return p[strings.LastIndexByte(p, '.')+1:] }

// mapAll maps events and returns the spans by name, in emission order.
func mapAll(t *testing.T, evs []transcript.ExchangeEvent) []*span {
	t.Helper()
	tid, _ := TraceID(runA)
	var out []*span
	m, err := newMapper(runA, tid, true, func(s *span) { out = append(out, s) })
	if err != nil {
		t.Fatal(err)
	}
	for i := range evs {
		m.event(&evs[i])
	}
	m.finish()
	return out
}

func attr(s *span, k string) (attribute.Value, bool) {
	for _, a := range s.attrs {
		if string(a.Key) == k {
			return a.Value, true
		}
	}
	return attribute.Value{}, false
}

func named(spans []*span, name string) []*span {
	var out []*span
	for _, s := range spans {
		if s.name == name {
			out = append(out, s)
		}
	}
	return out
}

func TestRevisitedStateGetsItsOwnSpanIDs(t *testing.T) {
	s := (&script{}).run("w")
	for i := 0; i < 3; i++ { // a state reached three times through transitions
		s.start("poll", 0, transcript.KindCommand, 0).end("poll", 0, transcript.KindCommand, 0, "", nil)
	}
	spans := mapAll(t, s.done("", nil).evs)
	polls := named(spans, "command poll")
	if len(polls) != 3 {
		t.Fatalf("%d poll spans", len(polls))
	}
	u, _ := uuidBytes(runA)
	for i, p := range polls {
		want := stepSpanID(stepKey{run: u, path: "poll", occurrence: uint64(i)})
		if p.id != want {
			t.Errorf("poll #%d: id %s, want occurrence %d's %s", i, p.id, i, want)
		}
	}
	if polls[0].id != stepSpanID(stepKey{run: u, path: "poll"}) {
		t.Error("the first execution's id is not docs/decisions.md §11's plain run_id+path+iteration+attempt")
	}
}

func TestParallelLoopIterationsMatchTheirCompletions(t *testing.T) {
	s := (&script{}).run("w").start("each", 0, transcript.KindForEach, 0)
	s.start("each.x", 0, transcript.KindCommand, 0).start("each.x", 1, transcript.KindCommand, 0)
	s.end("each.x", 0, transcript.KindCommand, 0, "", transcript.CommandResult{ExitCode: 0})
	s.end("each.x", 1, transcript.KindCommand, 0, "exit status 4", transcript.CommandResult{ExitCode: 4})
	spans := mapAll(t, s.end("each", 0, transcript.KindForEach, 0, "", map[string]any{"iterations": 2}).done("", nil).evs)
	xs := named(spans, "command each.x")
	loop := named(spans, "for_each each")[0]
	if len(xs) != 2 {
		t.Fatalf("%d spans", len(xs))
	}
	for _, x := range xs {
		it, _ := attr(x, "reel.step.iteration")
		code, _ := attr(x, "reel.step.exit_code")
		if code.AsInt64() != 4*it.AsInt64() {
			t.Errorf("iteration %d got exit code %d: completions crossed", it.AsInt64(), code.AsInt64())
		}
		if x.parent != loop.id {
			t.Errorf("iteration %d not under the loop", it.AsInt64())
		}
		if !x.end.Equal(x.start.Add(2*time.Second)) && !x.end.Equal(x.start.Add(3*time.Second)) {
			t.Errorf("iteration %d: %s..%s", it.AsInt64(), x.start, x.end)
		}
	}
	if v, _ := attr(loop, "reel.loop.iterations"); v.AsInt64() != 2 {
		t.Errorf("loop iterations %v", v)
	}
}

func TestStatusesAndErrorTypes(t *testing.T) {
	s := (&script{}).run("w")
	s.start("ok", 0, transcript.KindCommand, 0).end("ok", 0, transcript.KindCommand, 0, "", nil)
	s.start("bad", 0, transcript.KindCommand, 0).end("bad", 0, transcript.KindCommand, 0, "exit status 1", nil)
	s.start("stop", 0, transcript.KindCommand, 0).end("stop", 0, transcript.KindCommand, 0, "cancelled: received SIGINT", nil)
	s.start("end", 0, transcript.KindTerminal, 0).end("end", 0, transcript.KindTerminal, 0, "", map[string]any{"status": "failure", "message": "nope"})
	s.start("hang", 0, transcript.KindCommand, 0)
	spans := mapAll(t, s.evs) // no run.completed: killed
	want := map[string]struct {
		status, class string
		code          codes.Code
	}{
		"command ok":        {"success", "", codes.Unset},
		"command bad":       {"failure", "failure", codes.Error},
		"command stop":      {"cancelled", "cancelled", codes.Error},
		"terminal end":      {"failure", "failure", codes.Error},
		"command hang":      {"interrupted", "interrupted", codes.Error},
		"invoke_workflow w": {"interrupted", "interrupted", codes.Error},
	}
	for _, sp := range spans {
		w, ok := want[sp.name]
		if !ok {
			t.Errorf("unexpected span %s", sp.name)
			continue
		}
		key := "reel.step.status"
		if sp.runRoot {
			key = "reel.run.status"
		}
		st, _ := attr(sp, key)
		class, _ := attr(sp, "error.type")
		if st.AsString() != w.status || class.AsString() != w.class || sp.status != w.code {
			t.Errorf("%s: status %q error.type %q code %v, want %+v", sp.name, st.AsString(), class.AsString(), sp.status, w)
		}
		if sp.status == codes.Error && sp.desc == "" {
			t.Errorf("%s: error without a description", sp.name)
		}
	}
	run := named(spans, "invoke_workflow w")[0]
	if !run.end.Equal(t0.Add(9 * time.Second)) {
		t.Errorf("an interrupted run ends at its last event, got %s", run.end)
	}
}

func TestToolPairsThatDoNotBalance(t *testing.T) {
	s := (&script{}).run("w").start("a", 0, transcript.KindAgent, 0)
	s.tool(transcript.ToolResult, "a", "orphan", "") // a result without its call
	s.tool(transcript.ToolCall, "a", "dangling", "") // a call that never gets one
	s.tool(transcript.ToolCall, "a", "twice", "").tool(transcript.ToolResult, "a", "twice", "")
	s.tool(transcript.ToolCall, "a", "twice", "").tool(transcript.ToolResult, "a", "twice", "boom")
	spans := mapAll(t, s.end("a", 0, transcript.KindAgent, 0, "", nil).done("", nil).evs)
	tools := named(spans, "execute_tool Bash")
	if len(tools) != 4 {
		t.Fatalf("%d tool spans, want 4", len(tools))
	}
	byCall := map[string][]*span{}
	for _, tl := range tools {
		id, _ := attr(tl, "gen_ai.tool.call.id")
		byCall[id.AsString()] = append(byCall[id.AsString()], tl)
	}
	if o := byCall["orphan"][0]; !o.start.Equal(o.end) || o.status != codes.Unset {
		t.Errorf("orphan result: %s..%s %v", o.start, o.end, o.status)
	}
	if d := byCall["dangling"][0]; d.status != codes.Error || !strings.HasPrefix(d.desc, "no result") {
		t.Errorf("dangling call: %v %q", d.status, d.desc)
	} else if c, _ := attr(d, "error.type"); c.AsString() != "no_result" {
		t.Errorf("dangling call error.type %q", c.AsString())
	}
	tw := byCall["twice"]
	if len(tw) != 2 || tw[0].id == tw[1].id || tw[1].status != codes.Error {
		t.Errorf("a call id used twice: %+v", tw)
	}
}

func TestEventsOutsideTheVocabularyOrTheRun(t *testing.T) {
	s := (&script{}).start("early", 0, transcript.KindCommand, 0) // no run.started
	s.add(transcript.ExchangeEvent{Type: "step.paused", Path: "early"})
	s.add(transcript.ExchangeEvent{Type: transcript.StepStarted, RunID: "99999999-9999-4999-8999-999999999999", Path: "other", Payload: &transcript.StepPayload{Name: "other", Kind: "command"}})
	s.add(transcript.ExchangeEvent{Type: transcript.StepCompleted, Path: "early", Payload: json.RawMessage(`[1,2]`)})
	s.end("early", 0, transcript.KindCommand, 0, "", nil)
	s.end("never-started", 0, transcript.KindCommand, 0, "", nil)
	s.add(transcript.ExchangeEvent{Type: transcript.StepStarted, Path: "zero", Timestamp: time.Time{}, Payload: &transcript.StepPayload{Name: "zero", Kind: "command"}})
	spans := mapAll(t, s.evs)
	if len(named(spans, "command other")) != 0 {
		t.Error("an event of another run was mapped")
	}
	if len(named(spans, "command early")) != 1 || len(named(spans, "invoke_workflow ")) != 1 {
		t.Errorf("spans %v", names(spans))
	}
	if n := named(spans, "command never-started"); len(n) != 1 || !n[0].start.Equal(n[0].end) {
		t.Errorf("a completion without its start: %v", names(spans))
	}
}

func names(spans []*span) []string {
	var out []string
	for _, s := range spans {
		out = append(out, s.name)
	}
	return out
}

func TestAgentAttributes(t *testing.T) {
	cost := 0.25
	cases := []struct {
		provider     string
		kind         trace.SpanKind
		providerName string
		inputTokens  int64
	}{
		{"claude", trace.SpanKindClient, "anthropic", 100},
		{"codex", trace.SpanKindClient, "openai", 100},
		{"gemini", trace.SpanKindClient, "gcp.gen_ai", 100},
		{"mistral_vibe", trace.SpanKindClient, "mistral_ai", 100},
		{"github_copilot", trace.SpanKindClient, "github.copilot", 100},
		{"openai_compatible", trace.SpanKindInternal, "openai", 100},
		{"someday", trace.SpanKindClient, "someday", 100},
	}
	for _, c := range cases {
		res := transcript.AgentResult{Provider: c.provider, Model: "m-2026-01-01", RequestModel: "m", SessionID: "sess-1", Turns: 2, CostUSD: &cost, ReplayedFrom: runA,
			Usage: transcript.Usage{InputTokens: 100, OutputTokens: 7, CacheReadTokens: 30, CacheWriteTokens: 20, ReasoningTokens: 5}}
		raw, _ := json.Marshal(res)
		for _, result := range []any{res, json.RawMessage(raw)} {
			s := (&script{}).run("w").start("ask", 0, transcript.KindAgent, 0)
			spans := mapAll(t, s.end("ask", 0, transcript.KindAgent, 0, "", result).done("", nil).evs)
			a := named(spans, "invoke_agent ask")[0]
			get := func(k string) attribute.Value { v, _ := attr(a, k); return v }
			if a.kind != c.kind || get("gen_ai.provider.name").AsString() != c.providerName || get("gen_ai.usage.input_tokens").AsInt64() != c.inputTokens {
				t.Errorf("%s: kind %v provider %q input %d", c.provider, a.kind, get("gen_ai.provider.name").AsString(), get("gen_ai.usage.input_tokens").AsInt64())
			}
			for k, want := range map[string]any{
				"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "ask", "gen_ai.request.model": "m", "gen_ai.response.model": "m-2026-01-01",
				"gen_ai.conversation.id": "sess-1", "gen_ai.usage.output_tokens": int64(7), "gen_ai.usage.cache_read.input_tokens": int64(30),
				"gen_ai.usage.cache_creation.input_tokens": int64(20), "gen_ai.usage.reasoning.output_tokens": int64(5), "reel.usage.cost_usd": 0.25,
				"reel.agent.turns": int64(2), "reel.agent.provider": c.provider, "reel.agent.replayed_from": runA,
			} {
				if got := get(k).AsInterface(); got != want {
					t.Errorf("%s %T: %s = %v, want %v", c.provider, result, k, got, want)
				}
			}
		}
	}
}

func TestContentIsTheSameFromGoValuesAndFromTheFile(t *testing.T) {
	s := (&script{}).run("w").start("ask", 0, transcript.KindAgent, 0)
	s.add(transcript.ExchangeEvent{Type: transcript.MessageUser, Path: "ask", Payload: &transcript.MessagePayload{Role: "user", Blocks: []transcript.ContentBlock{
		{Type: transcript.BlockText, Fidelity: transcript.FidelityRouter, Text: "diff <a> & <b>\xff"},
		{Type: transcript.BlockText, Fidelity: transcript.FidelityRouter, Text: "be brief"},
	}}})
	s.add(transcript.ExchangeEvent{Type: transcript.MessageAssistant, Path: "ask", Payload: &transcript.MessagePayload{Role: "assistant", Blocks: []transcript.ContentBlock{
		{Type: transcript.BlockThinking, Fidelity: transcript.FidelityAgentEmitted, Thinking: "hmm"},
		{Type: transcript.BlockToolUse, Fidelity: transcript.FidelityAgentEmitted, ToolName: "Read", ToolID: "t1", ToolInput: map[string]any{"z": 1, "a": []any{1.5, "x"}, "n": 12345678901234567}},
	}}})
	s.add(transcript.ExchangeEvent{Type: transcript.ToolCall, Path: "ask", Payload: &transcript.ToolPayload{Name: "Read", CallID: "t1", Input: map[string]any{"z": 1, "a": []any{1.5, "x"}, "n": 12345678901234567}, Fidelity: transcript.FidelityAgentEmitted}})
	s.add(transcript.ExchangeEvent{Type: transcript.ToolResult, Path: "ask", Payload: &transcript.ToolPayload{Name: "Read", CallID: "t1", Output: map[string]any{"lines": []string{"a<b", "\u2028"}}, Fidelity: transcript.FidelityAgentEmitted}})
	s.add(transcript.ExchangeEvent{Type: transcript.MessageAssistant, Path: "ask", Payload: &transcript.MessagePayload{Role: "assistant", Blocks: []transcript.ContentBlock{
		{Type: transcript.BlockText, Fidelity: transcript.FidelityAgentEmitted, Text: ""},
	}}})
	s.end("ask", 0, transcript.KindAgent, 0, "", transcript.AgentResult{Provider: "claude"}).done("", nil)

	// The same events written and read back, as the batch export sees them.
	var buf bytes.Buffer
	for _, e := range s.evs {
		b, err := transcript.AppendEvent(nil, &e)
		if err != nil {
			t.Fatal(err)
		}
		buf.Write(append(b, '\n'))
	}
	back, err := transcript.ReadAll(&buf)
	if err != nil {
		t.Fatal(err)
	}
	live, batch := mapAll(t, s.evs), mapAll(t, back)
	if len(live) != len(batch) {
		t.Fatalf("%d vs %d spans", len(live), len(batch))
	}
	for i := range live {
		a, b := attribute.NewSet(live[i].attrs...), attribute.NewSet(batch[i].attrs...)
		if !a.Equals(&b) || live[i].start != batch[i].start || live[i].end != batch[i].end {
			t.Errorf("%s:\nlive  %v\nbatch %v", live[i].name, a.Encoded(attribute.DefaultEncoder()), b.Encoded(attribute.DefaultEncoder()))
		}
	}
	a := named(live, "invoke_agent ask")[0]
	in, _ := attr(a, "gen_ai.input.messages")
	sys, _ := attr(a, "gen_ai.system_instructions")
	out, _ := attr(a, "gen_ai.output.messages")
	if in.AsString() != `[{"role":"user","parts":[{"type":"text","content":"diff <a> & <b>`+"\uFFFD"+`"}]}]` {
		t.Errorf("input messages %s", in.AsString())
	}
	if sys.AsString() != `[{"type":"text","content":"be brief"}]` {
		t.Errorf("system instructions %s", sys.AsString())
	}
	if !strings.Contains(out.AsString(), `{"type":"tool_call","id":"t1","name":"Read","arguments":{"a":[1.5,"x"],"n":12345678901234567,"z":1}}],"finish_reason":"tool_call"`) ||
		!strings.Contains(out.AsString(), `{"role":"assistant","parts":[{"type":"text","content":""}],"finish_reason":"stop"}`) {
		t.Errorf("output messages %s", out.AsString())
	}
}

// FuzzMapper drives the mapper with event sequences built from the fuzz
// input, three bytes an event (type, path, and iteration/attempt/error/
// call id bits), so any order of starts, completions, tool events, resumes
// and child calls is tried: every span is emitted once, with a parent that
// is emitted too, and never ends before it starts.
func FuzzMapper(f *testing.F) {
	f.Add([]byte{0, 0, 0, 2, 1, 0, 6, 1, 1, 7, 1, 1, 3, 1, 0, 1, 0, 0})
	f.Add([]byte{2, 2, 0, 2, 3, 4, 3, 3, 4, 3, 2, 0, 4, 1, 0, 0, 0, 8, 2, 1, 0})
	types := []transcript.EventType{transcript.RunStarted, transcript.RunCompleted, transcript.StepStarted, transcript.StepCompleted,
		transcript.CallWorkflowStarted, transcript.CallWorkflowCompleted, transcript.ToolCall, transcript.ToolResult,
		transcript.MessageUser, transcript.MessageAssistant, "step.unknown"}
	paths := []string{"", "a", "a.b", "a.b.c", "l", "l.x", "p.y"}
	kinds := []string{transcript.KindCommand, transcript.KindAgent, transcript.KindForEach, transcript.KindCallWorkflow, transcript.KindTerminal}
	f.Fuzz(func(t *testing.T, data []byte) {
		s := &script{}
		for i := 0; i+2 < len(data); i += 3 {
			typ := types[int(data[i])%len(types)]
			path := paths[int(data[i+1])%len(paths)]
			bits := data[i+2]
			iter, attempt := int(bits&3), int(bits>>2&1)
			e := transcript.ExchangeEvent{Type: typ, Path: path, Iteration: iter}
			if bits&0x80 != 0 {
				e.Timestamp = s.now.Add(-3 * time.Second) // clocks go back too
			}
			errMsg := ""
			if bits&8 != 0 {
				errMsg = "cancelled: x"
			}
			switch typ {
			case transcript.RunStarted, transcript.RunCompleted, transcript.StepStarted, transcript.StepCompleted, transcript.CallWorkflowStarted:
				e.Payload = &transcript.StepPayload{Name: last(path), Kind: kinds[int(bits>>4)%len(kinds)], Attempt: attempt, Error: errMsg}
				if typ == transcript.CallWorkflowStarted {
					e.ChildRunID = "22222222-2222-4222-8222-22222222222" + string(rune('0'+bits%10))
				}
			case transcript.ToolCall, transcript.ToolResult:
				e.Payload = &transcript.ToolPayload{Name: "T", CallID: string(rune('a' + bits>>4%3)), Error: errMsg}
			case transcript.MessageUser, transcript.MessageAssistant:
				e.Payload = &transcript.MessagePayload{Role: "user", Blocks: []transcript.ContentBlock{{Type: transcript.BlockText, Text: "hi"}}}
			}
			s.add(e)
		}
		tid, _ := TraceID(runA)
		ids := map[trace.SpanID]bool{}
		var spans []*span
		m, _ := newMapper(runA, tid, true, func(sp *span) {
			if ids[sp.id] {
				t.Fatalf("span id %s emitted twice (%s)", sp.id, sp.name)
			}
			ids[sp.id] = true
			if sp.end.Before(sp.start) {
				t.Fatalf("%s ends before it starts", sp.name)
			}
			spans = append(spans, sp)
		})
		for i := range s.evs {
			m.event(&s.evs[i])
		}
		m.finish()
		for _, sp := range spans {
			if sp.parent.IsValid() && !ids[sp.parent] {
				t.Fatalf("%s: parent %s never emitted", sp.name, sp.parent)
			}
		}
	})
}

func TestPluginAttributes(t *testing.T) {
	s := (&script{}).run("w")
	s.start("say", 0, transcript.KindOperation, 0).end("say", 0, transcript.KindOperation, 0, "", map[string]any{
		"plugin": "echo", "operation": "echo.echo", "inputs": map[string]any{"text": "hi"}, "success": true, "outputs": map[string]any{"output": "hi"}})
	s.start("q", 0, "database.query", 0).end("q", 0, "database.query", 0, "database.query: exit code 2", map[string]any{
		"plugin": "database", "step_type": "database.query", "output": "", "exit_code": 2})
	spans := mapAll(t, s.done("", nil).evs)
	op := named(spans, "operation say")[0]
	if v, _ := attr(op, "reel.plugin.name"); v.AsString() != "echo" {
		t.Errorf("operation plugin: %v", v)
	}
	if v, _ := attr(op, "reel.operation.name"); v.AsString() != "echo.echo" {
		t.Errorf("operation name: %v", v)
	}
	st := named(spans, "database.query q")[0]
	if v, _ := attr(st, "reel.plugin.name"); v.AsString() != "database" {
		t.Errorf("step type plugin: %v", v)
	}
	if v, _ := attr(st, "reel.step.exit_code"); v.AsInt64() != 2 || st.status != codes.Error {
		t.Errorf("step type exit code %v, status %v", v, st.status)
	}
}
