package agent

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reelhq/reel/internal/golden"
	"github.com/reelhq/reel/internal/testfixtures"
	"github.com/reelhq/reel/internal/tools"
	"github.com/reelhq/reel/transcript"
)

// chatServer is an OpenAI-compatible endpoint that answers the n-th chat
// request with the n-th recorded stream, written in real SSE framing and
// flushed event by event.
type chatServer struct {
	*httptest.Server
	mu       sync.Mutex
	streams  [][]byte
	requests []map[string]any
	headers  []http.Header
}

func newChatServer(t *testing.T, streams ...[]byte) *chatServer {
	t.Helper()
	s := &chatServer{streams: streams}
	s.Server = httptest.NewServer(http.HandlerFunc(s.handle))
	t.Cleanup(s.Close)
	return s
}

func (s *chatServer) handle(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/chat/completions" || r.Method != http.MethodPost {
		http.Error(w, `{"error":{"message":"no route `+r.URL.Path+`"}}`, http.StatusNotFound)
		return
	}
	body, _ := io.ReadAll(r.Body)
	var req map[string]any
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, "bad json", http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	n := len(s.requests)
	s.requests = append(s.requests, req)
	s.headers = append(s.headers, r.Header.Clone())
	s.mu.Unlock()
	if n >= len(s.streams) {
		http.Error(w, `{"error":{"message":"unexpected request","type":"test"}}`, http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	fl := w.(http.Flusher)
	for _, ev := range sseEvents(s.streams[n]) {
		if _, err := io.WriteString(w, ev); err != nil {
			return
		}
		fl.Flush()
	}
}

// sseEvents splits a recording into SSE events. A recording in raw SSE
// framing is kept as is; a chunks file (one JSON payload per line, framing
// stripped, as in the shared fixtures) is framed and ended with [DONE].
func sseEvents(rec []byte) []string {
	var out []string
	if bytes.HasPrefix(rec, []byte("data:")) {
		for ev := range strings.SplitAfterSeq(string(rec), "\n\n") {
			if ev != "" {
				out = append(out, ev)
			}
		}
		return out
	}
	sc := bufio.NewScanner(bytes.NewReader(rec))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if line := strings.TrimSpace(sc.Text()); line != "" {
			out = append(out, "data: "+line+"\n\n")
		}
	}
	return append(out, "data: [DONE]\n\n")
}

func readTestdata(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "openai", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func (s *chatServer) request(t *testing.T, i int) map[string]any {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if i >= len(s.requests) {
		t.Fatalf("only %d requests", len(s.requests))
	}
	return s.requests[i]
}

func openAIRequest(base, dir string, opts map[string]any) Request {
	o := map[string]any{"base_url": base + "/v1", "model": "qwen2.5-coder-7b-instruct"}
	for k, v := range opts {
		o[k] = v
	}
	return Request{
		Provider:     "openai_compatible",
		Prompt:       "Uppercase input.txt into out/result.txt.",
		SystemPrompt: "You are a careful file editor.",
		Options:      o,
		Dir:          dir,
		Env:          []string{"PATH=" + os.Getenv("PATH")},
	}
}

// The model asks for Read, then Write, then answers: the router runs both
// tools for real, the file appears on disk, and the event sequence matches
// the golden file.
func TestOpenAIToolLoopChangesFiles(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "input.txt"), []byte("hello world\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := newChatServer(t, readTestdata(t, "read-write-1.sse"), readTestdata(t, "read-write-2.sse"), readTestdata(t, "read-write-3.sse"))
	c := newCollector(t)
	res, err := Run(context.Background(), openAIRequest(srv.URL, dir, nil), c.emit)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(dir, "out", "result.txt"))
	if err != nil || string(got) != "HELLO WORLD\n" {
		t.Fatalf("out/result.txt = %q, %v", got, err)
	}
	if res.Output != "Done: out/result.txt now holds HELLO WORLD." || res.Turns != 3 || res.Provider != "openai_compatible" ||
		res.Model != "qwen2.5-coder-7b-instruct" {
		t.Errorf("result = %+v", res)
	}
	wantUsage := transcript.Usage{InputTokens: 412 + 498 + 560, OutputTokens: 31 + 44 + 12, CacheReadTokens: 128 + 412 + 498,
		ReasoningTokens: 17, TotalTokens: 412 + 498 + 560 + 31 + 44 + 12}
	if res.Usage != wantUsage {
		t.Errorf("usage = %+v, want %+v", res.Usage, wantUsage)
	}
	if fid := c.checkPairs(t); fid[transcript.FidelityRouter] != 2 || fid[transcript.FidelityAgentEmitted] != 0 {
		t.Errorf("tool calls by fidelity = %v", fid)
	}
	golden.Check(t, filepath.Join("testdata", "golden", "openai-read-write.jsonl"), c.render(t))

	// What went over the wire: tools advertised, usage requested, the
	// system prompt first, and each tool's answer sent back by call id.
	first := srv.request(t, 0)
	if so, _ := first["stream_options"].(map[string]any); so["include_usage"] != true || first["stream"] != true {
		t.Errorf("stream options = %v, stream = %v", first["stream_options"], first["stream"])
	}
	var names []string
	for _, tl := range first["tools"].([]any) {
		names = append(names, tl.(map[string]any)["function"].(map[string]any)["name"].(string))
	}
	if strings.Join(names, ",") != "Read,Write,Edit,Bash,Glob,Grep" {
		t.Errorf("tools = %v", names)
	}
	msgs := srv.request(t, 2)["messages"].([]any)
	roles := []string{}
	for _, m := range msgs {
		roles = append(roles, m.(map[string]any)["role"].(string))
	}
	if strings.Join(roles, ",") != "system,user,assistant,tool,assistant,tool" {
		t.Errorf("roles = %v", roles)
	}
	readAnswer := msgs[3].(map[string]any)
	if readAnswer["tool_call_id"] != "call_read_1" || readAnswer["content"] != "hello world\n" {
		t.Errorf("Read answer = %v", readAnswer)
	}
	asst := msgs[2].(map[string]any)
	call := asst["tool_calls"].([]any)[0].(map[string]any)["function"].(map[string]any)
	if call["arguments"] != `{"file_path":"input.txt"}` || asst["content"] != "I'll read the input first." {
		t.Errorf("assistant turn sent back = %v", asst)
	}
	if h := srv.headers[0].Get("Authorization"); h != "" {
		t.Errorf("Authorization sent without a key: %q", h)
	}
}

// Real recorded chunks: grok's reasoning_content and a call to a tool reel
// does not serve, then gpt-4.1-nano's long text answer.
func TestOpenAIRecordedFixtures(t *testing.T) {
	fx := testfixtures.Dir(t, "openai-chat-stream")
	xai, err := os.ReadFile(filepath.Join(fx, "xai-tool-call.chunks.txt"))
	if err != nil {
		t.Fatal(err)
	}
	text, err := os.ReadFile(filepath.Join(fx, "openai-text.chunks.txt"))
	if err != nil {
		t.Fatal(err)
	}
	// The expected answer, concatenated independently of the SDK.
	var want strings.Builder
	for line := range strings.SplitSeq(string(text), "\n") {
		var ch struct {
			Choices []struct {
				Delta struct{ Content string } `json:"delta"`
			} `json:"choices"`
		}
		if strings.TrimSpace(line) == "" {
			continue
		}
		if err := json.Unmarshal([]byte(line), &ch); err != nil {
			t.Fatal(err)
		}
		for _, c := range ch.Choices {
			want.WriteString(c.Delta.Content)
		}
	}
	srv := newChatServer(t, xai, text)
	c := newCollector(t)
	res, err := Run(context.Background(), openAIRequest(srv.URL, t.TempDir(), nil), c.emit)
	if err != nil {
		t.Fatal(err)
	}
	wantTypes := []transcript.EventType{transcript.MessageUser, transcript.MessageAssistant, transcript.ToolCall, transcript.ToolResult, transcript.MessageAssistant}
	if got := c.types(); !equalTypes(got, wantTypes) {
		t.Fatalf("events = %v, want %v", got, wantTypes)
	}
	first := c.events[1].Message().Blocks
	if len(first) != 2 || first[0].Type != transcript.BlockThinking || first[0].Thinking == "" ||
		first[1].Type != transcript.BlockToolUse || first[1].ToolName != "weather" || first[1].ToolID != "call_79382389" {
		t.Fatalf("first assistant message = %+v", first)
	}
	if in, _ := json.Marshal(first[1].ToolInput); string(in) != `{"location":"San Francisco"}` {
		t.Errorf("tool_use input = %s", in)
	}
	if r := c.events[3].Tool(); !strings.Contains(r.Error, "unknown tool") || r.Fidelity != transcript.FidelityRouter {
		t.Errorf("tool.result = %+v", r)
	}
	if res.Output != want.String() || !strings.HasPrefix(res.Output, "**Holiday Name:**") {
		t.Errorf("output = %.100q…, want %.100q…", res.Output, want.String())
	}
	if res.Model != "gpt-4.1-nano-2025-04-14" || res.Usage.InputTokens != 307+16 || res.Usage.OutputTokens != 26+300 ||
		res.Usage.CacheReadTokens != 306 || res.Usage.ReasoningTokens != 227 {
		t.Errorf("result = %+v", res)
	}
	// The unknown tool's error went back to the model.
	msgs := srv.request(t, 1)["messages"].([]any)
	if last := msgs[len(msgs)-1].(map[string]any); !strings.HasPrefix(last["content"].(string), "error: unknown tool \"weather\"") {
		t.Errorf("tool answer = %v", last)
	}
}

func equalTypes(a, b []transcript.EventType) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestOpenAIParallelCallsRunInOrder(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("say hello\n"), 0o644)
	srv := newChatServer(t, readTestdata(t, "parallel-1.sse"), readTestdata(t, "answer-json.sse"))
	c := newCollector(t)
	req := openAIRequest(srv.URL, dir, nil)
	req.OutputFormat = "json"
	res, err := Run(context.Background(), req, c.emit)
	if err != nil {
		t.Fatal(err)
	}
	if res.Output != "{\"files\": 1,\n \"ok\": true}" {
		t.Errorf("json output = %q", res.Output)
	}
	var ids []string
	for _, e := range c.events {
		if e.Type == transcript.ToolResult {
			ids = append(ids, e.Tool().CallID+"="+e.Tool().Output.(string))
		}
	}
	if strings.Join(ids, "|") != "call_glob=a.txt|call_grep=a.txt:1:say hello\n" {
		t.Errorf("results = %q", ids)
	}
}

func TestOpenAIAPIKeyFromEnv(t *testing.T) {
	srv := newChatServer(t, readTestdata(t, "read-write-3.sse"), readTestdata(t, "read-write-3.sse"))
	req := openAIRequest(srv.URL, t.TempDir(), nil)
	req.Env = append(req.Env, "OPENAI_API_KEY=sk-default", "MY_KEY=sk-mine")
	if _, err := Run(context.Background(), req, newCollector(t).emit); err != nil {
		t.Fatal(err)
	}
	req.Options["api_key_env"] = "MY_KEY"
	if _, err := Run(context.Background(), req, newCollector(t).emit); err != nil {
		t.Fatal(err)
	}
	if a, b := srv.headers[0].Get("Authorization"), srv.headers[1].Get("Authorization"); a != "Bearer sk-default" || b != "Bearer sk-mine" {
		t.Errorf("Authorization = %q, %q", a, b)
	}
}

func TestOpenAIHTTPErrorIsClear(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		io.WriteString(w, `{"error":{"message":"Incorrect API key provided: sk-bad","type":"invalid_request_error","code":"invalid_api_key"}}`)
	}))
	defer srv.Close()
	c := newCollector(t)
	res, err := Run(context.Background(), openAIRequest(srv.URL, t.TempDir(), map[string]any{"max_retries": 0}), c.emit)
	if err == nil || !strings.Contains(err.Error(), "HTTP 401: Incorrect API key provided") || !strings.Contains(err.Error(), srv.URL+"/v1/chat/completions") {
		t.Fatalf("err = %v", err)
	}
	if res == nil || res.Provider != "openai_compatible" {
		t.Errorf("partial result = %+v", res)
	}
	if got := c.types(); len(got) != 1 || got[0] != transcript.MessageUser {
		t.Errorf("events = %v", got)
	}
}

func TestOpenAITruncatedStreamFails(t *testing.T) {
	srv := newChatServer(t, readTestdata(t, "truncated.sse"))
	c := newCollector(t)
	res, err := Run(context.Background(), openAIRequest(srv.URL, t.TempDir(), nil), c.emit)
	if err == nil || !strings.Contains(err.Error(), "stream ended before the model finished") {
		t.Fatalf("err = %v", err)
	}
	// The partial answer is kept in the transcript and the result.
	if got := c.types(); len(got) != 2 || c.events[1].Message().Blocks[0].Text != "Partial ans" || res.Output != "Partial ans" {
		t.Errorf("events = %v, result = %+v", got, res)
	}
}

func TestOpenAIMaxTurns(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "input.txt"), []byte("x"), 0o644)
	srv := newChatServer(t, readTestdata(t, "read-write-1.sse"), readTestdata(t, "read-write-1.sse"))
	c := newCollector(t)
	_, err := Run(context.Background(), openAIRequest(srv.URL, dir, map[string]any{"max_turns": 2}), c.emit)
	if !errors.Is(err, ErrMaxTurns) {
		t.Fatalf("err = %v", err)
	}
	// Both turns had a Read call with the same provider id; pairs still
	// balance per invocation because each turn's call runs once.
	if n := len(srv.requests); n != 2 {
		t.Errorf("%d requests, want 2", n)
	}
}

// A cancelled step stops a stalled stream promptly.
func TestOpenAICancelStopsStream(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, `data: {"id":"x","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"thinking about it"}}]}`+"\n\n")
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer srv.Close()
	defer close(release)
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	start := time.Now()
	c := newCollector(t)
	_, err := Run(ctx, openAIRequest(srv.URL, t.TempDir(), nil), c.emit)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %s", d)
	}
	if got := c.types(); len(got) != 2 || c.events[1].Message().Blocks[0].Text != "thinking about it" {
		t.Errorf("events = %v", got)
	}
}

func TestOpenAIRecordFailureStops(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "input.txt"), []byte("x"), 0o644)
	srv := newChatServer(t, readTestdata(t, "read-write-1.sse"))
	c := newCollector(t)
	c.failAt = 3 // message.user, message.assistant, then tool.call fails
	_, err := Run(context.Background(), openAIRequest(srv.URL, dir, nil), c.emit)
	if !errors.Is(err, tools.ErrRecord) {
		t.Fatalf("err = %v", err)
	}
}

func TestOpenAIOptionErrors(t *testing.T) {
	cases := []struct {
		opts map[string]any
		want string
	}{
		{map[string]any{"model": ""}, "options.model is required"},
		{map[string]any{"base_url": "ftp://x"}, "want an http or https URL"},
		{map[string]any{"max_turns": "many"}, "options.max_turns: want an integer"},
		{map[string]any{"max_turns": 0}, "want 1..1000"},
		{map[string]any{"temperature": []int{1}}, "options.temperature: want a number"},
		{map[string]any{"tools": []any{"Read", "Rm"}}, `unknown tool "Rm"`},
	}
	for _, tc := range cases {
		c := newCollector(t)
		_, err := Run(context.Background(), openAIRequest("http://127.0.0.1:1", t.TempDir(), tc.opts), c.emit)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: err = %v, want %q", tc.opts, err, tc.want)
		}
		if len(c.events) != 0 {
			t.Errorf("%v: a configuration error recorded events", tc.opts)
		}
	}
}

func TestOpenAIToolSubsetAndParams(t *testing.T) {
	srv := newChatServer(t, readTestdata(t, "read-write-3.sse"))
	opts := map[string]any{"tools": []any{"Read", "Grep"}, "temperature": 0.2, "max_tokens": 256}
	if _, err := Run(context.Background(), openAIRequest(srv.URL, t.TempDir(), opts), newCollector(t).emit); err != nil {
		t.Fatal(err)
	}
	req := srv.request(t, 0)
	if len(req["tools"].([]any)) != 2 || req["temperature"] != 0.2 || req["max_tokens"] != float64(256) {
		t.Errorf("request = tools %v temperature %v max_tokens %v", req["tools"], req["temperature"], req["max_tokens"])
	}
}

// A step that times out while a tool runs: the running Bash is killed and
// recorded with its error, the call the model asked for next is closed as
// dangling, and nothing after the timeout touches the disk.
func TestOpenAITimeoutDuringTools(t *testing.T) {
	dir := t.TempDir()
	srv := newChatServer(t, readTestdata(t, "slow-bash.sse"))
	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	c := newCollector(t)
	start := time.Now()
	_, err := Run(ctx, openAIRequest(srv.URL, dir, nil), c.emit)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %s", d)
	}
	want := []transcript.EventType{transcript.MessageUser, transcript.MessageAssistant,
		transcript.ToolCall, transcript.ToolResult, transcript.ToolCall, transcript.ToolResult}
	if got := c.types(); !equalTypes(got, want) {
		t.Fatalf("events = %v", got)
	}
	if r := c.events[3].Tool(); r.CallID != "call_sleep" || r.Error == "" {
		t.Errorf("Bash result = %+v", r)
	}
	if r := c.events[5].Tool(); r.CallID != "call_save" || r.Error != "no result: context deadline exceeded" || r.Fidelity != transcript.FidelityRouter {
		t.Errorf("dangling Write result = %+v", r)
	}
	if _, err := os.Stat(filepath.Join(dir, "never.txt")); !os.IsNotExist(err) {
		t.Error("a tool ran after the step timed out")
	}
	c.checkPairs(t)
}

// A model calling a builtin tool the step did not offer gets a refusal, and
// the tool does not run.
func TestOpenAIToolNotOffered(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "input.txt"), []byte("hello world\n"), 0o644)
	srv := newChatServer(t, readTestdata(t, "read-write-2.sse"), readTestdata(t, "read-write-3.sse"))
	c := newCollector(t)
	if _, err := Run(context.Background(), openAIRequest(srv.URL, dir, map[string]any{"tools": []any{"Read"}}), c.emit); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "out", "result.txt")); !os.IsNotExist(err) {
		t.Error("Write ran although only Read was offered")
	}
	if r := c.events[3].Tool(); r.Name != "Write" || !strings.Contains(r.Error, "not enabled for this step") {
		t.Errorf("tool.result = %+v", r)
	}
}

// Without options.base_url the endpoint comes from the variable the
// provider's SDKs read (ANTHROPIC_BASE_URL for anthropic, OPENAI_BASE_URL
// for openai_compatible); options.base_url wins over it, and a bad value
// is named by where it came from.
func TestOpenAIBaseURLFromEnv(t *testing.T) {
	srv := newChatServer(t, readTestdata(t, "read-write-3.sse"), readTestdata(t, "read-write-3.sse"))
	req := openAIRequest(srv.URL, t.TempDir(), nil)
	delete(req.Options, "base_url")
	req.Provider = "anthropic"
	req.Env = append(req.Env, "ANTHROPIC_BASE_URL="+srv.URL+"/v1/", "ANTHROPIC_API_KEY=sk-ant", "OPENAI_BASE_URL=http://127.0.0.1:1/v1")
	if _, err := Run(context.Background(), req, newCollector(t).emit); err != nil {
		t.Fatal(err)
	}
	if a := srv.headers[0].Get("Authorization"); a != "Bearer sk-ant" {
		t.Errorf("Authorization = %q", a)
	}

	req.Provider = "openai_compatible"
	req.Options["base_url"] = srv.URL + "/v1"
	if _, err := Run(context.Background(), req, newCollector(t).emit); err != nil {
		t.Fatalf("options.base_url should win over $OPENAI_BASE_URL: %v", err)
	}

	delete(req.Options, "base_url")
	req.Env = append(req.Env, "OPENAI_BASE_URL=localhost:8080")
	_, err := Run(context.Background(), req, newCollector(t).emit)
	if err == nil || !strings.Contains(err.Error(), `$OPENAI_BASE_URL "localhost:8080": want an http or https URL`) {
		t.Errorf("err = %v", err)
	}
}
