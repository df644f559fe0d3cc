package main

import (
	"encoding/json"
	"maps"
	"strings"
	"testing"
)

// The agent fixtures run against the fake CLIs of testdata/awfagents,
// which log what each tool asked them (agents-PROVIDER.log). Two
// differences hold in every such case, and agentDifferences takes them
// out after checking them, so that the rest compares as usual:
//
//   - AWF keeps a gemini conversation step's raw stream-json as its output
//     (its gemini provider extracts no text in conversation mode, unlike
//     every other provider and unlike its own single mode); reel keeps the
//     reply. AWF's output is replaced by the reply its stream carries.
//   - reel passes claude's --append-system-prompt on every turn, resumed
//     ones included, because the flag configures one process (README,
//     Conversations); AWF passes its --system-prompt on the first only.
//     reel's resumed calls must repeat a system prompt the session was
//     started with; they are then compared without it.
func agentDifferences(t *testing.T, got, awf *awfOutcome) {
	t.Helper()
	awf.Steps = maps.Clone(awf.Steps)
	for name, s := range awf.Steps {
		reply, ok := geminiStreamReply(s.Output)
		if !ok {
			continue
		}
		if _, raw := geminiStreamReply(got.Steps[name].Output); raw {
			t.Errorf("state %s: reel kept gemini's raw stream as the output", name)
		}
		s.Output = reply
		awf.Steps[name] = s
	}
	const log = "agents-claude.log"
	if a, ok := awf.Files[log]; ok {
		for _, c := range agentCalls(a) {
			if c.resume != "-" && c.system != "-" {
				t.Errorf("AWF passed a system prompt on a resumed claude turn: %+v", c)
			}
		}
		g := agentCalls(got.Files[log])
		started := map[string]bool{"-": true}
		for i, c := range g {
			if c.resume == "-" {
				started[c.system] = true
				continue
			}
			if !started[c.system] {
				t.Errorf("reel's resumed claude turn %d carries a system prompt no earlier turn started with: %q", i+1, c.system)
			}
			g[i].system = "-"
		}
		got.Files = maps.Clone(got.Files)
		got.Files[log] = formatAgentCalls("claude", g)
	}
}

// geminiStreamReply reads output as gemini's stream-json and returns the
// assistant's text; ok is false when output is not such a stream.
func geminiStreamReply(output string) (reply string, ok bool) {
	if !strings.HasPrefix(output, `{"type":"init"`) {
		return "", false
	}
	for _, line := range strings.Split(strings.TrimSpace(output), "\n") {
		var ev struct{ Type, Role, Content string }
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			return "", false
		}
		if ev.Type == "message" && ev.Role == "assistant" {
			reply += ev.Content
		}
	}
	return reply, true
}

// agentCall is one call a fake agent logged.
type agentCall struct{ resume, model, system, prompt string }

// agentCalls parses a fake agent's log (testdata/awfagents/fakeagent.sh).
func agentCalls(log string) []agentCall {
	var out []agentCall
	for _, entry := range strings.Split(log, "== ")[1:] {
		_, body, _ := strings.Cut(entry, " call\n")
		var c agentCall
		head, prompt, _ := strings.Cut(body, "prompt:\n")
		c.prompt = prompt
		head, c.system, _ = strings.Cut(head, "system: ")
		c.system = strings.TrimSuffix(c.system, "\n")
		for _, l := range strings.Split(head, "\n") {
			if v, ok := strings.CutPrefix(l, "resume: "); ok {
				c.resume = v
			}
			if v, ok := strings.CutPrefix(l, "model: "); ok {
				c.model = v
			}
		}
		out = append(out, c)
	}
	return out
}

func formatAgentCalls(provider string, calls []agentCall) string {
	var b strings.Builder
	for _, c := range calls {
		b.WriteString("== " + provider + " call\nresume: " + c.resume + "\nmodel: " + c.model + "\nsystem: " + c.system + "\nprompt:\n" + c.prompt)
	}
	return b.String()
}

// agentDeliberate are the agent cases where reel differs from AWF on
// purpose (docs/awf-compat.md).
var agentDeliberate = map[string]awfDifference{
	"conversation-error/fails": {
		why: "a failing mode conversation step is retried and its on_failure followed in reel; AWF does neither (the run ends at the step, exit 3)",
		check: func(t *testing.T, got, awf awfOutcome) {
			calls := agentCalls(awf.Files["agents-claude.log"])
			if awf.ExitCode != 3 || awf.Final != "conversation_with_retry" || len(calls) != 1 || awf.Steps["handle_failure"].Status != "" {
				t.Errorf("AWF's outcome changed: %+v", awf)
			}
			g := agentCalls(got.Files["agents-claude.log"])
			if len(g) != 3 || g[0] != calls[0] || g[1] != calls[0] || g[2] != calls[0] {
				t.Errorf("reel should send AWF's call 3 times (retry.max_attempts 3): %+v", g)
			}
			if got.ExitCode != 3 || got.Final != "error" || got.Steps["conversation_with_retry"].Status != "failed" ||
				!sameStep(got.Steps["handle_failure"], awfStep{Status: "failed", ExitCode: 1, Output: "Workflow failed at conversation step\n"}) {
				t.Errorf("reel: %+v", got)
			}
		},
	},
	"conversation-error/flaky": {
		why: "a mode conversation step that fails once is retried in reel and the run goes on; AWF ends the run at the step",
		check: func(t *testing.T, got, awf awfOutcome) {
			calls := agentCalls(awf.Files["agents-claude.log"])
			if awf.ExitCode != 3 || awf.Final != "conversation_with_retry" || len(calls) != 1 {
				t.Errorf("AWF's outcome changed: %+v", awf)
			}
			g := agentCalls(got.Files["agents-claude.log"])
			if len(g) != 2 || g[0] != calls[0] || g[1] != calls[0] {
				t.Errorf("reel should send AWF's call twice: %+v", g)
			}
			if got.ExitCode != 0 || got.Final != "done" || !strings.HasPrefix(got.Steps["conversation_with_retry"].Output, "claude turn 2 ") ||
				got.Steps["conversation_with_error_transition"].Status != "completed" {
				t.Errorf("reel: %+v", got)
			}
		},
	},
	"conversation-parallel": {
		why: "a state whose prompt cannot be rendered (synthesize reads .states.X.output, which neither tool has) fails and its on_failure is followed in reel; AWF ends the run at it",
		check: func(t *testing.T, got, awf awfOutcome) {
			if got.Final != "error" || awf.Final != "synthesize" || got.Steps["synthesize"].Status != "failed" {
				t.Errorf("reel ended at %q, AWF at %q", got.Final, awf.Final)
			}
			got.Final = awf.Final
			compareOutcomes(t, got, awf, nil)
		},
	},
	"conversation-simple/exit": {
		why: "a mode conversation step ends at a line reading exit or quit in reel, as at an empty line; AWF sends it to the agent",
		check: func(t *testing.T, got, awf awfOutcome) {
			a, g := agentCalls(awf.Files["agents-claude.log"]), agentCalls(got.Files["agents-claude.log"])
			if len(a) != 2 || a[1].prompt != "exit\n" || len(g) != 1 || g[0] != a[0] {
				t.Errorf("calls: reel %+v, AWF %+v", g, a)
			}
			if got.ExitCode != 0 || !strings.HasPrefix(got.Steps["review"].Output, "claude turn 1 ") {
				t.Errorf("reel: %+v", got)
			}
		},
	},
	"awf-agent-failures": {
		why: "an agent step's retry is honoured in reel; AWF retries commands only and runs an agent step once",
		check: func(t *testing.T, got, awf awfOutcome) {
			a, g := agentCalls(awf.Files["agents-gemini.log"]), agentCalls(got.Files["agents-gemini.log"])
			if len(a) != 1 || len(g) != 2 || g[0] != a[0] || g[1] != a[0] {
				t.Errorf("gemini calls: reel %+v, AWF %+v (want AWF's once, reel's twice)", g, a)
			}
			if awf.ExitCode != 3 || awf.Final != "error" || awf.Steps["gem"].Status != "failed" {
				t.Errorf("AWF's outcome changed: %+v", awf)
			}
			if got.ExitCode != 0 || got.Final != "done" || !strings.HasPrefix(got.Steps["gem"].Output, "gemini turn 2 ") {
				t.Errorf("reel: %+v", got)
			}
			// The rest (failed steps, what follows them reads) is AWF's.
			g2, a2 := got, awf
			g2.Steps, a2.Steps = maps.Clone(got.Steps), maps.Clone(awf.Steps)
			delete(g2.Steps, "gem")
			delete(a2.Steps, "gem")
			g2.Files, a2.Files = maps.Clone(got.Files), maps.Clone(awf.Files)
			delete(g2.Files, "agents-gemini.log")
			delete(a2.Files, "agents-gemini.log")
			g2.ExitCode, g2.Status, g2.Final = a2.ExitCode, a2.Status, a2.Final
			compareOutcomes(t, g2, a2, nil)
		},
	},
	"awf-single-system": {
		why: "a single-mode agent step's system_prompt reaches the CLI in reel (claude --append-system-prompt, ahead of the prompt for gemini and codex); AWF drops it (its CLI providers read it only in conversation mode)",
		check: func(t *testing.T, got, awf awfOutcome) {
			want := map[string]agentCall{
				"claude": {resume: "-", model: "-", system: "Answer in French.", prompt: "claude question\n"},
				"gemini": {resume: "-", model: "-", system: "-", prompt: "Answer in German.\n\ngemini question\n"},
				"codex":  {resume: "-", model: "-", system: "-", prompt: "Answer in Dutch.\n\ncodex question\n"},
			}
			for p, w := range want {
				a, g := agentCalls(awf.Files["agents-"+p+".log"]), agentCalls(got.Files["agents-"+p+".log"])
				if len(a) != 1 || a[0].system != "-" || strings.Contains(a[0].prompt, "Answer") {
					t.Errorf("AWF's %s call changed: %+v", p, a)
				}
				if len(g) != 1 || g[0] != w {
					t.Errorf("reel's %s calls: %+v, want %+v", p, g, w)
				}
			}
			if got.ExitCode != 0 || got.Final != "done" || len(got.Steps) != 3 {
				t.Errorf("reel: %+v", got)
			}
		},
	},
	"awf-conversation-limits": {
		why: "conversation.max_turns, stop_condition and inject_context keep their pre-F083 meaning in reel (the prompt repeats, with the injected context, until the condition or the limit); AWF ignores them and reads the turns from stdin",
		check: func(t *testing.T, got, awf awfOutcome) {
			a := agentCalls(awf.Files["agents-claude.log"])
			if len(a) != 2 || a[1].prompt != "typed\n" || len(agentCalls(awf.Files["agents-codex.log"])) != 1 {
				t.Errorf("AWF's calls changed: %q", awf.Files)
			}
			g := agentCalls(got.Files["agents-claude.log"])
			if len(g) != 3 || g[0].prompt != "keep going\n" || !strings.HasPrefix(g[2].prompt, "keep going\n\n(previous: claude turn 2 ") || g[2].resume != g[1].resume {
				t.Errorf("reel's claude calls (max_turns 3, inject_context): %+v", g)
			}
			if x := agentCalls(got.Files["agents-codex.log"]); len(x) != 2 || x[1].prompt != "until two\n" {
				t.Errorf("reel's codex calls (stop_condition at turn 2): %+v", x)
			}
			if got.ExitCode != 0 || !strings.HasPrefix(got.Steps["limited"].Output, "claude turn 3 ") || !strings.HasPrefix(got.Steps["stopped"].Output, "codex turn 2 ") {
				t.Errorf("reel: %+v", got)
			}
		},
	},
	"expr-agent-fields": {
		why: "anthropic is a provider in reel (openai_compatible aimed at Anthropic's endpoint, here $ANTHROPIC_BASE_URL); AWF has none and ends the run (exit 1)",
		check: func(t *testing.T, got, awf awfOutcome) {
			if awf.ExitCode != 1 || awf.Final != "agent_step" || len(awf.Steps) != 0 {
				t.Errorf("AWF's outcome changed: %+v", awf)
			}
			want := map[string]awfStep{
				"agent_step":     {Status: "completed", Output: "Hello!"},
				"check_response": {Status: "completed", Output: "Got response\n"},
				"check_tokens":   {Status: "completed", Output: "Used tokens\n"},
			}
			if got.ExitCode != 0 || got.Final != "done" || !maps.EqualFunc(got.Steps, want, sameStep) {
				t.Errorf("reel: exit %d at %s, %+v", got.ExitCode, got.Final, got.Steps)
			}
		},
	},
}

// sameStep compares what compareOutcomes compares of a state.
func sameStep(a, b awfStep) bool {
	return a.Status == b.Status && a.ExitCode == b.ExitCode && a.Output == b.Output && a.Stderr == b.Stderr
}
