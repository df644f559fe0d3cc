package verify

import (
	"encoding/json"
	"sort"

	"github.com/reelhq/reel/transcript"
)

// proxyCheck checks the agent steps whose tools went through reel's MCP
// server (mcp_proxy; transcript.ToolProxy): every tool_use block of a
// proxied tool names a router pair by its tool_id, unless the agent
// refused the call itself (an agent_emitted pair whose result is an
// error); no call of a proxied tool is an agent_emitted pair with a
// successful result (that would be a call reel never saw, or one counted
// twice). Whether a step was proxied is known at its step.completed, so
// each open agent step keeps its tool uses and pairs until then.
type proxyCheck struct {
	open map[stepKey]*agentSpan
}

type agentSpan struct {
	uses  []toolUse
	pairs map[string]*pairSeen
	order []string
}

type toolUse struct {
	id, name string
	line     int
}

type pairSeen struct {
	name     string
	fidelity transcript.Fidelity
	line     int
	result   bool
	err      string
}

// maxSpanItems bounds what one agent step keeps for the check.
const maxSpanItems = 1 << 16

func (pc *proxyCheck) reset() { pc.open = map[stepKey]*agentSpan{} }

func (pc *proxyCheck) event(ev *transcript.ExchangeEvent, line int, add func(int, string, ...any)) {
	if pc.open == nil {
		pc.reset()
	}
	key := stepKey{ev.Path, ev.Iteration}
	switch ev.Type {
	case transcript.StepStarted:
		if p := ev.Step(); p != nil && p.Kind == transcript.KindAgent {
			pc.open[key] = &agentSpan{pairs: map[string]*pairSeen{}}
		}
		return
	case transcript.StepCompleted:
		sp := pc.open[key]
		if sp == nil {
			return
		}
		delete(pc.open, key)
		if p := ev.Step(); p != nil {
			if proxy := resultProxy(p.Result); proxy != nil {
				sp.check(ev.Path, proxy, add)
			}
		}
		return
	}
	sp := pc.open[key]
	if sp == nil || len(sp.uses)+len(sp.order) >= maxSpanItems {
		return
	}
	switch ev.Type {
	case transcript.MessageAssistant:
		if m := ev.Message(); m != nil {
			for _, b := range m.Blocks {
				if b.Type == transcript.BlockToolUse && b.ToolID != "" {
					sp.uses = append(sp.uses, toolUse{b.ToolID, b.ToolName, line})
				}
			}
		}
	case transcript.ToolCall:
		if p := ev.Tool(); p != nil && p.CallID != "" {
			if _, ok := sp.pairs[p.CallID]; !ok {
				sp.order = append(sp.order, p.CallID)
			}
			sp.pairs[p.CallID] = &pairSeen{name: p.Name, fidelity: p.Fidelity, line: line}
		}
	case transcript.ToolResult:
		if p := ev.Tool(); p != nil {
			if ps := sp.pairs[p.CallID]; ps != nil {
				ps.result, ps.err = true, p.Error
			}
		}
	}
}

// resultProxy returns the proxy an agent step's result names, if any.
func resultProxy(result any) *transcript.ToolProxy {
	var raw []byte
	switch r := result.(type) {
	case json.RawMessage:
		raw = r
	case *transcript.AgentResult:
		return r.Proxy
	default:
		return nil
	}
	var res struct {
		Proxy *transcript.ToolProxy `json:"proxy"`
	}
	if json.Unmarshal(raw, &res) != nil {
		return nil
	}
	return res.Proxy
}

func (sp *agentSpan) check(path string, proxy *transcript.ToolProxy, add func(int, string, ...any)) {
	named := map[string]bool{}
	for _, u := range sp.uses {
		if proxy.Tools[u.name] == "" {
			continue
		}
		named[u.id] = true
		ps := sp.pairs[u.id]
		switch {
		case ps == nil:
			add(u.line, "step %s went through reel's MCP server, but the agent's tool_use %s (%s) names no tool pair: the call is missing from the router's record", path, u.id, u.name)
		case ps.fidelity != transcript.FidelityRouter && ps.result && ps.err == "":
			add(ps.line, "step %s went through reel's MCP server, but proxied call %s (%s) is recorded as the agent reported it, with a successful result: reel's router never saw it", path, u.id, u.name)
		}
	}
	ids := append([]string(nil), sp.order...)
	sort.Strings(ids)
	for _, id := range ids {
		ps := sp.pairs[id]
		if ps.fidelity == transcript.FidelityAgentEmitted && proxy.Tools[ps.name] != "" && !named[id] && ps.result && ps.err == "" {
			add(ps.line, "step %s went through reel's MCP server, but proxied call %s (%s) is recorded as the agent reported it, with a successful result: reel's router never saw it", path, id, ps.name)
		}
	}
}
