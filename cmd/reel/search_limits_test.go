package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reelhq/reel/internal/proctest"
	"github.com/reelhq/reel/transcript"
)

// writeWordRuns writes runs transcripts of about size bytes each, whose
// command outputs are words drawn from a vocabulary of 50,000: an index
// where a query of many short prefixes has thousands of terms to merge.
func writeWordRuns(t *testing.T, storage string, runs, size int) {
	t.Helper()
	rng := rand.New(rand.NewPCG(26, 5))
	vocab := make([]string, 50000)
	for i := range vocab {
		b := make([]byte, 3+rng.IntN(8))
		for j := range b {
			b[j] = byte('a' + rng.IntN(26))
		}
		vocab[i] = string(b)
	}
	var out strings.Builder
	for out.Len() < 8<<10 {
		out.WriteString(vocab[rng.IntN(len(vocab))] + " ")
	}
	text := out.String()
	tdir := transcript.Dir(storage)
	os.MkdirAll(tdir, 0o700)
	for r := range runs {
		id := transcript.NewRunID()
		var b strings.Builder
		seq := 0
		ev := func(typ, path, payload string) {
			seq++
			fmt.Fprintf(&b, `{"seq":%d,"run_id":%q,"type":%q,"path":%q,"iteration":0,"timestamp":"2026-06-%02dT08:14:%02d.000000Z","payload":%s}`+"\n", seq, id, typ, path, 1+r%28, seq%60, payload)
		}
		ev("run.started", "", `{"name":"words","kind":"workflow"}`)
		for s := 0; b.Len() < size; s++ {
			// Each output a different slice of the text, with words of
			// its own, so that chunks differ.
			k := rng.IntN(len(text) / 2)
			ev("step.completed", fmt.Sprint("s", s), fmt.Sprintf(`{"name":"s","kind":"command","result":{"exit_code":0,"output":"%s %s %s"}}`,
				text[k:k+len(text)/2], vocab[rng.IntN(len(vocab))], vocab[rng.IntN(len(vocab))]))
		}
		ev("run.completed", "", `{"name":"words","kind":"workflow","result":{"status":"success"}}`)
		if err := os.WriteFile(filepath.Join(tdir, id+".jsonl"), []byte(b.String()), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// Issue 26, item 5: a query over index.MaxQueryBytes or MaxQueryWords is
// refused at once (400 from the server, exit 2 from the CLI), and a search
// its client abandons stops within a second, through the real server.
func TestSearchLimits(t *testing.T) {
	storage := filepath.Join(t.TempDir(), "st")
	writeWordRuns(t, storage, 48, 1<<20)
	if res := runBounded(t, t.TempDir(), 5*time.Minute, "index", "--storage", storage); res.code != 0 {
		t.Fatalf("index: %d %s", res.code, res.stderr)
	}
	huge := strings.TrimSpace(strings.Repeat("lorem ipsum dolor sit amet ", 10000)) // 50,000 words, 270 KB
	words := func(n int) string { return strings.TrimSpace(strings.Repeat("word ", n)) }

	// The CLI: refused before the index is opened, with a clear error.
	for _, q := range []string{huge, words(65), strings.Repeat("x", 2049)} {
		start := time.Now()
		res := runBounded(t, t.TempDir(), time.Minute, append([]string{"search", "--storage", storage}, strings.Fields(q)...)...)
		if res.code != 2 || !strings.Contains(res.stderr, "the query is too large") || time.Since(start) > 5*time.Second {
			t.Errorf("reel search of %d bytes: exit %d in %s: %s", len(q), res.code, time.Since(start), tailOf(res.stderr, 300))
		}
	}
	if res := runBounded(t, t.TempDir(), time.Minute, append([]string{"search", "--storage", storage}, strings.Fields(words(64))...)...); res.code != 1 {
		t.Errorf("reel search of 64 words: exit %d (want 1, no hit): %s", res.code, tailOf(res.stderr, 300))
	}

	s := serveBinary(t, 5*time.Minute, "--storage", storage)
	pid := s.cmd.Process.Pid
	for _, path := range []string{"/api/search?q=", "/search?q="} {
		for _, q := range []string{huge, words(65)} {
			cpu0, start := proctest.CPU(pid), time.Now()
			code, body := s.get(t, path+url.QueryEscape(q))
			took, cpu := time.Since(start), proctest.CPU(pid)-cpu0
			t.Logf("GET %s<%d words, %d bytes>: %d in %s, server CPU %s", path, len(strings.Fields(q)), len(q), code, took.Round(time.Millisecond), cpu)
			if code != http.StatusBadRequest || !strings.Contains(string(body), "the query is too large") || took > time.Second {
				t.Errorf("GET %s<%d bytes>: %d in %s: %.200s", path, len(q), code, took, body)
			}
		}
	}
	if code, body := s.get(t, "/api/search?q="+url.QueryEscape(words(64))); code != http.StatusOK {
		t.Errorf("64 words: %d %.200s", code, body)
	}

	// The costliest queries within the limits: many one-letter prefixes,
	// each merging the postings of thousands of terms. Answered or
	// refused, each costs the server a bounded time; abandoned, each stops
	// within a second.
	var prefixes []string
	for c := 'a'; c <= 'z'; c++ {
		prefixes = append(prefixes, string(c)+"*")
	}
	costly := strings.Join(prefixes, " ")
	for _, path := range []string{"/api/search?q=", "/search?q="} {
		cpu0, start := proctest.CPU(pid), time.Now()
		code, _ := s.get(t, path+url.QueryEscape(costly))
		t.Logf("GET %s<26 prefixes>: %d in %s, server CPU %s", path, code, time.Since(start).Round(time.Millisecond), proctest.CPU(pid)-cpu0)
		if code != http.StatusOK && code != http.StatusBadRequest {
			t.Errorf("GET %s<26 prefixes>: %d", path, code)
		}
		for range 3 {
			ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.url+strings.TrimPrefix(path, "/")+url.QueryEscape(costly)+"&after=999999999:0", nil)
			if resp, err := http.DefaultClient.Do(req); err == nil {
				resp.Body.Close()
			}
			cancel()
			time.Sleep(time.Second)
			cpu1 := proctest.CPU(pid)
			time.Sleep(2 * time.Second)
			if more := proctest.CPU(pid) - cpu1; more > 100*time.Millisecond {
				t.Errorf("GET %s<26 prefixes> abandoned after 100ms: the server used %s more CPU from 1 s to 3 s after", path, more)
			}
		}
	}
}
