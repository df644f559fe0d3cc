package otlp

import (
	"context"
	"fmt"

	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/reelhq/reel/internal/pricing"
	"github.com/reelhq/reel/transcript/secrets"
)

// Config configures an export.
type Config struct {
	// Endpoint is where spans go (see Resolve).
	Endpoint Endpoint
	// ServiceName is the --otel-service-name flag: it wins over
	// OTEL_SERVICE_NAME and service.name in OTEL_RESOURCE_ATTRIBUTES,
	// which win over DefaultServiceName.
	ServiceName string
	// DefaultServiceName is the project's telemetry.service_name, "reel"
	// when empty.
	DefaultServiceName string
	// Version is reel's version, the resource's service.version and the
	// instrumentation scope's version.
	Version string
	// Content exports prompts, replies, tool arguments and results, and
	// command lines and output (--otel-content). Off by default.
	Content bool
	// Masker, when set, masks every event before it is mapped (batch
	// export; the live export reads events its recorder masked already).
	Masker *secrets.Masker
	// Prices price the agent steps whose provider reported no cost, as
	// reel stats does: the project's table (pricing.Default() when nil).
	Prices *pricing.Table
}

// prices is the table the export prices steps from.
func (c *Config) prices() *pricing.Table {
	if c.Prices == nil {
		return pricing.Default()
	}
	return c.Prices
}

// scopeName is the instrumentation scope of every span reel exports.
const scopeName = "github.com/reelhq/reel"

// newResource describes reel as the service: the project's or default
// name, then the OTEL_* variables, then the flag.
func newResource(ctx context.Context, cfg Config) (*resource.Resource, error) {
	def := cfg.DefaultServiceName
	if def == "" {
		def = "reel"
	}
	opts := []resource.Option{
		resource.WithTelemetrySDK(),
		resource.WithAttributes(semconv.ServiceName(def)),
	}
	if cfg.Version != "" {
		opts = append(opts, resource.WithAttributes(semconv.ServiceVersion(cfg.Version)))
	}
	opts = append(opts, resource.WithFromEnv())
	if cfg.ServiceName != "" {
		opts = append(opts, resource.WithAttributes(semconv.ServiceName(cfg.ServiceName)))
	}
	r, err := resource.New(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("OpenTelemetry resource (OTEL_RESOURCE_ATTRIBUTES): %w", err)
	}
	return r, nil
}

// pipeline turns mapped spans into SDK spans: one TracerProvider with the
// id generator that hands out the mapper's ids, every span sampled (a
// recorded run is exported whole; sampling belongs in the collector), and
// one processor.
type pipeline struct {
	tp     *sdktrace.TracerProvider
	tracer trace.Tracer
}

func newPipeline(res *resource.Resource, proc sdktrace.SpanProcessor, version string) *pipeline {
	tp := sdktrace.NewTracerProvider(
		sdktrace.WithIDGenerator(idGenerator{}),
		sdktrace.WithSampler(sdktrace.AlwaysSample()),
		sdktrace.WithResource(res),
		sdktrace.WithSpanProcessor(proc),
	)
	return &pipeline{tp: tp, tracer: tp.Tracer(scopeName, trace.WithInstrumentationVersion(version), trace.WithSchemaURL(semconv.SchemaURL))}
}

// record builds s through the SDK, with its own ids, parent and times.
func (p *pipeline) record(s *span) {
	ctx := withIDs(context.Background(), s.trace, s.id)
	if s.parent.IsValid() {
		ctx = trace.ContextWithSpanContext(ctx, trace.NewSpanContext(trace.SpanContextConfig{
			TraceID: s.trace, SpanID: s.parent, TraceFlags: trace.FlagsSampled,
		}))
	}
	_, sp := p.tracer.Start(ctx, s.name, trace.WithTimestamp(s.start), trace.WithSpanKind(s.kind), trace.WithAttributes(s.attrs...))
	if s.status != codes.Unset {
		sp.SetStatus(s.status, s.desc)
	}
	sp.End(trace.WithTimestamp(s.end))
}

// spanBuffer is the batch export's processor: it only collects ended
// spans, which Batch sends itself, chunk by chunk, so that it sees every
// export error and can show progress.
type spanBuffer struct{ spans []sdktrace.ReadOnlySpan }

func (b *spanBuffer) OnStart(context.Context, sdktrace.ReadWriteSpan) {}
func (b *spanBuffer) OnEnd(s sdktrace.ReadOnlySpan)                   { b.spans = append(b.spans, s) }
func (b *spanBuffer) Shutdown(context.Context) error                  { return nil }
func (b *spanBuffer) ForceFlush(context.Context) error                { return nil }
