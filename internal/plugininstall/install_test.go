package plugininstall

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reelhq/reel/internal/plugin"
)

func TestPickRelease(t *testing.T) {
	rs := []Release{
		{TagName: "v2.0.0-rc.1", Prerelease: true},
		{TagName: "v1.10.0"},
		{TagName: "v1.9.3"},
		{TagName: "nightly"},
		{TagName: "v3.0.0", Draft: true},
	}
	for _, c := range []struct {
		version string
		pre     bool
		want    string
	}{
		{"", false, "v1.10.0"},
		{"", true, "v2.0.0-rc.1"},
		{"1.9.3", false, "v1.9.3"},
		{"v1.9.3", false, "v1.9.3"},
		{"2.0.0-rc.1", false, "v2.0.0-rc.1"},
	} {
		r, err := pickRelease(rs, c.version, c.pre)
		if err != nil || r.TagName != c.want {
			t.Errorf("%q pre=%v: %s %v, want %s", c.version, c.pre, r.TagName, err, c.want)
		}
	}
	if _, err := pickRelease(rs, "3.0.0", false); err == nil {
		t.Error("a draft was picked")
	}
	if _, err := pickRelease([]Release{{TagName: "latest"}}, "", false); err == nil || !strings.Contains(err.Error(), "no stable release with a semantic version tag") {
		t.Errorf("no semver tags: %v", err)
	}
}

func TestPlatformAsset(t *testing.T) {
	r := Release{TagName: "v1.0.0", Assets: []Asset{
		{Name: "awf-plugin-x_1.0.0_darwin_arm64.tar.gz"},
		{Name: "awf-plugin-x_1.0.0_linux_amd64.tar.gz"},
		{Name: "checksums.txt"},
	}}
	if a, err := platformAsset(r, "linux", "amd64"); err != nil || a.Name != "awf-plugin-x_1.0.0_linux_amd64.tar.gz" {
		t.Errorf("linux/amd64: %+v %v", a, err)
	}
	if _, err := platformAsset(r, "windows", "amd64"); err == nil || !strings.Contains(err.Error(), "no archive for windows/amd64 (it has: darwin/arm64, linux/amd64)") {
		t.Errorf("windows: %v", err)
	}
	if a, ok := checksumAsset(r); !ok || a.Name != "checksums.txt" {
		t.Errorf("checksums: %+v", a)
	}
	if got := checksumFor("AB12  other\nCD34 *awf-plugin-x_1.0.0_linux_amd64.tar.gz\n", "awf-plugin-x_1.0.0_linux_amd64.tar.gz"); got != "cd34" {
		t.Errorf("checksumFor: %q", got)
	}
}

func TestExtractRefusesEscapes(t *testing.T) {
	for name, files := range map[string]map[string]string{
		"parent":   {"../x": "evil"},
		"absolute": {"/etc/x": "evil"},
		"nested":   {"a/../../x": "evil"},
	} {
		dir := filepath.Join(t.TempDir(), "in")
		os.MkdirAll(dir, 0o755)
		if err := extract(tarGz(files), dir); err == nil || !strings.Contains(err.Error(), "points outside the plugin") {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// A plugin installed from a local directory is updated from it when its
// binary there changed, and only then.
func TestUpdateFromLocalDirectory(t *testing.T) {
	root := t.TempDir()
	src := filepath.Join(root, "src")
	os.MkdirAll(src, 0o755)
	write := func(bin string) {
		os.WriteFile(filepath.Join(src, "awf-plugin-hello"), []byte("#!/bin/sh\n"+bin+"\n"), 0o755)
		os.WriteFile(filepath.Join(src, "plugin.yaml"), []byte("name: hello\nversion: 1.0.0\nawf_version: '>=0.4.0'\ncapabilities: [operations]\n"), 0o644)
	}
	write("one")
	st, err := plugin.LoadState(filepath.Join(root, "state", plugin.StateFile), "")
	if err != nil {
		t.Fatal(err)
	}
	plugins := filepath.Join(root, "plugins")
	var i Installer
	res, err := i.Install(context.Background(), src, Options{Dir: plugins, State: st})
	if err != nil || res.Name != "hello" || res.Dir != filepath.Join(plugins, "hello") {
		t.Fatalf("install: %+v %v", res, err)
	}
	in := plugin.Inspect(res.Dir)
	if _, up, err := i.Update(context.Background(), in, st); err != nil || up {
		t.Errorf("update with nothing new: %v %v", up, err)
	}
	write("two")
	if _, up, err := i.Update(context.Background(), in, st); err != nil || !up {
		t.Errorf("update with a new binary: %v %v", up, err)
	}
	b, _ := os.ReadFile(filepath.Join(plugins, "hello", "awf-plugin-hello"))
	sum, _ := plugin.FileSHA256(filepath.Join(plugins, "hello", "awf-plugin-hello"))
	if !strings.Contains(string(b), "two") || st.Checksum("hello") != sum {
		t.Errorf("after update: %q, stored %s, actual %s", b, st.Checksum("hello"), sum)
	}
	entries, _ := os.ReadDir(plugins)
	if len(entries) != 1 {
		t.Errorf("leftovers in %s: %v", plugins, entries)
	}
}
