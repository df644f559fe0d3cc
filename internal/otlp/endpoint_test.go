package otlp

import (
	"context"
	"net"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
)

func envOf(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestResolve(t *testing.T) {
	cases := []struct {
		name     string
		explicit string
		fallback string
		env      map[string]string
		want     string // Endpoint.String()
		insecure bool
	}{
		{name: "default", want: "http://localhost:4317 (grpc)", insecure: true},
		{name: "default http", env: map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf"}, want: "http://localhost:4318/v1/traces (http/protobuf)", insecure: true},
		{name: "AWF flag, loopback", explicit: "127.0.0.1:4317", want: "http://127.0.0.1:4317 (grpc)", insecure: true},
		{name: "AWF flag, remote is TLS", explicit: "collector.example.com:4317", want: "https://collector.example.com:4317 (grpc)"},
		{name: "remote made plaintext", explicit: "collector.example.com:4317", env: map[string]string{"OTEL_EXPORTER_OTLP_INSECURE": "true"}, want: "http://collector.example.com:4317 (grpc)", insecure: true},
		{name: "https URL", explicit: "https://api.honeycomb.io:443", want: "https://api.honeycomb.io:443 (grpc)"},
		{name: "https URL without port", explicit: "https://api.honeycomb.io", want: "https://api.honeycomb.io:443 (grpc)"},
		{name: "http URL stays plaintext whatever INSECURE says", explicit: "http://c:4317", env: map[string]string{"OTEL_EXPORTER_OTLP_INSECURE": "false"}, want: "http://c:4317 (grpc)", insecure: true},
		{name: "IPv6 loopback", explicit: "[::1]:4317", want: "http://[::1]:4317 (grpc)", insecure: true},
		{name: "flag beats env", explicit: "127.0.0.1:1234", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://other:4317"}, want: "http://127.0.0.1:1234 (grpc)", insecure: true},
		{name: "env beats config", fallback: "127.0.0.1:1234", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://other:4317"}, want: "http://other:4317 (grpc)", insecure: true},
		{name: "config", fallback: "127.0.0.1:1234", want: "http://127.0.0.1:1234 (grpc)", insecure: true},
		{name: "traces endpoint beats base", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://a:1", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://b:2"}, want: "http://b:2 (grpc)", insecure: true},
		{name: "http base gets /v1/traces", env: map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf", "OTEL_EXPORTER_OTLP_ENDPOINT": "https://otlp.example.com/otlp"}, want: "https://otlp.example.com:443/otlp/v1/traces (http/protobuf)"},
		{name: "http per-signal is as given", env: map[string]string{"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/protobuf", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://c:4318/custom"}, want: "http://c:4318/custom (http/protobuf)", insecure: true},
		{name: "http per-signal without path is /", env: map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://c:4318"}, want: "http://c:4318/ (http/protobuf)", insecure: true},
		{name: "http flag with full path kept", explicit: "http://c:4318/v1/traces", env: map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf"}, want: "http://c:4318/v1/traces (http/protobuf)", insecure: true},
		{name: "traces protocol beats general", env: map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "grpc"}, want: "http://localhost:4317 (grpc)", insecure: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ep, err := Resolve(c.explicit, c.fallback, envOf(c.env))
			if err != nil {
				t.Fatal(err)
			}
			if ep.String() != c.want || ep.Insecure != c.insecure {
				t.Errorf("got %s insecure=%v, want %s insecure=%v", ep, ep.Insecure, c.want, c.insecure)
			}
		})
	}
}

func TestResolveRefusesBadInputClearly(t *testing.T) {
	cases := []struct {
		explicit string
		env      map[string]string
		want     string
	}{
		{"localhost", nil, "no port"},
		{"localhost:http", nil, "port \"http\""},
		{"localhost:70000", nil, "port \"70000\""},
		{":4317", nil, "no host"},
		{"ftp://c:21", nil, "scheme \"ftp\""},
		{"http://:4317", nil, "no host"},
		{"http://user:pw@c:4317", nil, "user info"},
		{"http://c:4317?x=1", nil, "query"},
		{"", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "not a url"}, "OTEL_EXPORTER_OTLP_ENDPOINT"},
		{"", map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"}, "http/json is not supported"},
		{"", map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "udp"}, "unknown OTLP protocol \"udp\""},
		{"", map[string]string{"OTEL_EXPORTER_OTLP_INSECURE": "yes please"}, "want true or false"},
		{"", map[string]string{"OTEL_EXPORTER_OTLP_HEADERS": "novalue"}, "entry \"novalue\" is not key=value"},
		{"", map[string]string{"OTEL_EXPORTER_OTLP_HEADERS": "a b=1"}, "not a valid header name"},
		{"", map[string]string{"OTEL_EXPORTER_OTLP_TRACES_HEADERS": "k=%zz"}, "bad percent-encoding"},
	}
	for _, c := range cases {
		_, err := Resolve(c.explicit, "", envOf(c.env))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Resolve(%q, %v) = %v, want an error with %q", c.explicit, c.env, err, c.want)
		}
	}
}

func TestHeadersMergeTracesOverGeneral(t *testing.T) {
	ep, err := Resolve("127.0.0.1:1", "", envOf(map[string]string{
		"OTEL_EXPORTER_OTLP_HEADERS":        "x-a=1, X-B = two%20words ,",
		"OTEL_EXPORTER_OTLP_TRACES_HEADERS": "x-b=3",
	}))
	if err != nil {
		t.Fatal(err)
	}
	if len(ep.Headers) != 2 || ep.Headers["x-a"] != "1" || ep.Headers["x-b"] != "3" {
		t.Errorf("headers %v", ep.Headers)
	}
}

func FuzzParseEndpoint(f *testing.F) {
	for _, s := range []string{"localhost:4317", "https://api.honeycomb.io", "http://[::1]:4318/v1/traces", "http://c:4318/a/../b", ":1", "a:0", "http://%zz", "[::1", "h:65535", "https://h:443/x?y"} {
		f.Add(s, true)
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, value string, http bool) {
		proto := ProtocolGRPC
		if http {
			proto = ProtocolHTTP
		}
		ep, err := ParseEndpoint(value, proto, false)
		if err != nil {
			if !strings.Contains(err.Error(), "OTLP endpoint") {
				t.Fatalf("error %q does not name the endpoint", err)
			}
			return
		}
		host, port, err := net.SplitHostPort(ep.Host)
		if err != nil || host == "" || checkPort(port) != nil {
			t.Fatalf("%q: accepted host %q", value, ep.Host)
		}
		if http && !strings.HasPrefix(ep.Path, "/") {
			t.Fatalf("%q: path %q", value, ep.Path)
		}
		// What String names parses back to the same endpoint.
		again, err := ParseEndpoint(ep.url(), proto, true)
		if err != nil || again.Host != ep.Host || again.Insecure != ep.Insecure || again.Path != ep.Path {
			t.Fatalf("%q → %s → %+v, %v", value, ep.url(), again, err)
		}
	})
}

func FuzzParseHeaders(f *testing.F) {
	for _, s := range []string{"a=b", "a=b,c=d", "api-key=x%2Cy", "=", ",,", "a", "k=%", "K=v=w"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		h, err := parseHeaders(s, "H")
		if err != nil {
			return
		}
		for k := range h {
			if !validHeaderName(k) || k != strings.ToLower(k) {
				t.Fatalf("%q: header name %q", s, k)
			}
		}
	})
}

func TestServiceNamePrecedence(t *testing.T) {
	name := func(cfg Config) string {
		t.Helper()
		r, err := newResource(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		v, _ := r.Set().Value(semconv.ServiceNameKey)
		return v.AsString()
	}
	t.Setenv("OTEL_SERVICE_NAME", "")
	t.Setenv("OTEL_RESOURCE_ATTRIBUTES", "")
	if got := name(Config{}); got != "reel" {
		t.Errorf("default %q", got)
	}
	if got := name(Config{DefaultServiceName: "from-config"}); got != "from-config" {
		t.Errorf("config %q", got)
	}
	t.Setenv("OTEL_RESOURCE_ATTRIBUTES", "service.name=from-attrs,deployment.environment.name=ci")
	if got := name(Config{DefaultServiceName: "from-config"}); got != "from-attrs" {
		t.Errorf("OTEL_RESOURCE_ATTRIBUTES over config: %q", got)
	}
	t.Setenv("OTEL_SERVICE_NAME", "from-env")
	if got := name(Config{DefaultServiceName: "from-config"}); got != "from-env" {
		t.Errorf("OTEL_SERVICE_NAME over the rest: %q", got)
	}
	if got := name(Config{ServiceName: "from-flag", DefaultServiceName: "from-config"}); got != "from-flag" {
		t.Errorf("flag over everything: %q", got)
	}
	r, _ := newResource(context.Background(), Config{Version: "1.2.3"})
	if v, _ := r.Set().Value(attribute.Key("deployment.environment.name")); v.AsString() != "ci" {
		t.Errorf("OTEL_RESOURCE_ATTRIBUTES not on the resource: %v", r)
	}
	if v, _ := r.Set().Value(semconv.ServiceVersionKey); v.AsString() != "1.2.3" {
		t.Errorf("service.version %v", v)
	}
}

func TestQueueOptionsFromEnv(t *testing.T) {
	o, err := queueOptionsFromEnv(envOf(nil))
	if err != nil || o.size != 2048 || o.batch != 512 || o.delay.Milliseconds() != 5000 || o.timeout.Milliseconds() != 30000 {
		t.Errorf("defaults %+v %v", o, err)
	}
	o, err = queueOptionsFromEnv(envOf(map[string]string{"OTEL_BSP_MAX_QUEUE_SIZE": "100", "OTEL_BSP_MAX_EXPORT_BATCH_SIZE": "500", "OTEL_BSP_SCHEDULE_DELAY": " 250 ", "OTEL_BSP_EXPORT_TIMEOUT": "1000"}))
	if err != nil || o.size != 100 || o.batch != 100 || o.delay.Milliseconds() != 250 || o.timeout.Milliseconds() != 1000 {
		t.Errorf("set %+v %v (a batch is never larger than the queue)", o, err)
	}
	for k, v := range map[string]string{"OTEL_BSP_MAX_QUEUE_SIZE": "0", "OTEL_BSP_MAX_EXPORT_BATCH_SIZE": "lots", "OTEL_BSP_SCHEDULE_DELAY": "5s", "OTEL_BSP_EXPORT_TIMEOUT": "-1"} {
		if _, err := queueOptionsFromEnv(envOf(map[string]string{k: v})); err == nil || !strings.Contains(err.Error(), k) {
			t.Errorf("%s=%s: %v", k, v, err)
		}
	}
	if _, err := NewLive(context.Background(), Config{}, envOf(map[string]string{"OTEL_BSP_MAX_QUEUE_SIZE": "x"})); err == nil {
		t.Error("NewLive accepted a bad OTEL_BSP_MAX_QUEUE_SIZE")
	}
}
