package plugin

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
	goplugin "github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/reelhq/reel/internal/plugin/pluginv1"
)

// dispenseName is the name AWF's SDK registers its services under.
const dispenseName = "awf-plugin"

// hostEventBrokerID is the go-plugin broker id on which the host serves
// HostEventService (AWF's sdk.HostEventServiceID).
const hostEventBrokerID = 1

// proc is one plugin process.
type proc struct {
	h     *Host
	in    *Installed
	ready chan struct{} // closed when start is over, whatever its outcome

	client *goplugin.Client
	cmd    *exec.Cmd
	pid    int // set once the handshake is done
	tail   tail
	// exit is the process's exit as go-plugin reports it ("exit status 2").
	exit atomic.Pointer[string]
	// stuck: a call timed out; the plugin may never answer again, so it is
	// killed without a graceful shutdown.
	stuck atomic.Bool

	svc       clients
	ops       map[string]*pluginv1.OperationSchema
	opNames   []string
	stepTypes map[string]*pluginv1.StepTypeInfo
	typeNames []string

	mu  sync.Mutex
	err error // why the plugin is unusable (failed start, crash)
}

// clients are the plugin's services as the host calls them.
type clients struct {
	plugin    pluginv1.PluginServiceClient
	operation pluginv1.OperationServiceClient
	validator pluginv1.ValidatorServiceClient
	stepType  pluginv1.StepTypeServiceClient
	event     pluginv1.EventServiceClient
	broker    *goplugin.GRPCBroker
}

// clientPlugin is the host side of go-plugin's plugin set.
type clientPlugin struct {
	goplugin.NetRPCUnsupportedPlugin
}

func (clientPlugin) GRPCServer(*goplugin.GRPCBroker, *grpc.Server) error {
	return errors.New("the host serves no plugin")
}

func (clientPlugin) GRPCClient(_ context.Context, broker *goplugin.GRPCBroker, c *grpc.ClientConn) (any, error) {
	return &clients{
		plugin:    pluginv1.NewPluginServiceClient(c),
		operation: pluginv1.NewOperationServiceClient(c),
		validator: pluginv1.NewValidatorServiceClient(c),
		stepType:  pluginv1.NewStepTypeServiceClient(c),
		event:     pluginv1.NewEventServiceClient(c),
		broker:    broker,
	}, nil
}

func (p *proc) failed() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

func (p *proc) fail(err error) {
	p.mu.Lock()
	if p.err == nil {
		p.err = err
	}
	p.mu.Unlock()
}

// start runs the plugin and gets it ready: the process and handshake,
// GetInfo, Init with its configuration, the listing of its operations and
// step types, its event subscription.
func (p *proc) start(ctx context.Context) {
	defer close(p.ready)
	name := p.in.Name
	err := p.launch(ctx)
	if err != nil {
		p.kill()
		p.fail(unavailable("plugin %s: start: %v%s", name, err, p.tail.suffix()))
	}
}

func (p *proc) launch(ctx context.Context) error {
	h, in := p.h, p.in
	if err := in.Manifest.compatible(); err != nil {
		return err
	}
	sum, err := h.verify(in)
	if err != nil {
		return err
	}
	config, err := h.initConfig(in)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, h.opts.StartTimeout)
	defer cancel()
	svc, err := p.connect(ctx, sum, true)
	if errors.Is(err, goplugin.ErrGRPCBrokerMuxNotSupported) {
		// a plugin built with an old go-plugin: no multiplexed broker,
		// so no HostClient while it starts, but everything else works
		p.kill()
		p.tail = tail{}
		svc, err = p.connect(ctx, sum, false)
	}
	if err != nil {
		return err
	}
	p.svc = *svc
	go svc.broker.AcceptAndServe(hostEventBrokerID, func(opts []grpc.ServerOption) *grpc.Server {
		s := grpc.NewServer(opts...)
		pluginv1.RegisterHostEventServiceServer(s, &hostEvents{h: h, plugin: in.Name})
		return s
	})
	if _, err := svc.plugin.GetInfo(ctx, &pluginv1.GetInfoRequest{}); err != nil {
		return fmt.Errorf("GetInfo: %v", p.rpcError(ctx, err))
	}
	req := &pluginv1.InitRequest{Config: map[string][]byte{}}
	for k, v := range config {
		b, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("config %s: %v", k, err)
		}
		req.Config[k] = b
	}
	if _, err := svc.plugin.Init(ctx, req); err != nil {
		return fmt.Errorf("init: %v", p.rpcError(ctx, err))
	}
	// AWF serves a plugin's operations whatever its capabilities say, so
	// every plugin is asked (one that declares none may not answer).
	p.ops = map[string]*pluginv1.OperationSchema{}
	resp, err := svc.operation.ListOperations(ctx, &pluginv1.ListOperationsRequest{})
	switch {
	case err != nil && in.Manifest.Has(CapOperations):
		return fmt.Errorf("ListOperations: %v", p.rpcError(ctx, err))
	case err == nil:
		for _, op := range resp.GetOperations() {
			if op.GetName() != "" && p.ops[op.GetName()] == nil {
				p.ops[op.GetName()] = op
				p.opNames = append(p.opNames, op.GetName())
			}
		}
	}
	if in.Manifest.Has(CapStepTypes) {
		resp, err := svc.stepType.ListStepTypes(ctx, &pluginv1.ListStepTypesRequest{})
		if err != nil {
			return fmt.Errorf("ListStepTypes: %v", p.rpcError(ctx, err))
		}
		p.stepTypes = map[string]*pluginv1.StepTypeInfo{}
		for _, st := range resp.GetStepTypes() {
			if st.GetName() != "" && p.stepTypes[st.GetName()] == nil {
				p.stepTypes[st.GetName()] = st
				p.typeNames = append(p.typeNames, st.GetName())
			}
		}
	}
	if in.Manifest.Has(CapEvents) && len(in.Manifest.Events.Subscribe) > 0 {
		h.bus.subscribe(in.Name, in.Manifest.Events.Subscribe, p.deliver)
	}
	return nil
}

// connect starts the process and completes go-plugin's handshake.
func (p *proc) connect(ctx context.Context, sum []byte, multiplex bool) (*clients, error) {
	h, in := p.h, p.in
	cmd := exec.Command(in.Binary)
	cmd.Dir = h.opts.WorkDir
	cmd.Env = h.environ()
	// Its own process group, so that Ctrl-C at the terminal reaches reel
	// alone (which then shuts the plugin down) and whatever the plugin
	// started can be killed with it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	dieWithParent(cmd.SysProcAttr)
	cfg := &goplugin.ClientConfig{
		HandshakeConfig:     Handshake,
		Plugins:             goplugin.PluginSet{dispenseName: clientPlugin{}},
		Cmd:                 cmd,
		SkipHostEnv:         true,
		AllowedProtocols:    []goplugin.Protocol{goplugin.ProtocolGRPC},
		AutoMTLS:            true,
		GRPCBrokerMultiplex: multiplex,
		StartTimeout:        h.opts.StartTimeout,
		Logger:              hclog.New(&hclog.LoggerOptions{Name: "host", Level: hclog.Info, JSONFormat: true, Output: exitWatcher{p}}),
		Stderr:              stderrLog{p},
		SyncStdout:          &stdioLog{p: p},
		SyncStderr:          &stdioLog{p: p},
	}
	if sum != nil {
		// checked just above; go-plugin checks it again as it starts the
		// process, narrowing the window for a swap
		cfg.SecureConfig = &goplugin.SecureConfig{Checksum: sum, Hash: sha256.New()}
	}
	p.cmd = cmd
	p.client = goplugin.NewClient(cfg)
	type result struct {
		svc *clients
		err error
	}
	done := make(chan result, 1)
	go func() {
		rpc, err := p.client.Client()
		if err != nil {
			done <- result{err: err}
			return
		}
		raw, err := rpc.Dispense(dispenseName)
		if err != nil {
			done <- result{err: err}
			return
		}
		done <- result{svc: raw.(*clients)}
	}()
	select {
	case r := <-done:
		if r.err != nil {
			return nil, handshakeError(r.err)
		}
		p.pid = cmd.Process.Pid
		return r.svc, nil
	case <-ctx.Done():
		// go-plugin gives up at the same deadline; kill (called by the
		// caller) waits for it
		return nil, fmt.Errorf("no handshake within %s", p.h.opts.StartTimeout)
	}
}

// handshakeError explains go-plugin's start errors.
func handshakeError(err error) error {
	msg := err.Error()
	switch {
	case errors.Is(err, goplugin.ErrChecksumsDoNotMatch):
		return errors.New("binary changed while it was being started (checksum mismatch)")
	case strings.Contains(strings.ToLower(msg), "incompatible api version"), strings.Contains(msg, "incompatible core API version"):
		return fmt.Errorf("wrong handshake: %s (reel speaks AWF's plugin protocol version %d)", firstLine(msg), Handshake.ProtocolVersion)
	case strings.Contains(msg, "Unrecognized remote plugin message"), strings.Contains(msg, "plugin exited before we could connect"):
		return fmt.Errorf("wrong handshake: the program did not answer AWF's plugin handshake (%s=%s, protocol %d); is it built with AWF's plugin SDK? (%s)",
			Handshake.MagicCookieKey, Handshake.MagicCookieValue, Handshake.ProtocolVersion, firstLine(msg))
	}
	return err
}

// rpcError turns a failed call into what happened to the plugin: the
// caller's deadline or cancel, a crash (the process exited), or the
// plugin's own error.
func (p *proc) rpcError(ctx context.Context, err error) error {
	code := status.Code(err)
	if ctx.Err() == nil && (code == codes.DeadlineExceeded || code == codes.Canceled) {
		// the plugin's side may see the deadline (and reset the stream)
		// a moment before the caller's context says so
		select {
		case <-ctx.Done():
		case <-time.After(250 * time.Millisecond):
		}
	}
	if ctx.Err() != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			p.stuck.Store(true)
		}
		return fmt.Errorf("%w (the plugin did not answer)", ctx.Err())
	}
	switch code {
	case codes.Unavailable, codes.Internal, codes.Canceled:
		if exit, ok := p.exited(2 * time.Second); ok {
			crash := fmt.Errorf("plugin %s crashed (%s)%s", p.in.Name, exit, p.tail.suffix())
			p.fail(crash)
			p.h.bus.unsubscribe(p.in.Name)
			return crash
		}
	}
	return grpcMessage(err)
}

// exited waits up to d for the process to be gone and says how it ended.
func (p *proc) exited(d time.Duration) (string, bool) {
	if p.client == nil {
		return "", false
	}
	for deadline := time.Now().Add(d); ; time.Sleep(20 * time.Millisecond) {
		if p.client.Exited() {
			if e := p.exit.Load(); e != nil {
				return *e, true
			}
			return "exited", true
		}
		if time.Now().After(deadline) {
			return "", false
		}
	}
}

// stop shuts the plugin down: the plugin's Shutdown (unless it is stuck),
// go-plugin's graceful close and kill, then its process group.
func (p *proc) stop() {
	<-p.ready
	if p.client == nil {
		return
	}
	if p.failed() == nil && !p.stuck.Load() && !p.client.Exited() {
		ctx, cancel := context.WithTimeout(context.Background(), rpcTimeout)
		_, _ = p.svc.plugin.Shutdown(ctx, &pluginv1.ShutdownRequest{})
		cancel()
	}
	p.kill()
}

// kill ends the process at once if it is stuck, else lets go-plugin close
// it (2s grace), then kills what is left of its process group.
func (p *proc) kill() {
	if p.client == nil {
		return
	}
	if p.stuck.Load() && p.pid > 0 {
		_ = syscall.Kill(-p.pid, syscall.SIGKILL)
	}
	// Kill waits for a start still under way (go-plugin holds its lock
	// until the handshake ends or times out), so cmd.Process is read
	// after it is set.
	p.client.Kill()
	if p.cmd.Process != nil {
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	}
}

// grpcMessage strips gRPC's "rpc error: code = Unknown desc = " from a
// plugin's error.
func grpcMessage(err error) error {
	msg := err.Error()
	if _, after, ok := strings.Cut(msg, "desc = "); ok && strings.HasPrefix(msg, "rpc error:") {
		return errors.New(after)
	}
	return err
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}
