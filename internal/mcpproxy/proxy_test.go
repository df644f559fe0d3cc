package mcpproxy

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/reelhq/reel/internal/mcpserver"
	"github.com/reelhq/reel/transcript"
)

// headerTransport sends the headers a CLI's MCP configuration names.
type headerTransport map[string]string

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h {
		r.Header.Set(k, v)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// claudeClient connects to the proxy the way claude does: from the
// server entry of the file --mcp-config names.
func claudeClient(t *testing.T, p *Proxy) *mcp.ClientSession {
	t.Helper()
	i := -1
	for j, a := range p.Args {
		if a == "--mcp-config" {
			i = j + 1
		}
	}
	if i < 0 {
		t.Fatalf("no --mcp-config in %q", p.Args)
	}
	b, err := os.ReadFile(p.Args[i])
	if err != nil {
		t.Fatal(err)
	}
	var conf struct {
		MCPServers map[string]struct {
			Type, URL string
			Headers   map[string]string
		} `json:"mcpServers"`
	}
	if err := json.Unmarshal(b, &conf); err != nil {
		t.Fatal(err)
	}
	srv := conf.MCPServers[ServerName]
	if srv.Type != "http" || srv.URL == "" {
		t.Fatalf("server entry %+v", srv)
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "claude-code", Version: "test"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{
		Endpoint: srv.URL, HTTPClient: &http.Client{Transport: headerTransport(srv.Headers)}, MaxRetries: -1, DisableStandaloneSSE: true,
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func startClaudeProxy(t *testing.T, dir string, s *sink, o Options) *Proxy {
	t.Helper()
	o.Provider, o.Dir, o.Emit = "claude", dir, s.emit
	if o.Env == nil {
		o.Env = []string{"PATH=" + os.Getenv("PATH")}
	}
	p, err := Start(context.Background(), Config{InterceptBuiltins: true}, o)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// The wiring's files are private, the token is on no command line, and
// Close takes the endpoint and the files away.
func TestProxyLifecycle(t *testing.T) {
	s := &sink{}
	p := startClaudeProxy(t, t.TempDir(), s, Options{})
	cfg := p.Args[1]
	st, err := os.Stat(cfg)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("config %v %v", st, err)
	}
	if dst, err := os.Stat(filepath.Dir(cfg)); err != nil || dst.Mode().Perm() != 0o700 {
		t.Fatalf("config dir %v %v", dst, err)
	}
	token := p.ep.Token
	if strings.Contains(strings.Join(p.Args, " "), token) {
		t.Fatal("token on the command line")
	}
	want := []string{"--mcp-config", cfg, "--strict-mcp-config", "--tools", "", "--allowedTools", "mcp__reel"}
	if strings.Join(p.Args, "|") != strings.Join(want, "|") {
		t.Fatalf("args %q", p.Args)
	}
	cs := claudeClient(t, p)
	if res := call(t, cs, "Write", map[string]any{"file_path": "x", "content": "1"}); res.IsError {
		t.Fatal(mcpserver.Text(res))
	}
	url := p.ep.URL
	if err := p.Close("done"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Dir(cfg)); !os.IsNotExist(err) {
		t.Fatalf("wiring left behind: %v", err)
	}
	req, _ := http.NewRequest("POST", url, strings.NewReader("{}"))
	req.Header.Set("Authorization", "Bearer "+token)
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
		t.Fatalf("endpoint still answers: %d", resp.StatusCode)
	}
	if got := s.lines(); len(got) != 2 || !strings.HasPrefix(got[0], "tool.call router mcp_") {
		t.Fatalf("recorded %q", got)
	}
}

func call(t *testing.T, cs *mcp.ClientSession, name string, args any) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

// A hostile agent through the proxy: each attempt is refused or bounded
// as the router promises, answered with the error, and recorded as one
// router pair carrying it.
func TestProxyHostileAgent(t *testing.T) {
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "secret"), []byte("s3cr3t"), 0o600)
	dir := t.TempDir()
	if err := os.Symlink(filepath.Join(outside, "secret"), filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o600); err != nil {
		t.Fatal(err)
	}
	big, err := os.Create(filepath.Join(dir, "big"))
	if err != nil {
		t.Fatal(err)
	}
	if err := big.Truncate(1 << 30); err != nil { // 1 GB, sparse
		t.Fatal(err)
	}
	big.Close()
	os.WriteFile(filepath.Join(dir, "huge.txt"), []byte(strings.Repeat("line of text\n", 200000)), 0o600)

	s := &sink{}
	// No agent stream reports these calls: they wait for Close, which
	// writes them in arrival order.
	p := startClaudeProxy(t, dir, s, Options{BashTimeout: 2 * time.Second, Grace: time.Hour})
	cs := claudeClient(t, p)
	cases := []struct {
		tool     string
		args     map[string]any
		errWant  string // in the recorded error; "" for a bounded success
		textWant string
	}{
		{"Read", map[string]any{"file_path": "../" + filepath.Base(outside) + "/secret"}, "outside the working directory", ""},
		{"Read", map[string]any{"file_path": filepath.Join(outside, "secret")}, "outside the working directory", ""},
		{"Write", map[string]any{"file_path": "/etc/reel-pwned", "content": "x"}, "outside the working directory", ""},
		{"Read", map[string]any{"file_path": "link"}, "outside the working directory", ""},
		{"Write", map[string]any{"file_path": "link", "content": "overwritten"}, "outside the working directory", ""},
		{"Read", map[string]any{"file_path": "fifo"}, "not a regular file", ""},
		{"Read", map[string]any{"file_path": "big"}, "binary file", ""},
		{"Read", map[string]any{"file_path": "huge.txt"}, "", "[truncated: file is 2600000 bytes, only the first 262144 were read]"},
		{"Bash", map[string]any{"command": "sleep 600"}, "Bash: timed out after 2s", ""},
		{"Bash", map[string]any{"command": "yes"}, "Bash: timed out after 2s", "[output truncated:"},
	}
	for _, c := range cases {
		start := time.Now()
		res := call(t, cs, c.tool, c.args)
		if d := time.Since(start); d > 20*time.Second {
			t.Errorf("%s %v took %s", c.tool, c.args, d)
		}
		if res.IsError != (c.errWant != "") || !strings.Contains(mcpserver.Text(res), c.errWant) || !strings.Contains(mcpserver.Text(res), c.textWant) {
			t.Errorf("%s %v: isError %v, answer %.300q", c.tool, c.args, res.IsError, mcpserver.Text(res))
		}
	}
	if err := p.Close("done"); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(outside, "secret")); string(b) != "s3cr3t" {
		t.Fatalf("outside file changed: %q", b)
	}
	if _, err := os.Stat("/etc/reel-pwned"); err == nil {
		t.Fatal("wrote outside")
	}
	if len(s.events) != 2*len(cases) {
		t.Fatalf("%d events for %d calls: %q", len(s.events), len(cases), s.lines())
	}
	for i, c := range cases {
		call, res := s.events[2*i].Tool(), s.events[2*i+1].Tool()
		if s.events[2*i].Type != transcript.ToolCall || s.events[2*i+1].Type != transcript.ToolResult ||
			call.CallID != res.CallID || call.Name != c.tool || res.Fidelity != transcript.FidelityRouter {
			t.Fatalf("pair %d: %+v / %+v", i, call, res)
		}
		if !strings.Contains(res.Error, c.errWant) || (c.errWant == "") != (res.Error == "") {
			t.Errorf("%s %v recorded error %q, want %q", c.tool, c.args, res.Error, c.errWant)
		}
		if out, _ := json.Marshal(res.Output); len(out) > 600<<10 {
			t.Errorf("%s %v recorded %d bytes of output", c.tool, c.args, len(out))
		}
	}
}
