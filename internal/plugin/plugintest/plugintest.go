// Package plugintest builds and installs reel's test plugins
// (internal/plugin/testdata/plugins: our own plugins speaking AWF's plugin
// protocol) for the tests of the packages that host them, and checks that
// none of their processes outlives a test.
package plugintest

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reelhq/reel/internal/plugin"
	"github.com/reelhq/reel/internal/testfixtures"
)

// Names are the test plugins.
var Names = []string{"echo", "db", "policy", "recorder", "steps", "faulty", "badshake"}

var (
	once     sync.Once
	binDir   string
	buildErr error
)

// Source is the directory of a test plugin's source and plugin.yaml.
func Source(t testing.TB, name string) string {
	return filepath.Join(testfixtures.ModuleRoot(t), "internal", "plugin", "testdata", "plugins", name)
}

// Binaries builds the test plugins once per process into a cache
// directory named by the hash of their sources (so that a later run
// reuses them) and returns it: DIR/NAME is plugin NAME's executable.
func Binaries(t testing.TB) string {
	t.Helper()
	once.Do(func() { binDir, buildErr = build(testfixtures.ModuleRoot(t)) })
	if buildErr != nil {
		t.Fatalf("build the test plugins: %v", buildErr)
	}
	return binDir
}

func build(root string) (string, error) {
	src := filepath.Join(root, "internal", "plugin", "testdata", "plugins")
	h := sha256.New()
	io.WriteString(h, runtime.Version())
	for _, f := range []string{filepath.Join(root, "go.sum"), filepath.Join(root, "internal", "plugin", "pluginv1", "plugin.pb.go")} {
		b, err := os.ReadFile(f)
		if err != nil {
			return "", err
		}
		h.Write(b)
	}
	var files []string
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".go") {
			files = append(files, p)
		}
		return err
	})
	if err != nil {
		return "", err
	}
	sort.Strings(files)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return "", err
		}
		io.WriteString(h, f[len(src):])
		h.Write(b)
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	dir := filepath.Join(cache, "reel-test-plugins", hex.EncodeToString(h.Sum(nil))[:16])
	if _, err := os.Stat(filepath.Join(dir, "done")); err == nil {
		return dir, nil
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), "build-")
	if err != nil {
		if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
			return "", err
		}
		if tmp, err = os.MkdirTemp(filepath.Dir(dir), "build-"); err != nil {
			return "", err
		}
	}
	args := []string{"build", "-o", tmp + string(filepath.Separator)}
	for _, n := range Names {
		args = append(args, "./internal/plugin/testdata/plugins/"+n)
	}
	cmd := exec.Command("go", args...)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		os.RemoveAll(tmp)
		return "", &buildError{err: err, out: string(out)}
	}
	if err := os.WriteFile(filepath.Join(tmp, "done"), nil, 0o644); err != nil {
		return "", err
	}
	if err := os.Rename(tmp, dir); err != nil {
		os.RemoveAll(tmp)
		if _, serr := os.Stat(filepath.Join(dir, "done")); serr == nil {
			return dir, nil // another process built it meanwhile
		}
		return "", err
	}
	return dir, nil
}

type buildError struct {
	err error
	out string
}

func (e *buildError) Error() string { return e.err.Error() + "\n" + e.out }

// Install puts test plugin name into pluginsDir as AWF lays plugins out:
// pluginsDir/NAME/plugin.yaml and pluginsDir/NAME/awf-plugin-NAME. It
// returns the plugin's directory.
func Install(t testing.TB, pluginsDir, name string) string {
	t.Helper()
	dir := filepath.Join(pluginsDir, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	Copy(t, filepath.Join(Binaries(t), name), filepath.Join(dir, "awf-plugin-"+name), 0o755)
	Copy(t, filepath.Join(Source(t, name), "plugin.yaml"), filepath.Join(dir, "plugin.yaml"), 0o644)
	return dir
}

// Open installs the test plugins names into a directory of their own and
// opens a host on it with opts (their Dirs replaced); the host is closed
// when the test ends, and the test fails if a plugin process outlives it.
func Open(t testing.TB, opts plugin.Options, names ...string) *plugin.Host {
	t.Helper()
	dir := t.TempDir()
	for _, n := range names {
		Install(t, dir, n)
	}
	opts.Dirs = []string{dir}
	h := plugin.Open(opts)
	t.Cleanup(func() {
		h.Close()
		NoneLeft(t, dir)
	})
	return h
}

// Copy copies a file.
func Copy(t testing.TB, from, to string, mode os.FileMode) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, mode); err != nil {
		t.Fatal(err)
	}
}

// Processes lists the pids of running processes whose executable is
// under dir (Linux; elsewhere none).
func Processes(dir string) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		exe, err := os.Readlink(filepath.Join("/proc", e.Name(), "exe"))
		if err != nil {
			continue
		}
		exe = strings.TrimSuffix(exe, " (deleted)")
		if strings.HasPrefix(exe, dir+string(filepath.Separator)) {
			out = append(out, pid)
		}
	}
	return out
}

// NoneLeft fails the test if a process started from under dir still runs
// (after a grace of a few seconds for exits under way).
func NoneLeft(t testing.TB, dir string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		left := Processes(dir)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("plugin processes left behind under %s: %v", dir, left)
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}
