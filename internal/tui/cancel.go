package tui

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/reelhq/reel/internal/launch"
)

// errCancelledHere is the cause a run cancelled from the TUI records.
var errCancelledHere = errors.New("cancelled from reel tui")

// cancelRun cancels the run id: through the launcher when it started it,
// else by asking the process that records it to stop.
func (m *Model) cancelRun(id string) tea.Cmd {
	l := m.env.cfg.Launcher
	if r, ok := l.Get(id); ok && r.Report() == nil {
		return func() tea.Msg {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if err := l.Cancel(ctx, id, errCancelledHere); err != nil && !errors.Is(err, launch.ErrNotLaunched) {
				return popupMsg{title: "Cancel failed", body: err.Error()}
			}
			return noteMsg("run " + short(id) + " cancelled")
		}
	}
	path := filepath.Join(m.env.store.Dir, id+".jsonl")
	return func() tea.Msg {
		pid, what, err := recorderOf(path)
		if err != nil {
			return popupMsg{title: "Cannot cancel run " + short(id), body: err.Error()}
		}
		if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
			return popupMsg{title: "Cannot cancel run " + short(id), body: fmt.Sprintf("signal process %d (%s): %v", pid, what, err)}
		}
		return noteMsg(fmt.Sprintf("asked process %d (%s) to cancel run %s", pid, what, short(id)))
	}
}

// recorderOf finds the process that records the transcript at path: the
// one holding its lock (Linux's /proc/locks names it). It must be a
// `reel run` or `reel resume`, which cancel their run on SIGTERM; a server
// or another TUI is not stopped for one of its runs.
func recorderOf(path string) (pid int, what string, err error) {
	st, err := os.Stat(path)
	if err != nil {
		return 0, "", err
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, "", errors.New("cannot tell which process records it on this system")
	}
	f, err := os.Open("/proc/locks")
	if err != nil {
		return 0, "", fmt.Errorf("cannot tell which process records it: %w", err)
	}
	defer f.Close()
	suffix := ":" + strconv.FormatUint(sys.Ino, 10)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// 1: FLOCK  ADVISORY  WRITE 12345 08:01:1234567 0 EOF
		fields := strings.Fields(sc.Text())
		if len(fields) < 6 || fields[1] != "FLOCK" {
			continue
		}
		if !strings.HasSuffix(fields[5], suffix) {
			continue
		}
		if pid, err = strconv.Atoi(fields[4]); err != nil {
			continue
		}
		args := cmdline(pid)
		if pid == os.Getpid() {
			return 0, "", errors.New("it was started here but is not among this launcher's runs")
		}
		if sub := subcommand(args); sub == "run" || sub == "resume" {
			return pid, "reel " + sub, nil
		}
		return 0, "", fmt.Errorf("it is recorded by process %d (%s), which runs other runs too: cancel it there", pid, strings.Join(args, " "))
	}
	return 0, "", errors.New("no process records it: it is not running")
}

func cmdline(pid int) []string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return nil
	}
	return strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
}

// subcommand is the reel command a command line runs, of those that
// record runs: the first of run, resume, serve and tui among its
// arguments (a flag's value is never one of them in practice).
func subcommand(args []string) string {
	for _, a := range args[min(1, len(args)):] {
		switch a {
		case "run", "resume", "serve", "tui":
			return a
		}
	}
	return ""
}
