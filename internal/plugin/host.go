package plugin

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	goplugin "github.com/hashicorp/go-plugin"
)

// Handshake is AWF's go-plugin handshake: a plugin built with AWF's SDK
// answers it, and refuses to run without it.
var Handshake = goplugin.HandshakeConfig{
	MagicCookieKey:   "AWF_PLUGIN",
	MagicCookieValue: "awf-plugin-v1",
	ProtocolVersion:  1,
}

// Defaults.
const (
	// DefaultStartTimeout bounds a plugin's start: its process up, the
	// handshake, GetInfo, Init and the listing of what it offers.
	DefaultStartTimeout = 10 * time.Second
	// DefaultValidatorTimeout bounds each validator plugin (AWF's
	// --validator-timeout default).
	DefaultValidatorTimeout = 5 * time.Second
	// rpcTimeout bounds the host's bookkeeping calls (GetInfo, listings,
	// Shutdown).
	rpcTimeout = 5 * time.Second
)

// Errors a caller tells apart with errors.Is.
var (
	// ErrUnavailable: the plugin cannot serve (not installed, disabled,
	// its binary changed, it failed to start).
	ErrUnavailable = errors.New("plugin unavailable")
	// ErrUnknown: the plugin does not offer the operation or step type.
	ErrUnknown = errors.New("not offered by the plugin")
)

// kindError is an error of one of the kinds above, its message its own.
type kindError struct {
	kind error
	msg  string
}

func (e *kindError) Error() string        { return e.msg }
func (e *kindError) Is(target error) bool { return target == e.kind }

func unavailable(format string, args ...any) error {
	return &kindError{kind: ErrUnavailable, msg: fmt.Sprintf(format, args...)}
}

func unknown(format string, args ...any) error {
	return &kindError{kind: ErrUnknown, msg: fmt.Sprintf(format, args...)}
}

// Options configure a Host.
type Options struct {
	// Dirs are the plugin directories in search order (see Dirs).
	Dirs []string
	// State is the enabled state, configuration and checksums.
	State *State
	// Config is the plugins section of AWF's project config
	// (.awf/config.yaml): per plugin name, settings passed at Init.
	Config map[string]map[string]any
	// Environ is the plugins' environment; nil means os.Environ().
	Environ []string
	// WorkDir is the plugins' working directory ("" is reel's).
	WorkDir string
	// Log receives what plugins print and log, a line each, prefixed
	// "plugin NAME: "; nil discards it.
	Log io.Writer
	// StartTimeout bounds a plugin's start (DefaultStartTimeout when 0).
	StartTimeout time.Duration
}

// Host runs AWF plugins for reel: it finds them, starts each the first
// time it is needed, routes operations, step types, validations and
// events to them, and stops them all on Close. A nil *Host offers
// nothing; its methods are safe to call.
type Host struct {
	opts      Options
	installed map[string]*Installed
	order     []string
	log       *lineLog
	bus       *bus

	mu     sync.Mutex
	procs  map[string]*proc
	closed bool
	warned map[string]bool
}

// Open finds the plugins of opts.Dirs. Nothing starts until a plugin is
// needed.
func Open(opts Options) *Host {
	if opts.State == nil {
		opts.State = &State{entries: map[string]*Entry{}, project: map[string]projectEntry{}}
	}
	if opts.StartTimeout <= 0 {
		opts.StartTimeout = DefaultStartTimeout
	}
	h := &Host{opts: opts, installed: map[string]*Installed{}, procs: map[string]*proc{}, warned: map[string]bool{}}
	h.log = &lineLog{w: opts.Log}
	h.bus = newBus(h.warn)
	for _, in := range Discover(opts.Dirs) {
		h.installed[in.Name] = in
		h.order = append(h.order, in.Name)
	}
	return h
}

// Installed lists the plugins found, by name.
func (h *Host) Installed() []*Installed {
	if h == nil {
		return nil
	}
	out := make([]*Installed, 0, len(h.order))
	for _, n := range h.order {
		out = append(out, h.installed[n])
	}
	return out
}

// Lookup finds an installed plugin by name.
func (h *Host) Lookup(name string) (*Installed, bool) {
	if h == nil {
		return nil, false
	}
	in, ok := h.installed[name]
	return in, ok
}

// Enabled reports whether an installed plugin is enabled.
func (h *Host) Enabled(name string) bool { return h != nil && h.opts.State.Enabled(name) }

// State is the host's plugin state.
func (h *Host) State() *State { return h.opts.State }

// with lists the enabled plugins, installed without problem, that declare
// capability c.
func (h *Host) with(c string) []string {
	if h == nil {
		return nil
	}
	var out []string
	for _, n := range h.order {
		in := h.installed[n]
		if in.Problem == nil && in.Manifest.Has(c) && h.Enabled(n) {
			out = append(out, n)
		}
	}
	return out
}

// Start starts the named plugins (all of them at once) and returns the
// error of each that could not start.
func (h *Host) Start(ctx context.Context, names ...string) map[string]error {
	if h == nil {
		return nil
	}
	var mu sync.Mutex
	errs := map[string]error{}
	var wg sync.WaitGroup
	for _, n := range names {
		wg.Go(func() {
			if _, err := h.proc(ctx, n); err != nil {
				mu.Lock()
				errs[n] = err
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return errs
}

// StartSubscribers starts the enabled plugins that subscribe to events, so
// that they see a run from its first event. A plugin that cannot start is
// reported on the host's log and left out, as AWF leaves it out.
func (h *Host) StartSubscribers(ctx context.Context) {
	for n, err := range h.Start(ctx, h.with(CapEvents)...) {
		h.warn(n+": not started", fmt.Sprintf("plugin %s: not started, its events are not delivered: %v", n, err))
	}
}

// proc returns the plugin's running process, starting it the first time.
// A plugin that failed to start, or crashed, keeps its error for the rest
// of the host's life.
func (h *Host) proc(ctx context.Context, name string) (*proc, error) {
	if h == nil {
		return nil, unavailable("plugin %s: no plugins are loaded", name)
	}
	in, ok := h.installed[name]
	if !ok {
		return nil, unavailable("plugin %s is not installed (%s)", name, h.where())
	}
	if in.Problem != nil {
		return nil, unavailable("plugin %s cannot run: %v", name, in.Problem)
	}
	if !h.Enabled(name) {
		return nil, unavailable("plugin %s is disabled (reel plugin enable %s)", name, name)
	}
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil, unavailable("plugin %s: the host is closed", name)
	}
	p, ok := h.procs[name]
	if !ok {
		p = &proc{h: h, in: in, ready: make(chan struct{})}
		h.procs[name] = p
		go p.start(context.WithoutCancel(ctx))
	}
	h.mu.Unlock()
	select {
	case <-p.ready:
	case <-ctx.Done():
		return nil, fmt.Errorf("plugin %s: start: %w", name, ctx.Err())
	}
	if err := p.failed(); err != nil {
		return nil, err
	}
	return p, nil
}

// where names the plugin directories, for "not installed".
func (h *Host) where() string {
	if len(h.opts.Dirs) == 0 {
		return "no plugin directory"
	}
	return "looked in " + strings.Join(h.opts.Dirs, ", ")
}

// Close delivers the events still queued (for a few seconds at most), then
// stops every plugin it started: Shutdown, then go-plugin's kill, then
// whatever is left of the plugin's process group.
func (h *Host) Close() error {
	if h == nil {
		return nil
	}
	h.bus.close(drainTimeout)
	h.mu.Lock()
	h.closed = true
	procs := slices.Collect(maps.Values(h.procs))
	h.mu.Unlock()
	var wg sync.WaitGroup
	for _, p := range procs {
		wg.Go(p.stop)
	}
	wg.Wait()
	return nil
}

// warn writes a message to the host's log once per key.
func (h *Host) warn(key, msg string) {
	h.mu.Lock()
	seen := h.warned[key]
	h.warned[key] = true
	h.mu.Unlock()
	if !seen {
		h.log.line(msg)
	}
}

// environ is the plugins' environment.
func (h *Host) environ() []string {
	if h.opts.Environ != nil {
		return h.opts.Environ
	}
	return os.Environ()
}

// verify checks the binary against its stored checksum. Without one, the
// plugin starts unverified, with a warning, as in AWF.
func (h *Host) verify(in *Installed) ([]byte, error) {
	want := h.opts.State.Checksum(in.Name)
	if want == "" {
		h.warn(in.Name+": unverified", fmt.Sprintf("plugin %s: no stored checksum, starting it unverified (reel plugin verify --update %s stores one)", in.Name, in.Name))
		return nil, nil
	}
	got, err := FileSHA256(in.Binary)
	if err != nil {
		return nil, fmt.Errorf("checksum of %s: %w", in.Binary, err)
	}
	if got != want {
		return nil, &ChecksumError{Plugin: in.Name, Binary: in.Binary, Want: want, Got: got}
	}
	return hex.DecodeString(want)
}

// ChecksumError refuses a plugin whose binary changed since its checksum
// was stored.
type ChecksumError struct {
	Plugin, Binary string
	Want, Got      string
}

func (e *ChecksumError) Error() string {
	return fmt.Sprintf("binary %s changed since it was installed: its SHA-256 is %s, the stored one %s (reinstall the plugin, or trust the new binary with reel plugin verify --update %s)", e.Binary, e.Got, e.Want, e.Plugin)
}
