// Package mcpserver is reel's MCP server: the second front door of the
// tool router. It serves a tools.Router's builtin tools (Read, Write,
// Edit, Bash, Glob, Grep), and the other tools the router runs (plugin
// operations), to any MCP client with the official Go SDK, so a
// call through MCP runs the same implementation, inside the same
// confinement and with the same environment allow-list as a call from an
// HTTP provider's chat loop, and is recorded by the router the same way:
// one tool.call and one tool.result with fidelity "router".
//
// It decides three things. How a tool is described to a client: its name,
// description and input schema from tools.Definitions, plus MCP's hints
// (Read, Glob and Grep are read-only, Write and Edit destructive, Bash
// open-world). How a result is answered: one text content holding what
// tools.Answer gives the chat loop, with isError set when the tool failed,
// so a model reads the same text whichever door it came through. And
// which id an invocation is recorded under: the id the client names the
// call by in the request's _meta when it sends one (Claude Code's
// "claudecode/toolUseId"), so the router's pair carries the agent's own
// tool id, else one the caller chooses (Options.CallID), else "mcp-<n>".
//
// The server speaks over any SDK transport (stdio for `reel mcp-serve`)
// and over streamable HTTP on a loopback port guarded by a bearer token
// (Listen), for an agent step whose CLI is the only holder of the token.
package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/reelhq/reel/internal/tools"
)

// Name is the server's name in MCP's initialize exchange.
const Name = "reel"

// Options tune a Server. Zero values mean the defaults.
type Options struct {
	// Tools lists the tools served, in order (nil: every builtin tool).
	// The router must run each of them (its Options.Allow, when set,
	// names them all).
	Tools []tools.Definition
	// CallID names an invocation the client sent no id for (nil:
	// "mcp-1", "mcp-2", …, in arrival order). clientID is what the
	// request's _meta names the call by ("" when it names none); the
	// returned id is what the router records the pair under.
	CallID func(tool string, input json.RawMessage, clientID string) string
	// Version is reported to clients in the initialize exchange.
	Version string
	// Instructions are sent to clients in the initialize exchange (MCP's
	// server instructions; Claude Code shows them to the model).
	Instructions string
}

// Server serves a tools.Router over MCP. It is safe for concurrent use:
// the SDK runs each call in its own goroutine, and so may a client.
type Server struct {
	srv    *mcp.Server
	router *tools.Router
	callID func(tool string, input json.RawMessage, clientID string) string
	n      atomic.Int64
	defs   []tools.Definition

	// life ends with Close, cancelling the calls still running.
	life   context.Context
	stop   context.CancelFunc
	mu     sync.Mutex
	closed bool
	calls  sync.WaitGroup
	client string // the name the last client gave in initialize
}

// New returns a server for router's tools.
func New(router *tools.Router, opts Options) *Server {
	s := &Server{router: router, callID: opts.CallID, defs: opts.Tools}
	s.life, s.stop = context.WithCancel(context.Background())
	if s.defs == nil {
		s.defs = tools.Definitions()
	}
	version := opts.Version
	if version == "" {
		version = "dev"
	}
	s.srv = mcp.NewServer(&mcp.Implementation{Name: Name, Title: "reel tool router", Version: version},
		&mcp.ServerOptions{
			Instructions: opts.Instructions,
			Capabilities: &mcp.ServerCapabilities{},
			InitializedHandler: func(_ context.Context, req *mcp.InitializedRequest) {
				if p := req.Session.InitializeParams(); p != nil && p.ClientInfo != nil {
					s.mu.Lock()
					s.client = p.ClientInfo.Name
					s.mu.Unlock()
				}
			},
		})
	for _, d := range s.defs {
		s.srv.AddTool(toolOf(d), s.handler(d.Name))
	}
	return s
}

// Close cancels the calls still running and waits for them to return
// (each records its tool.result, with the cancellation as its error). A
// call arriving after Close is refused. Close is safe to call more than
// once.
func (s *Server) Close() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.stop()
	s.calls.Wait()
}

// begin registers a call, or reports that the server is closed.
func (s *Server) begin() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.calls.Add(1)
	return true
}

// Client returns the name the client gave in MCP's initialize exchange
// ("" before it did).
func (s *Server) Client() string {
	if s == nil {
		return ""
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.client
}

// Tools returns the tools the server lists, in order.
func (s *Server) Tools() []tools.Definition { return s.defs }

// Run serves one client session over t (mcp.StdioTransport for a server
// whose client started it) until the client disconnects or ctx ends.
func (s *Server) Run(ctx context.Context, t mcp.Transport) error {
	if err := s.srv.Run(ctx, t); err != nil && ctx.Err() == nil {
		return fmt.Errorf("mcp server: %w", err)
	}
	return nil
}

func ptr[T any](v T) *T { return &v }

// toolOf describes a tool to MCP clients, with MCP's hints for the
// builtins (a plugin operation gets none: reel cannot tell what it does).
func toolOf(d tools.Definition) *mcp.Tool {
	t := &mcp.Tool{Name: d.Name, Description: d.Description, InputSchema: d.Parameters}
	switch d.Name {
	case "Read", "Glob", "Grep":
		t.Annotations = &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptr(false)}
	case "Write", "Edit":
		t.Annotations = &mcp.ToolAnnotations{DestructiveHint: ptr(true), OpenWorldHint: ptr(false)}
	case "Bash":
		t.Annotations = &mcp.ToolAnnotations{DestructiveHint: ptr(true), OpenWorldHint: ptr(true)}
	}
	return t
}

// clientIDKeys are the _meta keys clients name a call by: the id their
// own stream reports the same call under.
var clientIDKeys = []string{"claudecode/toolUseId"}

// ClientCallID returns the id a tools/call request's _meta names the call
// by, or "".
func ClientCallID(meta map[string]any) string {
	for _, k := range clientIDKeys {
		if id, ok := meta[k].(string); ok && strings.TrimSpace(id) != "" {
			return id
		}
	}
	return ""
}

func (s *Server) handler(name string) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if !s.begin() {
			return nil, errors.New("reel's tool server has stopped: the step is over")
		}
		defer s.calls.Done()
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		defer context.AfterFunc(s.life, cancel)()
		var input json.RawMessage
		var meta map[string]any
		if p := req.Params; p != nil {
			input, meta = p.Arguments, p.Meta
		}
		clientID := ClientCallID(meta)
		id := clientID
		if s.callID != nil {
			id = s.callID(name, input, clientID)
		}
		if id == "" {
			id = fmt.Sprintf("mcp-%d", s.n.Add(1))
		}
		out, err := s.router.Call(ctx, name, id, input)
		if errors.Is(err, tools.ErrRecord) {
			// The tool ran (or was refused) but reel could not write it
			// down: the client learns so, and the step ends on the
			// recorder's error.
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "reel could not record this call: " + err.Error()}}}, nil
		}
		return &mcp.CallToolResult{
			IsError: err != nil,
			Content: []mcp.Content{&mcp.TextContent{Text: tools.Answer(out, err)}},
		}, nil
	}
}

// Text returns what a tool result says to a model: its text contents,
// joined. Clients of the server (and its tests) read answers with it.
func Text(r *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range r.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}
