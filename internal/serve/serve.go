// Package serve is reel serve: a local, read-only web app over a storage
// directory. Pages: the run list with filters (/), a run (/runs/{id}),
// search (/search?q=), the comparison of two runs (/diff/{a}/{b}); beside
// them a JSON API (/api/runs, /api/runs/{id}) and a run's events as
// Server-Sent Events (/api/runs/{id}/events?from=SEQ), live until
// run.completed and resumable with Last-Event-ID.
//
// What it decides. It binds to loopback unless told otherwise, and any
// other address needs a token, checked on every request (Authorization:
// Bearer, or a cookie set by opening a page once with ?token=); without
// one it refuses to start. On loopback without a token it still refuses
// requests whose Host is not a loopback name, so a web page elsewhere
// cannot reach it through DNS rebinding. Every response carries a Content
// Security Policy that allows only the app's own embedded assets. It reads
// transcripts and the run index and writes nothing but the index. The
// event stream is built on runs.Run.Follow, which reads the file from the
// requested seq and then waits for it to grow, so a page never misses an
// event whatever the writer's fan-out dropped. A run page reads each
// transcript once.
package serve

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/reelhq/reel/internal/awfapi"
	"github.com/reelhq/reel/internal/engine"
	"github.com/reelhq/reel/internal/index"
	"github.com/reelhq/reel/internal/launch"
	"github.com/reelhq/reel/internal/pricing"
	"github.com/reelhq/reel/internal/runs"
	"github.com/reelhq/reel/internal/safefile"
	"github.com/reelhq/reel/internal/webview"
	"github.com/reelhq/reel/transcript"
)

// DefaultAddr is where reel serve listens unless told otherwise.
const DefaultAddr = "127.0.0.1:7419"

// Options configure a Server.
type Options struct {
	Storage string
	// Addr is the listen address (DefaultAddr when empty).
	Addr string
	// Token, when set, is required on every request. It must be set for a
	// non-loopback Addr.
	Token string
	// Poll is how often a live event stream looks for new lines when the
	// system does not signal writes to its transcript (default 20ms).
	Poll time.Duration
	// Rescan is how often the index is compared with every transcript,
	// catching runs appended to after they ended (default 30s).
	Rescan time.Duration
	Log    *slog.Logger
	Limits transcript.Limits
	// Prices price the steps whose provider reported no cost in the run
	// list (pricing.Default() when nil).
	Prices *pricing.Table
	// Engine finds, loads and runs the project's workflows: the AWF API's
	// workflow routes and the web view's start page read its catalog.
	// Nil serves runs only (no workflow routes).
	Engine *engine.Engine
	// AllowRuns turns on the routes and pages that start, cancel and
	// resume runs (with Engine); Defaults are the project configuration's
	// inputs they start runs with.
	AllowRuns bool
	Defaults  map[string]any
}

// ErrTokenRequired is returned for a non-loopback address without a token.
var ErrTokenRequired = errors.New("a token is required")

// CheckAddr refuses a listen address that is not loopback when no token
// guards it.
func CheckAddr(addr, token string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("address %q: %w", addr, err)
	}
	if token != "" || isLoopback(host) {
		return nil
	}
	where := host
	if where == "" {
		where = "every interface"
	}
	return fmt.Errorf("%w to listen on %s (%s is not loopback): transcripts hold prompts, code and secrets; set --token or REEL_TOKEN, or listen on 127.0.0.1", ErrTokenRequired, addr, where)
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

// Server serves one storage directory.
type Server struct {
	opts     Options
	runs     *runs.Store
	ix       *index.Index
	views    *webview.Views
	log      *slog.Logger
	launcher *launch.Launcher // nil unless runs are allowed
}

// New opens the storage's run index (building it when needed) and parses
// the views.
func New(ctx context.Context, opts Options) (*Server, error) {
	if opts.Addr == "" {
		opts.Addr = DefaultAddr
	}
	if err := CheckAddr(opts.Addr, opts.Token); err != nil {
		return nil, err
	}
	if opts.Poll <= 0 {
		opts.Poll = 20 * time.Millisecond
	}
	if opts.Rescan <= 0 {
		opts.Rescan = 30 * time.Second
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	views, err := webview.New()
	if err != nil {
		return nil, err
	}
	if err := safefile.CheckPlain(index.Files(opts.Storage)...); err != nil {
		return nil, fmt.Errorf("run index: %w", err)
	}
	ix, err := index.Open(ctx, opts.Storage, index.WithPrices(opts.Prices), index.OnRepair(func(damage error) {
		opts.Log.Warn("run index rebuilt from the transcripts", "damage", damage)
	}))
	if err != nil {
		return nil, err
	}
	store := runs.NewStore(opts.Storage, runs.Options{Limits: opts.Limits, Poll: opts.Poll})
	s := &Server{opts: opts, runs: store, ix: ix, views: views, log: opts.Log}
	if opts.AllowRuns {
		if opts.Engine == nil {
			ix.Close()
			return nil, errors.New("allowing runs needs an engine")
		}
		s.launcher = launch.New(launch.Config{Engine: opts.Engine, Defaults: opts.Defaults, OnEnd: s.indexRun})
	}
	return s, nil
}

// indexRun puts a run the launcher ended into the index at once.
func (s *Server) indexRun(r *launch.Run) {
	if r.Transcript == "" {
		return
	}
	if _, err := s.ix.Update(context.Background(), r.Transcript); err != nil {
		s.log.Warn("index the run", "run", r.ID, "err", err)
	}
}

// Launcher is the server's run launcher; nil unless runs are allowed.
func (s *Server) Launcher() *launch.Launcher { return s.launcher }

// Close cancels the runs the server started, waits for them to end
// (cancelled, resumable) and closes the index.
func (s *Server) Close() error {
	if s.launcher != nil {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := s.launcher.Close(ctx, errors.New("reel serve stopped")); err != nil {
			s.log.Warn("runs still going at exit", "err", err)
		}
	}
	return s.ix.Close()
}

// RunsOff is what the running routes answer on a server started without
// them.
const RunsOff = "starting, cancelling and resuming runs is off: start reel serve with --allow-runs (or --awf)"

// Handler is the whole app: routes, security headers and the token check.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", s.list)
	mux.HandleFunc("GET /runs/{id}", s.run)
	mux.HandleFunc("GET /runs/{id}/overview", s.overview)
	mux.HandleFunc("GET /search", s.search)
	mux.HandleFunc("GET /diff/{a}/{b}", s.diff)
	mux.HandleFunc("GET /api/runs", s.apiRuns)
	mux.HandleFunc("GET /api/runs/{id}", s.apiRun)
	mux.HandleFunc("GET /api/runs/{id}/events", s.apiEvents)
	mux.HandleFunc("GET /api/search", s.apiSearch)
	if s.opts.Engine != nil {
		mux.HandleFunc("GET /workflows", s.workflows)
		mux.HandleFunc("POST /workflows/run", s.startRun)
		mux.HandleFunc("POST /runs/{id}/cancel", s.cancelRun)
		mux.HandleFunc("POST /runs/{id}/resume", s.resumeRun)
		awfapi.Register(mux, awfapi.Options{Engine: s.opts.Engine, Launcher: s.launcher, Index: s.ix, Limits: s.opts.Limits, Poll: s.opts.Poll, RunsOff: RunsOff})
	}
	assets, _ := fs.Sub(webview.Assets, "assets")
	mux.Handle("GET /assets/", http.StripPrefix("/assets/", http.FileServerFS(assets)))
	return s.guard(mux)
}

// csp allows the app's own style sheet and script only; style attributes
// (the timeline's bar positions, computed here, never taken from a
// transcript) are the one inline exception.
const csp = "default-src 'none'; style-src 'self'; style-src-attr 'unsafe-inline'; script-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

const tokenCookie = "reel_token"

func (s *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", csp)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		if crossSite(r) {
			http.Error(w, "reel serve refuses requests that change something from another site (Origin "+r.Header.Get("Origin")+")", http.StatusForbidden)
			return
		}
		if s.opts.Token == "" {
			host := r.Host
			if hh, _, err := net.SplitHostPort(host); err == nil {
				host = hh
			}
			if !isLoopback(host) {
				http.Error(w, "reel serve answers only requests addressed to a loopback host (localhost, 127.0.0.1, [::1])", http.StatusForbidden)
				return
			}
			next.ServeHTTP(w, r)
			return
		}
		if t := r.URL.Query().Get("token"); t != "" && s.tokenOK(t) {
			http.SetCookie(w, &http.Cookie{Name: tokenCookie, Value: t, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
			if r.Method == http.MethodGet && !strings.HasPrefix(r.URL.Path, "/api/") {
				// Take the token out of the address bar and history.
				u := *r.URL
				q := u.Query()
				q.Del("token")
				u.RawQuery = q.Encode()
				http.Redirect(w, r, u.RequestURI(), http.StatusSeeOther)
				return
			}
			next.ServeHTTP(w, r)
			return
		}
		if a, ok := bearerToken(r.Header.Get("Authorization")); ok && s.tokenOK(a) {
			next.ServeHTTP(w, r)
			return
		}
		if c, err := r.Cookie(tokenCookie); err == nil && s.tokenOK(c.Value) {
			next.ServeHTTP(w, r)
			return
		}
		h.Set("WWW-Authenticate", `Bearer realm="reel"`)
		http.Error(w, "this reel serve needs its token: open the page with ?token=TOKEN once, or send Authorization: Bearer TOKEN", http.StatusUnauthorized)
	})
}

// bearerToken returns the credentials of an Authorization header of the
// Bearer scheme, whose name is case-insensitive (RFC 9110, section 11.1):
// curl users and HTTP libraries send "bearer" as often as "Bearer".
func bearerToken(h string) (string, bool) {
	scheme, cred, ok := strings.Cut(strings.TrimLeft(h, " \t"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	return strings.Trim(cred, " \t"), true
}

// crossSite reports a request that would change something (any method
// but GET, HEAD and OPTIONS) sent by a page of another site: a browser
// says so in Sec-Fetch-Site or Origin. Requests without either (curl, an
// AWF client) are not a browser's and pass. Without this, any page the
// user opens could start runs on a loopback server through a plain form,
// which the Host check does not see.
func crossSite(r *http.Request) bool {
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return false
	}
	// A browser that says where a request comes from is believed: a page
	// served with Referrer-Policy: no-referrer (as reel's are) makes
	// Chromium send "Origin: null" on its own same-origin form posts.
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" {
		return site != "same-origin" && site != "none"
	}
	origin := r.Header.Get("Origin")
	if origin == "" {
		return false
	}
	u, err := url.Parse(origin)
	return err != nil || u.Host != r.Host
}

func (s *Server) tokenOK(t string) bool {
	return subtle.ConstantTimeCompare([]byte(t), []byte(s.opts.Token)) == 1
}

// Serve listens on the configured address and serves until ctx ends.
// ready, when set, is called with the address actually bound (an address
// with port 0 picks a free port).
func (s *Server) Serve(ctx context.Context, ready func(addr string)) error {
	ln, err := net.Listen("tcp", s.opts.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", s.opts.Addr, err)
	}
	srv := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second, BaseContext: func(net.Listener) context.Context { return ctx }}
	if ready != nil {
		ready(ln.Addr().String())
	}
	go s.rescan(ctx)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		srv.Shutdown(sctx)
		return nil
	}
}

// rescan compares every transcript with the index now and then: the cheap
// check on each request sees new files and growing runs, not a run that
// was resumed after it ended by a writer that did not update the index.
func (s *Server) rescan(ctx context.Context) {
	t := time.NewTicker(s.opts.Rescan)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if _, err := s.ix.Scan(ctx); err != nil && ctx.Err() == nil {
				s.log.Warn("rescan the run index", "err", err)
			}
		}
	}
}
