package workflow

import (
	"strings"
	"testing"
)

func agentWorkflow(conversation string) []byte {
	return []byte("name: x\nstates:\n  initial: a\n  a:\n    type: agent\n    provider: claude\n    prompt: hi\n" + conversation)
}

func TestConversationLoads(t *testing.T) {
	wf, err := Parse(agentWorkflow("    conversation:\n      - Now list the {{ .inputs.n }} riskiest changes.\n      - 'Fix this: {{ .turn.Output }}'\n"), "f.yaml", Options{})
	if err != nil {
		t.Fatal(err)
	}
	conv := wf.States["a"].Conversation
	if len(conv) != 2 || conv[1].Pos != (Pos{10, 9}) {
		t.Fatalf("conversation = %+v", conv)
	}
	got, err := conv[1].Execute(map[string]any{"turn": map[string]any{"Output": "the bug", "Number": 3}})
	if err != nil || got != "Fix this: the bug" {
		t.Fatalf("rendered %q, %v", got, err)
	}
}

// Every shape other than a list of non-empty prompt strings is a problem
// at the offending node.
func TestConversationBadShapes(t *testing.T) {
	for _, c := range []struct{ yaml, want string }{
		{"    conversation: Now fix it.\n", `f.yaml:8:19: conversation must be a list of follow-up prompts (strings) or a mapping (continue_from, max_turns, stop_condition, inject_context), got the string "Now fix it."`},
		{"    conversation:\n", "f.yaml:8:18: conversation must be a list of follow-up prompts (strings) or a mapping (continue_from, max_turns, stop_condition, inject_context), got null"},
		{"    conversation: []\n", "f.yaml:8:19: conversation lists no follow-up prompts (remove it for a single-turn step)"},
		{"    conversation: {turn2: fix it}\n", `f.yaml:8:20: unknown field "turn2" in conversation`},
		{"    conversation:\n      - ok\n      - 42\n", "f.yaml:10:9: conversation[1] must be a prompt string, got an integer"},
		{"    conversation:\n      - ''\n", "f.yaml:9:9: conversation[0] is an empty prompt"},
		{"    conversation:\n      - \"  \\n\"\n", "f.yaml:9:9: conversation[0] is an empty prompt"},
		{"    conversation:\n      - [a, b]\n", "f.yaml:9:9: conversation[0] must be a prompt string, got a list"},
		{"    conversation:\n      - {prompt: x}\n", "f.yaml:9:9: conversation[0] must be a prompt string, got a mapping"},
		{"    conversation:\n      -\n", "f.yaml:9:8: conversation[0] must be a prompt string, got null"},
		{"    conversation:\n      - '{{ .turn.Output'\n", "f.yaml:9:9: conversation[0]: bad template:"},
	} {
		_, err := Parse(agentWorkflow(c.yaml), "f.yaml", Options{})
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%q:\n got %v\nwant %s", c.yaml, err, c.want)
		}
	}
	// A bad reference in a follow-up is a warning, as in every field AWF's
	// validate does not check.
	wf, err := Parse(agentWorkflow("    conversation:\n      - '{{ .states.nope.Output }}'\n"), "f.yaml", Options{})
	if err != nil || len(wf.Warnings) != 1 || !strings.HasPrefix(wf.Warnings[0].String(), `f.yaml:9:9: warning: state "a" conversation[0]: {{.states.nope.Output}}: unknown state "nope"`) {
		t.Errorf("unknown state in a follow-up: %v %v", err, wf.Warnings)
	}
	// .turn exists only in follow-ups; in the step's own prompt it would
	// render empty without a word.
	for _, src := range []string{
		"name: x\nstates:\n  initial: a\n  a:\n    type: agent\n    provider: claude\n    prompt: 'again: {{ .turn.Output }}'\n",
		"name: x\nstates:\n  initial: a\n  a:\n    type: agent\n    provider: claude\n    prompt: hi\n    system_prompt: '{{ if true }}{{ $.turn.Number }}{{ end }}'\n",
	} {
		_, err := Parse([]byte(src), "f.yaml", Options{})
		if err == nil || !strings.Contains(err.Error(), "f.yaml:7:") && !strings.Contains(err.Error(), "f.yaml:8:") || !strings.Contains(err.Error(), ".turn is set only in conversation follow-ups") {
			t.Errorf("%q: err = %v", src, err)
		}
	}
	// conversation belongs to agent states only: on a step it loads, as
	// in AWF, with a warning that it does nothing.
	wf, err = Parse([]byte("name: x\nstates:\n  initial: a\n  a:\n    type: step\n    command: 'true'\n    conversation: [more]\n"), "f.yaml", Options{})
	if err != nil || len(wf.Warnings) != 1 || !strings.Contains(wf.Warnings[0].String(), `f.yaml:7:5: warning: step state "a": "conversation" is ignored: it belongs to agent states`) {
		t.Errorf("step with conversation: %v %v", err, wf)
	}
}

// FuzzConversation: whatever YAML sits under conversation, the loader
// returns follow-up templates or positioned problems, never a panic, and a
// loaded conversation holds only non-empty prompts.
func FuzzConversation(f *testing.F) {
	for _, s := range []string{"[a, b]", "- x\n- '{{ .turn.Output }}'", "{a: b}", "[]", "", "[1, [2], {3: 4}]", "- '{{'", "&a [*a]", "- \"\\0\"",
		"{}", "{continue_from: a}", "{max_turns: 3}", "{stop_condition: 'turn.Output contains \"x\"'}", "{inject_context: '{{ .turn.Output }}'}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, conv string) {
		src := agentWorkflow("    conversation:\n      " + strings.ReplaceAll(conv, "\n", "\n      ") + "\n")
		wf, err := Parse(src, "f.yaml", Options{})
		if err != nil {
			probs, ok := err.(Problems)
			if !ok || len(probs) == 0 {
				t.Fatalf("error is not Problems: %v", err)
			}
			for _, p := range probs {
				if p.Pos.Line < 1 || p.Pos.Col < 1 {
					t.Fatalf("problem without position: %v", p)
				}
			}
			return
		}
		st := wf.States["a"]
		got := st.Conversation
		if len(got) == 0 && (st.Agent == nil || st.Agent.Session == nil) {
			t.Fatal("loaded an agent state with an empty conversation")
		}
		for _, c := range got {
			if c == nil || strings.TrimSpace(c.Source) == "" {
				t.Fatalf("empty follow-up loaded: %+v", got)
			}
		}
	})
}
