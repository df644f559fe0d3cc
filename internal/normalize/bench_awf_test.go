package normalize

import (
	"bytes"
	"fmt"
	"os"
	"testing"
)

// streamOf builds a ~1 MiB stream of format f from this package's
// recordings of it, each copy's tool ids made unique so every pair is
// recorded, as in one long session.
func streamOf(tb testing.TB, f Format) []byte {
	var recs [][]byte
	for _, p := range ownRecordings(tb, f) {
		b, err := os.ReadFile(p)
		if err != nil {
			tb.Fatal(err)
		}
		if len(b) > 0 && b[0] != '[' { // the one-document form is not a stream
			recs = append(recs, b)
		}
	}
	var out []byte
	for i := 0; len(out) < 1<<20; i++ {
		for _, r := range recs {
			for _, key := range idKeys[f] {
				r = bytes.ReplaceAll(r, []byte(key), []byte(fmt.Sprintf("%s%d-", key, i)))
			}
			out = append(out, r...)
		}
	}
	return out
}

// idKeys lead the tool ids in the recordings of each format.
var idKeys = map[Format][]string{
	VibeStreaming: {`"id": "`, `"tool_call_id": "`},
	OpencodeJSON:  {`"callID":"`},
}

// BenchmarkImportVibe and BenchmarkImportOpencode measure the new
// normalizers on a long session, beside the stdlib baseline.
func BenchmarkImportVibe(b *testing.B)     { benchImport(b, VibeStreaming, streamOf(b, VibeStreaming)) }
func BenchmarkImportOpencode(b *testing.B) { benchImport(b, OpencodeJSON, streamOf(b, OpencodeJSON)) }
