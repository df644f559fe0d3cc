package flowstudio

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/reelhq/reel/internal/golden"
	"github.com/reelhq/reel/internal/testfixtures"
	"github.com/reelhq/reel/internal/transcripttest"
)

// TestGoldenExport pins every file of the Flow Studio run exported from the
// sample run, in one listing.
func TestGoldenExport(t *testing.T) {
	events := transcripttest.ExchangeSample(t)
	dir := t.TempDir()
	if _, err := Export(dir, Run{Events: events}); err != nil {
		t.Fatal(err)
	}
	var listing bytes.Buffer
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
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
	golden.Check(t, filepath.Join("testdata", "sample.flowstudio.txt"), listing.Bytes())
}

// TestGoldenImport pins the transcript made of Flow Studio's example run.
func TestGoldenImport(t *testing.T) {
	res, err := Import(filepath.Join(testfixtures.Dir(t, "flowstudio-run"), "stepwise-build-claude"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "stepwise-build-claude.transcript.jsonl"), transcripttest.Encode(t, res.Events))
}
