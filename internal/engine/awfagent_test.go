package engine

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/reelhq/reel/internal/agent"
	"github.com/reelhq/reel/internal/workflow"
	"github.com/reelhq/reel/transcript"
)

// agentRun is a harness with the turn-aware fake claude; body's %q is
// replaced by the fake's path.
func agentRun(t *testing.T, body string) (*harness, string, string) {
	t.Helper()
	h, _, state := conversationHarness(t)
	fake, err := filepath.Abs("testdata/fake-claude-turns")
	if err != nil {
		t.Fatal(err)
	}
	return h, strings.ReplaceAll(body, "FAKE", fake), state
}

// userMessages returns the text blocks of each message.user of path.
func userMessages(t *testing.T, file, path string) [][]string {
	t.Helper()
	var out [][]string
	for _, e := range readAll(t, file) {
		if e.Type == transcript.MessageUser && e.Path == path {
			var texts []string
			for _, b := range e.Message().Blocks {
				texts = append(texts, b.Text)
			}
			out = append(out, texts)
		}
	}
	return out
}

func agentResult(t *testing.T, file, path string) transcript.AgentResult {
	t.Helper()
	var ar transcript.AgentResult
	for _, e := range readAll(t, file) {
		if e.Type == transcript.StepCompleted && e.Path == path {
			if err := transcript.DecodeResult(e.Step().Result, &ar); err != nil {
				t.Fatal(err)
			}
		}
	}
	return ar
}

func lastCommandOutput(t *testing.T, file string) string {
	t.Helper()
	evs := readAll(t, file)
	var cr transcript.CommandResult
	if err := transcript.DecodeResult(evs[len(evs)-2].Step().Result, &cr); err != nil {
		t.Fatal(err)
	}
	return cr.Output
}

const interactiveWorkflow = `
name: chat
states:
  initial: chat
  chat:
    type: agent
    provider: claude
    mode: conversation
    system_prompt: Be brief.
    prompt: Review main.go
    options: {command: "FAKE"}
    on_success: after
  after:
    type: step
    command: 'echo "{{ .states.chat.Conversation.TotalTurns }} {{ .states.chat.Conversation.StoppedBy }} {{ .states.chat.Conversation.SessionID }} {{ .states.chat.TokensInput }}"'
`

// mode: conversation reads the user's turns from the run's input until
// exit; every turn resumes the session; the state shows the conversation.
func TestModeConversationReadsInput(t *testing.T) {
	h, wf, state := agentRun(t, interactiveWorkflow)
	h.e.Stdin = strings.NewReader("List the risks.\n  Fix the first one.  \nexit\nnever read\n")
	rep := h.run(context.Background(), wf, nil)
	if rep.Status != "success" {
		t.Fatalf("report %+v\n%s", rep, h.display.String())
	}
	got := userMessages(t, rep.TranscriptPath, "chat")
	want := [][]string{{"Review main.go", "Be brief."}, {"List the risks."}, {"  Fix the first one.  "}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("user messages %q, want %q", got, want)
	}
	ar := agentResult(t, rep.TranscriptPath, "chat")
	if ar.UserTurns != 3 || ar.StoppedBy != "user_exit" || ar.Output != "Fixed: main.go now uses safeDiv." {
		t.Errorf("result %+v", ar)
	}
	// system, then user and assistant per turn: 7 messages.
	// Input tokens count the 400 read from the cache (transcript.Usage).
	if out := lastCommandOutput(t, rep.TranscriptPath); out != "7 user_exit 7a1e0c4d-2b3f-4a5e-8c6d-9e0f1a2b3c02 2440\n" {
		t.Errorf("state seen by the next step: %q", out)
	}
	if b, _ := os.ReadFile(filepath.Join(state, "args.3")); !strings.Contains(string(b), "--resume\n7a1e0c4d-2b3f-4a5e-8c6d-9e0f1a2b3c02") {
		t.Errorf("turn 3 argv %q", b)
	}
	if d := h.display.String(); !strings.Contains(d, "chat │ > (your reply; an empty line, exit or quit ends the conversation)") || !strings.Contains(d, "turn 3\n") {
		t.Errorf("display:\n%s", d)
	}
}

// Without input (a CI run, stdin closed) the conversation ends after its
// first reply, as AWF's does with an empty pipe.
func TestModeConversationWithoutInput(t *testing.T) {
	for name, in := range map[string]*strings.Reader{"nil": nil, "empty line": strings.NewReader("\n")} {
		t.Run(name, func(t *testing.T) {
			h, wf, _ := agentRun(t, interactiveWorkflow)
			if in != nil {
				h.e.Stdin = in
			}
			rep := h.run(context.Background(), wf, nil)
			ar := agentResult(t, rep.TranscriptPath, "chat")
			if rep.Status != "success" || ar.UserTurns != 1 || ar.StoppedBy != "user_exit" {
				t.Errorf("report %+v result %+v", rep, ar)
			}
		})
	}
}

// RunOptions.Turns stands in for Stdin (an editor's next prompt): it is
// asked after each reply with the reply, the turn's number and the step;
// "exit" ends the conversation as a line of input does, and Stdin is not
// read nor its prompt shown.
func TestModeConversationTurnsFunc(t *testing.T) {
	h, body, _ := agentRun(t, interactiveWorkflow)
	h.e.Stdin = strings.NewReader("never read\n")
	wf := h.load("wf.yaml", body)
	var asked []TurnInfo
	answers := []string{"List the risks.", " exit "}
	rep, err := h.e.Run(context.Background(), wf, RunOptions{Turns: func(ctx context.Context, ti TurnInfo) (string, bool, error) {
		asked = append(asked, ti)
		a := answers[0]
		answers = answers[1:]
		return a, true, nil
	}})
	if err != nil || rep.Status != "success" {
		t.Fatalf("report %+v %v\n%s", rep, err, h.display.String())
	}
	h.verify()
	if len(asked) != 2 || asked[0].Path != "chat" || asked[0].Turn != 2 || asked[1].Turn != 3 || asked[0].Reply == "" || asked[1].Reply == asked[0].Reply {
		t.Errorf("asked %+v", asked)
	}
	got := userMessages(t, rep.TranscriptPath, "chat")
	want := [][]string{{"Review main.go", "Be brief."}, {"List the risks."}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("user messages %q, want %q", got, want)
	}
	if ar := agentResult(t, rep.TranscriptPath, "chat"); ar.UserTurns != 2 || ar.StoppedBy != "user_exit" {
		t.Errorf("result %+v", ar)
	}
	if d := h.display.String(); strings.Contains(d, "your reply") {
		t.Errorf("display asks for stdin:\n%s", d)
	}

	// An error from Turns fails the step with it.
	h2, body2, _ := agentRun(t, interactiveWorkflow)
	rep, err = h2.e.Run(context.Background(), h2.load("wf.yaml", body2), RunOptions{Turns: func(context.Context, TurnInfo) (string, bool, error) {
		return "", false, fmt.Errorf("the editor went away")
	}})
	if err != nil || rep.Status != "failure" || !strings.Contains(rep.Error, "the editor went away") {
		t.Errorf("report %+v %v", rep, err)
	}
}

const repeatWorkflow = `
name: loop
states:
  initial: review
  review:
    type: agent
    provider: claude
    mode: conversation
    prompt: Review main.go
    options: {command: "FAKE"}
    conversation:
      max_turns: MAX
      stop_condition: STOP
      inject_context: 'Last time you said: {{ .turn.Output }}'
`

// AWF's automated conversation (before F083): the prompt again after each
// reply, with inject_context appended, until stop_condition holds or
// max_turns turns ran.
func TestModeConversationStopConditionAndMaxTurns(t *testing.T) {
	cases := []struct {
		max, stop   string
		turns       int
		stoppedBy   string
		secondInput string
	}{
		{"5", `"inputs.response contains 'Fixed' || turn.Number > 3"`, 3, "stop_condition", ""},
		{"2", `"false"`, 2, "max_turns", ""},
		{"5", `"inputs.turn_count == 2 && turn.TotalTokens > 900"`, 2, "stop_condition", ""},
	}
	for _, tc := range cases {
		t.Run(tc.stoppedBy+tc.max, func(t *testing.T) {
			h, wf, _ := agentRun(t, strings.NewReplacer("MAX", tc.max, "STOP", tc.stop).Replace(repeatWorkflow))
			rep := h.run(context.Background(), wf, nil)
			if rep.Status != "success" {
				t.Fatalf("report %+v\n%s", rep, h.display.String())
			}
			ar := agentResult(t, rep.TranscriptPath, "review")
			if ar.UserTurns != tc.turns || ar.StoppedBy != tc.stoppedBy {
				t.Errorf("result %+v", ar)
			}
			got := userMessages(t, rep.TranscriptPath, "review")
			if len(got) != tc.turns || got[1][0] != "Review main.go\n\nLast time you said: main.go divides by zero()." {
				t.Errorf("messages %q", got)
			}
		})
	}
}

const continueWorkflow = `
name: seedrecall
states:
  initial: seed
  seed:
    type: agent
    provider: claude
    prompt: Remember BANANA42.
    options: {command: "FAKE"}
    conversation: {}
    on_success: recall
  recall:
    type: agent
    provider: claude
    prompt: What was the word?
    options: {command: "FAKE"}
    conversation:
      continue_from: seed
    on_success: show
  show:
    type: step
    command: 'echo "{{ .states.recall.Output }}"'
`

// A step continues another step's session: its first invocation resumes
// the id the seed step's stream reported, and its result names the seed.
func TestContinueFrom(t *testing.T) {
	h, wf, state := agentRun(t, continueWorkflow)
	rep := h.run(context.Background(), wf, nil)
	if rep.Status != "success" {
		t.Fatalf("report %+v\n%s", rep, h.display.String())
	}
	if b, _ := os.ReadFile(filepath.Join(state, "args.2")); !strings.Contains(string(b), "--resume\n7a1e0c4d-2b3f-4a5e-8c6d-9e0f1a2b3c01") {
		t.Errorf("recall argv %q", b)
	}
	if ar := agentResult(t, rep.TranscriptPath, "recall"); ar.ContinuedFrom != "seed" || ar.UserTurns != 0 {
		t.Errorf("recall result %+v", ar)
	}
	if out := lastCommandOutput(t, rep.TranscriptPath); out != "1. division by zero\n" {
		t.Errorf("recall output %q", out)
	}
}

// continue_from a step that has not run yet fails the step with a clear
// error, as AWF's does.
func TestContinueFromNotYetRun(t *testing.T) {
	body := strings.Replace(continueWorkflow, "initial: seed", "initial: recall", 1)
	body = strings.Replace(body, "    on_success: show\n", "    on_success: seed\n", 1)
	body = strings.Replace(body, "    on_success: recall\n", "    on_success: show\n", 1)
	h, wf, _ := agentRun(t, body)
	rep := h.run(context.Background(), wf, nil)
	if rep.Status != "failure" || !strings.Contains(rep.Error, `conversation.continue_from: step "seed" has not run yet in this run`) {
		t.Errorf("report %+v", rep)
	}
}

const templatedProvider = `
name: pick
inputs:
  - {name: agent, default: claude}
  - {name: model, default: sonnet}
states:
  initial: ask
  ask:
    type: agent
    provider: '{{ .inputs.agent }}'
    prompt: Review main.go
    options: {command: "FAKE", model: '{{ .inputs.model }}'}
`

func TestTemplatedProviderAndOptions(t *testing.T) {
	h, wf, state := agentRun(t, templatedProvider)
	h.succeed(wf, map[string]string{"model": "opus"})
	if b, _ := os.ReadFile(filepath.Join(state, "args.1")); !strings.Contains(string(b), "--model\nopus\n") {
		t.Errorf("argv %q", b)
	}
	rep := h.run(context.Background(), wf, map[string]string{"agent": "cursor"})
	if rep.Status != "failure" || !strings.Contains(rep.Error, `provider "cursor" (from {{ .inputs.agent }}) is not a known provider (one of claude, codex, gemini, github_copilot, mistral_vibe, opencode, openai_compatible, anthropic)`) {
		t.Errorf("unknown provider: %+v", rep)
	}
}

// skills go ahead of the prompt, the role ahead of the system prompt, as
// the agent receives them and as the transcript records them.
func TestSkillsAndRole(t *testing.T) {
	h, wf, state := agentRun(t, `
name: review
states:
  initial: ask
  ask:
    type: agent
    provider: claude
    prompt: Review main.go
    system_prompt: Focus on errors.
    skills: [go-style, {path: ./local/audit}]
    role: go-senior
    options: {command: "FAKE"}
`)
	h.write(".awf/skills/go-style/SKILL.md", "---\nname: go-style\n---\nUse gofmt.\n")
	h.write("local/audit/SKILL.md", "Check errors.\n")
	h.write("local/audit/check.sh", "#!/bin/sh\n")
	h.write(".awf/roles/go-senior/AGENTS.md", "You are a senior Go engineer.\n")
	h.e.Environ = append(h.e.Environ, "HOME="+h.dir)
	rep := h.run(context.Background(), wf, nil)
	if rep.Status != "success" {
		t.Fatalf("report %+v\n%s", rep, h.display.String())
	}
	msgs := userMessages(t, rep.TranscriptPath, "ask")
	wantPrompt := fmt.Sprintf("<skill_content name=\"go-style\">\nUse gofmt.\n\nSkill directory: %s\nRelative paths in this skill are relative to the skill directory.\n</skill_content>\n\n"+
		"<skill_content name=\"audit\">\nCheck errors.\n\nSkill directory: %s\nRelative paths in this skill are relative to the skill directory.\n\n<skill_resources>\n<file>check.sh</file>\n</skill_resources>\n</skill_content>\n\nReview main.go",
		filepath.Join(h.dir, ".awf", "skills", "go-style"), filepath.Join(h.dir, "local", "audit"))
	if len(msgs) != 1 || msgs[0][0] != wantPrompt || msgs[0][1] != "You are a senior Go engineer.\n\nFocus on errors." {
		t.Errorf("message.user %q\nwant prompt %q", msgs, wantPrompt)
	}
	b, _ := os.ReadFile(filepath.Join(state, "args.1"))
	if !strings.Contains(string(b), "--append-system-prompt\nYou are a senior Go engineer.\n\nFocus on errors.\n") {
		t.Errorf("argv %q", b)
	}
	// A templated role is found at run time; an unknown one fails the
	// step clearly.
	wf = strings.Replace(wf, "role: go-senior", "role: '{{ .inputs.role }}'", 1)
	wf = strings.Replace(wf, "states:", "inputs:\n  - {name: role, default: go-senior}\nstates:", 1)
	if rep := h.run(context.Background(), wf, nil); rep.Status != "success" {
		t.Errorf("templated role: %+v", rep)
	}
	rep = h.run(context.Background(), wf, map[string]string{"role": "ghost"})
	if rep.Status != "failure" || !strings.Contains(rep.Error, `role: role "ghost" not found`) {
		t.Errorf("missing role: %+v", rep)
	}
}

// opencode and mistral_vibe run through the engine like the other CLIs;
// their transcripts verify (the harness checks every run).
func TestNewProvidersThroughEngine(t *testing.T) {
	fake, err := filepath.Abs("../agent/testdata/fake-agent.sh")
	if err != nil {
		t.Fatal(err)
	}
	for provider, rec := range map[string]string{"opencode": "opencode-turn1.jsonl", "mistral_vibe": "vibe-turn1.jsonl"} {
		t.Run(provider, func(t *testing.T) {
			h := newHarness(t)
			replay, _ := filepath.Abs(filepath.Join("../agent/testdata/cli", rec))
			h.e.Environ = append(os.Environ(), "REEL_FAKE_AGENT_REPLAY="+replay)
			rep := h.run(context.Background(), fmt.Sprintf("name: n\nstates:\n  initial: a\n  a:\n    type: agent\n    provider: %s\n    prompt: Summarize.\n    options: {command: %q}\n", provider, fake), nil)
			if rep.Status != "success" {
				t.Fatalf("report %+v\n%s", rep, h.display.String())
			}
			if ar := agentResult(t, rep.TranscriptPath, "a"); ar.Provider != provider || ar.Output != "Two text files: a.txt and b.txt." {
				t.Errorf("result %+v", ar)
			}
		})
	}
}

// The loader and the runner agree on the provider names.
func TestProviderListsAgree(t *testing.T) {
	a, w := slices.Sorted(slices.Values(agent.Providers())), slices.Sorted(slices.Values(workflow.Providers))
	if !reflect.DeepEqual(a, w) {
		t.Errorf("agent.Providers %v, workflow.Providers %v", a, w)
	}
}
