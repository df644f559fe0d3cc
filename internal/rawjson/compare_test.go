package rawjson

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/reelhq/reel/internal/testfixtures"
	"github.com/tidwall/gjson"
)

// The benchmarks below measure rawjson against the two maintained libraries
// made for the same job, tidwall/gjson (a path lookup over raw bytes) and
// go-json-experiment's jsontext (a streaming tokenizer), on the work reel's
// hot paths give a scanner: finding one nested field of a transcript line
// (the reading commands) and walking every member of every line of a
// provider recording, decoding the few strings a normalizer reads (import).
// Each reports its time beside encoding/json's as x-vs-stdlib, as the house
// benchmarks do; the README's Performance section lists the figures.

// lookupGJSON finds payload.blocks.1.tool_name with gjson.
func lookupGJSON(line []byte) []byte {
	r := gjson.GetBytes(line, "payload.blocks.1.tool_name")
	return []byte(r.Raw)
}

// lookupJSONText finds payload.blocks.1.tool_name with jsontext, skipping
// the values on the way with ReadValue.
func lookupJSONText(line []byte) []byte {
	dec := jsontext.NewDecoder(bytes.NewReader(line))
	var find func(path []string) []byte
	find = func(path []string) []byte {
		if len(path) == 0 {
			v, err := dec.ReadValue()
			if err != nil {
				return nil
			}
			return v
		}
		tok, err := dec.ReadToken()
		if err != nil {
			return nil
		}
		switch tok.Kind() {
		case '{':
			for dec.PeekKind() != '}' {
				k, err := dec.ReadToken()
				if err != nil {
					return nil
				}
				if k.String() == path[0] {
					return find(path[1:])
				}
				if err := dec.SkipValue(); err != nil {
					return nil
				}
			}
		case '[':
			n := 0
			for dec.PeekKind() != ']' {
				if want := path[0]; want == itoaSmall(n) {
					return find(path[1:])
				}
				if err := dec.SkipValue(); err != nil {
					return nil
				}
				n++
			}
		}
		return nil
	}
	return find([]string{"payload", "blocks", "1", "tool_name"})
}

func itoaSmall(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return ""
}

func lookupStdlib(line []byte) []byte {
	var ev struct {
		Payload struct {
			Blocks []struct {
				ToolName json.RawMessage `json:"tool_name"`
			} `json:"blocks"`
		} `json:"payload"`
	}
	if json.Unmarshal(line, &ev) != nil || len(ev.Payload.Blocks) < 2 {
		return nil
	}
	return ev.Payload.Blocks[1].ToolName
}

func TestLookupLibrariesAgree(t *testing.T) {
	line := []byte(benchLine)
	want := `"Read"`
	got, _, _ := Lookup(line, strings.Split("payload.blocks.1.tool_name", "."))
	for name, v := range map[string][]byte{
		"rawjson": got, "gjson": lookupGJSON(line), "jsontext": lookupJSONText(line), "stdlib": lookupStdlib(line),
	} {
		if string(v) != want {
			t.Errorf("%s found %q, want %q", name, v, want)
		}
	}
}

// BenchmarkLookupLibraries: the work of BenchmarkLookup with each scanner.
func BenchmarkLookupLibraries(b *testing.B) {
	line := []byte(benchLine)
	path := strings.Split("payload.blocks.1.tool_name", ".")
	for _, lib := range []struct {
		name string
		find func([]byte) []byte
	}{
		{"rawjson", func(l []byte) []byte { v, _, _ := Lookup(l, path); return v }},
		{"gjson", lookupGJSON},
		{"jsontext", lookupJSONText},
	} {
		b.Run(lib.name, func(b *testing.B) {
			b.SetBytes(int64(len(line)))
			b.ReportAllocs()
			var fast, std time.Duration
			for i := 0; i < b.N; i++ {
				t0 := time.Now()
				if len(lib.find(line)) != 6 {
					b.Fatal("not found")
				}
				t1 := time.Now()
				b.StopTimer()
				if len(lookupStdlib(line)) != 6 {
					b.Fatal("stdlib: not found")
				}
				fast += t1.Sub(t0)
				std += time.Since(t1)
				b.StartTimer()
			}
			b.ReportMetric(float64(std)/float64(fast), "x-vs-stdlib")
		})
	}
}

// rolloutLines returns the lines of the largest shared recording, the one
// BenchmarkImportLargest imports.
func rolloutLines(b testing.TB) [][]byte {
	dir := testfixtures.Dir(b, "codex-rollout")
	matches, _ := filepath.Glob(filepath.Join(dir, "rollout-*.jsonl"))
	if len(matches) == 0 {
		b.Skipf("no rollout-*.jsonl in %s", dir)
	}
	data, err := os.ReadFile(matches[0])
	if err != nil {
		b.Fatal(err)
	}
	var lines [][]byte
	for _, l := range bytes.Split(data, []byte("\n")) {
		if len(bytes.TrimSpace(l)) > 0 {
			lines = append(lines, l)
		}
	}
	return lines
}

// The walk a normalizer makes over a rollout line: every top-level member,
// every member of payload, and the string values of "type", "role",
// "name" and "call_id" decoded; everything else skipped. It returns the
// number of members seen and the bytes of the decoded strings, so the
// libraries can be checked to have done the same work.

func walkRawjson(line []byte) (members, strs int) {
	_, err := Members(line, func(k, d []byte, vs int) (int, error) {
		members++
		ve, err := Skip(d, vs)
		if err != nil {
			return 0, err
		}
		v := d[vs:ve]
		switch string(k) {
		case "type":
			strs += len(Str(v))
		case "payload":
			_ = Each(v, func(k, v []byte) bool {
				members++
				switch string(k) {
				case "type", "role", "name", "call_id":
					strs += len(Str(v))
				}
				return true
			})
		}
		return ve, nil
	})
	if err != nil {
		return -1, 0
	}
	return members, strs
}

func walkGJSON(line []byte) (members, strs int) {
	gjson.ParseBytes(line).ForEach(func(k, v gjson.Result) bool {
		members++
		switch k.Str {
		case "type":
			strs += len(v.Str)
		case "payload":
			v.ForEach(func(k, v gjson.Result) bool {
				members++
				switch k.Str {
				case "type", "role", "name", "call_id":
					strs += len(v.Str)
				}
				return true
			})
		}
		return true
	})
	return members, strs
}

func walkJSONText(dec *jsontext.Decoder, line []byte) (members, strs int) {
	dec.Reset(bytes.NewReader(line))
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return -1, 0
	}
	for dec.PeekKind() != '}' {
		k, err := dec.ReadToken()
		if err != nil {
			return -1, 0
		}
		members++
		switch k.String() {
		case "type":
			t, err := dec.ReadToken()
			if err != nil {
				return -1, 0
			}
			strs += len(t.String())
			continue
		case "payload":
			if dec.PeekKind() == '{' {
				dec.ReadToken()
				for dec.PeekKind() != '}' {
					pk, err := dec.ReadToken()
					if err != nil {
						return -1, 0
					}
					members++
					switch pk.String() {
					case "type", "role", "name", "call_id":
						if dec.PeekKind() == '"' {
							t, _ := dec.ReadToken()
							strs += len(t.String())
							continue
						}
					}
					if err := dec.SkipValue(); err != nil {
						return -1, 0
					}
				}
				dec.ReadToken()
				continue
			}
		}
		if err := dec.SkipValue(); err != nil {
			return -1, 0
		}
	}
	return members, strs
}

// walkStdlib is the baseline: each line decoded into a map, as in
// BenchmarkImportLargest.
func walkStdlib(line []byte) (members, strs int) {
	var m map[string]any
	if json.Unmarshal(line, &m) != nil {
		return -1, 0
	}
	for k, v := range m {
		members++
		switch k {
		case "type":
			s, _ := v.(string)
			strs += len(s)
		case "payload":
			p, _ := v.(map[string]any)
			for k, v := range p {
				members++
				switch k {
				case "type", "role", "name", "call_id":
					s, _ := v.(string)
					strs += len(s)
				}
			}
		}
	}
	return members, strs
}

func TestWalkLibrariesAgree(t *testing.T) {
	lines := rolloutLines(t)
	dec := jsontext.NewDecoder(bytes.NewReader(nil))
	for i, l := range lines {
		m, s := walkRawjson(l)
		for name, w := range map[string]func([]byte) (int, int){
			"gjson": walkGJSON, "stdlib": walkStdlib,
			"jsontext": func(l []byte) (int, int) { return walkJSONText(dec, l) },
		} {
			if m2, s2 := w(l); m2 != m || s2 != s {
				t.Fatalf("line %d: rawjson saw %d members, %d string bytes; %s %d, %d", i+1, m, s, name, m2, s2)
			}
		}
	}
}

// BenchmarkWalkLibraries: the scanning part of BenchmarkImportLargest with
// each scanner, MB/s over the whole rollout.
func BenchmarkWalkLibraries(b *testing.B) {
	lines := rolloutLines(b)
	var size int64
	for _, l := range lines {
		size += int64(len(l)) + 1
	}
	dec := jsontext.NewDecoder(bytes.NewReader(nil))
	for _, lib := range []struct {
		name string
		walk func([]byte) (int, int)
	}{
		{"rawjson", walkRawjson},
		{"gjson", walkGJSON},
		{"jsontext", func(l []byte) (int, int) { return walkJSONText(dec, l) }},
	} {
		b.Run(lib.name, func(b *testing.B) {
			b.SetBytes(size)
			b.ReportAllocs()
			var fast, std time.Duration
			for i := 0; i < b.N; i++ {
				t0 := time.Now()
				for _, l := range lines {
					lib.walk(l)
				}
				t1 := time.Now()
				b.StopTimer()
				for _, l := range lines {
					walkStdlib(l)
				}
				std += time.Since(t1)
				b.StartTimer()
				fast += t1.Sub(t0)
			}
			b.ReportMetric(float64(std)/float64(fast), "x-vs-stdlib")
		})
	}
}
