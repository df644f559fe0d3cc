package proctest

import (
	"fmt"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
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
