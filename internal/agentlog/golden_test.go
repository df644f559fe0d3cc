package agentlog

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/reelhq/reel/internal/golden"
	"github.com/reelhq/reel/internal/transcripttest"
)

// TestGoldenExport pins the .agentlog reel writes for the sample run.
func TestGoldenExport(t *testing.T) {
	events := transcripttest.ExchangeSample(t)
	recs, err := FromTranscript(events, ExportOptions{SDKVersion: "test"})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := Encode(&buf, recs); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "sample.agentlog"), buf.Bytes())
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
	golden.Check(t, filepath.Join("testdata", "demo-baseline.transcript.jsonl"), transcripttest.Encode(t, res.Events))
	res, err = ToTranscript(v02Trace(t), "")
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "all-kinds.transcript.jsonl"), transcripttest.Encode(t, res.Events))
}
