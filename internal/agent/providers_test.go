package agent

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/reelhq/reel/internal/golden"
	"github.com/reelhq/reel/transcript"
)

// mistral_vibe and opencode run for real through the fake CLI: the
// command line AWF users expect, the prompt where each CLI reads it, and
// the normalized events.
func TestVibeAndOpencodeRun(t *testing.T) {
	cases := []struct {
		provider, file string
		opts           map[string]any
		wantArgs       string
		output         string
		usage          transcript.Usage
		session        string
	}{
		{"mistral_vibe", "vibe-turn1.jsonl", map[string]any{"model": "devstral-small", "max_turns": 4, "enabled_tools": []any{"read", "grep"}, "trust": true},
			"--prompt=Be brief.\n\nSummarize the repository.\n--output\nstreaming\n--agent\ndefault\n--max-turns\n4\n--enabled-tools\nread\n--enabled-tools\ngrep\n--trust\n--stdin--\n",
			"Two text files: a.txt and b.txt.", transcript.Usage{}, ""},
		{"opencode", "opencode-turn1.jsonl", map[string]any{"model": "anthropic/claude-sonnet-4-5", "agent": "build", "dangerously_skip_permissions": true},
			"run\n--format\njson\n--model\nanthropic/claude-sonnet-4-5\n--agent\nbuild\n--dangerously-skip-permissions\n--stdin--\nBe brief.\n\nSummarize the repository.",
			"Two text files: a.txt and b.txt.", transcript.Usage{InputTokens: 2300 + 120, OutputTokens: 80, CacheReadTokens: 120, TotalTokens: 2500}, "ses_3a7b9c1d2ffeQwErTyUiOpAsDf"},
	}
	for _, tc := range cases {
		t.Run(tc.provider, func(t *testing.T) {
			req, argsFile := replayRequest(t, tc.provider, cliTestdata(t, tc.file))
			req.SystemPrompt = "Be brief."
			for k, v := range tc.opts {
				req.Options[k] = v
			}
			c := newCollector(t)
			res, err := Run(context.Background(), req, c.emit)
			if err != nil {
				t.Fatal(err)
			}
			if got := readArgs(t, argsFile); got != tc.wantArgs {
				t.Errorf("argv = %q\nwant   %q", got, tc.wantArgs)
			}
			if res.Output != tc.output || res.Usage != tc.usage || res.SessionID != tc.session || res.Provider != tc.provider {
				t.Errorf("result = %+v", res)
			}
			// The prompt the stream echoes (with the system prompt in
			// front) is not recorded a second time.
			users := 0
			for _, e := range c.events {
				if e.Type == transcript.MessageUser {
					users++
				}
			}
			if users != 1 || len(c.events[0].Message().Blocks) != 2 {
				t.Errorf("%d message.user events, first %+v", users, c.events[0].Payload)
			}
			if fid := c.checkPairs(t); fid[transcript.FidelityAgentEmitted] != 1 {
				t.Errorf("tool pairs by fidelity %v", fid)
			}
			golden.Check(t, filepath.Join("testdata", "golden", "cli-"+tc.provider+".jsonl"), c.render(t))
		})
	}
}

func TestVibeModelGoesToEnvironment(t *testing.T) {
	seen := filepath.Join(t.TempDir(), "env")
	bin := script(t, `echo "$VIBE_ACTIVE_MODEL" > "`+seen+`"; cat "`+cliTestdata(t, "vibe-turn2.jsonl")+`"`)
	req := Request{Provider: "mistral_vibe", Prompt: "p", Options: map[string]any{"command": bin, "model": "mistral-medium"}, Dir: t.TempDir(), Env: baseEnv()}
	if _, err := Run(context.Background(), req, newCollector(t).emit); err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(readArgs(t, seen)); got != "mistral-medium" {
		t.Errorf("VIBE_ACTIVE_MODEL = %q", got)
	}
}

// opencode's second turn resumes the session its stream named with
// --session; vibe, whose stream names none, gets the conversation so far
// in its prompt.
func TestConversationVibeAndOpencode(t *testing.T) {
	t.Run("opencode", func(t *testing.T) {
		req, argsFile := conversationRequest(t, "opencode", []string{"opencode-turn1.jsonl", "opencode-turn2.jsonl"},
			map[int]string{2: "--session\nses_3a7b9c1d2ffeQwErTyUiOpAsDf"})
		c := newCollector(t)
		s, err := NewSession(req, c.emit)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Send(context.Background(), req.Prompt); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Send(context.Background(), followUp); err != nil {
			t.Fatal(err)
		}
		if got, want := readArgs(t, argsFile+".2"), "run\n--format\njson\n--session\nses_3a7b9c1d2ffeQwErTyUiOpAsDf\n--stdin--\n"+followUp; got != want {
			t.Errorf("turn 2 argv = %q, want %q", got, want)
		}
		res, _ := s.Result()
		if res.Output != "b.txt, it changed last." || res.Usage.TotalTokens != 2500+1400 || res.CostUSD == nil || *res.CostUSD < 0.0025-1e-9 || *res.CostUSD > 0.0025+1e-9 {
			t.Errorf("result %+v", res)
		}
		c.checkPairs(t)
		golden.Check(t, filepath.Join("testdata", "golden", "conversation-opencode.jsonl"), c.render(t))
	})
	t.Run("mistral_vibe", func(t *testing.T) {
		req, argsFile := conversationRequest(t, "mistral_vibe", []string{"vibe-turn1.jsonl", "vibe-turn2.jsonl", "vibe-turn3.jsonl"}, nil)
		c := newCollector(t)
		sendAll(t, req, c, req.Prompt, followUp, "And the safest?")
		want2 := "--prompt=This continues an earlier conversation between you and the user, quoted below. Reply to the user's last message.\n\n" +
			"<conversation>\n<user>\nBe brief.\n\nSummarize the repository.\n</user>\n<assistant>\nTwo text files: a.txt and b.txt.\n</assistant>\n</conversation>\n\n" + followUp
		if got := readArgs(t, argsFile+".2"); !strings.HasPrefix(got, want2+"\n--output\nstreaming\n--agent\ndefault\n") {
			t.Errorf("turn 2 argv = %q\nwant prefix %q", got, want2)
		}
		got3 := readArgs(t, argsFile+".3")
		if !strings.Contains(got3, "<user>\n"+followUp+"\n</user>\n<assistant>\nb.txt, it changed last.\n</assistant>\n</conversation>\n\nAnd the safest?") {
			t.Errorf("turn 3 argv lacks turn 2: %q", got3)
		}
		if strings.Count(got3, "Be brief.") != 1 {
			t.Errorf("the system prompt is repeated: %q", got3)
		}
		// Each turn records its own prompt once, not the framing.
		var prompts []string
		for _, e := range c.events {
			if e.Type == transcript.MessageUser {
				prompts = append(prompts, e.Message().Blocks[0].Text)
			}
		}
		if !reflect.DeepEqual(prompts, []string{req.Prompt, followUp, "And the safest?"}) {
			t.Errorf("recorded prompts %q", prompts)
		}
		c.checkPairs(t)
	})
}

// A step continues another step's session: the CLI resumes the reported
// id on its very first turn, the HTTP provider sends the whole history.
func TestContinueAnotherSession(t *testing.T) {
	t.Run("claude", func(t *testing.T) {
		req, argsFile := conversationRequest(t, "claude", []string{"claude-tool-json.jsonl", "claude-turn2.jsonl"},
			map[int]string{2: "--resume\n5f0c2c1e-1b7a-4c43-9f0e-3d2a1b0c9d8e"})
		seed, err := NewSession(req, newCollector(t).emit)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := seed.Send(context.Background(), req.Prompt); err != nil {
			t.Fatal(err)
		}
		snap := seed.Snapshot()
		snap.From = `step "seed"`
		recall := req
		recall.SystemPrompt = ""
		recall.Continue = snap
		c := newCollector(t)
		s, err := NewSession(recall, c.emit)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Send(context.Background(), followUp); err != nil {
			t.Fatalf("first turn of the continuing step: %v", err)
		}
		if got := readArgs(t, argsFile+".2"); !strings.Contains(got, "--resume\n5f0c2c1e-1b7a-4c43-9f0e-3d2a1b0c9d8e") {
			t.Errorf("argv %q", got)
		}
	})
	t.Run("errors", func(t *testing.T) {
		req, _ := conversationRequest(t, "claude", []string{"claude-tool-json.jsonl"}, nil)
		req.Continue = &Snapshot{Provider: "codex", SessionID: "x", From: `step "seed"`}
		if _, err := NewSession(req, newCollector(t).emit); err == nil || !strings.Contains(err.Error(), `cannot continue a codex session (step "seed")`) {
			t.Errorf("provider mismatch: %v", err)
		}
		req.Continue = &Snapshot{Provider: "claude", From: `step "seed"`}
		if _, err := NewSession(req, newCollector(t).emit); err == nil || !strings.Contains(err.Error(), `step "seed" reported no session id`) {
			t.Errorf("no session id: %v", err)
		}
		o := openAIRequest("http://127.0.0.1:1", t.TempDir(), nil)
		o.Continue = &Snapshot{Provider: "openai_compatible", From: `step "seed"`}
		if _, err := NewSession(o, newCollector(t).emit); err == nil || !strings.Contains(err.Error(), `step "seed" has no conversation to continue`) {
			t.Errorf("empty history: %v", err)
		}
		if !(*Snapshot)(nil).Empty() || !(&Snapshot{Provider: "claude"}).Empty() || (&Snapshot{SessionID: "x"}).Empty() {
			t.Error("Empty")
		}
	})
	t.Run("openai_compatible", func(t *testing.T) {
		srv := newChatServer(t, readTestdata(t, "answer-json.sse"), readTestdata(t, "answer-json.sse"))
		req := openAIRequest(srv.URL, t.TempDir(), nil)
		seed, err := NewSession(req, newCollector(t).emit)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := seed.Send(context.Background(), "Remember BANANA42."); err != nil {
			t.Fatal(err)
		}
		recall := req
		recall.SystemPrompt = "You recall things."
		recall.Continue = seed.Snapshot()
		s, err := NewSession(recall, newCollector(t).emit)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Send(context.Background(), "What was the word?"); err != nil {
			t.Fatal(err)
		}
		var roles, contents []string
		for _, m := range srv.request(t, 1)["messages"].([]any) {
			mm := m.(map[string]any)
			roles = append(roles, mm["role"].(string))
			b, _ := json.Marshal(mm["content"])
			contents = append(contents, string(b))
		}
		if !reflect.DeepEqual(roles, []string{"system", "user", "assistant", "user"}) || contents[0] != `"You recall things."` || contents[1] != `"Remember BANANA42."` {
			t.Errorf("continued request messages %v %v", roles, contents)
		}
	})
}

// AWF's provider options become the flags AWF passes; bad values are
// refused before anything runs.
func TestAWFOptionFlags(t *testing.T) {
	for _, tc := range []struct {
		provider string
		opts     map[string]any
		flags    []string
		env      []string
	}{
		{"claude", map[string]any{"model": "sonnet", "allowed_tools": "bash,read", "dangerously_skip_permissions": true, "max_turns": 5},
			[]string{"--model", "sonnet", "--max-turns", "5", "--allowedTools", "bash,read", "--dangerously-skip-permissions"}, nil},
		{"claude", map[string]any{"allowed_tools": []any{"Bash", "Read"}, "args": []any{"--permission-mode", "plan"}},
			[]string{"--allowedTools", "Bash,Read", "--permission-mode", "plan"}, nil},
		{"codex", map[string]any{"model": "gpt-5", "dangerously_skip_permissions": true},
			[]string{"--model", "gpt-5", "--dangerously-bypass-approvals-and-sandbox"}, nil},
		{"gemini", map[string]any{"dangerously_skip_permissions": "true"}, []string{"--approval-mode=yolo"}, nil},
		{"github_copilot", map[string]any{"mode": "plan", "effort": "high", "allowed_tools": "bash, github_api", "denied_tools": []any{"rm"}, "dangerously_skip_permissions": true},
			[]string{"--mode=plan", "--effort=high", "--allow-tool=bash", "--allow-tool=github_api", "--deny-tool=rm", "--allow-all"}, nil},
		{"mistral_vibe", map[string]any{"agent_profile": "plan", "output_format": "text", "max_tokens": 900, "max_price": 0.5, "workdir": "sub/dir", "add_dirs": []any{"x", "docs"}},
			[]string{"--agent", "plan", "--max-tokens", "900", "--max-price", "0.5", "--workdir", "sub/dir", "--add-dir", "x", "--add-dir", "docs"}, nil},
		{"mistral_vibe", map[string]any{"dangerously_skip_permissions": true, "model": "devstral"}, []string{"--agent", "auto-approve"}, []string{"VIBE_ACTIVE_MODEL=devstral"}},
		{"opencode", map[string]any{"variant": "high", "thinking": true}, []string{"--variant", "high", "--thinking"}, nil},
	} {
		spec, _ := specFor(tc.provider)
		flags, env, err := cliFlags(spec, tc.opts)
		if err != nil || !reflect.DeepEqual(flags, tc.flags) || !reflect.DeepEqual(env, tc.env) {
			t.Errorf("%s %v:\n got %q %q %v\nwant %q %q", tc.provider, tc.opts, flags, env, err, tc.flags, tc.env)
		}
		if err := CheckOptions(tc.provider, tc.opts); err != nil {
			t.Errorf("CheckOptions(%s): %v", tc.provider, err)
		}
	}
	for _, tc := range []struct {
		provider string
		opts     map[string]any
		want     string
	}{
		{"mistral_vibe", map[string]any{"agent_profile": "plan", "dangerously_skip_permissions": true}, `options.agent_profile "plan" contradicts dangerously_skip_permissions`},
		{"mistral_vibe", map[string]any{"workdir": "a/../../etc"}, `options.workdir "a/../../etc": a path must not contain ".."`},
		{"mistral_vibe", map[string]any{"add_dirs": []any{".."}}, `options.add_dirs "..": a path must not contain ".."`},
		{"mistral_vibe", map[string]any{"max_turns": 0}, "options.max_turns 0: want at least 1"},
		{"mistral_vibe", map[string]any{"max_price": -1}, "options.max_price -1: want a non-negative number"},
		{"mistral_vibe", map[string]any{"output_format": "yaml"}, `options.output_format "yaml": want text, json or streaming`},
		{"mistral_vibe", map[string]any{"trust": "maybe"}, "options.trust: want true or false"},
		{"github_copilot", map[string]any{"mode": "yolo"}, `options.mode "yolo": want one of interactive, plan, autopilot`},
		{"github_copilot", map[string]any{"effort": "max"}, `options.effort "max": want one of low, medium, high`},
		{"opencode", map[string]any{"max_turns": 3}, "max_turns is supported by claude and mistral_vibe only"},
		{"openai_compatible", map[string]any{"model": "m", "top_p": 2}, "options.top_p 2: want 0..1"},
		{"openai_compatible", map[string]any{"model": "m", "max_tokens": 5, "max_completion_tokens": 9}, "name the same limit"},
		{"anthropic", map[string]any{}, "agent anthropic: options.model is required"},
		{"nope", nil, `unknown agent provider "nope"`},
	} {
		err := CheckOptions(tc.provider, tc.opts)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %v: %v, want %q", tc.provider, tc.opts, err, tc.want)
		}
	}
	if !errors.Is(CheckOptions("nope", nil), ErrUnknownProvider) {
		t.Error("unknown provider error does not match ErrUnknownProvider")
	}
}

// anthropic is openai_compatible aimed at Anthropic's Chat Completions
// endpoint with ANTHROPIC_API_KEY; base_url still overrides the endpoint.
func TestAnthropicPreset(t *testing.T) {
	cfg, err := openAIConfigFrom(Request{Provider: "anthropic", Options: map[string]any{"model": "claude-haiku-4-5"}, Env: []string{"ANTHROPIC_API_KEY=sk-ant-1", "OPENAI_API_KEY=sk-openai"}})
	if err != nil || cfg.baseURL != "https://api.anthropic.com/v1" || cfg.apiKey != "sk-ant-1" {
		t.Fatalf("config %+v, %v", cfg, err)
	}
	srv := newChatServer(t, readTestdata(t, "answer-json.sse"))
	req := openAIRequest(srv.URL, t.TempDir(), map[string]any{"max_completion_tokens": 256, "top_p": 0.9})
	req.Provider = "anthropic"
	req.Env = append(req.Env, "ANTHROPIC_API_KEY=sk-ant-2")
	res, err := Run(context.Background(), req, newCollector(t).emit)
	if err != nil || res.Provider != "anthropic" {
		t.Fatalf("run: %+v, %v", res, err)
	}
	body := srv.request(t, 0)
	if body["max_completion_tokens"] != 256.0 || body["top_p"] != 0.9 {
		t.Errorf("request %v", body)
	}
	if h := srv.headers[0].Get("Authorization"); h != "Bearer sk-ant-2" {
		t.Errorf("Authorization %q", h)
	}
}

// sendAll runs a session of req sending each prompt in turn, failing the
// test at the first error.
func sendAll(t *testing.T, req Request, c *collector, prompts ...string) *Session {
	t.Helper()
	s, err := NewSession(req, c.emit)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range prompts {
		if _, err := s.Send(context.Background(), p); err != nil {
			t.Fatal(err)
		}
	}
	return s
}
