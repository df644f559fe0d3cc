// Package kit serves reel's test plugins over AWF's plugin protocol:
// go-plugin's gRPC transport, AWF's handshake, the services of package
// pluginv1, inputs and outputs JSON-encoded as AWF's SDK encodes them.
// It stands in for AWF's SDK (which is not on the Go module proxy) so
// that CI exercises the host with real plugin processes.
package kit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/hashicorp/go-hclog"
	goplugin "github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/reelhq/reel/internal/plugin/pluginv1"
)

// Plugin is what a test plugin offers; nil fields offer nothing.
type Plugin struct {
	Name       string
	Init       func(config map[string]any) error
	Shutdown   func()
	Operations []Operation
	StepTypes  []StepType
	// Validate answers ValidateWorkflow (step "") and ValidateStep.
	Validate func(def map[string]any, step string) []*pluginv1.ValidationIssue
	// HandleEvent answers an event with the events to emit.
	HandleEvent func(ev *pluginv1.HandleEventRequest) []*pluginv1.HandleEventRequest
	// Host, when set, gets a function emitting events through the host.
	Host func(emit func(ctx context.Context, typ string, meta map[string]string) error)
}

// Operation is one operation: its schema and what it does.
type Operation struct {
	Schema *pluginv1.OperationSchema
	Run    func(ctx context.Context, inputs map[string]any) (output string, data map[string]any, err error)
}

// StepType is one step type.
type StepType struct {
	Name string
	Run  func(ctx context.Context, step string, config, inputs map[string]any) (output string, data map[string]any, exit int32, err error)
}

// Handshake is AWF's.
var Handshake = goplugin.HandshakeConfig{MagicCookieKey: "AWF_PLUGIN", MagicCookieValue: "awf-plugin-v1", ProtocolVersion: 1}

// Serve serves p until the host disconnects.
func Serve(p *Plugin) { ServeWith(p, Handshake) }

// ServeWith serves p with a given handshake.
func ServeWith(p *Plugin, hs goplugin.HandshakeConfig) {
	goplugin.Serve(&goplugin.ServeConfig{
		HandshakeConfig: hs,
		Plugins:         goplugin.PluginSet{"awf-plugin": &bridge{p: p}},
		GRPCServer:      goplugin.DefaultGRPCServer,
		Logger:          hclog.New(&hclog.LoggerOptions{Name: p.Name, Level: hclog.Info, JSONFormat: true, Output: os.Stderr}),
	})
}

type bridge struct {
	goplugin.NetRPCUnsupportedPlugin
	p *Plugin
}

func (b *bridge) GRPCClient(context.Context, *goplugin.GRPCBroker, *grpc.ClientConn) (any, error) {
	return nil, errors.New("plugin side only")
}

func (b *bridge) GRPCServer(broker *goplugin.GRPCBroker, s *grpc.Server) error {
	pluginv1.RegisterPluginServiceServer(s, &lifecycle{p: b.p})
	pluginv1.RegisterOperationServiceServer(s, &operations{p: b.p})
	pluginv1.RegisterValidatorServiceServer(s, &validator{p: b.p})
	pluginv1.RegisterStepTypeServiceServer(s, &stepTypes{p: b.p})
	pluginv1.RegisterEventServiceServer(s, &events{p: b.p})
	if b.p.Host != nil {
		// as AWF's SDK: dial the host's event service on broker id 1
		conn, err := broker.Dial(1)
		if err == nil {
			client := pluginv1.NewHostEventServiceClient(conn)
			b.p.Host(func(ctx context.Context, typ string, meta map[string]string) error {
				resp, err := client.Emit(ctx, &pluginv1.EmitRequest{EventType: typ, SourcePlugin: b.p.Name, Metadata: meta, TimestampUnixNanos: time.Now().UnixNano()})
				if err != nil {
					return err
				}
				if !resp.GetSuccess() {
					return errors.New(resp.GetErrorMessage())
				}
				return nil
			})
		}
	}
	return nil
}

type lifecycle struct {
	pluginv1.UnimplementedPluginServiceServer
	p *Plugin
}

func (s *lifecycle) GetInfo(context.Context, *pluginv1.GetInfoRequest) (*pluginv1.GetInfoResponse, error) {
	return &pluginv1.GetInfoResponse{Name: s.p.Name, Version: "1.0.0"}, nil
}

func (s *lifecycle) Init(_ context.Context, req *pluginv1.InitRequest) (*pluginv1.InitResponse, error) {
	if s.p.Init == nil {
		return &pluginv1.InitResponse{}, nil
	}
	if err := s.p.Init(decode(req.GetConfig())); err != nil {
		return nil, err
	}
	return &pluginv1.InitResponse{}, nil
}

func (s *lifecycle) Shutdown(context.Context, *pluginv1.ShutdownRequest) (*pluginv1.ShutdownResponse, error) {
	if s.p.Shutdown != nil {
		s.p.Shutdown()
	}
	return &pluginv1.ShutdownResponse{}, nil
}

// decode reads JSON-encoded values (a value that is not JSON is its text,
// as in AWF's SDK).
func decode(m map[string][]byte) map[string]any {
	out := make(map[string]any, len(m))
	for k, b := range m {
		var v any
		if json.Unmarshal(b, &v) != nil {
			v = string(b)
		}
		out[k] = v
	}
	return out
}

type operations struct {
	pluginv1.UnimplementedOperationServiceServer
	p *Plugin
}

func (s *operations) ListOperations(context.Context, *pluginv1.ListOperationsRequest) (*pluginv1.ListOperationsResponse, error) {
	resp := &pluginv1.ListOperationsResponse{}
	for _, op := range s.p.Operations {
		resp.Operations = append(resp.Operations, op.Schema)
	}
	return resp, nil
}

func (s *operations) GetOperation(_ context.Context, req *pluginv1.GetOperationRequest) (*pluginv1.GetOperationResponse, error) {
	for _, op := range s.p.Operations {
		if op.Schema.GetName() == req.GetName() {
			return &pluginv1.GetOperationResponse{Operation: op.Schema}, nil
		}
	}
	return nil, fmt.Errorf("operation %q not found", req.GetName())
}

func (s *operations) Execute(ctx context.Context, req *pluginv1.ExecuteRequest) (*pluginv1.ExecuteResponse, error) {
	for _, op := range s.p.Operations {
		if op.Schema.GetName() != req.GetOperation() {
			continue
		}
		out, data, err := op.Run(ctx, decode(req.GetInputs()))
		if err != nil {
			return &pluginv1.ExecuteResponse{Success: false, Error: err.Error()}, nil
		}
		resp := &pluginv1.ExecuteResponse{Success: true, Output: out, Data: map[string][]byte{}}
		for k, v := range data {
			b, _ := json.Marshal(v)
			resp.Data[k] = b
		}
		return resp, nil
	}
	return &pluginv1.ExecuteResponse{Success: false, Error: "unknown operation: " + req.GetOperation()}, nil
}

type validator struct {
	pluginv1.UnimplementedValidatorServiceServer
	p *Plugin
}

func (s *validator) ValidateWorkflow(_ context.Context, req *pluginv1.ValidateWorkflowRequest) (*pluginv1.ValidateWorkflowResponse, error) {
	if s.p.Validate == nil {
		return &pluginv1.ValidateWorkflowResponse{}, nil
	}
	var def map[string]any
	if err := json.Unmarshal(req.GetWorkflowJson(), &def); err != nil {
		return nil, err
	}
	return &pluginv1.ValidateWorkflowResponse{Issues: s.p.Validate(def, "")}, nil
}

func (s *validator) ValidateStep(_ context.Context, req *pluginv1.ValidateStepRequest) (*pluginv1.ValidateStepResponse, error) {
	if s.p.Validate == nil {
		return &pluginv1.ValidateStepResponse{}, nil
	}
	var def map[string]any
	if err := json.Unmarshal(req.GetWorkflowJson(), &def); err != nil {
		return nil, err
	}
	return &pluginv1.ValidateStepResponse{Issues: s.p.Validate(def, req.GetStepName())}, nil
}

type stepTypes struct {
	pluginv1.UnimplementedStepTypeServiceServer
	p *Plugin
}

func (s *stepTypes) ListStepTypes(context.Context, *pluginv1.ListStepTypesRequest) (*pluginv1.ListStepTypesResponse, error) {
	resp := &pluginv1.ListStepTypesResponse{}
	for _, t := range s.p.StepTypes {
		resp.StepTypes = append(resp.StepTypes, &pluginv1.StepTypeInfo{Name: t.Name, Description: "test step type " + t.Name})
	}
	return resp, nil
}

func (s *stepTypes) ExecuteStep(ctx context.Context, req *pluginv1.ExecuteStepRequest) (*pluginv1.ExecuteStepResponse, error) {
	for _, t := range s.p.StepTypes {
		if t.Name != req.GetStepType() {
			continue
		}
		var config, inputs map[string]any
		if err := json.Unmarshal(req.GetConfig(), &config); err != nil {
			return nil, err
		}
		if err := json.Unmarshal(req.GetInputs(), &inputs); err != nil {
			return nil, err
		}
		out, data, exit, err := t.Run(ctx, req.GetStepName(), config, inputs)
		if err != nil {
			return nil, err
		}
		resp := &pluginv1.ExecuteStepResponse{Output: out, ExitCode: exit}
		if data != nil {
			resp.Data, _ = json.Marshal(data)
		}
		return resp, nil
	}
	return nil, fmt.Errorf("unknown step type %q", req.GetStepType())
}

type events struct {
	pluginv1.UnimplementedEventServiceServer
	p *Plugin
}

func (s *events) HandleEvent(_ context.Context, req *pluginv1.HandleEventRequest) (*pluginv1.HandleEventResponse, error) {
	if s.p.HandleEvent == nil {
		return &pluginv1.HandleEventResponse{}, nil
	}
	return &pluginv1.HandleEventResponse{EmittedEvents: s.p.HandleEvent(req)}, nil
}

// String is a string input, "" when absent.
func String(in map[string]any, k string) string {
	s, _ := in[k].(string)
	return s
}
