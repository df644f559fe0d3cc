package transcript

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

func addSeeds(f *testing.F) {
	data, err := os.ReadFile(filepath.Join("testdata", "wire.golden.jsonl"))
	if err == nil {
		for _, line := range bytes.Split(data, []byte("\n")) {
			f.Add(line)
		}
	}
	f.Add([]byte(`{"seq":1,"run_id":"r","type":"x.y","path":"","iteration":0,"timestamp":"2026-06-08T08:14:42Z","payload":[{"type":"image"}]}`))
	f.Add([]byte("{\"seq\":1,\"payload\":\"\\ud800\\u0000\xff\"}"))
}

// FuzzDecodeEvent: decoding never panics; whatever decodes cleanly
// re-encodes, and that encoding decodes to the same event and is stable.
func FuzzDecodeEvent(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, line []byte) {
		ev, err := DecodeEvent(line)
		if err != nil {
			if !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrUnknownEventType) && !errors.Is(err, ErrUnknownBlockType) {
				t.Fatalf("unclassified error: %v", err)
			}
			return
		}
		if ev.RunID == "" || !ev.Type.Known() {
			return // a writer would refuse these; nothing to round-trip
		}
		out, err := AppendEvent(nil, &ev)
		if err != nil {
			return // e.g. a payload shape the strict writer refuses
		}
		if !json.Valid(out) || bytes.ContainsAny(out, "\n\r") {
			t.Fatalf("encoder produced an invalid line: %q", out)
		}
		again, err := DecodeEvent(out)
		if err != nil {
			t.Fatalf("re-decode of %q: %v", out, err)
		}
		out2, err := AppendEvent(nil, &again)
		if err != nil || !bytes.Equal(out, out2) {
			t.Fatalf("unstable encoding:\n%q\n%q (%v)", out, out2, err)
		}
		// encoding/json agrees that the input was JSON.
		if !json.Valid(bytes.TrimRight(line, "\r\n")) {
			t.Fatalf("accepted invalid JSON %q", line)
		}
	})
}

// FuzzReader: a stream of arbitrary bytes never panics the reader, and it
// always reaches io.EOF with the line count equal to the newlines read.
func FuzzReader(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		rd := NewReader(bytes.NewReader(data))
		rd.SetLimits(Limits{MaxLineSize: 256})
		for i := 0; i < len(data)+2; i++ {
			_, err := rd.Next()
			if err == io.EOF {
				return
			}
		}
		t.Fatal("reader did not reach EOF")
	})
}

// FuzzScanString checks the eight-bytes-at-a-time string scanner against
// the obvious byte loop.
func FuzzScanString(f *testing.F) {
	f.Add([]byte(`hello "world"`), 0)
	f.Add([]byte("\x00\x7f\x80\xff\\\"abcdefghijklmnop"), 3)
	f.Fuzz(func(t *testing.T, data []byte, start int) {
		if start < 0 || start > len(data) {
			return
		}
		got, gotASCII := scanString(data, start)
		want, wantASCII := start, true
		for want < len(data) {
			c := data[want]
			if c == '"' || c == '\\' || c < 0x20 {
				break
			}
			if c >= 0x80 {
				wantASCII = false
			}
			want++
		}
		if got != want || gotASCII != wantASCII {
			t.Fatalf("scanString(%q, %d) = %d,%v want %d,%v", data, start, got, gotASCII, want, wantASCII)
		}
	})
}

// FuzzAppendString: whatever the bytes, the encoder writes one valid JSON
// string without line breaks that reads back as encoding/json reads its
// own encoding of the same bytes.
func FuzzAppendString(f *testing.F) {
	f.Add("plain ascii text that is long enough")
	f.Add("nul\x00 bad\xff\xfe ls\u2028 ps\u2029 \"q\" \\ é 😀 \x7f")
	f.Fuzz(func(t *testing.T, s string) {
		out := appendString(nil, s)
		if !json.Valid(out) || bytes.ContainsAny(out, "\n\r") {
			t.Fatalf("invalid output %q", out)
		}
		var got, want string
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatal(err)
		}
		std, _ := json.Marshal(s)
		json.Unmarshal(std, &want)
		if got != want {
			t.Fatalf("appendString(%q) reads back as %q, encoding/json as %q", s, got, want)
		}
	})
}
