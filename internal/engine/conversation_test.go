package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/reelhq/reel/transcript"
)

const conversationWorkflow = `
name: conv
inputs:
  - {name: file, type: string, required: true}
states:
  initial: review
  review:
    type: agent
    provider: claude
    prompt: 'Review {{ .inputs.file }}'
    system_prompt: Be brief.
    options: {command: %q}
    conversation:
      - Now list the three riskiest changes.
      - 'Fix the first one: {{ .turn.Output }} (turn {{ .turn.Number }})'
    on_success: after
    on_failure: failed
  after: {type: step, command: 'echo "{{ .states.review.Output }}"'}
  failed: {type: terminal, status: failure}
`

func conversationHarness(t *testing.T) (*harness, string, string) {
	t.Helper()
	fake, err := filepath.Abs("testdata/fake-claude-turns")
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t)
	state := t.TempDir()
	h.e.Environ = append(os.Environ(), "REEL_TEST_TURNS_STATE="+state)
	return h, fmt.Sprintf(conversationWorkflow, fake), state
}

// A three-turn agent step: one step pair holding message.user and the
// replies of each turn in order, every turn resuming the session the
// previous one reported (the fake insists), follow-ups rendered with the
// previous reply, usage and cost summed in the step's result and the run's,
// and the transcript verify-clean (the harness verifies every run).
func TestAgentConversationThreeTurns(t *testing.T) {
	h, wf, state := conversationHarness(t)
	rep := h.run(context.Background(), wf, map[string]string{"file": "main.go"})
	if rep.Status != "success" {
		t.Fatalf("report %+v\n%s", rep, h.display.String())
	}
	assertEvents(t, events(t, rep.TranscriptPath),
		"run.started @0 workflow:conv",
		"step.started review@0 agent:review",
		// Inside a turn, the claude normalizer emits a tool_use's call
		// before the message that carries it.
		"message.user review@0",
		"tool.call review@0",
		"message.assistant review@0",
		"tool.result review@0",
		"message.assistant review@0",
		"message.user review@0",
		"message.assistant review@0",
		"message.user review@0",
		"tool.call review@0",
		"message.assistant review@0",
		"tool.result review@0",
		"message.assistant review@0",
		"step.completed review@0 agent:review",
		"step.started after@0 command:after",
		"step.completed after@0 command:after",
		"run.completed @0 workflow:conv",
	)
	evs := readAll(t, rep.TranscriptPath)
	var prompts [][]string
	var ar transcript.AgentResult
	for _, e := range evs {
		switch {
		case e.Type == transcript.MessageUser:
			var texts []string
			for _, b := range e.Message().Blocks {
				if b.Fidelity != transcript.FidelityRouter {
					t.Errorf("message.user block fidelity %q", b.Fidelity)
				}
				texts = append(texts, b.Text)
			}
			prompts = append(prompts, texts)
		case e.Type == transcript.StepCompleted && e.Path == "review":
			if err := transcript.DecodeResult(e.Step().Result, &ar); err != nil {
				t.Fatal(err)
			}
		}
	}
	want := [][]string{
		{"Review main.go", "Be brief."},
		{"Now list the three riskiest changes."},
		{"Fix the first one: 1. division by zero (turn 3)"},
	}
	if fmt.Sprint(prompts) != fmt.Sprint(want) {
		t.Errorf("prompts = %q\nwant      %q", prompts, want)
	}
	// Usage: the three result lines' totals, cache reads counted inside
	// input; turns: num_turns summed.
	wantUsage := transcript.Usage{InputTokens: 460 + 500 + 1080 + 400, OutputTokens: 30 + 8 + 39, CacheReadTokens: 400, TotalTokens: 460 + 500 + 1080 + 400 + 30 + 8 + 39}
	if ar.Output != "Fixed: main.go now uses safeDiv." || ar.Usage != wantUsage || ar.Turns != 2+1+2 ||
		ar.CostUSD == nil || fmt.Sprintf("%.3f", *ar.CostUSD) != "0.009" || ar.SessionID != "7a1e0c4d-2b3f-4a5e-8c6d-9e0f1a2b3c02" {
		t.Errorf("agent result %+v (cost %v), want usage %+v", ar, ar.CostUSD, wantUsage)
	}
	if rep.Usage != wantUsage {
		t.Errorf("run usage %+v", rep.Usage)
	}
	// The display shows every turn's reply as it completes, numbered.
	display := h.display.String()
	at := 0
	for _, want := range []string{"turn 1/3", "main.go divides by zero().", "turn 2/3", "1. division by zero", "turn 3/3", "Fixed: main.go now uses safeDiv."} {
		i := strings.Index(display[at:], want)
		if i < 0 {
			t.Fatalf("display lacks %q after byte %d:\n%s", want, at, display)
		}
		at += i + len(want)
	}
	var cr transcript.CommandResult
	transcript.DecodeResult(evs[len(evs)-2].Step().Result, &cr)
	if cr.Output != "Fixed: main.go now uses safeDiv.\n" {
		t.Errorf("later step saw %q, want the last turn's output", cr.Output)
	}
	// Turn 1 starts a session, later turns resume it with the system
	// prompt passed again (claude's flag configures one process).
	for n, want := range map[int]string{
		1: "-p\n--output-format\nstream-json\n--verbose\n--append-system-prompt\nBe brief.\n--\nReview main.go\n",
		3: "-p\n--output-format\nstream-json\n--verbose\n--resume\n7a1e0c4d-2b3f-4a5e-8c6d-9e0f1a2b3c02\n--append-system-prompt\nBe brief.\n--\nFix the first one: 1. division by zero (turn 3)\n",
	} {
		b, err := os.ReadFile(filepath.Join(state, fmt.Sprint("args.", n)))
		if err != nil || string(b) != want {
			t.Errorf("turn %d argv %q, %v\nwant %q", n, b, err, want)
		}
	}
}

// A failing turn fails the step: the turns before it stay recorded, the
// step's result carries their usage, and the run takes on_failure.
func TestAgentConversationFailingTurn(t *testing.T) {
	h, wf, _ := conversationHarness(t)
	h.e.Environ = append(h.e.Environ, "REEL_TEST_TURNS_FAIL=2")
	rep := h.run(context.Background(), wf, map[string]string{"file": "main.go"})
	if rep.Status != "failure" {
		t.Fatalf("report %+v", rep)
	}
	got := events(t, rep.TranscriptPath)
	assertEvents(t, got[:9],
		"run.started @0 workflow:conv",
		"step.started review@0 agent:review",
		"message.user review@0",
		"tool.call review@0",
		"message.assistant review@0",
		"tool.result review@0",
		"message.assistant review@0",
		"message.user review@0",
		"step.completed review@0 agent:review !",
	)
	evs := readAll(t, rep.TranscriptPath)
	sc := evs[8].Step()
	var ar transcript.AgentResult
	if err := transcript.DecodeResult(sc.Result, &ar); err != nil || ar.Usage.TotalTokens != 490 {
		t.Errorf("failed step result %+v, %v", ar, err)
	}
	if !strings.Contains(sc.Error, "exited with status 1") || !strings.Contains(sc.Error, "529 overloaded (turn 2)") {
		t.Errorf("step error %q", sc.Error)
	}
}

// A retry attempt starts the conversation over in a fresh session (turn
// 1 without --resume; the fake would refuse a stale id), as its own step
// pair.
func TestAgentConversationRetryStartsOver(t *testing.T) {
	h, wf, state := conversationHarness(t)
	h.e.Environ = append(h.e.Environ, "REEL_TEST_TURNS_FAIL=3")
	wf = strings.Replace(wf, "    on_success: after\n", "    retry: {max_attempts: 2, initial_delay: 0}\n    on_success: after\n", 1)
	rep := h.succeed(wf, map[string]string{"file": "main.go"})
	var users, pairs []string
	for _, e := range events(t, rep.TranscriptPath) {
		switch {
		case strings.HasPrefix(e, "message.user"):
			users = append(users, e)
		case strings.HasPrefix(e, "step.") && strings.Contains(e, "agent:review"):
			pairs = append(pairs, e)
		}
	}
	if len(users) != 6 || strings.Join(pairs, ",") != "step.started review@0 agent:review a1,step.completed review@0 agent:review a1 !,step.started review@0 agent:review a2,step.completed review@0 agent:review a2" {
		t.Fatalf("message.user %d, step pairs %v", len(users), pairs)
	}
	b, err := os.ReadFile(filepath.Join(state, "args.4"))
	if err != nil || strings.Contains(string(b), "--resume") {
		t.Errorf("attempt 2's first turn argv %q, %v", b, err)
	}
}

func TestTurnValue(t *testing.T) {
	v := turnValue("{\"risk\": [\"a\"]}\n", 2)
	if v["Output"] != `{"risk": ["a"]}` || v["Number"] != 2 || fmt.Sprint(v["JSON"]) != "map[risk:[a]]" {
		t.Errorf("JSON reply: %v", v)
	}
	if v := turnValue("plain words\r\n", 3); v["Output"] != "plain words" || v["JSON"] != nil {
		t.Errorf("text reply: %v", v)
	}
}

// A follow-up renders .turn.JSON, a reply that parsed as JSON, as JSON
// (the way AWF prints loop items), never as Go's map[...] form; the
// provider receives exactly that text. The server is a real one on
// loopback that replies JSON to the first message and records the rest.
func TestConversationTurnJSONRendersAsJSON(t *testing.T) {
	var mu sync.Mutex
	var got []string
	reply := func(w http.ResponseWriter, text string) {
		b, _ := json.Marshal(text)
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":%s},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":1,\"completion_tokens\":1,\"total_tokens\":2}}\n\ndata: [DONE]\n\n", b)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Messages []struct {
				Role    string `json:"role"`
				Content string `json:"content"`
			} `json:"messages"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.Messages) == 0 {
			http.Error(w, "bad request", 400)
			return
		}
		mu.Lock()
		n := len(got)
		got = append(got, req.Messages[len(req.Messages)-1].Content)
		mu.Unlock()
		if n == 0 {
			reply(w, `{"risk": ["a", "b"], "n": 1.5}`)
			return
		}
		reply(w, "ok")
	}))
	defer srv.Close()
	h := newHarness(t)
	h.e.Environ = append(os.Environ(), "TEST_OPENAI_KEY=sk-test")
	rep := h.run(context.Background(), fmt.Sprintf(`
name: tj
states:
  initial: ask
  ask:
    type: agent
    provider: openai_compatible
    prompt: List the risks as JSON.
    options: {base_url: %q, model: m, api_key_env: TEST_OPENAI_KEY}
    conversation:
      - 'All: {{ .turn.JSON }} risks: {{ .turn.JSON.risk }} n: {{ .turn.JSON.n }} first: {{ index .turn.JSON.risk 0 }}'
`, srv.URL+"/v1"), nil)
	if rep.Status != "success" {
		t.Fatalf("report %+v\n%s", rep, h.display.String())
	}
	want := []string{"List the risks as JSON.", `All: {"n":1.5,"risk":["a","b"]} risks: ["a","b"] n: 1.5 first: a`}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("the provider received %q\nwant %q", got, want)
	}
	var users []string
	for _, e := range readAll(t, rep.TranscriptPath) {
		if e.Type == transcript.MessageUser {
			users = append(users, e.Message().Blocks[0].Text)
		}
	}
	if fmt.Sprint(users) != fmt.Sprint(want) {
		t.Errorf("message.user events %q\nwant %q", users, want)
	}
}
