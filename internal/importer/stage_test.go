package importer

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// The helper process of TestSweepLeavesLiveStages: it makes a stage in
// REEL_TEST_STAGE_DIR, says where, and waits to be killed.
func TestMain(m *testing.M) {
	if dir := os.Getenv("REEL_TEST_STAGE_DIR"); dir != "" {
		st, err := newStage(dir)
		if err != nil {
			fmt.Println("error:", err)
			os.Exit(1)
		}
		os.WriteFile(filepath.Join(st.Dir(), "half.jsonl"), []byte("{}\n"), 0o600)
		fmt.Println(st.Dir())
		select {}
	}
	os.Exit(m.Run())
}

func stages(t *testing.T, dir string) []string {
	t.Helper()
	found, err := filepath.Glob(filepath.Join(dir, stagePrefix+"*"))
	if err != nil {
		t.Fatal(err)
	}
	return found
}

// A stage another live process holds survives a sweep; once that process
// is killed (SIGKILL: nothing of it cleans up), the next sweep removes it.
func TestSweepLeavesLiveStages(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("stages are told apart by flock(2)")
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "REEL_TEST_STAGE_DIR="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || !strings.HasPrefix(strings.TrimSpace(line), dir) {
		t.Fatalf("helper said %q, %v", line, err)
	}
	held := strings.TrimSpace(line)
	// A stage of this process, live too, and one nobody holds.
	mine, err := newStage(dir)
	if err != nil {
		t.Fatal(err)
	}
	abandoned := filepath.Join(dir, stagePrefix+"123")
	if err := os.MkdirAll(filepath.Join(abandoned, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	// Names that only look like stages are not touched.
	os.WriteFile(filepath.Join(dir, stagePrefix+"file"), nil, 0o600)
	os.Symlink(t.TempDir(), filepath.Join(dir, stagePrefix+"link"))

	n, err := Sweep(dir)
	if err != nil || n != 1 {
		t.Fatalf("sweep: removed %d, %v; want 1 (the abandoned one)", n, err)
	}
	for _, p := range []string{held, mine.Dir(), filepath.Join(dir, stagePrefix+"file"), filepath.Join(dir, stagePrefix+"link")} {
		if _, err := os.Lstat(p); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
	if _, err := os.Stat(abandoned); !os.IsNotExist(err) {
		t.Errorf("abandoned stage: %v", err)
	}
	cmd.Process.Kill()
	cmd.Wait()
	if n, err := Sweep(dir); err != nil || n != 1 {
		t.Fatalf("sweep after the kill: removed %d, %v; want 1", n, err)
	}
	if _, err := os.Stat(held); !os.IsNotExist(err) {
		t.Errorf("killed process's stage: %v", err)
	}
	mine.Abort()
	if left := stages(t, dir); len(left) != 2 {
		t.Errorf("left %v, want the file and the link", left)
	}
}

// Sweeps racing stages being made never take a live one: every stage
// newStage returns is still there, whole, when its import commits.
func TestSweepRacesNewStages(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "transcripts")
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
				Sweep(out)
			}
		}
	}()
	const rounds = 500
	var failed int
	for i := range rounds {
		st, err := newStage(out)
		if err != nil {
			t.Fatal(err)
		}
		name := fmt.Sprintf("%08d-0000-4000-8000-000000000000.jsonl", i)
		if err := os.WriteFile(filepath.Join(st.Dir(), name), []byte("{}\n"), 0o600); err != nil {
			failed++
			st.Abort()
			continue
		}
		if err := st.Commit(nil, nil); err != nil {
			failed++
		}
	}
	close(stop)
	wg.Wait()
	if failed > 0 {
		t.Errorf("%d of %d stages were swept under their import", failed, rounds)
	}
	entries, _ := os.ReadDir(out)
	if len(entries) != rounds {
		t.Errorf("%d transcripts, want %d", len(entries), rounds)
	}
}
