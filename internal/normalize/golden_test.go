package normalize

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/reelhq/reel/internal/golden"
	"github.com/reelhq/reel/internal/testfixtures"
	"github.com/reelhq/reel/transcript"
)

const goldenRunID = "00000000-0000-4000-8000-000000000000"

// parsed is one recording run through a parser.
type parsed struct {
	events []transcript.ExchangeEvent
	res    *Result
}

// parse feeds data to a parser of format f in the chunks split returns.
func parse(t testing.TB, f Format, data []byte, split func([]byte) [][]byte) parsed {
	t.Helper()
	var out parsed
	p, err := NewParser(f, func(ev transcript.ExchangeEvent) error {
		out.events = append(out.events, ev)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	chunks := [][]byte{data}
	if split != nil {
		chunks = split(data)
	}
	for _, c := range chunks {
		if _, err := p.Write(c); err != nil {
			t.Fatalf("write: %v", err)
		}
	}
	out.res, err = p.Close("recording ended")
	if err != nil {
		t.Fatalf("close: %v", err)
	}
	return out
}

// render encodes events the way the transcript writer does, with a fixed
// run id and seq, followed by the result, so goldens are deterministic.
func render(t testing.TB, p parsed) []byte {
	t.Helper()
	var b []byte
	for i, ev := range p.events {
		ev.Seq = uint64(i + 1)
		ev.RunID = goldenRunID
		var err error
		b, err = transcript.AppendEvent(b, &ev)
		if err != nil {
			t.Fatalf("encode event %d (%s): %v", i+1, ev.Type, err)
		}
		if len(b) > 0 && b[len(b)-1] != '\n' {
			b = append(b, '\n')
		}
	}
	r, err := json.Marshal(map[string]any{"result": p.res})
	if err != nil {
		t.Fatal(err)
	}
	return append(append(b, r...), '\n')
}

// fixtureFiles lists the shared recordings of a format.
func fixtureFiles(t testing.TB, f Format) []string {
	t.Helper()
	dir := testfixtures.Dir(t, string(f))
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, e := range entries {
		if !e.IsDir() {
			files = append(files, filepath.Join(dir, e.Name()))
		}
	}
	return files
}

// forEachRecording runs fn as a subtest for every recording of every format:
// this package's own (testdata/recordings) and then the shared fixtures,
// whose absence skips only the shared part.
func forEachRecording(t *testing.T, fn func(t *testing.T, f Format, path string)) {
	for _, f := range Formats() {
		t.Run(string(f), func(t *testing.T) {
			for _, path := range ownRecordings(t, f) {
				t.Run(filepath.Base(path), func(t *testing.T) { fn(t, f, path) })
			}
			for _, path := range fixtureFiles(t, f) {
				t.Run(filepath.Base(path), func(t *testing.T) { fn(t, f, path) })
			}
		})
	}
}

func TestGolden(t *testing.T) {
	forEachRecording(t, func(t *testing.T, f Format, path string) {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		got := render(t, parse(t, f, data, nil))
		golden.Check(t, filepath.Join("testdata", "golden", string(f), filepath.Base(path)+".jsonl"), got)
	})
}
