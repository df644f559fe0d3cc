// Package otlptest runs real OTLP trace receivers on loopback for tests and
// benchmarks: the collector's own gRPC TraceService and the OTLP/HTTP
// protobuf endpoint, decoding what exporters send into plain spans.
package otlptest

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"
)

// Span is a received span with its ids in hex and its attributes as Go
// values (string, int64, float64, bool, or []any).
type Span struct {
	TraceID, SpanID, ParentID string
	Name                      string
	Kind                      string
	Start, End                time.Time
	Attrs                     map[string]any
	Status                    string // Unset, Ok or Error
	StatusMessage             string
	Resource                  map[string]any
	Scope, ScopeVersion       string
}

// Receiver collects what an OTLP exporter sends it.
type Receiver struct {
	// Endpoint is host:port.
	Endpoint string
	// CountOnly skips decoding spans (benchmarks): Count still adds up.
	CountOnly bool

	mu       sync.Mutex
	spans    []Span
	count    int
	requests int
	headers  []map[string]string
	delay    time.Duration
	fail     error
	changed  chan struct{}
}

func newReceiver() *Receiver { return &Receiver{changed: make(chan struct{})} }

// SetDelay makes every request wait d before it is answered (a slow
// collector).
func (r *Receiver) SetDelay(d time.Duration) {
	r.mu.Lock()
	r.delay = d
	r.mu.Unlock()
}

// SetFail makes every request fail with err (nil to stop).
func (r *Receiver) SetFail(err error) {
	r.mu.Lock()
	r.fail = err
	r.mu.Unlock()
}

func (r *Receiver) take(req *coltracepb.ExportTraceServiceRequest, headers map[string]string) error {
	r.mu.Lock()
	delay, fail := r.delay, r.fail
	r.mu.Unlock()
	if delay > 0 {
		time.Sleep(delay)
	}
	if fail != nil {
		return fail
	}
	var spans []Span
	n := 0
	for _, rs := range req.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			n += len(ss.Spans)
			if r.CountOnly {
				continue
			}
			res := attrs(rs.GetResource().GetAttributes())
			for _, s := range ss.Spans {
				spans = append(spans, convert(s, res, ss.GetScope()))
			}
		}
	}
	r.mu.Lock()
	r.spans = append(r.spans, spans...)
	r.count += n
	r.requests++
	r.headers = append(r.headers, headers)
	close(r.changed)
	r.changed = make(chan struct{})
	r.mu.Unlock()
	return nil
}

// Spans returns the spans received so far.
func (r *Receiver) Spans() []Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Span(nil), r.spans...)
}

// Count is the number of spans received.
func (r *Receiver) Count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.count
}

// Requests is the number of export requests answered.
func (r *Receiver) Requests() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.requests
}

// Headers returns the headers (gRPC metadata) of each request.
func (r *Receiver) Headers() []map[string]string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]map[string]string(nil), r.headers...)
}

// Wait waits until at least n spans arrived, failing t after timeout.
func (r *Receiver) Wait(t testing.TB, n int, timeout time.Duration) []Span {
	t.Helper()
	deadline := time.After(timeout)
	for {
		r.mu.Lock()
		c, ch := r.count, r.changed
		r.mu.Unlock()
		if c >= n {
			return r.Spans()
		}
		select {
		case <-ch:
		case <-deadline:
			t.Fatalf("otlptest: %d spans after %s, want %d", c, timeout, n)
		}
	}
}

// grpcServer implements the collector's TraceService.
type grpcServer struct {
	coltracepb.UnimplementedTraceServiceServer
	r *Receiver
}

func (s *grpcServer) Export(ctx context.Context, req *coltracepb.ExportTraceServiceRequest) (*coltracepb.ExportTraceServiceResponse, error) {
	h := map[string]string{}
	if md, ok := metadata.FromIncomingContext(ctx); ok {
		for k, v := range md {
			h[k] = strings.Join(v, ",")
		}
	}
	if err := s.r.take(req, h); err != nil {
		return nil, err
	}
	return &coltracepb.ExportTraceServiceResponse{}, nil
}

// NewGRPC starts an OTLP/gRPC receiver on a free loopback port, stopped
// when the test ends.
func NewGRPC(t testing.TB) *Receiver {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("otlptest: listen: %v", err)
	}
	r := newReceiver()
	r.Endpoint = ln.Addr().String()
	srv := grpc.NewServer(grpc.MaxRecvMsgSize(64 << 20))
	coltracepb.RegisterTraceServiceServer(srv, &grpcServer{r: r})
	go srv.Serve(ln)
	t.Cleanup(srv.Stop)
	return r
}

// NewHTTP starts an OTLP/HTTP (protobuf) receiver on a free loopback port
// serving /v1/traces, stopped when the test ends.
func NewHTTP(t testing.TB) *Receiver {
	t.Helper()
	r := newReceiver()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Method != http.MethodPost || req.URL.Path != "/v1/traces" {
			http.Error(w, "not found", http.StatusNotFound)
			return
		}
		if ct := req.Header.Get("Content-Type"); ct != "application/x-protobuf" {
			http.Error(w, "content type "+ct, http.StatusUnsupportedMediaType)
			return
		}
		var body io.Reader = req.Body
		if req.Header.Get("Content-Encoding") == "gzip" {
			zr, err := gzip.NewReader(req.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			body = zr
		}
		b, err := io.ReadAll(body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var msg coltracepb.ExportTraceServiceRequest
		if err := proto.Unmarshal(b, &msg); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		h := map[string]string{}
		for k, v := range req.Header {
			h[strings.ToLower(k)] = strings.Join(v, ",")
		}
		if err := r.take(&msg, h); err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.Write(out)
	}))
	t.Cleanup(srv.Close)
	r.Endpoint = strings.TrimPrefix(srv.URL, "http://")
	return r
}

func convert(s *tracepb.Span, res map[string]any, scope *commonpb.InstrumentationScope) Span {
	out := Span{
		TraceID:  hex.EncodeToString(s.TraceId),
		SpanID:   hex.EncodeToString(s.SpanId),
		ParentID: hex.EncodeToString(s.ParentSpanId),
		Name:     s.Name,
		Kind:     kindName(s.Kind),
		Start:    time.Unix(0, int64(s.StartTimeUnixNano)).UTC(),
		End:      time.Unix(0, int64(s.EndTimeUnixNano)).UTC(),
		Attrs:    attrs(s.Attributes),
		Resource: res,
		Scope:    scope.GetName(), ScopeVersion: scope.GetVersion(),
	}
	switch s.GetStatus().GetCode() {
	case tracepb.Status_STATUS_CODE_OK:
		out.Status = "Ok"
	case tracepb.Status_STATUS_CODE_ERROR:
		out.Status = "Error"
	default:
		out.Status = "Unset"
	}
	out.StatusMessage = s.GetStatus().GetMessage()
	return out
}

func kindName(k tracepb.Span_SpanKind) string {
	switch k {
	case tracepb.Span_SPAN_KIND_INTERNAL:
		return "Internal"
	case tracepb.Span_SPAN_KIND_CLIENT:
		return "Client"
	case tracepb.Span_SPAN_KIND_SERVER:
		return "Server"
	case tracepb.Span_SPAN_KIND_PRODUCER:
		return "Producer"
	case tracepb.Span_SPAN_KIND_CONSUMER:
		return "Consumer"
	}
	return "Unspecified"
}

func attrs(kvs []*commonpb.KeyValue) map[string]any {
	m := make(map[string]any, len(kvs))
	for _, kv := range kvs {
		m[kv.Key] = value(kv.Value)
	}
	return m
}

func value(v *commonpb.AnyValue) any {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return x.StringValue
	case *commonpb.AnyValue_IntValue:
		return x.IntValue
	case *commonpb.AnyValue_DoubleValue:
		return x.DoubleValue
	case *commonpb.AnyValue_BoolValue:
		return x.BoolValue
	case *commonpb.AnyValue_ArrayValue:
		var out []any
		for _, e := range x.ArrayValue.Values {
			out = append(out, value(e))
		}
		return out
	case *commonpb.AnyValue_BytesValue:
		return x.BytesValue
	}
	return nil
}

// Sort orders spans by trace, then span id, so two exports compare.
func Sort(spans []Span) {
	sort.Slice(spans, func(i, j int) bool {
		if spans[i].TraceID != spans[j].TraceID {
			return spans[i].TraceID < spans[j].TraceID
		}
		return spans[i].SpanID < spans[j].SpanID
	})
}

// Diff describes how two sets of spans differ (both sorted with Sort), ""
// when they are equal in ids, parents, names, kinds, times, statuses and
// attributes.
func Diff(a, b []Span) string {
	var out bytes.Buffer
	if len(a) != len(b) {
		fmt.Fprintf(&out, "%d spans vs %d\n", len(a), len(b))
	}
	ia := index(a)
	ib := index(b)
	for k, x := range ia {
		y, ok := ib[k]
		if !ok {
			fmt.Fprintf(&out, "only in the first: %s %s\n", k, x.Name)
			continue
		}
		if d := diffSpan(x, y); d != "" {
			fmt.Fprintf(&out, "span %s (%s): %s\n", k, x.Name, d)
		}
	}
	for k, y := range ib {
		if _, ok := ia[k]; !ok {
			fmt.Fprintf(&out, "only in the second: %s %s\n", k, y.Name)
		}
	}
	return out.String()
}

func index(spans []Span) map[string]Span {
	m := make(map[string]Span, len(spans))
	for _, s := range spans {
		m[s.TraceID+"/"+s.SpanID] = s
	}
	return m
}

func diffSpan(x, y Span) string {
	var d []string
	if x.ParentID != y.ParentID {
		d = append(d, fmt.Sprintf("parent %s vs %s", x.ParentID, y.ParentID))
	}
	if x.Name != y.Name || x.Kind != y.Kind {
		d = append(d, fmt.Sprintf("%s/%s vs %s/%s", x.Name, x.Kind, y.Name, y.Kind))
	}
	if !x.Start.Equal(y.Start) || !x.End.Equal(y.End) {
		d = append(d, fmt.Sprintf("times %s..%s vs %s..%s", x.Start, x.End, y.Start, y.End))
	}
	if x.Status != y.Status || x.StatusMessage != y.StatusMessage {
		d = append(d, fmt.Sprintf("status %s %q vs %s %q", x.Status, x.StatusMessage, y.Status, y.StatusMessage))
	}
	for k, v := range x.Attrs {
		if w, ok := y.Attrs[k]; !ok || fmt.Sprint(v) != fmt.Sprint(w) {
			d = append(d, fmt.Sprintf("attribute %s: %v vs %v", k, v, w))
		}
	}
	for k, w := range y.Attrs {
		if _, ok := x.Attrs[k]; !ok {
			d = append(d, fmt.Sprintf("attribute %s only in the second: %v", k, w))
		}
	}
	sort.Strings(d)
	return strings.Join(d, "; ")
}
