package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reelhq/reel/internal/agentlog"
	"github.com/reelhq/reel/transcript"
	"github.com/reelhq/reel/transcript/secrets"
)

// The secrets a streamed reply leaks split across two deltas, the way
// providers stream them (a few characters per delta).
const (
	splitKeyHead = "sk-ant-api03-"
	splitKeyBody = "Xq7vT2mN9pL4kR8sW1yZ6bC3dF5gH0jKq"
	splitEnvName = "SHOP_API_KEY"
	splitEnvHead = "shop-secr"
	splitEnvTail = "et-value-123"
)

// realOpenAIChunks returns the data lines of a real OpenAI Chat
// Completions stream recording, skipping the test when the shared
// fixtures are absent.
func realOpenAIChunks(t *testing.T) []string {
	t.Helper()
	path := "/work/shared/fixtures/openai-chat-stream/openai-text.chunks.txt"
	data, err := os.ReadFile(path)
	if err != nil {
		t.Skipf("shared fixture %s absent: %v", path, err)
	}
	var lines []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); l != "" {
			lines = append(lines, l)
		}
	}
	return lines
}

// splitSecretsIn rewrites the content deltas of chunks 5, 6, 9 and 10 so
// that an Anthropic key and the value of a secret-named variable each
// arrive in two deltas, and returns the rewritten chunks and the text the
// stream assembles to.
func splitSecretsIn(t *testing.T, lines []string) ([]string, string) {
	t.Helper()
	edits := map[int]func(string) string{
		5:  func(s string) string { return s + " key " + splitKeyHead },
		6:  func(s string) string { return splitKeyBody + s },
		9:  func(s string) string { return s + " pass " + splitEnvHead },
		10: func(s string) string { return splitEnvTail + " " + s },
	}
	out := make([]string, len(lines))
	var text strings.Builder
	for i, l := range lines {
		var chunk map[string]any
		if err := json.Unmarshal([]byte(l), &chunk); err != nil {
			t.Fatalf("chunk %d: %v", i, err)
		}
		if choices, _ := chunk["choices"].([]any); len(choices) > 0 {
			delta := choices[0].(map[string]any)["delta"].(map[string]any)
			if c, ok := delta["content"].(string); ok {
				if e := edits[i]; e != nil {
					c = e(c)
					delta["content"] = c
				}
				text.WriteString(c)
			} else if edits[i] != nil {
				t.Fatalf("chunk %d has no content delta", i)
			}
		}
		b, err := json.Marshal(chunk)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = string(b)
	}
	if !strings.Contains(text.String(), splitKeyHead+splitKeyBody) || !strings.Contains(text.String(), splitEnvHead+splitEnvTail) {
		t.Fatal("the edited stream does not assemble the secrets")
	}
	return out, text.String()
}

// leaks reports the parts of the split secrets found in s.
func leaks(s string) []string {
	var found []string
	for _, part := range []string{splitKeyBody[:8], splitKeyBody[len(splitKeyBody)-8:], splitEnvTail, splitEnvHead} {
		if strings.Contains(s, part) {
			found = append(found, part)
		}
	}
	return found
}

// A Shadow .agentlog trace keeps a streamed reply as chunk records whose
// delta is the provider's chunk; reel imports them as one message of
// stream blocks. --mask-secrets must mask a secret that two deltas split,
// in each block, and keep one block per chunk with every other byte.
func TestImportMasksSecretsSplitAcrossAgentlogChunks(t *testing.T) {
	t.Setenv(splitEnvName, splitEnvHead+splitEnvTail)
	chunks, text := splitSecretsIn(t, realOpenAIChunks(t))
	b := agentlog.NewBuilder()
	ts := time.Date(2026, 2, 12, 22, 4, 52, 0, time.UTC)
	add := func(kind string, payload any) {
		t.Helper()
		ts = ts.Add(10 * time.Millisecond)
		if _, err := b.Add(kind, ts, payload, nil); err != nil {
			t.Fatal(err)
		}
	}
	add(agentlog.KindMetadata, map[string]any{"sdk": map[string]any{"name": "shadow", "version": "3.2.5"}})
	add(agentlog.KindChatRequest, map[string]any{"model": "gpt-4.1-nano", "messages": []any{map[string]any{"role": "user", "content": "Name a holiday."}}})
	for i, c := range chunks {
		add(agentlog.KindChunk, map[string]any{"chunk_index": i, "time_unix_nano": ts.UnixNano(), "delta": json.RawMessage(c)})
	}
	add(agentlog.KindChatResponse, map[string]any{"model": "gpt-4.1-nano", "content": []any{map[string]any{"type": "text", "text": text}},
		"stop_reason": "end_turn", "latency_ms": 40, "usage": map[string]any{"input_tokens": 9, "output_tokens": 300}})
	dir := t.TempDir()
	trace := filepath.Join(dir, "stream.agentlog")
	if err := agentlog.WriteFile(trace, b.Records()); err != nil {
		t.Fatal(err)
	}

	runs, _ := importJSON(t, "--from", "agentlog", "--mask-secrets", "-o", filepath.Join(dir, "out"), trace)
	data, err := os.ReadFile(runs[0].Transcript)
	if err != nil {
		t.Fatal(err)
	}
	if found := leaks(string(data)); len(found) > 0 {
		t.Errorf("the transcript keeps %q of the secrets split across deltas", found)
	}
	events, err := transcript.ReadFile(runs[0].Transcript)
	if err != nil {
		t.Fatal(err)
	}
	var streamed []transcript.ContentBlock
	var reply string
	for _, e := range events {
		m := e.Message()
		if e.Type != transcript.MessageAssistant || m == nil {
			continue
		}
		if m.Blocks[0].Type == transcript.BlockStream {
			streamed = m.Blocks
		} else {
			reply = m.Blocks[0].Text
		}
	}
	if len(streamed) != len(chunks) {
		t.Fatalf("%d stream blocks for %d chunks", len(streamed), len(chunks))
	}
	// The deltas still assemble the reply, masked as the reply is.
	var joined strings.Builder
	for i, blk := range streamed {
		var c struct {
			Choices []struct {
				Delta struct {
					Content *string `json:"content"`
				} `json:"delta"`
			} `json:"choices"`
		}
		if err := json.Unmarshal([]byte(blk.Chunk), &c); err != nil {
			t.Fatalf("block %d is not the chunk's JSON any more: %v", i, err)
		}
		if len(c.Choices) > 0 && c.Choices[0].Delta.Content != nil {
			joined.WriteString(*c.Choices[0].Delta.Content)
		}
	}
	if joined.String() != reply {
		t.Errorf("the masked deltas assemble\n%q\nthe masked reply is\n%q", joined.String(), reply)
	}
	if want := secrets.NewMasker(os.Environ()).MaskString(text); reply != want {
		t.Errorf("reply %q, want %q", reply, want)
	}
	// A chunk without a secret is kept byte for byte.
	for i, blk := range streamed {
		if i == 5 || i == 6 || i == 9 || i == 10 {
			continue
		}
		want, err := agentlog.Canonical([]byte(chunks[i]))
		if err != nil {
			t.Fatal(err)
		}
		if blk.Chunk != string(want) {
			t.Errorf("chunk %d changed:\n%s\nwas\n%s", i, blk.Chunk, want)
		}
	}
}

// A provider stream imported directly (--from openai-chat-stream) is
// assembled into messages before it is masked, so a split secret is masked
// there too; this guards that path.
func TestImportMasksSecretsSplitAcrossOpenAIDeltas(t *testing.T) {
	t.Setenv(splitEnvName, splitEnvHead+splitEnvTail)
	chunks, _ := splitSecretsIn(t, realOpenAIChunks(t))
	dir := t.TempDir()
	src := filepath.Join(dir, "openai-text.chunks.txt")
	if err := os.WriteFile(src, []byte(strings.Join(chunks, "\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	runs, _ := importJSON(t, "--from", "openai-chat-stream", "--mask-secrets", "-o", filepath.Join(dir, "out"), src)
	data, err := os.ReadFile(runs[0].Transcript)
	if err != nil {
		t.Fatal(err)
	}
	if found := leaks(string(data)); len(found) > 0 {
		t.Errorf("the transcript keeps %q of the secrets split across deltas", found)
	}
	if strings.Count(string(data), secrets.Masked) < 2 {
		t.Errorf("the two secrets are not masked:\n%s", data)
	}
}
