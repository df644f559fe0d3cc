package otlp_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/reelhq/reel/internal/golden"
	"github.com/reelhq/reel/internal/otlp"
	"github.com/reelhq/reel/internal/otlptest"
	"github.com/reelhq/reel/internal/transcripttest"
	"github.com/reelhq/reel/transcript"
	"github.com/reelhq/reel/transcript/secrets"
)

// cleanEnv keeps the test's process environment out of the resource and
// the endpoint.
func cleanEnv(t *testing.T) {
	for _, k := range []string{"OTEL_RESOURCE_ATTRIBUTES", "OTEL_SERVICE_NAME", "OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
		"OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
		"OTEL_EXPORTER_OTLP_INSECURE", "OTEL_EXPORTER_OTLP_TRACES_INSECURE", "OTEL_EXPORTER_OTLP_TIMEOUT"} {
		t.Setenv(k, "")
	}
}

func env(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func readRun(t testing.TB, path string) []transcript.ExchangeEvent {
	t.Helper()
	evs, err := transcript.ReadFile(path)
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	return evs
}

// sampleRun reads transcripttest's sample (root and child) from dir.
func sampleRun(t testing.TB, dir string, v transcripttest.Variant) otlp.Run {
	t.Helper()
	root := transcripttest.WriteSample(t, dir, v)
	child := v.ChildID
	if child == "" {
		child = transcripttest.ChildID
	}
	return otlp.Run{
		Events:   readRun(t, root),
		Children: map[string][]transcript.ExchangeEvent{child: readRun(t, filepath.Join(dir, child+".jsonl"))},
	}
}

// batchExport sends r to a fresh gRPC receiver and returns what it got.
func batchExport(t *testing.T, cfg otlp.Config, runs ...otlp.Run) []otlptest.Span {
	t.Helper()
	rcv := otlptest.NewGRPC(t)
	ep, err := otlp.Resolve(rcv.Endpoint, "", env(nil))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Endpoint = ep
	if cfg.Version == "" {
		cfg.Version = "test"
	}
	ctx := context.Background()
	b, err := otlp.NewBatch(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, r := range runs {
		n, err := b.Export(ctx, r)
		if err != nil {
			t.Fatalf("export: %v", err)
		}
		total += n
	}
	if err := b.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	spans := rcv.Wait(t, total, 10*time.Second)
	if len(spans) != total {
		t.Fatalf("received %d spans, sent %d", len(spans), total)
	}
	return spans
}

// render writes spans as an indented tree (children under their parent,
// by start time), times relative to the first span's start.
func render(spans []otlptest.Span) string {
	byID := map[string]otlptest.Span{}
	kids := map[string][]otlptest.Span{}
	var roots []otlptest.Span
	t0 := time.Time{}
	for _, s := range spans {
		byID[s.SpanID] = s
		if t0.IsZero() || s.Start.Before(t0) {
			t0 = s.Start
		}
	}
	for _, s := range spans {
		if _, ok := byID[s.ParentID]; ok {
			kids[s.ParentID] = append(kids[s.ParentID], s)
		} else {
			roots = append(roots, s)
		}
	}
	order := func(ss []otlptest.Span) {
		sort.Slice(ss, func(i, j int) bool {
			if !ss[i].Start.Equal(ss[j].Start) {
				return ss[i].Start.Before(ss[j].Start)
			}
			return ss[i].SpanID < ss[j].SpanID
		})
	}
	var b strings.Builder
	if len(spans) > 0 {
		res := spans[0].Resource
		var keys []string
		for k := range res {
			if k != "telemetry.sdk.version" {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		fmt.Fprintf(&b, "resource:")
		for _, k := range keys {
			fmt.Fprintf(&b, " %s=%v", k, res[k])
		}
		fmt.Fprintf(&b, "\nscope: %s %s\n", spans[0].Scope, spans[0].ScopeVersion)
	}
	var walk func(s otlptest.Span, depth int)
	walk = func(s otlptest.Span, depth int) {
		ind := strings.Repeat("  ", depth)
		parent := s.ParentID
		if parent == "" {
			parent = "-"
		}
		fmt.Fprintf(&b, "%s%s [%s] trace=%s id=%s parent=%s +%s %s %s", ind, s.Name, s.Kind, s.TraceID, s.SpanID, parent,
			s.Start.Sub(t0), s.End.Sub(s.Start), s.Status)
		if s.StatusMessage != "" {
			fmt.Fprintf(&b, " %q", s.StatusMessage)
		}
		b.WriteString("\n")
		var keys []string
		for k := range s.Attrs {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			v := s.Attrs[k]
			if str, ok := v.(string); ok {
				v = fmt.Sprintf("%q", str)
			}
			fmt.Fprintf(&b, "%s    %s=%v\n", ind, k, v)
		}
		ks := kids[s.SpanID]
		order(ks)
		for _, c := range ks {
			walk(c, depth+1)
		}
	}
	order(roots)
	for _, r := range roots {
		walk(r, 0)
	}
	return b.String()
}

func TestBatchExportOfTheSampleRun(t *testing.T) {
	cleanEnv(t)
	for _, c := range []struct {
		name    string
		variant transcripttest.Variant
		content bool
	}{
		{"sample", transcripttest.Variant{}, false},
		{"sample-content", transcripttest.Variant{}, true},
		{"sample-lint-fails", transcripttest.Variant{LintFails: true}, false},
		{"sample-interrupted", transcripttest.Variant{Interrupted: true}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := sampleRun(t, t.TempDir(), c.variant)
			spans := batchExport(t, otlp.Config{Content: c.content}, r)
			golden.Check(t, filepath.Join("testdata", c.name+".golden"), []byte(render(spans)))
			checkTree(t, spans)
		})
	}
}

// checkTree checks what holds for any export: one trace, one root, every
// parent present, ids unique, children inside their parent's time.
func checkTree(t *testing.T, spans []otlptest.Span) {
	t.Helper()
	byID := map[string]otlptest.Span{}
	for _, s := range spans {
		if _, dup := byID[s.SpanID]; dup {
			t.Errorf("span id %s used twice", s.SpanID)
		}
		byID[s.SpanID] = s
	}
	roots := 0
	for _, s := range spans {
		if s.TraceID != spans[0].TraceID {
			t.Errorf("%s: trace %s, want one trace %s", s.Name, s.TraceID, spans[0].TraceID)
		}
		if s.ParentID == "" {
			roots++
			continue
		}
		p, ok := byID[s.ParentID]
		if !ok {
			t.Errorf("%s: parent %s missing", s.Name, s.ParentID)
			continue
		}
		if s.Start.Before(p.Start) || s.End.After(p.End) {
			t.Errorf("%s (%s..%s) outside its parent %s (%s..%s)", s.Name, s.Start, s.End, p.Name, p.Start, p.End)
		}
	}
	if roots != 1 {
		t.Errorf("%d root spans, want 1", roots)
	}
}

func TestExportingTwiceGivesTheSameSpans(t *testing.T) {
	cleanEnv(t)
	dir := t.TempDir()
	r := sampleRun(t, dir, transcripttest.Variant{})
	a := batchExport(t, otlp.Config{Content: true}, r)
	b := batchExport(t, otlp.Config{Content: true}, r)
	otlptest.Sort(a)
	otlptest.Sort(b)
	if d := otlptest.Diff(a, b); d != "" {
		t.Fatal(d)
	}
}

// A child run exported on its own lands in its parent's trace, under the
// call_workflow step, with the ids the whole export gives it.
func TestChildRunExportedAloneJoinsItsParentsTrace(t *testing.T) {
	cleanEnv(t)
	dir := t.TempDir()
	whole := sampleRun(t, dir, transcripttest.Variant{})
	all := batchExport(t, otlp.Config{}, whole)
	child := whole.Children[transcripttest.ChildID]
	link, ok := otlp.ChildLink(whole.Events, otlp.Link{}, transcripttest.ChildID)
	if !ok {
		t.Fatal("ChildLink found no call_workflow step for the child")
	}
	alone := batchExport(t, otlp.Config{}, otlp.Run{Events: child, Link: link})
	byID := map[string]otlptest.Span{}
	for _, s := range all {
		byID[s.SpanID] = s
	}
	for _, s := range alone {
		w, ok := byID[s.SpanID]
		if !ok {
			t.Errorf("%s: span %s not in the whole export", s.Name, s.SpanID)
			continue
		}
		if w.TraceID != s.TraceID || w.ParentID != s.ParentID {
			t.Errorf("%s: trace/parent %s/%s alone, %s/%s in the whole export", s.Name, s.TraceID, s.ParentID, w.TraceID, w.ParentID)
		}
	}
	if len(alone) != 4 {
		t.Errorf("child export: %d spans, want 4 (run, agent, tool, verify)", len(alone))
	}
}

func TestMaskingAppliesToExportedContent(t *testing.T) {
	cleanEnv(t)
	secret := "sk-ant-REELTESTSECRETVALUE0123456789"
	id := "44444444-4444-4444-8444-444444444444"
	r := transcripttest.NewRun(t, t.TempDir(), id, "", transcripttest.Epoch)
	r.Event(transcript.ExchangeEvent{Type: transcript.RunStarted, Payload: &transcript.StepPayload{Name: "leak", Kind: transcript.KindWorkflow}})
	r.Agent("ask", 0, "use key "+secret, "", []transcripttest.Tool{{Name: "Bash", ID: "t1", Input: map[string]any{"command": "curl -H 'Authorization: Bearer " + secret + "'"}, Output: "ok " + secret}}, "done with "+secret, transcript.Usage{}, 0)
	r.Event(transcript.ExchangeEvent{Type: transcript.RunCompleted, Payload: &transcript.StepPayload{Name: "leak", Kind: transcript.KindWorkflow, Error: "failed near " + secret}})
	r.Close()
	events := readRun(t, r.Recorder().Path())

	leaks := func(spans []otlptest.Span) int {
		n := 0
		for _, s := range spans {
			if strings.Contains(s.StatusMessage, secret) {
				n++
			}
			for _, v := range s.Attrs {
				if strings.Contains(fmt.Sprint(v), secret) {
					n++
				}
			}
		}
		return n
	}
	if n := leaks(batchExport(t, otlp.Config{Content: true}, otlp.Run{Events: events})); n == 0 {
		t.Fatal("the unmasked export does not carry the secret: the test proves nothing")
	}
	if n := leaks(batchExport(t, otlp.Config{Content: false}, otlp.Run{Events: events})); n != 1 {
		t.Errorf("without --otel-content only the run's error may carry it, %d attributes do", n)
	}
	masked := batchExport(t, otlp.Config{Content: true, Masker: secrets.NewMasker(nil)}, otlp.Run{Events: events})
	if n := leaks(masked); n != 0 {
		t.Errorf("%d attributes carry the secret with masking on", n)
	}
	found := false
	for _, s := range masked {
		for _, v := range s.Attrs {
			found = found || strings.Contains(fmt.Sprint(v), secrets.Masked)
		}
	}
	if !found {
		t.Error("no masked value in the content")
	}
}

func TestHTTPProtobufWithHeaders(t *testing.T) {
	cleanEnv(t)
	rcv := otlptest.NewHTTP(t)
	ep, err := otlp.Resolve("", "", env(map[string]string{
		"OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
		"OTEL_EXPORTER_OTLP_ENDPOINT": "http://" + rcv.Endpoint,
		"OTEL_EXPORTER_OTLP_HEADERS":  "x-team=reel%20team,Authorization=Bearer%20abc",
	}))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	b, err := otlp.NewBatch(ctx, otlp.Config{Endpoint: ep, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	r := sampleRun(t, t.TempDir(), transcripttest.Variant{})
	n, err := b.Export(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	b.Shutdown(ctx)
	got := rcv.Wait(t, n, 10*time.Second)
	want := batchExport(t, otlp.Config{}, r)
	otlptest.Sort(got)
	otlptest.Sort(want)
	if d := otlptest.Diff(got, want); d != "" {
		t.Errorf("http/protobuf and grpc exports differ:\n%s", d)
	}
	for _, h := range rcv.Headers() {
		if h["x-team"] != "reel team" || h["authorization"] != "Bearer abc" {
			t.Errorf("headers %v", h)
		}
	}
}

func TestBatchExportStopsWithTheCollectorsError(t *testing.T) {
	cleanEnv(t)
	t.Setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "500")
	rcv := otlptest.NewGRPC(t)
	rcv.SetFail(fmt.Errorf("disk full"))
	ep, _ := otlp.Resolve(rcv.Endpoint, "", env(nil))
	ctx := context.Background()
	b, err := otlp.NewBatch(ctx, otlp.Config{Endpoint: ep})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Shutdown(ctx)
	_, err = b.Export(ctx, sampleRun(t, t.TempDir(), transcripttest.Variant{}))
	if err == nil || !strings.Contains(err.Error(), "disk full") || !strings.Contains(err.Error(), rcv.Endpoint) {
		t.Fatalf("error %v, want the collector's, naming the endpoint", err)
	}
}

func TestBatchExportToNobodyFailsClearly(t *testing.T) {
	cleanEnv(t)
	t.Setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "300")
	ep, _ := otlp.Resolve("127.0.0.1:1", "", env(nil))
	ctx := context.Background()
	b, err := otlp.NewBatch(ctx, otlp.Config{Endpoint: ep})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Shutdown(ctx)
	start := time.Now()
	_, err = b.Export(ctx, sampleRun(t, t.TempDir(), transcripttest.Variant{}))
	if err == nil || !strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("error %v, want connection refused", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %s with OTEL_EXPORTER_OTLP_TIMEOUT=300", d)
	}
}
