package verify

import (
	"strings"
	"testing"

	"github.com/reelhq/reel/transcript"
)

// proxiedRun records a run whose agent step "ask" reports, in its own
// message, the uses of blocks, and whose calls are the given pairs
// (fidelity, id, tool name, error). proxied says whether the step's result
// names reel's MCP server.
func proxiedRun(t *testing.T, proxied bool, blocks [][2]string, pairs [][4]string) string {
	t.Helper()
	dir := t.TempDir()
	id := transcript.NewRunID()
	r, err := transcript.Create(dir, id, transcript.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rec := func(e transcript.ExchangeEvent) {
		if _, err := r.Record(e); err != nil {
			t.Fatal(err)
		}
	}
	step := func(name, kind string) *transcript.StepPayload {
		return &transcript.StepPayload{Name: name, Kind: kind}
	}
	rec(transcript.ExchangeEvent{Type: transcript.RunStarted, Payload: step("demo", "workflow")})
	rec(transcript.ExchangeEvent{Type: transcript.StepStarted, Path: "ask", Payload: step("ask", "agent")})
	var bs []transcript.ContentBlock
	for _, b := range blocks {
		bs = append(bs, transcript.ContentBlock{Type: transcript.BlockToolUse, Fidelity: transcript.FidelityAgentEmitted, ToolID: b[0], ToolName: b[1]})
	}
	rec(transcript.ExchangeEvent{Type: transcript.MessageAssistant, Path: "ask", Payload: &transcript.MessagePayload{Role: "assistant", Blocks: bs}})
	for _, p := range pairs {
		f := transcript.Fidelity(p[0])
		rec(transcript.ExchangeEvent{Type: transcript.ToolCall, Path: "ask", Payload: &transcript.ToolPayload{Name: p[2], CallID: p[1], Input: map[string]any{}, Fidelity: f}})
		rec(transcript.ExchangeEvent{Type: transcript.ToolResult, Path: "ask", Payload: &transcript.ToolPayload{Name: p[2], CallID: p[1], Output: "x", Error: p[3], Fidelity: f}})
	}
	res := &transcript.AgentResult{Output: "done"}
	if proxied {
		res.Proxy = &transcript.ToolProxy{Server: "reel", Tools: map[string]string{"mcp__reel__Read": "Read", "mcp__reel__Bash": "Bash"}}
	}
	sp := step("ask", "agent")
	sp.Result = res
	rec(transcript.ExchangeEvent{Type: transcript.StepCompleted, Path: "ask", Payload: sp})
	rec(transcript.ExchangeEvent{Type: transcript.RunCompleted, Payload: step("demo", "workflow")})
	r.Close()
	return dir
}

const (
	router = string(transcript.FidelityRouter)
	agent  = string(transcript.FidelityAgentEmitted)
)

func TestProxiedStep(t *testing.T) {
	for _, c := range []struct {
		name    string
		proxied bool
		blocks  [][2]string
		pairs   [][4]string
		want    string // "" for valid
	}{
		{"router pairs named by the agent's uses", true,
			[][2]string{{"toolu_1", "mcp__reel__Read"}, {"toolu_2", "mcp__reel__Bash"}},
			[][4]string{{router, "toolu_1", "Read", ""}, {router, "toolu_2", "Bash", "Bash: exit status 1"}}, ""},
		{"a call the agent refused itself", true,
			[][2]string{{"toolu_1", "mcp__reel__Bash"}},
			[][4]string{{agent, "toolu_1", "mcp__reel__Bash", "permission denied"}}, ""},
		{"native tools beside the proxy's", true,
			[][2]string{{"toolu_1", "Bash"}, {"toolu_2", "mcp__reel__Read"}},
			[][4]string{{agent, "toolu_1", "Bash", ""}, {router, "toolu_2", "Read", ""}}, ""},
		{"a use without its pair", true,
			[][2]string{{"toolu_1", "mcp__reel__Read"}},
			[][4]string{{router, "mcp_0001", "Read", ""}},
			"the agent's tool_use toolu_1 (mcp__reel__Read) names no tool pair"},
		{"a proxied call recorded as the agent's", true,
			[][2]string{{"toolu_1", "mcp__reel__Read"}},
			[][4]string{{agent, "toolu_1", "mcp__reel__Read", ""}},
			"proxied call toolu_1 (mcp__reel__Read) is recorded as the agent reported it, with a successful result"},
		{"an agent pair without a block", true, nil,
			[][4]string{{agent, "c9", "mcp__reel__Bash", ""}},
			"proxied call c9 (mcp__reel__Bash) is recorded as the agent reported it"},
		{"no proxy, no rule", false,
			[][2]string{{"toolu_1", "mcp__reel__Read"}},
			[][4]string{{agent, "toolu_1", "mcp__reel__Read", ""}}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			rep := Paths([]string{proxiedRun(t, c.proxied, c.blocks, c.pairs)}, Options{})
			got := messages(rep)
			if len(rep.Files) != 1 || len(rep.Unreadable) != 0 {
				t.Fatalf("checked %d files: %s", len(rep.Files), got)
			}
			if c.want == "" {
				if rep.Violations() != 0 {
					t.Fatalf("violations: %s", got)
				}
				return
			}
			if rep.Violations() != 1 || !strings.Contains(got, c.want) {
				t.Fatalf("got %s\nwant %s", got, c.want)
			}
		})
	}
}
