package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"gopkg.in/yaml.v3"
)

// packServer is a stand-in for GitHub serving each pack of
// testdata/awfpacks (awf-workflow-NAME/) as the one release of the
// repository acme/awf-workflow-NAME: the releases API as AWF and reel call
// it (GET /repos/OWNER/REPO/releases), and the release's assets, a
// .tar.gz of the pack's files (flat, as GoReleaser archives them) and a
// checksums.txt listing its SHA-256. Both tools are pointed at it with
// GITHUB_API_URL; nothing leaves the machine.
func packServer(t testing.TB) *httptest.Server {
	t.Helper()
	packServerOnce.Do(func() { packServerAssets, packServerErr = buildPackReleases(filepath.Join("testdata", "awfpacks")) })
	if packServerErr != nil {
		t.Fatal(packServerErr)
	}
	return servePacks(t, packServerAssets)
}

// servePacks serves releases as packServer describes.
func servePacks(t testing.TB, assets map[string]packRelease) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if repo, ok := strings.CutPrefix(r.URL.Path, "/repos/acme/"); ok && strings.HasSuffix(repo, "/releases") {
			rel, ok := assets[strings.TrimSuffix(repo, "/releases")]
			if !ok {
				http.Error(w, `{"message":"Not Found"}`, http.StatusNotFound)
				return
			}
			base := "http://" + r.Host + "/download/" + rel.repo + "/"
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode([]map[string]any{{
				"tag_name": "v" + rel.version, "prerelease": false,
				"assets": []map[string]any{
					{"name": rel.archive, "browser_download_url": base + rel.archive, "size": len(rel.data)},
					{"name": "checksums.txt", "browser_download_url": base + "checksums.txt", "size": len(rel.sums)},
				},
			}})
			return
		}
		if rest, ok := strings.CutPrefix(r.URL.Path, "/download/"); ok {
			repo, file, _ := strings.Cut(rest, "/")
			if rel, ok := assets[repo]; ok {
				switch file {
				case rel.archive:
					w.Write(rel.data)
					return
				case "checksums.txt":
					w.Write([]byte(rel.sums))
					return
				}
			}
		}
		http.NotFound(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv
}

var (
	packServerOnce   sync.Once
	packServerAssets map[string]packRelease
	packServerErr    error
)

// packRelease is one pack served as a release.
type packRelease struct {
	repo, version, archive, sums string
	data                         []byte
}

// buildPackReleases archives each pack directory of dir as the release of
// the repository awf-workflow-NAME, NAME the manifest's. What a source
// checkout holds beside the pack (.git, .github) is left out.
func buildPackReleases(dir string) (map[string]packRelease, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	out := map[string]packRelease{}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		var m struct{ Name, Version string }
		b, err := os.ReadFile(filepath.Join(dir, e.Name(), "manifest.yaml"))
		if err != nil {
			return nil, err
		}
		if err := yaml.Unmarshal(b, &m); err != nil {
			return nil, err
		}
		data, err := tarGz(filepath.Join(dir, e.Name()), "")
		if err != nil {
			return nil, err
		}
		repo := "awf-workflow-" + m.Name
		archive := fmt.Sprintf("%s_%s.tar.gz", repo, m.Version)
		sum := sha256.Sum256(data)
		out[repo] = packRelease{repo: repo, version: m.Version, archive: archive, data: data,
			sums: fmt.Sprintf("%s  %s\n", hex.EncodeToString(sum[:]), archive)}
	}
	return out, nil
}

// tarGz archives the files under src, each named prefix + its path below
// src, with its mode.
func tarGz(src, prefix string) ([]byte, error) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == src {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if strings.HasPrefix(rel, ".") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		h, err := tar.FileInfoHeader(fi, "")
		if err != nil {
			return err
		}
		h.Name = prefix + filepath.ToSlash(rel)
		if d.IsDir() {
			h.Name += "/"
		}
		h.ModTime, h.Uname, h.Gname, h.Uid, h.Gid = fi.ModTime().Truncate(1e9), "", "", 0, 0
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		_, err = tw.Write(b)
		return err
	})
	if err == nil {
		err = tw.Close()
	}
	if err == nil {
		err = zw.Close()
	}
	return buf.Bytes(), err
}
