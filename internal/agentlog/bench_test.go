package agentlog

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"testing"
	"time"

	"github.com/reelhq/reel/internal/transcripttest"
)

// benchTrace is the sample run exported and repeated to ~1 MiB of records.
func benchTrace(b *testing.B) []byte {
	b.Helper()
	events := transcripttest.ExchangeSample(b)
	recs, err := FromTranscript(events, ExportOptions{})
	if err != nil {
		b.Fatal(err)
	}
	var buf bytes.Buffer
	if err := Encode(&buf, recs); err != nil {
		b.Fatal(err)
	}
	one := buf.Bytes()
	lines := bytes.SplitAfter(one, []byte("\n"))
	out := append([]byte{}, one...)
	for len(out) < 1<<20 {
		// Later copies chain onto the first root, which stays the only root.
		for _, l := range lines[1:] {
			out = append(out, l...)
		}
	}
	return out
}

// stdlibRead is the plain standard-library way to read and hash a trace:
// decode each line, re-marshal the payload (sorted keys) and hash it.
func stdlibRead(data []byte) int {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	n := 0
	for sc.Scan() {
		var env struct {
			ID      string `json:"id"`
			Payload any    `json:"payload"`
		}
		if json.Unmarshal(sc.Bytes(), &env) != nil {
			continue
		}
		p, _ := json.Marshal(env.Payload)
		sha256.Sum256(p)
		n++
	}
	return n
}

// BenchmarkReadTrace reads and verifies a trace (envelope, canonical JSON,
// content ids, parents) beside the stdlib baseline.
func BenchmarkReadTrace(b *testing.B) {
	data := benchTrace(b)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	var ours, base time.Duration
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		recs, err := ReadAll(bytes.NewReader(data), ReadOptions{})
		ours += time.Since(t0)
		if err != nil || len(recs) == 0 {
			b.Fatal(err)
		}
		t1 := time.Now()
		if stdlibRead(data) != len(recs) {
			b.Fatal("baseline read a different number of records")
		}
		base += time.Since(t1)
	}
	b.ReportMetric(float64(base)/float64(ours), "x-vs-stdlib")
}

// BenchmarkContentID hashes one payload beside json.Unmarshal+Marshal+sha256.
func BenchmarkContentID(b *testing.B) {
	payload := []byte(`{"model":"claude-opus-4-7","messages":[{"role":"system","content":"You are a careful code reviewer."},{"role":"user","content":"Find all Rust files in this repo.\nThen summarise."}],"params":{"temperature":0.2,"top_p":1.0,"max_tokens":512},"tools":[{"name":"search_files","description":"Search for files matching a glob.","input_schema":{"type":"object","properties":{"query":{"type":"string"}},"required":["query"]}}]}`)
	b.SetBytes(int64(len(payload)))
	b.ReportAllocs()
	var ours, base time.Duration
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		if _, err := ContentID(payload); err != nil {
			b.Fatal(err)
		}
		ours += time.Since(t0)
		t1 := time.Now()
		var v any
		if err := json.Unmarshal(payload, &v); err != nil {
			b.Fatal(err)
		}
		c, _ := json.Marshal(v)
		sha256.Sum256(c)
		base += time.Since(t1)
	}
	b.ReportMetric(float64(base)/float64(ours), "x-vs-stdlib")
}

// BenchmarkImportTrace converts a read trace into transcript events, the
// source trace kept for the way back included, beside the least a
// standard-library conversion does: decode every payload and encode it
// again.
//
// The baseline does two JSON passes a record; the import does about seven,
// and its ratio (0.24–0.35x on 2 shared cores, Nov 2026) is that count,
// not slow passes. Per record it decodes the meta (reel's exact blocks
// included) and the payload into typed structs, builds and emits the
// events, then, so that the trace exports back byte for byte (trace.go),
// marshals the payload the event gives back, canonicalizes it and splits
// it into members, canonicalizes and splits the record's own payload, and
// keeps the members that differ; a chat_request's messages are decoded
// once more to share the prefix it repeats from the previous request. A
// CPU profile puts a third of the time in that derive-and-diff step
// (members, canonicalMembers, diff), an eighth in decoding meta and a
// third in GC of the values decoded; each pass runs at about the
// standard library's speed. Dropping the diff would lose the lossless way
// back, which is what an import is for.
func BenchmarkImportTrace(b *testing.B) {
	data := benchTrace(b)
	recs, err := ReadAll(bytes.NewReader(data), ReadOptions{})
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	var ours, base time.Duration
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		res, err := ToTranscript(recs, "bench")
		ours += time.Since(t0)
		if err != nil || len(res.Events) == 0 {
			b.Fatal(err)
		}
		t1 := time.Now()
		for _, r := range recs {
			var v any
			if err := json.Unmarshal(r.Payload, &v); err != nil {
				b.Fatal(err)
			}
			if _, err := json.Marshal(v); err != nil {
				b.Fatal(err)
			}
		}
		base += time.Since(t1)
	}
	b.ReportMetric(float64(base)/float64(ours), "x-vs-stdlib")
}
