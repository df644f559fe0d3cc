package proctest

import (
	"fmt"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestAssertDeadOnEndedProcess(t *testing.T) {
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	AssertDead(t, strconv.Itoa(cmd.Process.Pid))
}

// fatalRecorder keeps a fatal report instead of failing the test.
type fatalRecorder struct {
	testing.TB
	fatal string
}

func (r *fatalRecorder) Helper() {}

func (r *fatalRecorder) Fatalf(format string, args ...any) {
	r.fatal = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

func assertDead(pid string) string {
	r := &fatalRecorder{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		AssertDead(r, pid)
	}()
	<-done
	return r.fatal
}

func TestAssertDeadFailsOnLiveProcess(t *testing.T) {
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cmd.Process.Kill()
		cmd.Wait()
	}()
	if msg := assertDead(strconv.Itoa(cmd.Process.Pid)); !strings.Contains(msg, "still alive") {
		t.Errorf("live process reported %q", msg)
	}
	if msg := assertDead("12x"); !strings.Contains(msg, "bad pid") {
		t.Errorf("bad pid reported %q", msg)
	}
}

// CPU counts what a busy child burns, and nothing for one that sleeps.
func TestCPU(t *testing.T) {
	busy := exec.Command("sh", "-c", "while :; do :; done")
	if err := busy.Start(); err != nil {
		t.Fatal(err)
	}
	defer busy.Wait()
	defer busy.Process.Kill()
	idle := exec.Command("sleep", "5")
	if err := idle.Start(); err != nil {
		t.Fatal(err)
	}
	defer idle.Wait()
	defer idle.Process.Kill()
	deadline := time.Now().Add(10 * time.Second)
	for CPU(busy.Process.Pid) < 200*time.Millisecond {
		if time.Now().After(deadline) {
			t.Fatalf("a busy loop used %s in 10 s", CPU(busy.Process.Pid))
		}
		time.Sleep(50 * time.Millisecond)
	}
	if c := CPU(idle.Process.Pid); c > 100*time.Millisecond {
		t.Errorf("sleep used %s", c)
	}
	if c := CPU(1 << 30); c != 0 {
		t.Errorf("no such process: %s", c)
	}
}
