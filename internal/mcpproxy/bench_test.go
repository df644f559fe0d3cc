package mcpproxy

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/reelhq/reel/internal/tools"
	"github.com/reelhq/reel/transcript"
)

// BenchmarkProxyCall measures one Read through the proxy as an agent
// makes it (the SDK's client over the loopback endpoint, the token
// checked, the ledger tying and recording the pair) beside a plain
// standard-library baseline: a net/http handler that decodes the same
// arguments with encoding/json and calls the same router, emitting
// straight to the recorder's stand-in.
func BenchmarkProxyCall(b *testing.B) {
	dir := b.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "f.txt"), bytes.Repeat([]byte("a line of text\n"), 100), 0o644); err != nil {
		b.Fatal(err)
	}
	nop := func(transcript.ExchangeEvent) error { return nil }
	p, err := Start(context.Background(), Config{InterceptBuiltins: true}, Options{Provider: "claude", Dir: dir, Emit: nop, Env: []string{}})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close("done")
	c := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{
		Endpoint: p.ep.URL, HTTPClient: &http.Client{Transport: headerTransport{"Authorization": "Bearer " + p.ep.Token}},
		MaxRetries: -1, DisableStandaloneSSE: true,
	}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()

	router, err := tools.NewRouter(dir, nop, tools.Options{Env: []string{}})
	if err != nil {
		b.Fatal(err)
	}
	n := 0
	base := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		n++
		out, err := router.Call(r.Context(), req.Name, fmt.Sprint(n), req.Arguments)
		json.NewEncoder(w).Encode(map[string]string{"text": tools.Answer(out, err)})
	}))
	defer base.Close()
	body := []byte(`{"name":"Read","arguments":{"file_path":"f.txt"}}`)

	var proxied, plain time.Duration
	ctx := context.Background()
	for i := 0; b.Loop(); i++ {
		start := time.Now()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "Read", Arguments: map[string]any{"file_path": "f.txt"},
			Meta: mcp.Meta{"claudecode/toolUseId": fmt.Sprintf("toolu_%d", i)}})
		if err != nil || res.IsError {
			b.Fatal(err, res)
		}
		proxied += time.Since(start)

		start = time.Now()
		resp, err := http.Post(base.URL, "application/json", bytes.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		var out map[string]string
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || out["text"] == "" {
			b.Fatal(err)
		}
		resp.Body.Close()
		plain += time.Since(start)
	}
	b.ReportMetric(float64(proxied)/float64(plain), "x-vs-stdlib")
	b.ReportMetric(float64(proxied.Nanoseconds())/float64(b.N), "proxy-ns/op")
	b.ReportMetric(float64(plain.Nanoseconds())/float64(b.N), "stdlib-ns/op")
}

// BenchmarkLedger measures what the ledger adds to recording one call
// whose report reaches it first (codex, gemini, copilot): the agent's
// tool.call held, the router's call tied to it by tool and arguments,
// the pair written, the agent's result dropped. The baseline writes the
// router's pair straight through.
func BenchmarkLedger(b *testing.B) {
	nop := func(transcript.ExchangeEvent) error { return nil }
	names := AgentNames("codex", tools.Definitions())
	in := json.RawMessage(`{"file_path":"internal/pkg/handler.go","offset":10,"limit":200}`)
	var ledger, plain time.Duration
	l := NewLedger(nop, names, time.Hour)
	for i := 0; b.Loop(); i++ {
		id := fmt.Sprintf("item_%d", i)
		start := time.Now()
		l.Agent(transcript.ExchangeEvent{Type: transcript.ToolCall, Payload: &transcript.ToolPayload{Name: "reel.Read", CallID: id, Input: in, Fidelity: transcript.FidelityAgentEmitted}})
		key := l.Open("Read", in, "")
		l.RouterEmit(transcript.ExchangeEvent{Type: transcript.ToolCall, Payload: &transcript.ToolPayload{Name: "Read", CallID: key, Input: in, Fidelity: transcript.FidelityRouter}})
		l.RouterEmit(transcript.ExchangeEvent{Type: transcript.ToolResult, Payload: &transcript.ToolPayload{Name: "Read", CallID: key, Input: in, Output: "x", Fidelity: transcript.FidelityRouter}})
		if err := l.Agent(transcript.ExchangeEvent{Type: transcript.ToolResult, Payload: &transcript.ToolPayload{Name: "reel.Read", CallID: id, Output: "x", Fidelity: transcript.FidelityAgentEmitted}}); err != nil {
			b.Fatal(err)
		}
		ledger += time.Since(start)

		start = time.Now()
		nop(transcript.ExchangeEvent{Type: transcript.ToolCall, Payload: &transcript.ToolPayload{Name: "Read", CallID: id, Input: in, Fidelity: transcript.FidelityRouter}})
		nop(transcript.ExchangeEvent{Type: transcript.ToolResult, Payload: &transcript.ToolPayload{Name: "Read", CallID: id, Input: in, Output: "x", Fidelity: transcript.FidelityRouter}})
		var v any // what a reader would do with the arguments at least once
		json.Unmarshal(in, &v)
		plain += time.Since(start)
	}
	if err := l.Close("done"); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(ledger)/float64(plain), "x-vs-stdlib")
	b.ReportMetric(float64(ledger.Nanoseconds())/float64(b.N), "ledger-ns/op")
	b.ReportMetric(float64(plain.Nanoseconds())/float64(b.N), "stdlib-ns/op")
}
