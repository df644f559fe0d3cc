package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reelhq/reel/internal/otlptest"
	"github.com/reelhq/reel/internal/serve"
	"github.com/reelhq/reel/transcript/secrets"
)

// The secrets the masking tests plant: one known by value from the
// environment, one known by its shape.
const (
	plantedEnvSecret   = "deploy-token-value-42x"
	plantedShapeSecret = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"
)

// secretWorkflow writes a workflow whose step prints both secrets.
func secretWorkflow(t *testing.T, dir string) string {
	t.Helper()
	wf := filepath.Join(dir, "leaky.yaml")
	writeFile(t, wf, `name: leaky
states:
  initial: say
  say:
    type: step
    command: 'echo "the token is $DEPLOY_TOKEN and `+plantedShapeSecret+`"'
`, 0o644)
	return wf
}

// leakCheck fails the test when data holds a planted secret, or (when
// masked is set) holds no mask at all: an output that lost the text
// altogether would pass the first check and prove nothing.
func leakCheck(t *testing.T, what string, data []byte, masked bool) {
	t.Helper()
	for _, s := range []string{plantedEnvSecret, plantedShapeSecret} {
		if strings.Contains(string(data), s) {
			t.Errorf("%s: the secret %s reaches the output", what, s[:8])
		}
	}
	if masked && !strings.Contains(string(data), secrets.Masked) {
		t.Errorf("%s: nothing masked (%d bytes)", what, len(data))
	}
}

// treeBytes is every file under dir, concatenated.
func treeBytes(t *testing.T, dir string) []byte {
	t.Helper()
	var all []byte
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := os.ReadFile(p)
			all = append(all, b...)
		}
		return nil
	})
	return all
}

func spanBytes(spans []otlptest.Span) []byte {
	b, _ := json.Marshal(spans)
	return b
}

// --mask-secrets at output time masks a run recorded without it on every
// output path: replay (text, markdown, html to a file and to stdout),
// export (agentlog, agentlog into Shadow's store and its SQLite index,
// Flow Studio, OTLP with content). Without the flag the secrets do get
// through, so the checks can fail.
func TestMaskSecretsOnEveryOutputPath(t *testing.T) {
	t.Setenv("DEPLOY_TOKEN", plantedEnvSecret)
	otelEnv(t)
	dir := t.TempDir()
	storage := filepath.Join(dir, "st")
	wf := secretWorkflow(t, dir)
	ctx := context.Background()
	if _, errOut, err := runReel(t, ctx, "run", wf, "--storage", storage); err != nil {
		t.Fatalf("run: %v\n%s", err, errOut)
	}
	reel := func(args ...string) string {
		t.Helper()
		out, errOut, err := runReel(t, ctx, append(args, "--storage", storage)...)
		if err != nil {
			t.Fatalf("reel %v: %v\n%s", args, err, errOut)
		}
		return out
	}
	cmdRun := latestRun(t, storage)
	// Agent exchanges, for the formats that carry only those: a session
	// imported without masking.
	session := filepath.Join(dir, "session.jsonl")
	writeFile(t, session, `{"parentUuid":null,"isSidechain":false,"cwd":"/w","sessionId":"s-1","type":"user","message":{"role":"user","content":"ship it with `+plantedEnvSecret+`"},"uuid":"u1","timestamp":"2025-11-01T10:00:00.000Z"}
{"parentUuid":"u1","isSidechain":false,"sessionId":"s-1","type":"assistant","message":{"model":"claude-sonnet-4-5","id":"m1","type":"message","role":"assistant","content":[{"type":"text","text":"Shipping with `+plantedShapeSecret+`."}],"usage":{"input_tokens":1,"output_tokens":1}},"uuid":"u2","timestamp":"2025-11-01T10:00:01.000Z"}
`, 0o644)
	runs, _ := importJSON(t, "--storage", storage, session)
	agentRun := runs[0].RunID
	if out := reel("replay", cmdRun); !strings.Contains(out, plantedEnvSecret) || !strings.Contains(out, plantedShapeSecret) {
		t.Fatalf("the unmasked replay lacks the secrets: the checks below prove nothing\n%s", out)
	}

	leakCheck(t, "replay", []byte(reel("replay", cmdRun, "--mask-secrets")), true)
	leakCheck(t, "replay --format markdown", []byte(reel("replay", cmdRun, "--format", "markdown", "--mask-secrets")), true)
	leakCheck(t, "replay --format html -o -", []byte(reel("replay", cmdRun, "--format", "html", "-o", "-", "--mask-secrets")), true)
	html := filepath.Join(dir, "run.html")
	reel("replay", cmdRun, "--format", "html", "-o", html, "--mask-secrets")
	b, err := os.ReadFile(html)
	if err != nil {
		t.Fatal(err)
	}
	leakCheck(t, "replay --format html -o FILE", b, true)

	for _, c := range []struct {
		name string
		run  string
		args []string
	}{
		{"agentlog", agentRun, []string{"--to", "agentlog"}},
		{"agentlog --store", agentRun, []string{"--to", "agentlog", "--store"}},
		{"flowstudio", cmdRun, []string{"--to", "flowstudio"}},
		{"flowstudio (agent)", agentRun, []string{"--to", "flowstudio"}},
	} {
		target := filepath.Join(dir, "export-"+strings.NewReplacer(" ", "", "(", "", ")", "").Replace(c.name))
		args := append([]string{"export", c.run, target, "--mask-secrets", "--storage", storage}, c.args...)
		if _, errOut, err := runReel(t, ctx, args...); err != nil {
			t.Fatalf("export %s: %v\n%s", c.name, err, errOut)
		}
		var data []byte
		if st, err := os.Stat(target); err == nil && !st.IsDir() {
			data, _ = os.ReadFile(target)
		} else {
			data = treeBytes(t, target)
		}
		leakCheck(t, "export --to "+c.name, data, true)
	}

	plain := filepath.Join(dir, "plain")
	reel("export", agentRun, plain, "--to", "agentlog")
	if b := treeBytes(t, plain); !strings.Contains(string(b), plantedEnvSecret) {
		t.Fatal("the unmasked agentlog export lacks the secret: the export checks prove nothing")
	}
	leakCheck(t, "replay --format html (agent)", []byte(reel("replay", agentRun, "--format", "html", "-o", "-", "--mask-secrets")), true)

	rcv := otlptest.NewGRPC(t)
	out, errOut, err := runReel(t, ctx, "export", "--to", "otlp", "--otel-exporter", rcv.Endpoint, "--otel-content", "--mask-secrets", "--json", "--storage", storage, cmdRun)
	if err != nil {
		t.Fatalf("export --to otlp: %v\n%s", err, errOut)
	}
	var doc otlpExported
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	leakCheck(t, "export --to otlp --otel-content", spanBytes(rcv.Wait(t, doc.Spans, 10*time.Second)), true)
}

// latestRun is the id of the newest run in storage.
func latestRun(t *testing.T, storage string) string {
	t.Helper()
	out, errOut, err := runReel(t, context.Background(), "runs", "--json", "--limit", "1", "--storage", storage)
	if err != nil {
		t.Fatalf("runs: %v\n%s", err, errOut)
	}
	var runs []runRow
	if err := json.Unmarshal([]byte(out), &runs); err != nil || len(runs) != 1 {
		t.Fatalf("runs --json: %v %s", err, out)
	}
	return runs[0].RunID
}

// A run recorded with --mask-secrets leaks nothing through any reader:
// the display, the audit trail, the live OTLP export with content, reel
// search, and serve's API, pages and search, over real HTTP.
func TestMaskedRunLeaksThroughNoReader(t *testing.T) {
	t.Setenv("DEPLOY_TOKEN", plantedEnvSecret)
	otelEnv(t)
	dir := t.TempDir()
	storage := filepath.Join(dir, "st")
	wf := secretWorkflow(t, dir)
	ctx := context.Background()
	rcv := otlptest.NewGRPC(t)
	out, errOut, err := runReel(t, ctx, "run", wf, "--storage", storage, "--mask-secrets", "--otel-exporter", rcv.Endpoint, "--otel-content")
	if err != nil {
		t.Fatalf("run: %v\n%s", err, errOut)
	}
	leakCheck(t, "run's display", []byte(out+errOut), true)
	b, err := os.ReadFile(filepath.Join(storage, "audit.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	leakCheck(t, "audit trail", b, false)
	leakCheck(t, "transcripts", treeBytes(t, filepath.Join(storage, "transcripts")), true)
	leakCheck(t, "run --otel-exporter --otel-content", spanBytes(rcv.Wait(t, 2, 10*time.Second)), true)
	id := latestRun(t, storage)

	out, errOut, err = runReel(t, ctx, "search", "token", "--json", "--storage", storage)
	if err != nil || !strings.Contains(out, id) {
		t.Fatalf("search: %v %s\n%s", err, errOut, out)
	}
	leakCheck(t, "reel search", []byte(out), true)

	s, err := serve.New(ctx, serve.Options{Storage: storage})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	for _, path := range []string{"/", "/runs/" + id, "/runs/" + id + "/overview", "/api/runs", "/api/runs/" + id, "/search?q=token", "/api/search?q=" + url.QueryEscape("token")} {
		resp, err := http.Get(ts.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %s", path, resp.Status)
		}
		leakCheck(t, fmt.Sprintf("serve GET %s", path), body, false)
	}
}
