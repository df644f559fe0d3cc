package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reelhq/reel/internal/golden"
	"github.com/reelhq/reel/transcript"
)

const followUp = "Now name the riskiest file."

// conversationRequest runs provider through fake-agent.sh counting its
// invocations in a state dir: invocation 1 replays turn1, invocation n>1
// replays the n-th recording and must receive expect[n] in its argv.
func conversationRequest(t *testing.T, provider string, recordings []string, expect map[int]string) (Request, string) {
	t.Helper()
	state := t.TempDir()
	argsFile := filepath.Join(t.TempDir(), "args")
	env := baseEnv("REEL_FAKE_AGENT_STATE="+state, "REEL_FAKE_AGENT_ARGS="+argsFile, "REEL_FAKE_AGENT_REPLAY="+cliTestdata(t, recordings[0]))
	for i, r := range recordings[1:] {
		env = append(env, "REEL_FAKE_AGENT_REPLAY_"+itoa(i+2)+"="+cliTestdata(t, r))
	}
	for n, e := range expect {
		env = append(env, "REEL_FAKE_AGENT_EXPECT_"+itoa(n)+"="+e)
	}
	return Request{
		Provider:     provider,
		Prompt:       "Summarize the repository.",
		SystemPrompt: "Be brief.",
		Options:      map[string]any{"command": fakeAgent(t)},
		Dir:          t.TempDir(),
		Env:          env,
	}, argsFile
}

func itoa(n int) string { return string(rune('0' + n)) }

// Each CLI provider's second turn resumes the session the first turn's
// stream reported, through the CLI's own resume flag; the fake fails the
// turn when the flag or the id is missing. Events of both turns follow one
// another (message.user, the reply, message.user, the reply) and the
// step's result sums the turns.
func TestConversationResumesEachCLI(t *testing.T) {
	cases := []struct {
		name                   string // when provider is not enough
		provider, turn1, turn2 string
		session                string
		resume                 string // what invocation 2 must carry
		wantArgs2              string
		output                 string
		usage                  transcript.Usage
		turns                  int
		cost                   float64
	}{
		{"", "claude", "claude-tool-json.jsonl", "claude-turn2.jsonl", "5f0c2c1e-1b7a-4c43-9f0e-3d2a1b0c9d8e",
			"--resume\n5f0c2c1e-1b7a-4c43-9f0e-3d2a1b0c9d8e",
			"-p\n--output-format\nstream-json\n--verbose\n--resume\n5f0c2c1e-1b7a-4c43-9f0e-3d2a1b0c9d8e\n--append-system-prompt\nBe brief.\n--\n" + followUp + "\n--stdin--\n",
			"The riskiest file is b.txt: it is the one nobody reviewed.", transcript.Usage{InputTokens: 142 + 3072, OutputTokens: 57, CacheReadTokens: 3072, TotalTokens: 142 + 3072 + 57}, 3, 0.0165},
		// Claude Code 2.1.332 as recorded against the scripted model
		// server (cmd/reel/realcli TestRealCLI): the resumed process's modelUsage
		// and total_cost_usd start from the first process's (88209 =
		// 66020 + 22189 input tokens), so the step counts 88209, not
		// 154229, and costs 0.265392, not 0.464082.
		{"claude-2.1.332", "claude", "claude-real-turn1.jsonl", "claude-real-turn2.jsonl", "aef16009-5528-4d45-846d-9281f92fcd9f",
			"--resume\naef16009-5528-4d45-846d-9281f92fcd9f",
			"-p\n--output-format\nstream-json\n--verbose\n--resume\naef16009-5528-4d45-846d-9281f92fcd9f\n--append-system-prompt\nBe brief.\n--\n" + followUp + "\n--stdin--\n",
			"I wrote a file and ran one command.", transcript.Usage{InputTokens: 88209, OutputTokens: 51, TotalTokens: 88260}, 4, 0.265392},
		{"", "codex", "codex-turn1.jsonl", "codex-turn2.jsonl", "019a2d7a-6455-7170-a661-c6d8b94c630a",
			"resume\n019a2d7a-6455-7170-a661-c6d8b94c630a\n--",
			"exec\n--json\n--skip-git-repo-check\nresume\n019a2d7a-6455-7170-a661-c6d8b94c630a\n--\n" + followUp + "\n--stdin--\n",
			// codex reports the thread's running total: turn 2's share is
			// what it adds to turn 1's, so the step counts 12340 input
			// tokens, not 6040 + 12340.
			"b.txt is the riskiest: it changed last.", transcript.Usage{InputTokens: 12340, OutputTokens: 150, CacheReadTokens: 11008, TotalTokens: 12490}, 2, 0},
		{"", "gemini", "gemini-turn1.jsonl", "gemini-turn2.jsonl", "8c1f4a2e-3b5d-4e6f-9a7b-0c1d2e3f4a5b",
			"--resume=8c1f4a2e-3b5d-4e6f-9a7b-0c1d2e3f4a5b",
			"--output-format\nstream-json\n--resume=8c1f4a2e-3b5d-4e6f-9a7b-0c1d2e3f4a5b\n--prompt=" + followUp + "\n--stdin--\n",
			"b.txt, it changed last.", transcript.Usage{}, -1, 0},
		{"", "github_copilot", "copilot-turn1.jsonl", "copilot-turn2.jsonl", "5a1c2d3e-0000-4000-8000-00000000c0f1",
			"--resume=5a1c2d3e-0000-4000-8000-00000000c0f1",
			"--output-format\njson\n--resume=5a1c2d3e-0000-4000-8000-00000000c0f1\n--prompt=" + followUp + "\n--stdin--\n",
			"b.txt, it changed last.", transcript.Usage{InputTokens: 2600, OutputTokens: 80, CacheReadTokens: 2000, TotalTokens: 2680}, 2, 0},
	}
	for _, tc := range cases {
		if tc.name == "" {
			tc.name = tc.provider
		}
		t.Run(tc.name, func(t *testing.T) {
			req, argsFile := conversationRequest(t, tc.provider, []string{tc.turn1, tc.turn2}, map[int]string{2: tc.resume})
			c := newCollector(t)
			s, err := NewSession(req, c.emit)
			if err != nil {
				t.Fatal(err)
			}
			first, err := s.Send(context.Background(), req.Prompt)
			if err != nil {
				t.Fatal(err)
			}
			if first.SessionID != tc.session {
				t.Fatalf("turn 1 session = %q, want %q", first.SessionID, tc.session)
			}
			nEvents := len(c.events)
			second, err := s.Send(context.Background(), followUp)
			if err != nil {
				t.Fatal(err)
			}
			if got := readArgs(t, argsFile+".2"); got != tc.wantArgs2 {
				t.Errorf("turn 2 argv = %q\nwant          %q", got, tc.wantArgs2)
			}
			if strings.Contains(readArgs(t, argsFile), "resume") {
				t.Errorf("turn 1 resumed something: %q", readArgs(t, argsFile))
			}
			// Turn 2's own events: its prompt alone (no system prompt),
			// then the provider's reply.
			mu := c.events[nEvents]
			if mu.Type != transcript.MessageUser || len(mu.Message().Blocks) != 1 || mu.Message().Blocks[0].Text != followUp ||
				mu.Message().Blocks[0].Fidelity != transcript.FidelityRouter {
				t.Fatalf("turn 2 message.user = %+v", mu.Payload)
			}
			if m := c.events[0].Message(); len(m.Blocks) != 2 || m.Blocks[1].Text != "Be brief." {
				t.Errorf("turn 1 message.user = %+v", m)
			}
			users := 0
			for _, e := range c.events[nEvents+1:] {
				if e.Type == transcript.MessageUser {
					users++
				}
			}
			if users != 0 || c.events[len(c.events)-1].Type != transcript.MessageAssistant {
				t.Errorf("turn 2 events = %v", c.types()[nEvents:])
			}
			c.checkPairs(t)

			res, err := s.Result()
			if err != nil {
				t.Fatal(err)
			}
			if res.Output != tc.output || second.Output != tc.output || res.SessionID != tc.session || res.Provider != tc.provider {
				t.Errorf("result = %+v", res)
			}
			sum := first.Usage
			sum.Add(second.Usage)
			if res.Usage != sum || (tc.usage != (transcript.Usage{}) && res.Usage != tc.usage) {
				t.Errorf("usage = %+v, want the sum %+v (%+v)", res.Usage, sum, tc.usage)
			}
			if res.Turns != first.Turns+second.Turns || (tc.turns >= 0 && res.Turns != tc.turns) {
				t.Errorf("turns = %d (%d + %d), want %d", res.Turns, first.Turns, second.Turns, tc.turns)
			}
			if tc.cost > 0 && (res.CostUSD == nil || *res.CostUSD < tc.cost-1e-9 || *res.CostUSD > tc.cost+1e-9) {
				t.Errorf("cost = %v, want %v", res.CostUSD, tc.cost)
			}
			if s.UserTurns() != 2 {
				t.Errorf("UserTurns() = %d", s.UserTurns())
			}
			golden.Check(t, filepath.Join("testdata", "golden", "conversation-"+tc.name+".jsonl"), c.render(t))
		})
	}
}

// A third turn resumes the latest session id, and a turn the CLI fails
// (here: the fake does not get the session it insists on) fails Send with
// the CLI's stderr, while the result keeps the earlier turns' usage.
func TestConversationThirdTurnAndFailure(t *testing.T) {
	recs := []string{"claude-tool-json.jsonl", "claude-turn2.jsonl", "claude-turn2.jsonl"}
	resume := "--resume\n5f0c2c1e-1b7a-4c43-9f0e-3d2a1b0c9d8e"
	req, _ := conversationRequest(t, "claude", recs, map[int]string{2: resume, 3: resume})
	c := newCollector(t)
	s := sendAll(t, req, c, req.Prompt, followUp, "And the second riskiest?")
	res, _ := s.Result()
	if res.Usage.OutputTokens != 42+15+15 || res.Turns != 2+1+1 {
		t.Errorf("3-turn result = %+v", res)
	}

	req, _ = conversationRequest(t, "claude", recs[:2], map[int]string{2: "--resume\nsome-other-session"})
	s = sendAll(t, req, newCollector(t), req.Prompt)
	_, err := s.Send(context.Background(), followUp)
	if err == nil || !strings.Contains(err.Error(), "exited with status 96") || !strings.Contains(err.Error(), `expected arguments "--resume`) {
		t.Fatalf("err = %v", err)
	}
	res, _ = s.Result()
	if res.Usage.OutputTokens != 42 || res.Output != "" {
		t.Errorf("result after failed turn = %+v", res)
	}
}

// A provider whose first turn reports no session id cannot be resumed:
// the second turn fails before starting the CLI instead of silently
// opening a fresh session that lacks the context.
func TestConversationWithoutSessionID(t *testing.T) {
	noSession := filepath.Join(t.TempDir(), "codex.jsonl")
	b, err := os.ReadFile(cliTestdata(t, "codex-turn1.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, _ := strings.Cut(string(b), "\n") // drop thread.started
	if err := os.WriteFile(noSession, []byte(rest), 0o644); err != nil {
		t.Fatal(err)
	}
	req, argsFile := conversationRequest(t, "codex", []string{"codex-turn2.jsonl"}, nil)
	req.Env = append(req.Env, "REEL_FAKE_AGENT_REPLAY="+noSession)
	c := newCollector(t)
	s, err := NewSession(req, c.emit)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Send(context.Background(), req.Prompt); err != nil {
		t.Fatal(err)
	}
	_, err = s.Send(context.Background(), followUp)
	if err == nil || !strings.Contains(err.Error(), "turn 2: the previous turn reported no session id") {
		t.Fatalf("err = %v", err)
	}
	if _, serr := os.Stat(argsFile + ".2"); !errors.Is(serr, os.ErrNotExist) {
		t.Errorf("the CLI ran for turn 2: %v", serr)
	}
	// The failed turn's prompt is still recorded, so a reader sees what
	// was asked.
	if last := c.events[len(c.events)-1]; last.Type != transcript.MessageUser || last.Message().Blocks[0].Text != followUp {
		t.Errorf("last event = %+v", last)
	}
}

// With output_format json only the last reply must hold JSON: a
// conversation's earlier turns may talk freely.
func TestConversationJSONOutputIsTheLastTurns(t *testing.T) {
	req, _ := conversationRequest(t, "claude", []string{"claude-turn2.jsonl", "claude-tool-json.jsonl"}, map[int]string{2: "--resume\n5f0c2c1e-1b7a-4c43-9f0e-3d2a1b0c9d8e"})
	req.OutputFormat = "json"
	s, err := NewSession(req, newCollector(t).emit)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{req.Prompt, followUp} {
		if _, err := s.Send(context.Background(), p); err != nil {
			t.Fatal(err)
		}
	}
	res, err := s.Result()
	if err != nil || res.Output != `{"files": ["a.txt", "b.txt"]}` {
		t.Fatalf("result %+v, %v", res, err)
	}
}

// openai_compatible keeps the chat history: the follow-up request carries
// every message of turn 1 (system, user, the assistant's tool calls, the
// tool answers, its final reply) and then the new user message, and the
// events of the two turns follow one another.
func TestConversationOpenAIHistory(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "input.txt"), []byte("hello world\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := newChatServer(t, readTestdata(t, "read-write-1.sse"), readTestdata(t, "read-write-2.sse"), readTestdata(t, "read-write-3.sse"),
		readTestdata(t, "answer-json.sse"))
	c := newCollector(t)
	req := openAIRequest(srv.URL, dir, nil)
	req.OutputFormat = "json"
	s, err := NewSession(req, c.emit)
	if err != nil {
		t.Fatal(err)
	}
	first, err := s.Send(context.Background(), req.Prompt)
	if err != nil {
		t.Fatal(err)
	}
	nEvents := len(c.events)
	second, err := s.Send(context.Background(), "Report what you did as JSON.")
	if err != nil {
		t.Fatal(err)
	}
	if first.Turns != 3 || second.Turns != 1 {
		t.Errorf("model requests per turn = %d, %d", first.Turns, second.Turns)
	}

	prev := srv.request(t, 2)["messages"].([]any)
	msgs := srv.request(t, 3)["messages"].([]any)
	if len(msgs) != len(prev)+2 {
		t.Fatalf("turn 2 sent %d messages, want %d (turn 1's %d, its final reply, the follow-up)", len(msgs), len(prev)+2, len(prev))
	}
	for i := range prev {
		a, _ := json.Marshal(prev[i])
		b, _ := json.Marshal(msgs[i])
		if !bytes.Equal(a, b) {
			t.Errorf("history message %d changed:\n%s\n%s", i, a, b)
		}
	}
	reply := msgs[len(prev)].(map[string]any)
	if reply["role"] != "assistant" || reply["content"] != first.Output || reply["tool_calls"] != nil {
		t.Errorf("turn 1's final reply sent back as %v", reply)
	}
	if u := msgs[len(prev)+1].(map[string]any); u["role"] != "user" || u["content"] != "Report what you did as JSON." {
		t.Errorf("follow-up sent as %v", u)
	}

	if got := c.types()[nEvents:]; len(got) != 2 || got[0] != transcript.MessageUser || got[1] != transcript.MessageAssistant {
		t.Errorf("turn 2 events = %v", got)
	}
	c.checkPairs(t)
	res, err := s.Result()
	if err != nil || res.Output != "{\"files\": 1,\n \"ok\": true}" || res.Turns != 4 ||
		res.Usage.InputTokens != 412+498+560+150 || res.Usage.TotalTokens != first.Usage.TotalTokens+159 {
		t.Errorf("result = %+v, %v", res, err)
	}
}

// A resumed turn's running total counts only its share when it covers the
// earlier turns (codex always; claude when its totals carry the earlier
// process's, as 2.1.332's do), and is kept whole when it is the turn's own
// (claude releases whose modelUsage starts afresh in each process).
func TestRunningTotalShare(t *testing.T) {
	u := func(in, out int64) transcript.Usage {
		return transcript.Usage{InputTokens: in, OutputTokens: out, TotalTokens: in + out}
	}
	f := func(v float64) *float64 { return &v }
	before := runningTotal{usage: u(100, 10), cost: f(1.0), query: &transcript.Usage{InputTokens: 100, OutputTokens: 10}}
	q := u(30, 3)
	for _, tc := range []struct {
		name      string
		turn      runningTotal
		wantUsage transcript.Usage
		wantCost  float64
	}{
		{"claude total covers the earlier process", runningTotal{usage: u(130, 13), cost: f(1.3), query: &q}, u(30, 3), 0.3},
		{"claude total of this process alone", runningTotal{usage: u(130, 13), cost: f(1.3), query: &transcript.Usage{InputTokens: 130, OutputTokens: 13}}, u(130, 13), 1.3},
		{"claude smaller process", runningTotal{usage: u(30, 3), cost: f(0.3), query: &q}, u(30, 3), 0.3},
		{"codex running total", runningTotal{usage: u(130, 13)}, u(30, 3), 1.3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := &transcript.AgentResult{Usage: tc.turn.usage}
			if tc.turn.cost != nil {
				res.CostUSD = f(*tc.turn.cost)
			} else {
				res.CostUSD = f(1.3) // a cost the total does not carry stays
			}
			tc.turn.share(res, before)
			if res.Usage != tc.wantUsage {
				t.Errorf("usage %+v, want %+v", res.Usage, tc.wantUsage)
			}
			if d := *res.CostUSD - tc.wantCost; d > 1e-9 || d < -1e-9 {
				t.Errorf("cost %v, want %v", *res.CostUSD, tc.wantCost)
			}
		})
	}
}
