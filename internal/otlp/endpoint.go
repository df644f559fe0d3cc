package otlp

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"path"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// The OTLP protocols reel speaks (OTEL_EXPORTER_OTLP_PROTOCOL values).
const (
	ProtocolGRPC = "grpc"
	ProtocolHTTP = "http/protobuf"
)

// Endpoint is where spans go, resolved and checked.
type Endpoint struct {
	// Protocol is ProtocolGRPC or ProtocolHTTP.
	Protocol string
	// Host is host:port.
	Host string
	// Path is the URL path of an http/protobuf endpoint.
	Path string
	// Insecure sends plaintext instead of TLS.
	Insecure bool
	// Headers are sent with every export (OTEL_EXPORTER_OTLP_HEADERS).
	Headers map[string]string
	// schemed is set when a URL's scheme decided Insecure, which
	// OTEL_EXPORTER_OTLP_INSECURE then leaves alone.
	schemed bool
}

// String names the endpoint as a URL and its protocol:
// "http://127.0.0.1:4317 (grpc)", where http means plaintext.
func (e Endpoint) String() string { return e.url() + " (" + e.Protocol + ")" }

func (e Endpoint) url() string {
	scheme := "https"
	if e.Insecure {
		scheme = "http"
	}
	return scheme + "://" + e.Host + e.Path
}

// The standard variables reel reads itself; the exporters read the other
// OTEL_EXPORTER_OTLP_* variables (timeout, compression, certificates).
const (
	envEndpoint         = "OTEL_EXPORTER_OTLP_ENDPOINT"
	envTracesEndpoint   = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
	envProtocol         = "OTEL_EXPORTER_OTLP_PROTOCOL"
	envTracesProtocol   = "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"
	envHeaders          = "OTEL_EXPORTER_OTLP_HEADERS"
	envTracesHeaders    = "OTEL_EXPORTER_OTLP_TRACES_HEADERS"
	envInsecure         = "OTEL_EXPORTER_OTLP_INSECURE"
	envTracesInsecure   = "OTEL_EXPORTER_OTLP_TRACES_INSECURE"
	defaultGRPCEndpoint = "localhost:4317"
	defaultHTTPEndpoint = "localhost:4318"
	tracesPath          = "/v1/traces"
)

// Resolve decides the endpoint. explicit (the --otel-exporter flag or the
// project's telemetry.exporter, in AWF's HOST:PORT form) wins over the
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT and OTEL_EXPORTER_OTLP_ENDPOINT
// variables, which win over fallback; with none of them, the OpenTelemetry
// default (localhost:4317 for gRPC, localhost:4318 for http/protobuf).
// The protocol is OTEL_EXPORTER_OTLP_TRACES_PROTOCOL or
// OTEL_EXPORTER_OTLP_PROTOCOL, gRPC when unset (AWF's exporter speaks
// gRPC).
//
// A bare HOST:PORT is plaintext when the host is a loopback address or
// OTEL_EXPORTER_OTLP_INSECURE is true, TLS otherwise; http:// and https://
// URLs say it themselves.
func Resolve(explicit, fallback string, getenv func(string) string) (Endpoint, error) {
	proto, err := parseProtocol(firstEnv(getenv, envTracesProtocol, envProtocol))
	if err != nil {
		return Endpoint{}, err
	}
	insecure := false
	for _, name := range []string{envInsecure, envTracesInsecure} {
		if v := strings.TrimSpace(getenv(name)); v != "" {
			b, err := strconv.ParseBool(v)
			if err != nil {
				return Endpoint{}, fmt.Errorf("%s=%q: want true or false", name, v)
			}
			insecure = b
		}
	}
	var ep Endpoint
	switch {
	case explicit != "":
		ep, err = ParseEndpoint(explicit, proto, false)
		if err != nil {
			return Endpoint{}, err
		}
	case getenv(envTracesEndpoint) != "":
		ep, err = ParseEndpoint(getenv(envTracesEndpoint), proto, true)
		if err != nil {
			return Endpoint{}, fmt.Errorf("%s: %w", envTracesEndpoint, err)
		}
	case getenv(envEndpoint) != "":
		ep, err = ParseEndpoint(getenv(envEndpoint), proto, false)
		if err != nil {
			return Endpoint{}, fmt.Errorf("%s: %w", envEndpoint, err)
		}
	case fallback != "":
		ep, err = ParseEndpoint(fallback, proto, false)
		if err != nil {
			return Endpoint{}, err
		}
	default:
		def := defaultGRPCEndpoint
		if proto == ProtocolHTTP {
			def = defaultHTTPEndpoint
		}
		ep, _ = ParseEndpoint(def, proto, false)
	}
	if insecure && !ep.schemed {
		ep.Insecure = true
	}
	ep.Headers, err = parseHeaders(getenv(envHeaders), envHeaders)
	if err != nil {
		return Endpoint{}, err
	}
	traces, err := parseHeaders(getenv(envTracesHeaders), envTracesHeaders)
	if err != nil {
		return Endpoint{}, err
	}
	for k, v := range traces {
		if ep.Headers == nil {
			ep.Headers = map[string]string{}
		}
		ep.Headers[k] = v
	}
	return ep, nil
}

func firstEnv(getenv func(string) string, names ...string) string {
	for _, n := range names {
		if v := strings.TrimSpace(getenv(n)); v != "" {
			return v
		}
	}
	return ""
}

func parseProtocol(p string) (string, error) {
	switch p {
	case "", ProtocolGRPC:
		return ProtocolGRPC, nil
	case ProtocolHTTP:
		return ProtocolHTTP, nil
	case "http/json":
		return "", fmt.Errorf("OTLP protocol http/json is not supported: use grpc or http/protobuf")
	}
	return "", fmt.Errorf("unknown OTLP protocol %q (want grpc or http/protobuf)", p)
}

// ParseEndpoint checks an endpoint: HOST:PORT, or an http:// or https://
// URL. For http/protobuf the URL path is kept when perSignal (the
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT rule: as given, "/" when empty);
// otherwise it is a base to which /v1/traces is added, unless the value
// already ends in /v1/traces.
func ParseEndpoint(value, protocol string, perSignal bool) (Endpoint, error) {
	v := strings.TrimSpace(value)
	bad := func(why string) (Endpoint, error) {
		return Endpoint{}, fmt.Errorf("OTLP endpoint %q: %s (want HOST:PORT or an http:// or https:// URL)", value, why)
	}
	if v == "" {
		return bad("empty")
	}
	ep := Endpoint{Protocol: protocol}
	var p string
	if i := strings.Index(v, "://"); i >= 0 {
		u, err := url.Parse(v)
		if err != nil {
			return bad(strings.TrimPrefix(err.Error(), "parse "+strconv.Quote(v)+": "))
		}
		switch strings.ToLower(u.Scheme) {
		case "http":
			ep.Insecure = true
		case "https":
		default:
			return bad(fmt.Sprintf("scheme %q", u.Scheme))
		}
		if u.User != nil || u.RawQuery != "" || u.Fragment != "" {
			return bad("user info, query and fragment have no place here")
		}
		host, port := u.Hostname(), u.Port()
		if host == "" {
			return bad("no host")
		}
		if !validHost(host) {
			return bad("not a host name")
		}
		if port == "" {
			port = "80"
			if !ep.Insecure {
				port = "443"
			}
		} else if err := checkPort(port); err != nil {
			return bad(err.Error())
		}
		ep.Host = net.JoinHostPort(host, port)
		ep.schemed = true
		p = u.EscapedPath()
	} else {
		host, port, err := net.SplitHostPort(v)
		if err != nil {
			return bad("no port")
		}
		if host == "" {
			return bad("no host")
		}
		if !validHost(host) {
			return bad("not a host name")
		}
		if err := checkPort(port); err != nil {
			return bad(err.Error())
		}
		ep.Host = net.JoinHostPort(host, port)
		ep.Insecure = isLoopback(host)
	}
	if protocol == ProtocolHTTP {
		switch {
		case perSignal && p == "":
			p = "/"
		case perSignal:
		case strings.HasSuffix(p, tracesPath):
		default:
			p = path.Join("/", p, tracesPath)
		}
		ep.Path = p
	}
	return ep, nil
}

// validHost accepts an IP address or a DNS name (letters, digits, '-',
// '_' and '.').
func validHost(h string) bool {
	if net.ParseIP(h) != nil {
		return true
	}
	for i := 0; i < len(h); i++ {
		c := h[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return h != ""
}

func checkPort(port string) error {
	n, err := strconv.Atoi(port)
	if err != nil || n < 1 || n > 65535 {
		return fmt.Errorf("port %q is not a number from 1 to 65535", port)
	}
	return nil
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// parseHeaders reads OTEL_EXPORTER_OTLP_HEADERS: comma-separated key=value
// pairs, both percent-decoded (the W3C baggage format the specification
// names).
func parseHeaders(s, name string) (map[string]string, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	h := map[string]string{}
	for _, kv := range strings.Split(s, ",") {
		if strings.TrimSpace(kv) == "" {
			continue
		}
		k, v, ok := strings.Cut(kv, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return nil, fmt.Errorf("%s: entry %q is not key=value", name, strings.TrimSpace(kv))
		}
		key, err := url.PathUnescape(k)
		if err != nil {
			return nil, fmt.Errorf("%s: key %q: bad percent-encoding", name, k)
		}
		val, err := url.PathUnescape(strings.TrimSpace(v))
		if err != nil {
			return nil, fmt.Errorf("%s: value of %q: bad percent-encoding", name, key)
		}
		if !validHeaderName(key) {
			return nil, fmt.Errorf("%s: %q is not a valid header name", name, key)
		}
		h[strings.ToLower(key)] = val
	}
	return h, nil
}

// validHeaderName accepts HTTP token characters, which gRPC metadata keys
// are a subset of once lowercased.
func validHeaderName(k string) bool {
	for i := 0; i < len(k); i++ {
		c := k[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("-_.", c) >= 0:
		default:
			return false
		}
	}
	return k != ""
}

// newExporter builds the official OTLP exporter for ep. Options given here
// override the environment, which still supplies what reel does not set
// itself (OTEL_EXPORTER_OTLP_TIMEOUT, _COMPRESSION, _CERTIFICATE, ...).
func newExporter(ctx context.Context, ep Endpoint) (sdktrace.SpanExporter, error) {
	switch ep.Protocol {
	case ProtocolGRPC:
		return exporterOf(ctx, ep, otlptracegrpc.New, otlptracegrpc.WithEndpointURL, otlptracegrpc.WithInsecure, otlptracegrpc.WithHeaders)
	case ProtocolHTTP:
		return exporterOf(ctx, ep, otlptracehttp.New, otlptracehttp.WithEndpointURL, otlptracehttp.WithInsecure, otlptracehttp.WithHeaders)
	}
	return nil, fmt.Errorf("unknown OTLP protocol %q", ep.Protocol)
}

// exporterOf builds the exporter of one of the SDK's two OTLP packages,
// whose options differ in type but say the same things: the URL, plain
// text or TLS, the headers.
func exporterOf[O any, E sdktrace.SpanExporter](ctx context.Context, ep Endpoint,
	newExp func(context.Context, ...O) (E, error), url func(string) O, insecure func() O, headers func(map[string]string) O,
) (sdktrace.SpanExporter, error) {
	opts := []O{url(ep.url())}
	if ep.Insecure {
		opts = append(opts, insecure())
	}
	if len(ep.Headers) > 0 {
		opts = append(opts, headers(ep.Headers))
	}
	exp, err := newExp(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("OTLP exporter for %s: %w", ep, err)
	}
	return exp, nil
}

// ProbeTimeout bounds how long Probe waits for a collector to accept a
// connection: on loopback or a LAN one that is up answers in
// milliseconds.
const ProbeTimeout = time.Second

// Probe connects to the endpoint's host and closes the connection, so that
// a batch export to a collector that is not running fails at once with
// what to do, not after the exporter's retries.
func (e Endpoint) Probe(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, ProbeTimeout)
	defer cancel()
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", e.Host)
	if err != nil {
		return fmt.Errorf("no OTLP collector answers at %s: %w (start one, e.g. the OpenTelemetry Collector as docs/opentelemetry.md shows, or name yours with --otel-exporter or OTEL_EXPORTER_OTLP_ENDPOINT)", e, err)
	}
	return c.Close()
}
