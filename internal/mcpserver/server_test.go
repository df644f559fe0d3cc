package mcpserver

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/reelhq/reel/internal/tools"
	"github.com/reelhq/reel/transcript"
)

// recorder keeps the events a router emits.
type recorder struct {
	mu     sync.Mutex
	events []transcript.ExchangeEvent
}

func (r *recorder) emit(ev transcript.ExchangeEvent) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, ev)
	return nil
}

func (r *recorder) tools() []*transcript.ToolPayload {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []*transcript.ToolPayload
	for _, ev := range r.events {
		out = append(out, ev.Tool())
	}
	return out
}

// bearer adds the endpoint's token to every request, as a client
// configured with it does.
type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if b.token != "" {
		r.Header.Set("Authorization", "Bearer "+b.token)
	}
	return http.DefaultTransport.RoundTrip(r)
}

func newServer(t *testing.T, opts Options, ropts tools.Options) (*Server, *recorder, string) {
	t.Helper()
	dir := t.TempDir()
	rec := &recorder{}
	r, err := tools.NewRouter(dir, rec.emit, ropts)
	if err != nil {
		t.Fatal(err)
	}
	s := New(r, opts)
	t.Cleanup(s.Close)
	return s, rec, dir
}

func connectHTTP(t *testing.T, ep *Endpoint, token string) (*mcp.ClientSession, error) {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return c.Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint: ep.URL, HTTPClient: &http.Client{Transport: bearer{token}}, MaxRetries: -1, DisableStandaloneSSE: true,
	}, nil)
}

func call(t *testing.T, cs *mcp.ClientSession, name string, args any, meta mcp.Meta) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args, Meta: meta})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

// Over the loopback endpoint, a client with the token lists the six
// builtin tools with their schemas and MCP hints, and calls each; every
// call is one router pair, under the id the client's _meta names it by
// when it names one.
func TestEndpointServesTheRouter(t *testing.T) {
	s, rec, dir := newServer(t, Options{Version: "test"}, tools.Options{Env: []string{"PATH=" + os.Getenv("PATH"), "SECRET_TOKEN=hunter2"}})
	ep, err := s.Listen()
	if err != nil {
		t.Fatal(err)
	}
	defer ep.Close()
	if !strings.HasPrefix(ep.URL, "http://127.0.0.1:") || len(ep.Token) != 64 {
		t.Fatalf("endpoint %s token %q", ep.URL, ep.Token)
	}
	cs, err := connectHTTP(t, ep, ep.Token)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if got := cs.InitializeResult().ServerInfo.Name; got != Name {
		t.Fatalf("server name %q", got)
	}
	lt, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range lt.Tools {
		names = append(names, tl.Name)
		schema, _ := json.Marshal(tl.InputSchema)
		if !strings.Contains(string(schema), `"type":"object"`) || !strings.Contains(string(schema), `"required"`) {
			t.Errorf("%s schema %s", tl.Name, schema)
		}
		if tl.Annotations == nil || tl.Annotations.ReadOnlyHint != slices.Contains([]string{"Read", "Glob", "Grep"}, tl.Name) {
			t.Errorf("%s annotations %+v", tl.Name, tl.Annotations)
		}
	}
	if strings.Join(names, ",") != "Bash,Edit,Glob,Grep,Read,Write" {
		t.Fatalf("tools %v", names)
	}

	steps := []struct {
		tool string
		args map[string]any
		want string
	}{
		{"Write", map[string]any{"file_path": "a/b.txt", "content": "one\ntwo\n"}, "wrote 8 bytes to a/b.txt"},
		{"Edit", map[string]any{"file_path": "a/b.txt", "old_string": "two", "new_string": "three"}, "replaced 1 occurrence(s) in a/b.txt"},
		{"Read", map[string]any{"file_path": "a/b.txt"}, "one\nthree\n"},
		{"Glob", map[string]any{"pattern": "**/*.txt"}, "a/b.txt"},
		{"Grep", map[string]any{"pattern": "thr"}, "a/b.txt:2:three"},
		{"Bash", map[string]any{"command": "cat a/b.txt; echo \"[$SECRET_TOKEN]\""}, `"output":"one\nthree\n[]\n"`},
	}
	for i, st := range steps {
		var meta mcp.Meta
		if i == 0 {
			meta = mcp.Meta{"claudecode/toolUseId": "toolu_first"}
		}
		res := call(t, cs, st.tool, st.args, meta)
		if res.IsError || !strings.Contains(Text(res), st.want) {
			t.Errorf("%s: error %v, %q, want %q", st.tool, res.IsError, Text(res), st.want)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "a/b.txt")); string(b) != "one\nthree\n" {
		t.Fatalf("file %q", b)
	}
	ps := rec.tools()
	if len(ps) != 2*len(steps) {
		t.Fatalf("%d events, want %d", len(ps), 2*len(steps))
	}
	for i, p := range ps {
		if p.Fidelity != transcript.FidelityRouter || p.Name != steps[i/2].tool || p.CallID != ps[i&^1].CallID {
			t.Errorf("event %d: %+v", i, p)
		}
	}
	if ps[0].CallID != "toolu_first" || ps[2].CallID != "mcp-1" {
		t.Errorf("call ids %s, %s", ps[0].CallID, ps[2].CallID)
	}
}

// Without the token, or with another, nothing answers but 401, and no
// tool runs.
func TestEndpointRefusesWithoutToken(t *testing.T) {
	s, rec, _ := newServer(t, Options{}, tools.Options{})
	ep, err := s.Listen()
	if err != nil {
		t.Fatal(err)
	}
	defer ep.Close()
	for _, tok := range []string{"", "0000", ep.Token + "x"} {
		if cs, err := connectHTTP(t, ep, tok); err == nil {
			cs.Close()
			t.Fatalf("token %q: connected", tok)
		}
	}
	resp, err := http.Post(ep.URL, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"Bash","arguments":{"command":"touch pwned"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("status %d", resp.StatusCode)
	}
	if n := len(rec.tools()); n != 0 {
		t.Fatalf("%d tool events", n)
	}
	ep.Close()
	if _, err := connectHTTP(t, ep, ep.Token); err == nil {
		t.Fatal("connected after Close")
	}
}

// Close cancels a call still running (a Bash that never ends) and waits
// for its result to be recorded.
func TestCloseCancelsRunningCalls(t *testing.T) {
	s, rec, _ := newServer(t, Options{}, tools.Options{})
	ct, st := mcp.NewInMemoryTransports()
	go s.Run(context.Background(), st)
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	done := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "Bash", Arguments: map[string]any{"command": "sleep 600"}})
		done <- err
	}()
	for len(rec.tools()) == 0 {
		time.Sleep(10 * time.Millisecond)
	}
	start := time.Now()
	s.Close()
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("Close took %s", d)
	}
	ps := rec.tools()
	if len(ps) != 2 || !strings.Contains(ps[1].Error, "context canceled") {
		t.Fatalf("events %+v", ps)
	}
	if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "Read", Arguments: map[string]any{"file_path": "x"}}); err == nil {
		t.Fatal("call after Close answered")
	}
}
