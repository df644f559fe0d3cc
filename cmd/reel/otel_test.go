package main

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/reelhq/reel/internal/otlptest"
	"github.com/reelhq/reel/internal/transcripttest"
)

// otelEnv clears the OTEL_* variables the process may have, so the tests
// see only what they set.
func otelEnv(t *testing.T, kv ...string) {
	for _, k := range []string{"OTEL_RESOURCE_ATTRIBUTES", "OTEL_SERVICE_NAME", "OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
		"OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
		"OTEL_EXPORTER_OTLP_INSECURE", "OTEL_EXPORTER_OTLP_TIMEOUT", "OTEL_BSP_SCHEDULE_DELAY", "OTEL_SDK_DISABLED"} {
		t.Setenv(k, "")
	}
	for i := 0; i+1 < len(kv); i += 2 {
		t.Setenv(kv[i], kv[i+1])
	}
}

// otelProject writes a project with a workflow that calls a child.
func otelProject(t *testing.T, config string) string {
	dir := t.TempDir()
	if config != "" {
		writeFile(t, filepath.Join(dir, ".reel", "config.yaml"), config, 0o644)
	} else {
		writeFile(t, filepath.Join(dir, ".reel", "workflows", ".keep"), "", 0o644)
	}
	writeFile(t, filepath.Join(dir, ".reel", "workflows", "child.yaml"), "name: child\nstates:\n  initial: c\n  c: {type: step, command: 'echo child'}\n", 0o644)
	writeFile(t, filepath.Join(dir, "wf.yaml"), `
name: traced
states:
  initial: a
  a: {type: step, command: 'echo a', on_success: each}
  each: {type: for_each, items: '["x","y"]', body: [b], on_complete: sub}
  b: {type: step, command: 'echo {{.loop.Item}}'}
  sub: {type: call_workflow, workflow: child}
`, 0o644)
	return dir
}

var otelLine = regexp.MustCompile(`(?m)^otel: trace ([0-9a-f]{32}): (\d+) spans sent to (\S+ \([^)]+\))`)

// otelSummary reads reel run's (or resume's) live export line: the match
// (line, trace, spans, endpoint) and the number of spans.
func otelSummary(t *testing.T, res cliResult) ([]string, int) {
	t.Helper()
	if res.code != 0 {
		t.Fatalf("exit %d\n%s", res.code, res.stderr)
	}
	m := otelLine.FindStringSubmatch(res.stderr)
	if m == nil {
		t.Fatalf("no otel summary in stderr:\n%s", res.stderr)
	}
	n, _ := strconv.Atoi(m[2])
	return m, n
}

func TestRunExportsLiveAndExportMatchesIt(t *testing.T) {
	otelEnv(t)
	dir := otelProject(t, "")
	rcv := otlptest.NewGRPC(t)
	res := runBinary(t, dir, "run", "wf.yaml", "--otel-exporter", rcv.Endpoint, "--otel-service-name", "ci-runner")
	m, n := otelSummary(t, res)
	if n != 8 || m[3] != "http://"+rcv.Endpoint+" (grpc)" {
		t.Fatalf("summary %q: want 8 spans (the run, a, each, b twice, sub, the child run and its step)", m[0])
	}
	live := rcv.Wait(t, n, 10*time.Second)
	for _, s := range live {
		if s.Resource["service.name"] != "ci-runner" || s.TraceID != m[1] {
			t.Fatalf("span %s: service %v trace %s", s.Name, s.Resource["service.name"], s.TraceID)
		}
	}

	// The same run, exported from its transcript over http/protobuf.
	hrcv := otlptest.NewHTTP(t)
	otelEnv(t, "OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf", "OTEL_EXPORTER_OTLP_ENDPOINT", "http://"+hrcv.Endpoint, "OTEL_SERVICE_NAME", "ci-runner")
	runID := strings.TrimSpace(regexp.MustCompile(`(?m)^run (\S+)$`).FindStringSubmatch(res.stderr)[1])
	exp := runBinary(t, dir, "export", "--to", "otlp", runID)
	if exp.code != 0 {
		t.Fatalf("export: exit %d\n%s", exp.code, exp.stderr)
	}
	if !strings.Contains(exp.stdout, runID+"  trace "+m[1]+"  8 spans (with 1 child run)") || !strings.Contains(exp.stderr, "exported 1 runs, 8 spans to http://"+hrcv.Endpoint+"/v1/traces (http/protobuf)") {
		t.Errorf("export output:\n%s%s", exp.stdout, exp.stderr)
	}
	batch := hrcv.Wait(t, n, 10*time.Second)
	otlptest.Sort(live)
	otlptest.Sort(batch)
	if d := otlptest.Diff(live, batch); d != "" {
		t.Fatalf("live and batch exports differ:\n%s", d)
	}
}

func TestRunTakesTheExporterFromTheProjectConfig(t *testing.T) {
	otelEnv(t)
	rcv := otlptest.NewGRPC(t)
	dir := otelProject(t, fmt.Sprintf("telemetry:\n  exporter: %q\n  service_name: from-config\n", rcv.Endpoint))
	res := runBinary(t, dir, "run", "wf.yaml")
	if res.code != 0 || !otelLine.MatchString(res.stderr) {
		t.Fatalf("run: exit %d\n%s", res.code, res.stderr)
	}
	spans := rcv.Wait(t, 8, 10*time.Second)
	if spans[0].Resource["service.name"] != "from-config" {
		t.Errorf("service.name %v", spans[0].Resource["service.name"])
	}
	// OTEL_SERVICE_NAME beats the config, as OpenTelemetry users expect.
	otelEnv(t, "OTEL_SERVICE_NAME", "from-env")
	res = runBinary(t, dir, "run", "wf.yaml")
	spans = rcv.Wait(t, 16, 10*time.Second)
	if spans[len(spans)-1].Resource["service.name"] != "from-env" {
		t.Errorf("service.name %v", spans[len(spans)-1].Resource["service.name"])
	}
	// --otel-exporter "" turns the project's export off, as in AWF.
	res = runBinary(t, dir, "run", "wf.yaml", "--otel-exporter", "")
	if res.code != 0 || strings.Contains(res.stderr, "otel:") {
		t.Fatalf("run: exit %d\n%s", res.code, res.stderr)
	}
	time.Sleep(200 * time.Millisecond)
	if c := rcv.Count(); c != 16 {
		t.Errorf("%d spans after a run with the export off, want 16", c)
	}
	otelEnv(t, "OTEL_SDK_DISABLED", "true")
	res = runBinary(t, dir, "run", "wf.yaml")
	if res.code != 0 || strings.Contains(res.stderr, "otel:") {
		t.Fatalf("run with OTEL_SDK_DISABLED: exit %d\n%s", res.code, res.stderr)
	}
	otelEnv(t)
	// The project's exporter is ignored, with a warning, without a
	// transcript; the flag is refused.
	res = runBinary(t, dir, "run", "wf.yaml", "--no-transcript")
	if res.code != 0 || !strings.Contains(res.stderr, "reel: warning: otel: telemetry.exporter in the project configuration is ignored with --no-transcript") {
		t.Errorf("run --no-transcript: exit %d\n%s", res.code, res.stderr)
	}
	res = runBinary(t, dir, "run", "wf.yaml", "--no-transcript", "--otel-exporter", rcv.Endpoint)
	if res.code != exitUser || !strings.Contains(res.stderr, "cannot be combined with --no-transcript") {
		t.Errorf("run --no-transcript --otel-exporter: exit %d\n%s", res.code, res.stderr)
	}
}

func TestRunWithABadOrAbsentCollector(t *testing.T) {
	otelEnv(t, "OTEL_EXPORTER_OTLP_TIMEOUT", "200")
	dir := otelProject(t, "")
	res := runBinary(t, dir, "run", "wf.yaml", "--otel-exporter", "localhost")
	if res.code != exitUser || !strings.Contains(res.stderr, `reel: --otel-exporter: OTLP endpoint "localhost": no port`) {
		t.Errorf("bad endpoint: exit %d\n%s", res.code, res.stderr)
	}
	otelEnv(t, "OTEL_EXPORTER_OTLP_TIMEOUT", "200", "OTEL_EXPORTER_OTLP_PROTOCOL", "carrier-pigeon")
	res = runBinary(t, dir, "run", "wf.yaml", "--otel-exporter", "127.0.0.1:4317")
	if res.code != exitUser || !strings.Contains(res.stderr, `unknown OTLP protocol "carrier-pigeon"`) {
		t.Errorf("bad protocol: exit %d\n%s", res.code, res.stderr)
	}
	otelEnv(t, "OTEL_EXPORTER_OTLP_TIMEOUT", "200")
	start := time.Now()
	res = runBinary(t, dir, "run", "wf.yaml", "--otel-exporter", "127.0.0.1:1")
	if res.code != 0 {
		t.Fatalf("a run with an absent collector failed: exit %d\n%s", res.code, res.stderr)
	}
	if !strings.Contains(res.stderr, "reel: warning: otel: trace ") || !strings.Contains(res.stderr, "0 of 8 spans sent to http://127.0.0.1:1 (grpc); 8 not sent:") || !strings.Contains(res.stderr, "connection refused") {
		t.Errorf("absent collector report:\n%s", res.stderr)
	}
	if d := time.Since(start); d > 8*time.Second {
		t.Errorf("the run with an absent collector took %s", d)
	}
}

func TestExportOTLPSelectsRuns(t *testing.T) {
	otelEnv(t)
	storage := t.TempDir()
	dir := filepath.Join(storage, "transcripts")
	transcripttest.WriteSample(t, dir, transcripttest.Variant{})
	transcripttest.WriteSample(t, dir, transcripttest.Variant{ID: transcripttest.OtherID, ChildID: "44444444-4444-4444-8444-444444444444", LintFails: true})
	rcv := otlptest.NewGRPC(t)
	ctx := context.Background()
	export := func(args ...string) (string, string, error) {
		return runReel(t, ctx, append([]string{"export", "--to", "otlp", "--storage", storage, "--otel-exporter", rcv.Endpoint}, args...)...)
	}

	out, stderr, err := export("--all", "--json")
	if err != nil {
		t.Fatalf("export --all: %v\n%s", err, stderr)
	}
	var doc otlpExported
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("--json: %v\n%s", err, out)
	}
	if len(doc.Runs) != 2 || doc.Spans != 2*28 || len(doc.Runs[0].Children) != 1 || doc.Runs[0].TraceID != "11111111111141118111111111111111" {
		t.Errorf("export --all: %+v", doc)
	}
	rcv.Wait(t, doc.Spans, 10*time.Second)

	// --since leaves out what started before; the sample runs started in
	// 2026-06.
	out, stderr, err = export("--since", "2026-06-09")
	if err != nil || out != "" || !strings.Contains(stderr, "exported 0 runs, 0 spans") {
		t.Errorf("--since after the runs: %v\n%s%s", err, out, stderr)
	}
	out, _, err = export("--since", "2026-06-08T00:00:00Z")
	if err != nil || strings.Count(out, "\n") != 2 {
		t.Errorf("--since before the runs: %v\n%s", err, out)
	}

	// A child run named alone goes to its parent's trace.
	out, stderr, err = export(transcripttest.ChildID)
	if err != nil || !strings.Contains(out, transcripttest.ChildID+"  trace 11111111111141118111111111111111  4 spans") {
		t.Errorf("child alone: %v\n%s%s", err, out, stderr)
	}
	// A child named with its parent goes with it, once.
	out, _, err = export(transcripttest.RootID, transcripttest.ChildID)
	if err != nil || strings.Count(out, "\n") != 1 || !strings.Contains(out, "28 spans (with 1 child run)") {
		t.Errorf("parent and child: %v\n%s", err, out)
	}

	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "name runs, or give --all or --since"},
		{[]string{"--all", transcripttest.RootID}, "not both"},
		{[]string{"--since", "last tuesday"}, `--since: "last tuesday" is not a time`},
		{[]string{"--since", "24h", transcripttest.RootID}, "not both"},
		{[]string{"55555555-5555-4555-8555-555555555555"}, "no such run"},
	} {
		_, _, err := export(c.args...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("export %v: %v, want %q", c.args, err, c.want)
		}
	}
	if _, _, err := runReel(t, ctx, "export", "--to", "flowstudio", transcripttest.RootID); err == nil || !strings.Contains(err.Error(), "takes RUN and DIR") {
		t.Errorf("flowstudio with one argument: %v", err)
	}
}

func TestExportOTLPToAnAbsentCollectorFails(t *testing.T) {
	otelEnv(t, "OTEL_EXPORTER_OTLP_TIMEOUT", "200", "OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:1")
	storage := t.TempDir()
	transcripttest.WriteSample(t, filepath.Join(storage, "transcripts"), transcripttest.Variant{})
	_, _, err := runReel(t, context.Background(), "export", "--to", "otlp", "--all", "--storage", storage)
	code, msg := exitStatus(err)
	if code != 1 || !strings.Contains(msg, "connection refused") || !strings.Contains(msg, "0 of 1 runs sent before the error") {
		t.Errorf("exit %d %q", code, msg)
	}
}

// reel resume exports live too: the resumed attempt's spans are the batch
// export's spans of the same file.
func TestResumeExportsLive(t *testing.T) {
	otelEnv(t)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, ".reel", "workflows", ".keep"), "", 0o644)
	writeFile(t, filepath.Join(dir, "wf.yaml"), `
name: flaky
states:
  initial: a
  a: {type: step, command: 'echo a', on_success: b}
  b: {type: step, command: 'test -f marker', on_success: done}
  done: {type: terminal}
`, 0o644)
	res := runBinary(t, dir, "run", "wf.yaml")
	if res.code == 0 {
		t.Fatalf("first run succeeded: the resume would have nothing to do\n%s", res.stderr)
	}
	runID := regexp.MustCompile(`(?m)^run (\S+)$`).FindStringSubmatch(res.stderr)[1]
	writeFile(t, filepath.Join(dir, "marker"), "", 0o644)
	rcv := otlptest.NewGRPC(t)
	_, n := otelSummary(t, runBinary(t, dir, "resume", runID, "--otel-exporter", rcv.Endpoint))
	live := rcv.Wait(t, n, 10*time.Second)

	all := otlptest.NewGRPC(t)
	if exp := runBinary(t, dir, "export", "--to", "otlp", runID, "--otel-exporter", all.Endpoint); exp.code != 0 {
		t.Fatalf("export: exit %d\n%s", exp.code, exp.stderr)
	}
	batch := all.Wait(t, n+1, 10*time.Second)
	byID := map[string]otlptest.Span{}
	for _, s := range batch {
		byID[s.SpanID] = s
	}
	attempts := map[any]int{}
	for _, s := range live {
		b, ok := byID[s.SpanID]
		if !ok {
			t.Errorf("live span %s %s not in the batch export", s.SpanID, s.Name)
			continue
		}
		if d := otlptest.Diff([]otlptest.Span{s}, []otlptest.Span{b}); d != "" {
			t.Error(d)
		}
		if s.Name == "invoke_workflow flaky" {
			attempts[s.Attrs["reel.run.attempt"]]++
		}
	}
	if attempts[int64(2)] != 1 || len(batch) <= len(live) {
		t.Errorf("live export of the resume: %d spans (run attempts %v), batch export of the file: %d", len(live), attempts, len(batch))
	}
}
