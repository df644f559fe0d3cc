package agentlog

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/reelhq/reel/transcript"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (go test -update rewrites it):\n%s", name, firstDiff(want, got))
	}
}

func firstDiff(want, got []byte) string {
	wl, gl := bytes.Split(want, []byte("\n")), bytes.Split(got, []byte("\n"))
	for i := 0; i < len(wl) || i < len(gl); i++ {
		var w, g []byte
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if !bytes.Equal(w, g) {
			return fmt.Sprintf("line %d:\nwant %s\n got %s", i+1, w, g)
		}
	}
	return ""
}

// encodeEvents renders imported events as transcript lines with a fixed run
// id, the way the recorder would write them.
func encodeEvents(t *testing.T, events []transcript.ExchangeEvent) []byte {
	t.Helper()
	var out []byte
	for i := range events {
		e := events[i]
		e.Seq, e.RunID = uint64(i+1), "00000000-0000-4000-8000-000000000001"
		var err error
		if out, err = transcript.AppendEvent(out, &e); err != nil {
			t.Fatal(err)
		}
		out = append(out, '\n')
	}
	return out
}

// TestGoldenExport pins the .agentlog reel writes for the sample run.
func TestGoldenExport(t *testing.T) {
	events, err := transcript.ReadFile(writeSample(t, t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	recs, err := FromTranscript(events, ExportOptions{SDKVersion: "test"})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := Encode(&buf, recs); err != nil {
		t.Fatal(err)
	}
	golden(t, "sample.agentlog", buf.Bytes())
}

// TestGoldenImport pins the transcript reel makes of Shadow's demo trace
// and of a trace holding every v0.1 and v0.2 kind.
func TestGoldenImport(t *testing.T) {
	recs, err := ReadFile(fixture(t, "demo-baseline.agentlog"), ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := ToTranscript(recs, "")
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "demo-baseline.transcript.jsonl", encodeEvents(t, res.Events))
	res, err = ToTranscript(v02Trace(t), "")
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "all-kinds.transcript.jsonl", encodeEvents(t, res.Events))
}
