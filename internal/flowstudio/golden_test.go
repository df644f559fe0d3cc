package flowstudio

import (
	"bytes"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/reelhq/reel/internal/testfixtures"
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
				t.Fatalf("%s differs from the golden file at line %d (go test -update rewrites it):\nwant %s\n got %s", name, i+1, w, g)
			}
		}
	}
}

// TestGoldenExport pins every file of the Flow Studio run exported from the
// sample run, in one listing.
func TestGoldenExport(t *testing.T) {
	events, err := transcript.ReadFile(writeSample(t, t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if _, err := Export(dir, Run{Events: events}); err != nil {
		t.Fatal(err)
	}
	var listing bytes.Buffer
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		fmt.Fprintf(&listing, "=== %s\n%s", filepath.ToSlash(rel), data)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "sample.flowstudio.txt", listing.Bytes())
}

// TestGoldenImport pins the transcript made of Flow Studio's example run.
func TestGoldenImport(t *testing.T) {
	res, err := Import(filepath.Join(testfixtures.Dir(t, "flowstudio-run"), "stepwise-build-claude"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	var out []byte
	for i := range res.Events {
		e := res.Events[i]
		e.Seq, e.RunID = uint64(i+1), "00000000-0000-4000-8000-000000000001"
		if out, err = transcript.AppendEvent(out, &e); err != nil {
			t.Fatal(err)
		}
		out = append(out, '\n')
	}
	golden(t, "stepwise-build-claude.transcript.jsonl", out)
}
