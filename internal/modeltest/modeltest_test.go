package modeltest

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
)

// recorder is a testing.TB that keeps the server's complaints instead of
// failing the test, for the tests of those complaints.
type recorder struct {
	testing.TB
	errs []string
}

func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, strings.TrimSpace(strings.ReplaceAll(format, "%", "")))
}

// The official OpenAI client streams a scripted Chat Completions tool
// call and its text reply; the server records what it sent.
func TestChatCompletionsWithOfficialClient(t *testing.T) {
	s := New(t,
		Reply{Text: "let me look", ToolCalls: []ToolCall{{Name: "Read", Input: map[string]any{"path": "a.txt"}}}},
		Text("it says hi"),
	)
	client := openai.NewClient(option.WithBaseURL(s.URL+"/v1/"), option.WithAPIKey("k"), option.WithMaxRetries(0))
	tools := []openai.ChatCompletionToolUnionParam{openai.ChatCompletionFunctionTool(openai.FunctionDefinitionParam{Name: "Read"})}
	params := openai.ChatCompletionNewParams{
		Model:    "m1",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.SystemMessage("be brief"), openai.UserMessage("read a.txt")},
		Tools:    tools,
	}
	stream := client.Chat.Completions.NewStreaming(context.Background(), params)
	var acc openai.ChatCompletionAccumulator
	for stream.Next() {
		acc.AddChunk(stream.Current())
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	msg := acc.Choices[0].Message
	if msg.Content != "let me look" || len(msg.ToolCalls) != 1 || msg.ToolCalls[0].Function.Name != "Read" ||
		msg.ToolCalls[0].Function.Arguments != `{"path":"a.txt"}` || acc.Choices[0].FinishReason != "tool_calls" {
		t.Fatalf("first reply: %+v", acc.Choices[0])
	}
	if acc.Usage.PromptTokens == 0 || acc.Usage.CompletionTokens == 0 {
		t.Errorf("usage: %+v", acc.Usage)
	}
	params.Messages = append(params.Messages, msg.ToParam(), openai.ToolMessage("hi", msg.ToolCalls[0].ID))
	resp, err := client.Chat.Completions.New(context.Background(), params)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Choices[0].Message.Content != "it says hi" {
		t.Errorf("second reply: %+v", resp.Choices[0])
	}
	s.CheckDone(t)
	turns := s.Turns()
	if len(turns) != 2 || s.ToolCallsAsked() != 1 {
		t.Fatalf("turns %d, calls %d", len(turns), s.ToolCallsAsked())
	}
	first, second := turns[0], turns[1]
	if first.API != Chat || first.Model != "m1" || first.System != "be brief" || first.LastUserText() != "read a.txt" ||
		!first.HasTool("Read") || !first.Stream || second.Stream {
		t.Errorf("first request: %+v", first)
	}
	res := second.ToolResults()
	if len(res) != 1 || res[0].CallID != msg.ToolCalls[0].ID || res[0].Output != "hi" {
		t.Errorf("tool results: %+v", res)
	}
}

// The official client reads a scripted Responses stream: a function
// call, then text after the function_call_output.
func TestResponsesWithOfficialClient(t *testing.T) {
	s := New(t, Call("exec_command", map[string]any{"cmd": "ls"}), Text("two files"))
	client := openai.NewClient(option.WithBaseURL(s.URL+"/v1/"), option.WithAPIKey("k"), option.WithMaxRetries(0))
	params := responses.ResponseNewParams{
		Model:        "gpt-x",
		Instructions: openai.String("you are codex"),
		Input:        responses.ResponseNewParamsInputUnion{OfString: openai.String("list files")},
		Tools:        []responses.ToolUnionParam{{OfFunction: &responses.FunctionToolParam{Name: "exec_command", Parameters: map[string]any{"type": "object"}}}},
	}
	stream := client.Responses.NewStreaming(context.Background(), params)
	var done responses.Response
	for stream.Next() {
		if e := stream.Current(); e.Type == "response.completed" {
			done = e.Response
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if len(done.Output) != 1 || done.Output[0].Type != "function_call" || done.Output[0].Name != "exec_command" ||
		done.Output[0].Arguments.OfString != `{"cmd":"ls"}` || done.Usage.InputTokens == 0 {
		t.Fatalf("completed: %+v", done)
	}
	callID := done.Output[0].CallID
	output := responses.ResponseInputItemParamOfFunctionCallOutput("a\nb")
	output.OfFunctionCallOutput.CallID = openai.String(callID)
	params.Input = responses.ResponseNewParamsInputUnion{OfInputItemList: responses.ResponseInputParam{
		responses.ResponseInputItemParamOfMessage("list files", responses.EasyInputMessageRoleUser),
		responses.ResponseInputItemParamOfFunctionCall(`{"cmd":"ls"}`, callID, "exec_command"),
		output,
	}}
	resp, err := client.Responses.New(context.Background(), params)
	if err != nil {
		t.Fatal(err)
	}
	if resp.OutputText() != "two files" {
		t.Errorf("second reply %q", resp.OutputText())
	}
	s.CheckDone(t)
	r := s.Turns()[1]
	if r.API != Responses || r.System != "you are codex" || len(r.ToolResults()) != 1 || r.ToolResults()[0].Output != "a\nb" {
		t.Errorf("second request: %+v", r)
	}
}

// sseEvents posts body and returns the data of each event.
func sseEvents(t *testing.T, url, body string) []map[string]any {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("status %d, content type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	var out []map[string]any
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			var m map[string]any
			if err := json.Unmarshal([]byte(d), &m); err != nil {
				t.Fatalf("event %q: %v", d, err)
			}
			out = append(out, m)
		}
	}
	return out
}

// The Anthropic stream carries a tool_use block whose input arrives as
// input_json_delta, and stops for tool_use; the next request's
// tool_result is matched to it.
func TestAnthropicMessagesStream(t *testing.T) {
	s := New(t, Reply{Text: "writing", ToolCalls: []ToolCall{{ID: "toolu_1", Name: "Write", Input: map[string]any{"file_path": "a"}}}}, Text("done"))
	events := sseEvents(t, s.URL+"/v1/messages?beta=true", `{"model":"claude-x","stream":true,"system":[{"type":"text","text":"sys"}],
		"tools":[{"name":"Write"}],"messages":[{"role":"user","content":"go"}]}`)
	var types []string
	var partial string
	for _, e := range events {
		types = append(types, e["type"].(string))
		if d, ok := e["delta"].(map[string]any); ok && d["type"] == "input_json_delta" {
			partial = d["partial_json"].(string)
		}
	}
	want := "message_start content_block_start content_block_delta content_block_stop content_block_start content_block_delta content_block_stop message_delta message_stop"
	if strings.Join(types, " ") != want {
		t.Errorf("events %v", types)
	}
	if partial != `{"file_path":"a"}` {
		t.Errorf("partial_json %q", partial)
	}
	if d := events[len(events)-2]["delta"].(map[string]any); d["stop_reason"] != "tool_use" {
		t.Errorf("stop_reason %v", d["stop_reason"])
	}
	resp, err := http.Post(s.URL+"/v1/messages", "application/json", strings.NewReader(`{"model":"claude-x","tools":[{"name":"Write"}],
		"messages":[{"role":"user","content":"go"},{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"Write","input":{}}]},
		{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":[{"type":"text","text":"ok"}],"is_error":true}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	var msg struct {
		Content []struct{ Type, Text string }
		Stop    string `json:"stop_reason"`
	}
	json.NewDecoder(resp.Body).Decode(&msg)
	resp.Body.Close()
	if len(msg.Content) != 1 || msg.Content[0].Text != "done" || msg.Stop != "end_turn" {
		t.Errorf("non-streamed reply %+v", msg)
	}
	s.CheckDone(t)
	turns := s.Turns()
	if turns[0].System != "sys" || turns[0].Model != "claude-x" {
		t.Errorf("first request %+v", turns[0])
	}
	if r := turns[1].ToolResults(); len(r) != 1 || r[0].CallID != "toolu_1" || !r[0].IsError || r[0].Output != "ok" {
		t.Errorf("tool results %+v", r)
	}
}

// Gemini's stream answers with a functionCall part carrying the call's
// id; the model comes from the path.
func TestGeminiStream(t *testing.T) {
	s := New(t, Call("write_file", map[string]any{"file_path": "a"}), Text("done"))
	events := sseEvents(t, s.URL+"/v1beta/models/gemini-x:streamGenerateContent?alt=sse", `{"contents":[{"role":"user","parts":[{"text":"go"}]}],
		"systemInstruction":{"parts":[{"text":"sys"}]},"tools":[{"functionDeclarations":[{"name":"write_file"}]}]}`)
	if len(events) != 1 {
		t.Fatalf("%d events", len(events))
	}
	js, _ := json.Marshal(events[0])
	if !strings.Contains(string(js), `"functionCall":{"args":{"file_path":"a"},"id":"call_gemini_1","name":"write_file"}`) {
		t.Errorf("event %s", js)
	}
	sseEvents(t, s.URL+"/v1beta/models/gemini-x:streamGenerateContent?alt=sse", `{"contents":[{"role":"user","parts":[{"text":"go"}]},
		{"role":"model","parts":[{"functionCall":{"id":"call_gemini_1","name":"write_file","args":{}}}]},
		{"role":"user","parts":[{"functionResponse":{"id":"call_gemini_1","name":"write_file","response":{"output":"written"}}}]}],
		"tools":[{"functionDeclarations":[{"name":"write_file"}]}]}`)
	s.CheckDone(t)
	turns := s.Turns()
	if turns[0].Model != "gemini-x" || turns[0].System != "sys" {
		t.Errorf("first request %+v", turns[0])
	}
	if r := turns[1].ToolResults(); len(r) != 1 || r[0].Output != "written" || r[0].Name != "write_file" {
		t.Errorf("tool results %+v", r)
	}
}

// A request without tools is auxiliary (a title, a quota probe): it gets
// "ok" and leaves the script alone. A conversation request that lacks a
// tool result, or comes after the script ended, fails the test.
func TestAuxiliaryAndScriptMistakes(t *testing.T) {
	rec := &recorder{TB: t}
	s := New(rec, Call("Bash", map[string]any{"command": "true"}))
	post := func(body string) {
		resp, err := http.Post(s.URL+"/v1/messages", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	post(`{"model":"haiku","messages":[{"role":"user","content":"title this"}]}`)
	if s.Served() != 0 || len(s.Requests()) != 1 || s.Requests()[0].Turn != -1 {
		t.Fatalf("auxiliary request took a turn: served %d", s.Served())
	}
	post(`{"model":"m","tools":[{"name":"Bash"}],"messages":[{"role":"user","content":"go"}]}`)
	post(`{"model":"m","tools":[{"name":"Bash"}],"messages":[{"role":"user","content":"go"}]}`)
	if len(rec.errs) != 2 || !strings.Contains(rec.errs[0], "lacks the result") || !strings.Contains(rec.errs[1], "past the end") {
		t.Errorf("complaints: %q", rec.errs)
	}
}

// A client that uses the server as its proxy for anything beyond it is
// refused, and the attempt recorded.
func TestProxyEscapesAreRecorded(t *testing.T) {
	rec := &recorder{TB: t}
	s := New(rec)
	proxy, _ := url.Parse(s.URL)
	client := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(proxy)}}
	if resp, err := client.Get("http://example.invalid/telemetry"); err == nil {
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("status %d", resp.StatusCode)
		}
	}
	if _, err := client.Get("https://example.invalid/update"); err == nil {
		t.Error("CONNECT through the server succeeded")
	}
	if got := strings.Join(s.Escapes(), ", "); got != "GET example.invalid, CONNECT example.invalid:443" {
		t.Errorf("escapes %q", got)
	}
	s.CheckDone(rec)
	if len(rec.errs) != 1 || !strings.Contains(rec.errs[0], "tried the internet") {
		t.Errorf("complaints %q", rec.errs)
	}
}

// A scripted API error reaches the official client as one, with its
// status and message.
func TestScriptedAPIError(t *testing.T) {
	s := New(t, Fail(400, "prompt is too long: 9999999 tokens"))
	client := openai.NewClient(option.WithBaseURL(s.URL+"/v1/"), option.WithAPIKey("k"), option.WithMaxRetries(0))
	_, err := client.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{
		Model:    "m",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")},
		Tools:    []openai.ChatCompletionToolUnionParam{openai.ChatCompletionFunctionTool(openai.FunctionDefinitionParam{Name: "Read"})},
	})
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 400 || !strings.Contains(apiErr.Message, "prompt is too long") {
		t.Fatalf("err %v", err)
	}
	s.CheckDone(t)
	if u := s.ServedUsage(); u != (Usage{}) {
		t.Errorf("an error reply spent %+v", u)
	}
}
