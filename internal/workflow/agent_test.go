package workflow

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reelhq/reel/internal/agentfiles"
)

// twoAgents is a workflow whose second agent state is b; extra is indented
// under b.
func twoAgents(aExtra, bExtra string) []byte {
	return []byte("name: x\ninputs:\n  - name: agent\n    default: claude\nstates:\n  initial: a\n  a:\n    type: agent\n    provider: claude\n    prompt: hi\n" + aExtra +
		"    on_success: b\n  b:\n    type: agent\n    provider: claude\n    prompt: again\n" + bExtra)
}

func TestAWFConversationForms(t *testing.T) {
	wf, err := Parse(twoAgents("    mode: conversation\n    conversation: {}\n",
		"    conversation:\n      continue_from: a\n"), "f.yaml", Options{})
	if err != nil {
		t.Fatal(err)
	}
	a, b := wf.States["a"], wf.States["b"]
	if a.Agent.Mode != ModeConversation || a.Agent.Session == nil || !a.Tracked() {
		t.Errorf("a = %+v", a.Agent)
	}
	if b.Agent.Session.ContinueFrom != "a" || b.Agent.Session.ContinuePos != (Pos{19, 22}) {
		t.Errorf("b session = %+v", b.Agent.Session)
	}
	if len(b.Conversation) != 0 || b.Agent.Mode != "" {
		t.Errorf("b = %+v", b)
	}

	wf, err = Parse(twoAgents("    mode: conversation\n    conversation:\n      max_turns: 5\n      stop_condition: \"inputs.response contains 'DONE' || turn.Number >= 3\"\n      inject_context: 'Tests say: {{ .turn.Output }}'\n", ""), "f.yaml", Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := wf.States["a"].Agent.Session
	if c.MaxTurns != 5 || c.InjectContext == nil {
		t.Fatalf("session %+v", c)
	}
	for _, tc := range []struct {
		env  map[string]any
		want bool
	}{
		{map[string]any{"inputs": map[string]any{"response": "all DONE"}, "turn": map[string]any{"Number": 1}}, true},
		{map[string]any{"inputs": map[string]any{"response": "more"}, "turn": map[string]any{"Number": 3}}, true},
		{map[string]any{"inputs": map[string]any{"response": "more"}, "turn": map[string]any{"Number": 2}}, false},
	} {
		if got, err := c.StopCondition.True(tc.env); err != nil || got != tc.want {
			t.Errorf("stop_condition with %v = %v, %v", tc.env, got, err)
		}
	}
}

func TestAWFAgentProblems(t *testing.T) {
	for _, c := range []struct{ a, b, want string }{
		{"", "    conversation:\n      continue_from: nope\n", `f.yaml:17:22: state "b" conversation.continue_from: unknown state "nope"`},
		{"", "    conversation:\n      continue_from: a\n", `f.yaml:17:22: state "b" conversation.continue_from: agent "a" does not track its session; give it conversation: {} (or a conversation)`},
		{"    conversation: {}\n", "    conversation:\n      continue_from: a\n    model: x\n    options: {model: y}\n", `f.yaml:19:12: model x contradicts options.model y; set it once`},
		{"    mode: chat\n", "", `f.yaml:11:11: mode "chat" is not one of single, conversation`},
		{"    conversation:\n      max_turns: 3\n", "", `f.yaml:12:7: agent "a": conversation.max_turns, stop_condition and inject_context apply to mode: conversation`},
		{"    mode: conversation\n    conversation:\n      stop_condition: 'turn.Output contains'\n", "", "f.yaml:13:23: conversation.stop_condition: bad expression:"},
		{"    mode: conversation\n    conversation:\n      max_turns: 0\n", "", "f.yaml:13:18: conversation.max_turns must be between 1 and 10000, got 0"},
		{"    mode: conversation\n    conversation:\n      strategy: sliding_window\n", "", "f.yaml:13:7: conversation.strategy is not supported: AWF removed it (F083)"},
		{"    mode: conversation\n    conversation:\n      stop_conditon: x\n", "", `f.yaml:13:7: unknown field "stop_conditon" in conversation (did you mean "stop_condition"?)`},
		{"    mode: conversation\n    conversation:\n      - go on\n", "", `f.yaml:7:3: agent "a": mode conversation takes its turns from the terminal`},
		{"    skills: go\n", "", "f.yaml:11:13: skills must be a list of skill names or {path: DIR} entries, got the string \"go\""},
		{"    skills: [a/b]\n", "", `f.yaml:11:14: skills[0]: "a/b" is a path; write it as {path: a/b}`},
		{"    skills: [{dir: x}]\n", "", `f.yaml:11:15: unknown field "dir" in skills[0]`},
		{"    skills: [{}]\n", "", "f.yaml:11:14: skills[0] needs path"},
		{"    role: ''\n", "", "f.yaml:11:11: role is empty"},
		{"    system_prompt: a\n    options: {system_prompt: b}\n", "", `f.yaml:7:3: agent "a" sets both system_prompt and options.system_prompt; keep one`},
		{"    max_tokens: 0\n", "", "f.yaml:11:17: max_tokens must be at least 1, got 0"},
	} {
		_, err := Parse(twoAgents(c.a, c.b), "f.yaml", Options{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("a %q b %q:\n got %v\nwant %s", c.a, c.b, err, c.want)
		}
	}
	// Providers must match when both are known at load time.
	src := "name: x\nstates:\n  initial: a\n  a:\n    type: agent\n    provider: claude\n    prompt: hi\n    conversation: {}\n    on_success: b\n  b:\n    type: agent\n    provider: codex\n    prompt: again\n    conversation:\n      continue_from: a\n"
	if _, err := Parse([]byte(src), "f.yaml", Options{}); err == nil || !strings.Contains(err.Error(), `f.yaml:15:22: state "b" conversation.continue_from: "a" runs provider claude and this state codex`) {
		t.Errorf("provider mismatch: %v", err)
	}
	src = strings.Replace(src, "continue_from: a", "continue_from: done", 1) + "    on_success: done\n  done:\n    type: terminal\n"
	if _, err := Parse([]byte(src), "f.yaml", Options{}); err == nil || !strings.Contains(err.Error(), `"done" is a terminal state; only an agent state has a session to continue`) {
		t.Errorf("continue from a terminal: %v", err)
	}
}

func TestTemplatedProviderAndShorthands(t *testing.T) {
	wf, err := Parse(twoAgents("    model: haiku\n    max_tokens: 100\n", "    options:\n      api_key: '{{ .env.KEY }}'\n      system_prompt: Be brief.\n"), "f.yaml", Options{})
	if err != nil {
		t.Fatal(err)
	}
	a := wf.States["a"]
	if a.Options["model"] != "haiku" || a.Options["max_tokens"] != 100 {
		t.Errorf("shorthands not in options: %v", a.Options)
	}
	b := wf.States["b"]
	if b.SystemPrompt == nil || b.SystemPrompt.Source != "Be brief." || b.Options["system_prompt"] != nil {
		t.Errorf("options.system_prompt: %+v %v", b.SystemPrompt, b.Options)
	}
	got, err := RenderOptions(b.Options, map[string]any{"env": map[string]any{"KEY": "sk-1"}})
	if err != nil || got["api_key"] != "sk-1" {
		t.Errorf("rendered options %v, %v", got, err)
	}

	src := "name: x\ninputs:\n  - name: agent\nstates:\n  initial: a\n  a:\n    type: agent\n    provider: '{{ .inputs.agent }}'\n    prompt: hi\n"
	wf, err = Parse([]byte(src), "f.yaml", Options{})
	if err != nil {
		t.Fatal(err)
	}
	pt := wf.States["a"].Agent.ProviderTemplate
	if p, _ := pt.Execute(map[string]any{"inputs": map[string]any{"agent": "codex"}}); p != "codex" {
		t.Errorf("provider template gave %q", p)
	}
	// a reference in an agent field is checked leniently (AWF's validate
	// does not look there): a warning
	wf, err = Parse([]byte(strings.Replace(src, "'{{ .inputs.agent }}'", "'{{ .states.ghost.Output }}'", 1)), "f.yaml", Options{})
	if err != nil || len(wf.Warnings) != 1 || !strings.Contains(wf.Warnings[0].Msg, `{{.states.ghost.Output}}: unknown state "ghost"`) {
		t.Errorf("unknown state in the provider: %v %v", err, wf.Warnings)
	}
	for bad, want := range map[string]string{
		"'{{ .inputs.agent '": `agent "a": provider: bad template`,
		"claud":               `unknown provider "claud"`,
		"custom":              `provider custom was replaced by openai_compatible`,
	} {
		_, err := Parse([]byte(strings.Replace(src, "'{{ .inputs.agent }}'", bad, 1)), "f.yaml", Options{})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("provider %s: %v, want %q", bad, err, want)
		}
	}
}

func TestAgentOptionsChecked(t *testing.T) {
	var seen map[string]any
	opts := Options{AgentOptions: func(provider string, o map[string]any) error {
		seen = o
		if provider == "mistral_vibe" && o["max_turns"] == 0 {
			return errors.New("options.max_turns 0: want at least 1")
		}
		return nil
	}}
	src := "name: x\ninputs:\n  - name: p\nstates:\n  initial: a\n  a:\n    type: agent\n    provider: mistral_vibe\n    prompt: hi\n    options:\n      max_turns: 0\n      agent_profile: '{{ .inputs.p }}'\n      workdir: ./sub\n"
	_, err := Parse([]byte(src), "f.yaml", opts)
	if err == nil || !strings.Contains(err.Error(), `f.yaml:6:3: agent "a": options.max_turns 0: want at least 1`) {
		t.Errorf("err %v", err)
	}
	if _, ok := seen["agent_profile"]; ok || seen["workdir"] != "./sub" {
		t.Errorf("checked options %v: templates must be left out, literals kept", seen)
	}
	// A templated provider is checked at run time only.
	seen = nil
	if _, err := Parse([]byte(strings.Replace(src, "mistral_vibe", "'{{ .inputs.p }}'", 1)), "f.yaml", opts); err != nil || seen != nil {
		t.Errorf("templated provider: checked %v (err %v)", seen, err)
	}
}

func TestSkillsAndRolesLookedUp(t *testing.T) {
	dir := t.TempDir()
	mk := func(p string) {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("body"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mk(filepath.Join(dir, ".awf", "skills", "go", "SKILL.md"))
	mk(filepath.Join(dir, "flows", "local-skill", "SKILL.md"))
	mk(filepath.Join(dir, ".awf", "roles", "senior", "AGENTS.md"))
	file := filepath.Join(dir, "flows", "wf.yaml")
	opts := Options{AgentFiles: &agentfiles.Finder{ProjectDir: dir, Env: []string{"HOME=" + dir}}}
	good := "name: x\ninputs:\n  - name: r\nstates:\n  initial: a\n  a:\n    type: agent\n    provider: claude\n    prompt: hi\n    skills:\n      - go\n      - path: ./local-skill\n    role: senior\n"
	wf, err := Parse([]byte(good), file, opts)
	if err != nil {
		t.Fatal(err)
	}
	a := wf.States["a"].Agent
	if len(a.Skills) != 2 || a.Skills[1].Path != "./local-skill" || a.Role.Source != "senior" {
		t.Errorf("agent %+v", a)
	}
	bad := strings.NewReplacer("- go", "- nope", "./local-skill", "./missing", "role: senior", "role: ghost").Replace(good)
	_, err = Parse([]byte(bad), file, opts)
	var probs Problems
	if !errors.As(err, &probs) || len(probs) != 3 {
		t.Fatalf("err %v, want three problems", err)
	}
	for i, want := range []string{`:11:9: state "a": skill "nope" not found`, `:12:15: state "a": skill "./missing" not found`, `:13:11: state "a": role "ghost" not found`} {
		if !strings.Contains(probs[i].String(), want) {
			t.Errorf("problem %d = %s, want %s", i, probs[i], want)
		}
	}
	// A templated role is resolved at run time.
	if _, err := Parse([]byte(strings.Replace(good, "role: senior", "role: '{{ .inputs.r }}'", 1)), file, opts); err != nil {
		t.Errorf("templated role: %v", err)
	}
}

func TestAWFAgentFileLoads(t *testing.T) {
	wf, err := Load("testdata/awf-agent.yaml", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if c := wf.States["chat"]; c.Agent.ProviderTemplate == nil || c.Agent.Session.MaxTurns != 4 || len(c.Agent.Skills) != 2 || literal(wf.States["seed"].Options["model"]) != "haiku" {
		t.Errorf("chat %+v", c.Agent)
	}
}
