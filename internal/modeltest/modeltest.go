// Package modeltest runs a scripted model server on loopback for tests
// that drive the real agent CLIs (claude, codex, gemini, opencode, …) and
// reel's own HTTP providers without a model: one real HTTP server that
// speaks, streaming as the CLIs use them, Anthropic's Messages API,
// OpenAI's Responses and Chat Completions APIs and Gemini's
// generateContent and streamGenerateContent.
//
// A test scripts the conversation turn by turn: each model request that
// belongs to the agent's conversation takes the next Reply, which answers
// with text or asks for tool calls; the request after a tool-calling reply
// must carry a result for every call asked for, or the test fails. The
// server records every request it got, decoded into one shape whatever the
// API (model, system prompt, messages, tools offered, tool results), so a
// test can assert what the CLI sent and count the tool calls it was asked
// to make.
//
// The CLIs also send requests of their own that are no part of the
// conversation (a title for the session, a quota probe, a routing
// classifier): Server.Conversation decides which requests take a scripted
// turn (by default, those offering tools); the others get Server.Aux's
// reply and are recorded all the same.
package modeltest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// API names the wire protocol of a request.
type API string

const (
	Anthropic API = "anthropic" // POST /v1/messages
	Responses API = "responses" // POST /v1/responses (OpenAI)
	Chat      API = "chat"      // POST /v1/chat/completions (OpenAI)
	Gemini    API = "gemini"    // POST /v1beta/models/M:generateContent, :streamGenerateContent
)

// Reply is one scripted model turn: text, tool calls, or both (the text
// comes first, as models write it).
type Reply struct {
	Text      string
	ToolCalls []ToolCall
	// Usage is what the reply reports; zero values get small defaults
	// (the request's size for input, the reply's for output).
	Usage Usage
	// Status, when not 0 or 200, makes the reply an API error with that
	// HTTP status and Error as its message, in the API's error shape.
	Status int
	Error  string
}

// ToolCall is a tool the model asks for. ID is generated when empty.
// Input is the tool's arguments (marshalled to JSON); for an OpenAI custom
// (freeform) tool such as codex's apply_patch it is the raw input string.
type ToolCall struct {
	ID    string
	Name  string
	Input any
}

// Usage is a reply's token counts.
type Usage struct {
	InputTokens, OutputTokens, CacheReadTokens int
}

// Text is a reply with text only.
func Text(s string) Reply { return Reply{Text: s} }

// Fail is an API error reply with the given HTTP status (400, 401, 403,
// 404, 429 and 5xx get the APIs' own error kinds). Clients retry some:
// Claude Code 2.1.332 retries a 400 and not a 403, codex 0.171.0 the
// other way round.
func Fail(status int, message string) Reply { return Reply{Status: status, Error: message} }

// Call is a reply asking for one tool call.
func Call(name string, input any) Reply {
	return Reply{ToolCalls: []ToolCall{{Name: name, Input: input}}}
}

// Request is a request the server got, decoded whatever its API.
type Request struct {
	API    API
	Method string
	// Path is the URL path and query.
	Path   string
	Header http.Header
	Body   []byte
	Model  string
	System string
	Stream bool
	// Tools are the names of the tools offered, in order.
	Tools    []string
	Messages []Message
	// Turn is the index of the scripted reply this request got, or -1
	// for an auxiliary request (Server.Aux answered it).
	Turn int

	// toolKinds maps a Responses tool's name to its type (function,
	// custom), so a call to a custom tool is answered as one.
	toolKinds map[string]string
	// namespaced maps the qualified name of a tool inside a Responses
	// namespace to the namespace and the tool's own name.
	namespaced map[string][2]string
}

// Message is one message of a request's conversation. Role is user,
// assistant or tool (a tool result message of Chat Completions).
type Message struct {
	Role        string
	Text        string
	ToolCalls   []ToolCall
	ToolResults []ToolResult
}

// ToolResult is a tool's output the client sent back.
type ToolResult struct {
	CallID  string
	Name    string // when the API carries it (Gemini, Responses custom tools do not always)
	Output  string
	IsError bool
}

// HasTool reports whether the request offered a tool named name.
func (r *Request) HasTool(name string) bool {
	for _, t := range r.Tools {
		if t == name {
			return true
		}
	}
	return false
}

// ToolResults returns every tool result the request carries, in order.
func (r *Request) ToolResults() []ToolResult {
	var out []ToolResult
	for _, m := range r.Messages {
		out = append(out, m.ToolResults...)
	}
	return out
}

// UserTexts returns the text of every user message, in order.
func (r *Request) UserTexts() []string {
	var out []string
	for _, m := range r.Messages {
		if m.Role == "user" && m.Text != "" {
			out = append(out, m.Text)
		}
	}
	return out
}

// LastUserText is the text of the last user message that has any.
func (r *Request) LastUserText() string {
	u := r.UserTexts()
	if len(u) == 0 {
		return ""
	}
	return u[len(u)-1]
}

// Server is a scripted model server on loopback. Set its fields before the
// first request.
type Server struct {
	// URL is the server's base URL, http://127.0.0.1:PORT, without a
	// path: each client wants its own suffix (ANTHROPIC_BASE_URL none,
	// OpenAI clients /v1), and the server answers any prefix.
	URL string
	// Conversation reports whether a request is a turn of the agent's
	// conversation, which takes the next scripted reply. The default
	// takes the requests that offer at least one tool.
	Conversation func(*Request) bool
	// Aux answers the other requests. The default replies "ok", and for a
	// Gemini request that asks for JSON, the JSON gemini-cli's checks
	// expect (the next speaker is the user; the simple model is fine).
	Aux func(*Request) Reply

	t      testing.TB
	srv    *httptest.Server
	mu     sync.Mutex
	script []Reply
	next   int
	// pending are the tool calls of the last scripted reply, whose
	// results the next conversation request must carry.
	pending  []ToolCall
	requests []*Request
	ids      int
	// escapes are the hosts a client tried to reach through the server
	// as its proxy.
	escapes []string
}

// New starts a server on 127.0.0.1 that answers the conversation's
// requests with script, in order, and stops when the test ends. Requests
// past the end of the script fail the test and get an error reply.
func New(t testing.TB, script ...Reply) *Server {
	t.Helper()
	s := &Server{t: t, script: script}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.srv.URL
	t.Cleanup(s.srv.Close)
	return s
}

// Add appends replies to the script (for a later turn of a conversation).
func (s *Server) Add(replies ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.script = append(s.script, replies...)
}

// Requests returns every request received so far, auxiliary ones
// included.
func (s *Server) Requests() []*Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*Request(nil), s.requests...)
}

// Turns returns the requests that took a scripted reply, in order.
func (s *Server) Turns() []*Request {
	var out []*Request
	for _, r := range s.Requests() {
		if r.Turn >= 0 {
			out = append(out, r)
		}
	}
	return out
}

// Served reports how many scripted replies were served.
func (s *Server) Served() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.next
}

// ToolCallsAsked counts the tool calls of the scripted replies served so
// far.
func (s *Server) ToolCallsAsked() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, r := range s.script[:s.next] {
		n += len(r.ToolCalls)
	}
	return n
}

// ServedUsage adds up the usage the scripted replies served so far
// reported: what a CLI that counts every model call once reports for the
// conversation.
func (s *Server) ServedUsage() Usage {
	s.mu.Lock()
	defer s.mu.Unlock()
	var u Usage
	for _, r := range s.script[:s.next] {
		u.InputTokens += r.Usage.InputTokens
		u.OutputTokens += r.Usage.OutputTokens
		u.CacheReadTokens += r.Usage.CacheReadTokens
	}
	return u
}

// Escapes lists the requests that tried to leave the machine through the
// server as a proxy (CLI.Env makes it every CLI's HTTP and HTTPS proxy):
// "CONNECT host:port" or "GET host".
func (s *Server) Escapes() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.escapes...)
}

// CheckDone fails the test unless every scripted reply was served, the
// results of the last one's tool calls came back and nothing tried to
// reach the internet through the server.
func (s *Server) CheckDone(t testing.TB) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.escapes) > 0 {
		t.Errorf("model server: the client tried the internet: %s", strings.Join(s.escapes, ", "))
	}
	if s.next < len(s.script) {
		t.Errorf("model server: %d of %d scripted replies served", s.next, len(s.script))
	}
	if len(s.pending) > 0 {
		t.Errorf("model server: the results of %d tool call(s) never came back (%s …)", len(s.pending), s.pending[0].Name)
	}
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodConnect || r.URL.IsAbs() && r.URL.Host != strings.TrimPrefix(s.URL, "http://") {
		s.mu.Lock()
		s.escapes = append(s.escapes, r.Method+" "+r.Host)
		s.mu.Unlock()
		http.Error(w, "modeltest: no internet here", http.StatusForbidden)
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	req := &Request{Method: r.Method, Path: r.URL.RequestURI(), Header: r.Header.Clone(), Body: body, Turn: -1}
	var h handler
	switch p := r.URL.Path; {
	case r.Method == http.MethodPost && strings.HasSuffix(p, "/messages/count_tokens"):
		s.record(req)
		writeJSON(w, map[string]any{"input_tokens": len(body) / 4})
		return
	case r.Method == http.MethodPost && strings.HasSuffix(p, "/messages"):
		req.API, h = Anthropic, anthropicAPI{}
	case r.Method == http.MethodPost && strings.HasSuffix(p, "/responses"):
		req.API, h = Responses, responsesAPI{}
	case r.Method == http.MethodPost && strings.HasSuffix(p, "/chat/completions"):
		req.API, h = Chat, chatAPI{}
	case r.Method == http.MethodPost && strings.Contains(p, "/models/") && strings.HasSuffix(p, ":countTokens"):
		s.record(req)
		writeJSON(w, map[string]any{"totalTokens": len(body) / 4})
		return
	case r.Method == http.MethodPost && strings.Contains(p, "/models/") &&
		(strings.HasSuffix(p, ":generateContent") || strings.HasSuffix(p, ":streamGenerateContent")):
		req.API, h = Gemini, geminiAPI{}
		req.Stream = strings.HasSuffix(p, ":streamGenerateContent")
		req.Model = strings.TrimPrefix(p[strings.Index(p, "/models/")+len("/models/"):strings.LastIndex(p, ":")], "models/")
	default:
		// Model lists and the like: recorded, answered empty, so a CLI
		// that looks things up does not retry.
		s.record(req)
		if r.Method == http.MethodGet && strings.HasSuffix(p, "/models") {
			writeJSON(w, map[string]any{"object": "list", "data": []any{}, "models": []any{}})
			return
		}
		http.NotFound(w, r)
		return
	}
	if err := h.decode(req); err != nil {
		s.record(req)
		s.t.Errorf("model server: %s %s: %v", r.Method, req.Path, err)
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	reply := s.take(req)
	if reply.Status != 0 && reply.Status != http.StatusOK {
		writeError(w, req.API, reply.Status, reply.Error)
		return
	}
	h.write(w, req, reply)
}

// writeError answers with an API error in the shape of api.
func writeError(w http.ResponseWriter, api API, status int, msg string) {
	// The error kinds the APIs name for each status.
	kind, gstatus := "invalid_request_error", "INVALID_ARGUMENT"
	switch status {
	case http.StatusUnauthorized:
		kind, gstatus = "authentication_error", "UNAUTHENTICATED"
	case http.StatusForbidden:
		kind, gstatus = "permission_error", "PERMISSION_DENIED"
	case http.StatusNotFound:
		kind, gstatus = "not_found_error", "NOT_FOUND"
	case http.StatusTooManyRequests:
		kind, gstatus = "rate_limit_error", "RESOURCE_EXHAUSTED"
	}
	if status >= 500 {
		kind, gstatus = "api_error", "INTERNAL"
	}
	var body any
	switch api {
	case Anthropic:
		body = map[string]any{"type": "error", "error": map[string]any{"type": kind, "message": msg}}
	case Gemini:
		body = map[string]any{"error": map[string]any{"code": status, "message": msg, "status": gstatus}}
	default:
		body = map[string]any{"error": map[string]any{"message": msg, "type": kind, "code": nil, "param": nil}}
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(body)
}

// take records req and picks its reply: the next scripted one for a
// conversation request, the auxiliary one for the others.
func (s *Server) take(req *Request) Reply {
	conv := s.Conversation
	if conv == nil {
		conv = func(r *Request) bool { return len(r.Tools) > 0 }
	}
	if !conv(req) {
		s.record(req)
		if s.Aux != nil {
			return fill(req, s.Aux(req))
		}
		return fill(req, defaultAux(req))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, req)
	s.checkResults(req)
	if s.next >= len(s.script) {
		s.t.Errorf("model server: conversation request %d past the end of the script (%d replies); last user text %q",
			s.next+1, len(s.script), req.LastUserText())
		s.pending = nil
		return Text("(the model server's script has ended)")
	}
	req.Turn = s.next
	r := s.script[s.next]
	for i := range r.ToolCalls {
		if r.ToolCalls[i].ID == "" {
			s.ids++
			r.ToolCalls[i].ID = fmt.Sprintf("call_%s_%d", req.API, s.ids)
		}
	}
	r = fill(req, r)
	s.script[s.next] = r
	s.next++
	s.pending = r.ToolCalls
	return r
}

// checkResults fails the test when req lacks the result of a tool call
// the previous scripted reply asked for. Called with s.mu held.
func (s *Server) checkResults(req *Request) {
	if len(s.pending) == 0 {
		return
	}
	got := req.ToolResults()
	for _, c := range s.pending {
		found := false
		for _, r := range got {
			if r.CallID == c.ID || r.CallID == "" && r.Name == c.Name {
				found = true
				break
			}
		}
		if !found {
			s.t.Errorf("model server: request %s lacks the result of tool call %s (%s); it carries %d result(s)", req.Path, c.ID, c.Name, len(got))
		}
	}
	s.pending = nil
}

func (s *Server) record(req *Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, req)
}

// fill gives a reply its default usage.
func fill(req *Request, r Reply) Reply {
	if r.Status != 0 && r.Status != http.StatusOK {
		return r // an error spends nothing
	}
	if r.Usage.InputTokens == 0 {
		r.Usage.InputTokens = len(req.Body)/4 + 1
	}
	if r.Usage.OutputTokens == 0 {
		n := len(r.Text) / 4
		for _, c := range r.ToolCalls {
			n += len(inputJSON(c.Input)) / 4
		}
		r.Usage.OutputTokens = n + 1
	}
	return r
}

// defaultAux answers a request that is no part of the conversation.
func defaultAux(req *Request) Reply {
	if req.API == Gemini && bytes.Contains(req.Body, []byte(`"responseMimeType":"application/json"`)) {
		// gemini-cli's next-speaker check and model router ask for JSON.
		return Text(`{"reasoning":"scripted","next_speaker":"user","model_choice":"flash"}`)
	}
	return Text("ok")
}

// handler is one API's wire format.
type handler interface {
	// decode fills req's decoded fields from req.Body.
	decode(req *Request) error
	// write sends reply in the API's shape, streamed when req.Stream.
	write(w http.ResponseWriter, req *Request, reply Reply)
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

// sse writes server-sent events, flushing each.
type sse struct{ w http.ResponseWriter }

func newSSE(w http.ResponseWriter) sse {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	return sse{w}
}

// event writes one event; name "" leaves the event line out.
func (s sse) event(name string, data any) {
	var b bytes.Buffer
	if name != "" {
		fmt.Fprintf(&b, "event: %s\n", name)
	}
	js, _ := json.Marshal(data)
	fmt.Fprintf(&b, "data: %s\n\n", js)
	s.w.Write(b.Bytes())
	if f, ok := s.w.(http.Flusher); ok {
		f.Flush()
	}
}

func (s sse) raw(line string) {
	io.WriteString(s.w, line)
	if f, ok := s.w.(http.Flusher); ok {
		f.Flush()
	}
}

// inputJSON is a tool call's input as JSON text (a string input as it is,
// for freeform tools).
func inputJSON(v any) string {
	switch x := v.(type) {
	case nil:
		return "{}"
	case string:
		return x
	case json.RawMessage:
		return string(x)
	}
	js, err := json.Marshal(v)
	if err != nil {
		return "{}"
	}
	return string(js)
}

// inputObject is a tool call's input as a JSON object value.
func inputObject(v any) json.RawMessage {
	s := inputJSON(v)
	if !json.Valid([]byte(s)) || !strings.HasPrefix(strings.TrimSpace(s), "{") {
		js, _ := json.Marshal(map[string]any{"input": s})
		return js
	}
	return json.RawMessage(s)
}

// textOf joins the text of a content value that is either a string or a
// list of parts with a text field.
func textOf(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return ""
	}
	var b []string
	for _, p := range parts {
		if p.Text != "" {
			b = append(b, p.Text)
		}
	}
	return strings.Join(b, "\n")
}
