package main

import (
	"bufio"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/reelhq/reel/internal/proctest"
	"github.com/reelhq/reel/transcript"
)

// otelcolVersion is the collector scripts/otelcol.sh builds, as
// ../shared/otel/README.md describes.
const otelcolVersion = "v0.120.0"

// otelcolBinary finds the collector: $REEL_OTELCOL, else where
// scripts/otelcol.sh puts it. Absent, the test is skipped with the way to
// build it.
func otelcolBinary(t *testing.T) string {
	t.Helper()
	p, ok := otelcolPath()
	if !ok {
		t.Skipf("no OpenTelemetry Collector at %s (or $REEL_OTELCOL): build it with scripts/otelcol.sh, which does what ../shared/otel/README.md says:\n"+
			"  go install go.opentelemetry.io/collector/cmd/builder@%s\n  builder --config ../shared/otel/builder.yaml", p, otelcolVersion)
	}
	return p
}

// otelcolPath is where the collector is, and whether it is there.
func otelcolPath() (string, bool) {
	if p := os.Getenv("REEL_OTELCOL"); p != "" {
		return p, true
	}
	cache := os.Getenv("REEL_OTELCOL_CACHE")
	if cache == "" {
		base := os.Getenv("XDG_CACHE_HOME")
		if base == "" {
			home, _ := os.UserHomeDir()
			base = filepath.Join(home, ".cache")
		}
		cache = filepath.Join(base, "reel", "otelcol-"+otelcolVersion)
	}
	p := filepath.Join(cache, "otelcol-dist", "otelcol-reel")
	_, err := os.Stat(p)
	return p, err == nil
}

func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// collector is a running OpenTelemetry Collector with the debug exporter.
type collector struct {
	grpc, http string
	out        *proctest.Buffer
}

// startCollector runs the collector on free loopback ports, with
// ../shared/otel/collector.yaml's pipeline (OTLP receiver, debug exporter
// at detailed verbosity) written for those ports.
func startCollector(t *testing.T) *collector {
	t.Helper()
	bin := otelcolBinary(t)
	c := &collector{grpc: freePort(t), http: freePort(t), out: &proctest.Buffer{}}
	cfg := fmt.Sprintf(`receivers:
  otlp:
    protocols:
      grpc:
        endpoint: %s
      http:
        endpoint: %s
exporters:
  debug:
    verbosity: detailed
service:
  telemetry:
    metrics:
      level: none
  pipelines:
    traces:
      receivers: [otlp]
      exporters: [debug]
`, c.grpc, c.http)
	path := filepath.Join(t.TempDir(), "collector.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--config", path)
	cmd.Stdout, cmd.Stderr = c.out, c.out
	if err := cmd.Start(); err != nil {
		t.Fatalf("start collector: %v", err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(c.out.String(), "Everything is ready") {
		if time.Now().After(deadline) {
			t.Fatalf("the collector did not start:\n%s", c.out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	return c
}

// debugSpan is a span as the debug exporter prints it.
type debugSpan struct {
	TraceID, ParentID, ID, Name, Kind string
	Start, End                        string
	Status, StatusMessage             string
	Attrs                             map[string]string
	Service                           string
}

// parseDebug reads the debug exporter's detailed output.
func parseDebug(out string) []debugSpan {
	var spans []debugSpan
	var cur *debugSpan
	service := ""
	inAttrs, inResource := false, false
	field := regexp.MustCompile(`^\s{4}(Trace ID|Parent ID|ID|Name|Kind|Start time|End time|Status code|Status message)\s*: ?(.*)$`)
	attr := regexp.MustCompile(`^\s+-> ([^:]+): (.*)$`)
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "Resource attributes:"):
			inResource, inAttrs = true, false
			continue
		case strings.HasPrefix(line, "Span #"):
			spans = append(spans, debugSpan{Attrs: map[string]string{}, Service: service})
			cur = &spans[len(spans)-1]
			inAttrs, inResource = false, false
			continue
		case strings.HasPrefix(line, "Attributes:"):
			inAttrs = cur != nil
			continue
		case !strings.HasPrefix(line, " "):
			inAttrs, inResource = false, false
		}
		if m := attr.FindStringSubmatch(line); m != nil {
			if inResource && m[1] == "service.name" {
				service = m[2]
			}
			if inAttrs {
				cur.Attrs[m[1]] = m[2]
			}
			continue
		}
		if m := field.FindStringSubmatch(line); m != nil && cur != nil {
			v := strings.TrimSpace(m[2])
			switch m[1] {
			case "Trace ID":
				cur.TraceID = v
			case "Parent ID":
				cur.ParentID = v
			case "ID":
				cur.ID = v
			case "Name":
				cur.Name = v
			case "Kind":
				cur.Kind = v
			case "Start time":
				cur.Start = v
			case "End time":
				cur.End = v
			case "Status code":
				cur.Status = v
			case "Status message":
				cur.StatusMessage = v
			}
		}
	}
	return spans
}

func (c *collector) waitSpans(t *testing.T, n int) []debugSpan {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		spans := parseDebug(c.out.String())
		if len(spans) >= n {
			return spans
		}
		if time.Now().After(deadline) {
			t.Fatalf("the collector printed %d spans, want %d:\n%s", len(spans), n, c.out.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestDemoThroughARealCollector runs the bundled demo with a live export
// to a real OpenTelemetry Collector, then exports its transcripts again in
// batch over http/protobuf, and checks the collector's debug output span
// by span: the same ids, parents, names and attributes both times, and the
// spans the demo must give.
func TestDemoThroughARealCollector(t *testing.T) {
	c := startCollector(t)
	otelEnv(t)
	dir := t.TempDir()
	storage := filepath.Join(dir, "storage")
	demo, err := filepath.Abs(filepath.Join("..", "..", "examples", "demo.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	res := runBinary(t, dir, "run", demo, "--storage", storage, "--otel-exporter", c.grpc, "--otel-service-name", "reel-e2e")
	_, n := otelSummary(t, res)
	live := c.waitSpans(t, n)
	if len(live) != n {
		t.Fatalf("the collector printed %d spans for a live export of %d", len(live), n)
	}

	otelEnv(t, "OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf", "OTEL_EXPORTER_OTLP_ENDPOINT", "http://"+c.http, "OTEL_SERVICE_NAME", "reel-e2e")
	exp := runBinary(t, dir, "export", "--to", "otlp", "--all", "--storage", storage)
	if exp.code != 0 {
		t.Fatalf("export: exit %d\n%s", exp.code, exp.stderr)
	}
	all := c.waitSpans(t, 2*n)
	if len(all) != 2*n {
		t.Fatalf("%d spans after the batch export, want %d", len(all), 2*n)
	}
	batch := all[n:]

	key := func(s debugSpan) string { return s.TraceID + "/" + s.ID }
	byKey := map[string]debugSpan{}
	for _, s := range batch {
		byKey[key(s)] = s
	}
	for _, s := range live {
		b, ok := byKey[key(s)]
		if !ok {
			t.Errorf("live span %s %s is not in the batch export", s.ID, s.Name)
			continue
		}
		if fmt.Sprint(s) != fmt.Sprint(b) {
			t.Errorf("span %s differs:\nlive  %+v\nbatch %+v", s.ID, s, b)
		}
	}

	// The run's trace id is its run id; its span id is the documented
	// SHA-256 of run id, path "", iteration 0, attempt 0.
	runID := regexp.MustCompile(`(?m)^run (\S+)$`).FindStringSubmatch(res.stderr)[1]
	traceID := strings.ReplaceAll(runID, "-", "")
	u, _ := hex.DecodeString(traceID)
	in := binary.BigEndian.AppendUint32(append([]byte{}, u...), 0)
	in = binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(in, 0), 0)
	sum := sha256.Sum256(in)
	rootID := hex.EncodeToString(sum[:8])

	byName := map[string][]debugSpan{}
	ids := map[string]debugSpan{}
	for _, s := range live {
		byName[s.Name] = append(byName[s.Name], s)
		ids[s.ID] = s
		if s.TraceID != traceID || s.Service != "Str(reel-e2e)" {
			t.Errorf("%s: trace %s service %s, want %s reel-e2e", s.Name, s.TraceID, s.Service, traceID)
		}
	}
	for _, s := range live {
		if _, ok := ids[s.ParentID]; s.ParentID != "" && !ok {
			t.Errorf("%s: parent %s not exported", s.Name, s.ParentID)
		}
	}
	one := func(name string) debugSpan {
		t.Helper()
		if len(byName[name]) != 1 {
			t.Fatalf("%d spans named %q; spans: %v", len(byName[name]), name, byName)
		}
		return byName[name][0]
	}
	root := one("invoke_workflow demo")
	if root.ID != rootID || root.ParentID != "" || root.Kind != "Internal" || root.Status != "Unset" {
		t.Errorf("root %+v, want id %s", root, rootID)
	}
	want := func(s debugSpan, attrs map[string]string) {
		t.Helper()
		for k, v := range attrs {
			if s.Attrs[k] != v {
				t.Errorf("%s: %s = %q, want %q", s.Name, k, s.Attrs[k], v)
			}
		}
	}
	want(root, map[string]string{"gen_ai.operation.name": "Str(invoke_workflow)", "gen_ai.workflow.name": "Str(demo)", "reel.run.status": "Str(success)", "reel.run.id": "Str(" + runID + ")"})
	call := one("call_workflow summary")
	child := one("invoke_workflow summarize")
	if call.ParentID != root.ID || child.ParentID != call.ID {
		t.Errorf("the child run's span is not under its call_workflow step: call %+v child %+v", call, child)
	}
	want(child, map[string]string{"reel.run.parent_id": "Str(" + runID + ")", "reel.run.status": "Str(success)"})
	agent := one("invoke_agent review")
	if agent.ParentID != root.ID || agent.Kind != "Client" {
		t.Errorf("agent span %+v", agent)
	}
	// The usage and cost are the agent step's result as recorded.
	var ar transcript.AgentResult
	events, err := transcript.ReadFile(filepath.Join(storage, "transcripts", runID+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range events {
		if ev.Type == transcript.StepCompleted && ev.Path == "review" {
			transcript.DecodeResult(ev.Step().Result, &ar)
		}
	}
	if ar.CostUSD == nil || ar.Usage.InputTokens == 0 || ar.SessionID == "" {
		t.Fatalf("the demo's agent result lacks usage, cost or session: %+v", ar)
	}
	want(agent, map[string]string{
		"gen_ai.operation.name": "Str(invoke_agent)", "gen_ai.agent.name": "Str(review)", "gen_ai.provider.name": "Str(anthropic)",
		"gen_ai.request.model": "Str(claude-sonnet-4-5)", "gen_ai.response.model": "Str(claude-sonnet-4-5-20250929)",
		"gen_ai.usage.input_tokens":            fmt.Sprintf("Int(%d)", ar.Usage.InputTokens),
		"gen_ai.usage.output_tokens":           fmt.Sprintf("Int(%d)", ar.Usage.OutputTokens),
		"gen_ai.usage.cache_read.input_tokens": fmt.Sprintf("Int(%d)", ar.Usage.CacheReadTokens),
		"gen_ai.conversation.id":               "Str(" + ar.SessionID + ")",
		"reel.usage.cost_usd":                  fmt.Sprintf("Double(%v)", *ar.CostUSD), "reel.step.status": "Str(success)",
	})
	tool := one("execute_tool Read")
	if tool.ParentID != agent.ID {
		t.Errorf("tool span not under the agent: %+v", tool)
	}
	want(tool, map[string]string{"gen_ai.operation.name": "Str(execute_tool)", "gen_ai.tool.name": "Str(Read)", "gen_ai.tool.call.id": "Str(toolu_01DemoRead)", "reel.tool.fidelity": "Str(agent_emitted)"})
	loop := one("for_each each_file")
	if its := byName["command each_file.inspect"]; len(its) != 3 {
		t.Errorf("%d loop iterations", len(its))
	} else {
		seen := map[string]bool{}
		for _, it := range its {
			seen[it.Attrs["reel.step.iteration"]] = true
			if it.ParentID != loop.ID {
				t.Errorf("iteration %s not under the loop", it.Attrs["reel.step.iteration"])
			}
		}
		if !seen["Int(0)"] || !seen["Int(1)"] || !seen["Int(2)"] {
			t.Errorf("iterations %v", seen)
		}
	}
	checks := one("parallel checks")
	for _, name := range []string{"command checks.lint", "command checks.test"} {
		if s := one(name); s.ParentID != checks.ID {
			t.Errorf("%s not under the parallel block", name)
		}
	}
	want(one("command checks.test"), map[string]string{"reel.step.attempt": "Int(1)", "reel.step.exit_code": "Int(0)", "reel.step.kind": "Str(command)", "reel.step.path": "Str(checks.test)"})
	if n != 16 {
		t.Errorf("%d spans, want 16: the run, prepare, each_file and 3 iterations, checks, lint, test, summary, the child run and its step, review, its tool, report, done", n)
	}
}
