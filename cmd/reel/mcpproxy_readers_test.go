package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reelhq/reel/internal/otlptest"
	"github.com/reelhq/reel/internal/transcripttest"
	"github.com/reelhq/reel/transcript"
)

// toolEvents counts the tool.call events of the transcripts at paths, and
// those of router fidelity.
func toolEvents(t *testing.T, paths ...string) (calls, router int) {
	t.Helper()
	for _, p := range paths {
		events, err := transcript.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range events {
			if ev.Type == transcript.ToolCall {
				calls++
				if ev.Tool().Fidelity == transcript.FidelityRouter {
					router++
				}
			}
		}
	}
	return calls, router
}

// Every reader shows a call through reel's MCP server once, marked as
// the router's: stats and tools count it once, replay and the web page
// show one call under the agent's tool id with fidelity router (the
// agent's tool_use block joined to it), the OTLP export makes one span of
// it with reel.tool.fidelity router, and the agentlog and Flow Studio
// exports carry the fidelity through an import.
func TestProxiedCallShownOnceEverywhere(t *testing.T) {
	ctx := context.Background()
	storage := t.TempDir()
	src := transcripttest.WriteProxiedSample(t, transcript.Dir(storage))
	runID := strings.TrimSuffix(filepath.Base(src), ".jsonl")
	reel := func(args ...string) string {
		t.Helper()
		out, errOut, err := runReel(t, ctx, append(args, "--storage", storage)...)
		if err != nil {
			t.Fatalf("reel %s: %v\n%s", strings.Join(args, " "), err, errOut)
		}
		return out
	}
	verifyStorage(t, storage)

	var stats struct {
		Total struct {
			ToolCalls int `json:"tool_calls"`
		} `json:"total"`
	}
	if err := json.Unmarshal([]byte(reel("stats", runID, "--json")), &stats); err != nil || stats.Total.ToolCalls != transcripttest.ProxiedCalls {
		t.Errorf("stats: %d tool calls (%v), want %d", stats.Total.ToolCalls, err, transcripttest.ProxiedCalls)
	}
	var pairs []struct {
		CallID   string `json:"call_id"`
		Fidelity string `json:"fidelity"`
	}
	if err := json.Unmarshal([]byte(reel("tools", runID, "--json")), &pairs); err != nil || len(pairs) != transcripttest.ProxiedCalls {
		t.Fatalf("tools: %v %+v", err, pairs)
	}
	if err := json.Unmarshal([]byte(reel("tools", runID, "--json", "--fidelity", "router")), &pairs); err != nil ||
		len(pairs) != transcripttest.ProxiedRouterCalls || pairs[0].CallID != "toolu_w" || pairs[1].CallID != "toolu_b" {
		t.Errorf("tools --fidelity router: %v %+v", err, pairs)
	}

	text := reel("replay", runID, "--no-color")
	for _, want := range []string{"tool call Write (toolu_w, router)", "tool call Bash (toolu_b, router)", "tool call mcp__reel__Bash (toolu_x, agent_emitted)"} {
		if strings.Count(text, want) != 1 {
			t.Errorf("replay shows %q %d times:\n%s", want, strings.Count(text, want), text)
		}
	}
	if strings.Contains(text, "tool call mcp__reel__Write") {
		t.Errorf("replay shows the agent's tool_use of a recorded call as a call of its own:\n%s", text)
	}
	page := reel("replay", runID, "--format", "html", "-o", "-")
	if n := strings.Count(page, "tool call: Write"); n != 1 {
		t.Errorf("web page shows the Write call %d times", n)
	}
	if !strings.Contains(page, "calls mcp__reel__Write") || !strings.Contains(page, "run by reel") {
		t.Errorf("web page does not join the agent's tool_use to the router's call, or does not mark it")
	}

	rcv := otlptest.NewGRPC(t)
	out := reel("export", "--to", "otlp", "--otel-exporter", rcv.Endpoint, "--json", runID)
	var doc otlpExported
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	fid := map[string]int{}
	for _, s := range rcv.Wait(t, doc.Spans, 10*time.Second) {
		if f, ok := s.Attrs["reel.tool.fidelity"].(string); ok {
			fid[f]++
		}
	}
	if fid["router"] != transcripttest.ProxiedRouterCalls || fid["agent_emitted"] != 1 {
		t.Errorf("OTLP tool spans by fidelity: %v", fid)
	}

	for _, format := range []string{"agentlog", "flowstudio"} {
		dir := filepath.Join(t.TempDir(), "out")
		target := runID
		if format == "flowstudio" {
			target = src
		}
		exported := strings.Fields(reel("export", target, "--to", format, dir))
		if format == "flowstudio" {
			exported = []string{dir}
		}
		back := t.TempDir()
		if _, errOut, err := runReel(t, ctx, append([]string{"import", "--from", format, "--output", back}, exported...)...); err != nil {
			t.Fatalf("import %s: %v\n%s", format, err, errOut)
		}
		verifyStorage(t, back)
		files, _ := filepath.Glob(filepath.Join(back, "*.jsonl"))
		if calls, router := toolEvents(t, files...); calls != transcripttest.ProxiedCalls || router != transcripttest.ProxiedRouterCalls {
			t.Errorf("%s round trip: %d tool calls, %d of router fidelity; want %d, %d", format, calls, router, transcripttest.ProxiedCalls, transcripttest.ProxiedRouterCalls)
		}
	}
	if _, err := os.Stat(src); err != nil {
		t.Fatal(err)
	}
}
