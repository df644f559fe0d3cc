package mcpserver

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/reelhq/reel/transcript"
)

// Endpoint is a Server listening on a loopback port for clients that hold
// its token. The token is the only credential: it is made fresh for each
// endpoint, sent by the client as "Authorization: Bearer <token>", and
// dies with Close. Requests without it get 401 and reach no tool.
type Endpoint struct {
	// URL is the MCP endpoint, http://127.0.0.1:<port>/mcp.
	URL string
	// Token is the bearer token clients must send.
	Token string

	hs        *http.Server
	done      chan struct{}
	closeOnce sync.Once
	serveErr  error
}

// Listen serves s on a fresh loopback port until Close. The port is the
// kernel's choice and the token 256 random bits.
func (s *Server) Listen() (*Endpoint, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("mcp server: listen on loopback: %w", err)
	}
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		ln.Close()
		return nil, fmt.Errorf("mcp server: token: %w", err)
	}
	token := hex.EncodeToString(raw)
	mcpHandler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.srv }, &mcp.StreamableHTTPOptions{
		// A Write's content travels in the request: allow what a
		// transcript line can hold, not the SDK's 4 MiB.
		MaxRequestBodyBytes: transcript.DefaultMaxLineSize,
	})
	verify := func(_ context.Context, got string, _ *http.Request) (*auth.TokenInfo, error) {
		if subtle.ConstantTimeCompare([]byte(got), []byte(token)) != 1 {
			return nil, auth.ErrInvalidToken
		}
		return &auth.TokenInfo{}, nil
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", auth.RequireBearerToken(verify, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})(mcpHandler))
	e := &Endpoint{
		URL:   "http://" + ln.Addr().String() + "/mcp",
		Token: token,
		hs:    &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second},
		done:  make(chan struct{}),
	}
	go func() {
		defer close(e.done)
		if err := e.hs.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			e.serveErr = err
		}
	}()
	return e, nil
}

// Close stops the endpoint: the listener closes, connections are cut and
// calls still running see their context cancelled. It waits for the
// server to stop and is safe to call more than once.
func (e *Endpoint) Close() error {
	e.closeOnce.Do(func() {
		e.hs.Close()
		<-e.done
	})
	return e.serveErr
}
