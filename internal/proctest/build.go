package proctest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// builds are the executables Build made, by package, in one directory.
var builds struct {
	mu   sync.Mutex
	dir  string
	made map[string]*build
}

type build struct {
	once sync.Once
	path string
	err  error
}

// Build builds the Go package pkg (an import path, such as
// github.com/reelhq/reel/cmd/reel) once per test binary, for the tests
// that must run a real process (signals, exit statuses, a terminal), and
// returns the executable's path. A build that failed fails every test that
// asks for it. Main deletes the executables after the tests.
func Build(t testing.TB, pkg string) string {
	t.Helper()
	builds.mu.Lock()
	if builds.made == nil {
		builds.made = map[string]*build{}
	}
	b := builds.made[pkg]
	if b == nil {
		// each in a directory of its own, under its package's name: a
		// command may print its own name
		b = &build{path: filepath.Join(fmt.Sprint(len(builds.made)), filepath.Base(pkg))}
		builds.made[pkg] = b
	}
	builds.mu.Unlock()
	b.once.Do(func() {
		builds.mu.Lock()
		if builds.dir == "" {
			builds.dir, b.err = os.MkdirTemp("", "reel-test-bin-")
		}
		b.path = filepath.Join(builds.dir, b.path)
		builds.mu.Unlock()
		if b.err != nil {
			return
		}
		out, err := exec.Command("go", "build", "-o", b.path, pkg).CombinedOutput()
		if err != nil {
			b.err = fmt.Errorf("go build %s: %v\n%s", pkg, err, out)
		}
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.path
}

// removeBuilds deletes what Build made.
func removeBuilds() {
	builds.mu.Lock()
	defer builds.mu.Unlock()
	if builds.dir != "" {
		os.RemoveAll(builds.dir)
	}
}

// Main runs the tests of a package that starts reel, in-process or as
// processes, with a per-user data directory of their own: $XDG_DATA_HOME
// is a new temporary directory, so a run outside any project never writes
// into the developer's storage. It then removes that directory and what
// Build made, and exits with the tests' status. A package's TestMain calls
// it.
func Main(m *testing.M) {
	data, err := os.MkdirTemp("", "reel-test-data-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv("XDG_DATA_HOME", data)
	code := m.Run()
	os.RemoveAll(data)
	removeBuilds()
	os.Exit(code)
}
