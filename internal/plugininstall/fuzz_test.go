package plugininstall

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func tarGz(files map[string]string) []byte {
	var b bytes.Buffer
	gz := gzip.NewWriter(&b)
	tw := tar.NewWriter(gz)
	for name, data := range files {
		tw.WriteHeader(&tar.Header{Name: name, Mode: 0o755, Size: int64(len(data)), Typeflag: tar.TypeReg})
		tw.Write([]byte(data))
	}
	tw.Close()
	gz.Close()
	return b.Bytes()
}

// extract never writes outside its directory, whatever the archive.
func FuzzExtract(f *testing.F) {
	f.Add(tarGz(map[string]string{"plugin.yaml": "name: x", "awf-plugin-x": "#!/bin/sh"}))
	f.Add(tarGz(map[string]string{"../evil": "x"}))
	f.Add(tarGz(map[string]string{"/abs": "x"}))
	f.Add(tarGz(map[string]string{"a/./../../b": "x"}))
	f.Add([]byte("not gzip"))
	root := f.TempDir()
	n := 0
	f.Fuzz(func(t *testing.T, data []byte) {
		n++
		dir := filepath.Join(root, "case", strings.Repeat("d", n%3+1), "x")
		os.RemoveAll(filepath.Join(root, "case"))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		_ = extract(data, dir)
		filepath.Walk(filepath.Join(root, "case"), func(p string, fi os.FileInfo, err error) error {
			if err == nil && !fi.IsDir() && !strings.HasPrefix(p, dir+string(filepath.Separator)) {
				t.Fatalf("wrote %s outside %s", p, dir)
			}
			return nil
		})
	})
}

// checksumFor finds a name's sum in any checksum file text, or nothing.
func FuzzChecksumFor(f *testing.F) {
	f.Add("abc  a.tar.gz\ndef *b.tar.gz\n", "b.tar.gz")
	f.Add("", "x")
	f.Fuzz(func(t *testing.T, sums, name string) {
		got := checksumFor(sums, name)
		if got != "" && !strings.Contains(strings.ToLower(sums), got) {
			t.Fatalf("%q is not in the file", got)
		}
	})
}
