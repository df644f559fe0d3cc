package textview

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"testing"

	"github.com/reelhq/reel/internal/benchratio"
	"github.com/reelhq/reel/internal/runs"
	"github.com/reelhq/reel/internal/transcripttest"
	"github.com/reelhq/reel/transcript"
)

// stdlibRender is the baseline: decode every line with encoding/json and
// print its type and path, as a replay without its two passes would.
func stdlibRender(w io.Writer, path string) error {
	bw := bufio.NewWriter(w)
	err := transcripttest.StdlibLines(path, func(line []byte) error {
		var ev transcript.ExchangeEvent
		if err := json.Unmarshal(line, &ev); err != nil {
			return err
		}
		bw.WriteString(string(ev.Type) + " " + ev.Path + "\n")
		return nil
	})
	if err != nil {
		return err
	}
	return bw.Flush()
}

// BenchmarkReplay renders a 100k-event run (both passes: tool ids and turn
// counts, then the conversation) beside the baseline.
func BenchmarkReplay(b *testing.B) {
	path := transcripttest.WriteLoopRun(b, b.TempDir(), 20000)
	st, _ := os.Stat(path)
	b.SetBytes(st.Size())
	benchratio.Run(b, func() {
		if _, err := Replay(context.Background(), io.Discard, runs.Open(path, runs.Options{}), Options{}); err != nil {
			b.Fatal(err)
		}
	}, func() {
		if err := stdlibRender(io.Discard, path); err != nil {
			b.Fatal(err)
		}
	})
}
