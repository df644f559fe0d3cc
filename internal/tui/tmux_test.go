package tui_test

// These tests drive the real reel binary in a real terminal, as a person
// would: tmux runs `reel tui`, send-keys types, capture-pane reads the
// screen. They need tmux (Debian's package; .ci/run installs it) and skip
// without it.

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/reelhq/reel/internal/proctest"
	"github.com/reelhq/reel/internal/runs"
)

// reel builds the reel binary once for the package's tests.
func reel(t *testing.T) string {
	t.Helper()
	return proctest.Build(t, "github.com/reelhq/reel/cmd/reel")
}

// term is one tmux server with one window running a command.
type term struct {
	t      *testing.T
	socket string
	home   string // HOME, and the project directory
	env    []string
}

// project makes a project directory (its HOME too) with the workflows
// given, name → YAML.
func project(t *testing.T, workflows map[string]string) *term {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed (Debian: apt-get install -y tmux; .ci/run installs it)")
	}
	home := t.TempDir()
	wf := filepath.Join(home, ".reel", "workflows")
	if err := os.MkdirAll(wf, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, y := range workflows {
		if err := os.WriteFile(filepath.Join(wf, name+".yaml"), []byte(y), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tm := &term{t: t, socket: filepath.Join(home, "tmux.sock"), home: home}
	tm.env = []string{"HOME=" + home, "REEL_STORAGE=" + tm.storage(), "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"XDG_DATA_HOME=" + filepath.Join(home, ".local", "share"), "AWF_CONFIG_HOME=", "AWF_WORKFLOWS_PATH=", "AWF_PLUGINS_PATH=",
		"TERM=xterm-256color", "LANG=C.UTF-8", "PATH=" + os.Getenv("PATH")}
	t.Cleanup(func() { exec.Command("tmux", "-S", tm.socket, "kill-server").Run() })
	return tm
}

func (tm *term) storage() string { return filepath.Join(tm.home, ".reel", "storage") }

func (tm *term) tmux(args ...string) string {
	tm.t.Helper()
	cmd := exec.Command("tmux", append([]string{"-S", tm.socket}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		tm.t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// start runs reel tui (with extra environment) in a w×h window. When it
// exits the window shows "EXIT:<status>".
func (tm *term) start(w, h int, extra ...string) {
	tm.t.Helper()
	env := strings.Join(append(append([]string{}, tm.env...), extra...), " ")
	sh := fmt.Sprintf("cd %s && env -i %s %s tui 2>%s/stderr; echo EXIT:$?; sleep 600", tm.home, env, reel(tm.t), tm.home)
	tm.tmux("new-session", "-d", "-s", "reel", "-x", fmt.Sprint(w), "-y", fmt.Sprint(h), sh)
}

// run runs reel with args in the project, as another terminal would.
func (tm *term) reelCmd(ctx context.Context, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, reel(tm.t), args...)
	cmd.Dir = tm.home
	cmd.Env = tm.env
	return cmd
}

func (tm *term) screen() string {
	return tm.tmux("capture-pane", "-p", "-t", "reel")
}

// keys types keys (tmux key names); an Escape is sent alone, so that the
// terminal does not read it with the next key as Alt+key.
func (tm *term) keys(keys ...string) {
	tm.t.Helper()
	for _, k := range keys {
		tm.tmux("send-keys", "-t", "reel", k)
		if k == "Escape" {
			time.Sleep(150 * time.Millisecond)
		}
	}
}

// text types text literally.
func (tm *term) text(s string) {
	tm.t.Helper()
	tm.tmux("send-keys", "-t", "reel", "-l", s)
}

// wait waits until the screen holds every string, and returns it.
func (tm *term) wait(timeout time.Duration, want ...string) string {
	tm.t.Helper()
	deadline := time.Now().Add(timeout)
	var s string
	for {
		s = tm.screen()
		ok := true
		for _, w := range want {
			if !strings.Contains(s, w) {
				ok = false
				break
			}
		}
		if ok {
			return s
		}
		if time.Now().After(deadline) {
			errs, _ := os.ReadFile(filepath.Join(tm.home, "stderr"))
			tm.t.Fatalf("the screen never showed %q; it shows:\n%s\nstderr:\n%s", want, s, errs)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// quit quits with q and checks the terminal is given back: the program
// exited 0 and the alternate screen is off.
func (tm *term) quit() {
	tm.t.Helper()
	tm.keys("q")
	tm.wait(10*time.Second, "EXIT:0")
	if alt := strings.TrimSpace(tm.tmux("display-message", "-p", "-t", "reel", "#{alternate_on}")); alt != "0" {
		tm.t.Errorf("the alternate screen is still on after exit (%s)", alt)
	}
}

// runStatus is the status of the one top-level run of the storage whose
// workflow is name.
func (tm *term) runStatus(name string) (status string, path string) {
	tm.t.Helper()
	all, err := runs.NewStore(tm.storage(), runs.Options{}).All()
	if err != nil {
		tm.t.Fatal(err)
	}
	for _, r := range all {
		s, err := r.Summarize()
		if err == nil && s.Workflow == name && s.ParentRunID == "" {
			return s.Status, r.Path
		}
	}
	return "", ""
}

const greetYAML = `name: greet
description: Say hello a few times, slowly
inputs:
  - name: who
    type: string
    required: true
  - name: mood
    type: string
    default: calm
    validation:
      enum: [calm, loud, silly]
states:
  initial: hello
  hello:
    type: for_each
    items: '["a", "b", "c"]'
    body: [say]
    on_complete: done
  say:
    type: step
    command: 'sleep 0.4; echo "hello {{.inputs.who}} ({{.inputs.mood}}) #{{.loop.Index1}}"'
  done:
    type: terminal
    status: success
`

const slowYAML = `name: slow
description: Waits long enough to be cancelled
states:
  initial: wait
  wait:
    type: step
    command: 'echo waiting; sleep 60; echo done'
    on_success: done
  done:
    type: terminal
    status: success
`

const brokenYAML = `name: broken
states:
  initial: nowhere
`

const failYAML = `name: failing
description: Its second step fails
states:
  initial: first
  first:
    type: step
    command: 'echo fine'
    on_success: second
  second:
    type: step
    command: 'echo "disk full" >&2; exit 3'
    on_success: done
  done:
    type: terminal
    status: success
`

// TestTmuxTabs opens every tab at 80×24 with the keys AWF has (1-5, Tab,
// Shift-Tab), checks each says what it is, resizes, and quits cleanly.
func TestTmuxTabs(t *testing.T) {
	tm := project(t, map[string]string{"greet": greetYAML, "broken": brokenYAML})
	tm.start(80, 24)
	s := tm.wait(15*time.Second, "1 Workflows", "greet", "broken", "Say hello a few times")
	if !strings.Contains(s, "✗") {
		t.Errorf("the invalid workflow is not marked:\n%s", s)
	}
	for _, line := range strings.Split(s, "\n") {
		if w := len([]rune(line)); w > 80 {
			t.Errorf("a line is %d cells wide at 80 columns: %q", w, line)
		}
	}
	tm.keys("2")
	tm.wait(5*time.Second, "No run is going")
	tm.keys("3")
	tm.wait(5*time.Second, "0 runs")
	tm.keys("4")
	tm.wait(5*time.Second, "No run yet")
	tm.keys("5")
	tm.wait(5*time.Second, "No agent session file found", ".claude/projects")
	tm.keys("Tab")
	tm.wait(5*time.Second, "Say hello a few times")
	tm.keys("BTab")
	tm.wait(5*time.Second, "No agent session file found")
	tm.keys("1", "?")
	tm.wait(5*time.Second, "source: local", "any key closes")
	tm.keys("Escape")
	tm.keys("Down", "v")
	tm.wait(5*time.Second, "is valid")
	tm.keys("Escape")
	tm.keys("Up", "v")
	tm.wait(5*time.Second, "broken is invalid", "nowhere")
	tm.keys("Escape")
	// f filters by name or description
	tm.keys("f")
	tm.text("hello")
	s = tm.wait(5*time.Second, "1 of 2 workflows", "greet")
	if strings.Contains(s, "broken") {
		t.Errorf("the filter kept broken:\n%s", s)
	}
	tm.keys("Escape")
	// Resizing lays the screen out again.
	tm.tmux("resize-window", "-t", "reel", "-x", "120", "-y", "40")
	tm.wait(5*time.Second, "2 workflows")
	tm.tmux("resize-window", "-t", "reel", "-x", "60", "-y", "20")
	s = tm.wait(5*time.Second, "2 workflows")
	for _, line := range strings.Split(s, "\n") {
		if w := len([]rune(line)); w > 60 {
			t.Errorf("a line is %d cells wide at 60 columns: %q", w, line)
		}
	}
	tm.quit()
}

// TestTmuxLaunchWatchToEnd launches a workflow with inputs through the
// form (an enum picked by its number, a required value typed) and watches
// it live to the end in Monitoring.
func TestTmuxLaunchWatchToEnd(t *testing.T) {
	tm := project(t, map[string]string{"greet": greetYAML})
	tm.start(100, 30)
	tm.wait(15*time.Second, "greet")
	tm.keys("Enter")
	tm.wait(5*time.Second, "Workflow: greet", "who (string, required)", "mood (string, optional, default: calm)")
	// Launching without the required input is refused with the reason.
	tm.keys("Enter", "Enter")
	tm.wait(5*time.Second, "who")
	tm.keys("Tab")
	tm.text("alice")
	tm.keys("Enter")
	tm.wait(5*time.Second, "1) calm", "3) silly", "Select (1-3)")
	tm.text("3")
	tm.keys("Enter")
	// Monitoring follows the run as it goes: the loop's iterations appear.
	tm.wait(10*time.Second, "2 Monitoring", "greet", "iteration 0")
	tm.wait(20*time.Second, "✓ success", "iteration 2", "✓ done")
	// the step above the last: the loop's step, with its output
	tm.keys("Up")
	tm.wait(5*time.Second, "hello alice (silly) #3")
	status, path := tm.runStatus("greet")
	if status != "success" {
		t.Fatalf("run status %q", status)
	}
	data, _ := os.ReadFile(path)
	if !bytes.Contains(data, []byte(`"mood":"silly"`)) || !bytes.Contains(data, []byte(`"who":"alice"`)) {
		t.Errorf("the run was not started with the inputs typed:\n%.400s", data)
	}
	// The event stream of the run.
	tm.keys("e")
	tm.wait(5*time.Second, "run.completed")
	tm.quit()
}

// TestTmuxFailedStepSelected opens a failed run: its failed step is
// selected, with its error and output.
func TestTmuxFailedStepSelected(t *testing.T) {
	tm := project(t, map[string]string{"failing": failYAML})
	tm.start(100, 30)
	tm.wait(15*time.Second, "failing")
	tm.keys("Enter")
	s := tm.wait(15*time.Second, "✗ failure", "disk full")
	if !strings.Contains(s, "›└─ ✗ second") {
		t.Errorf("the failed step is not the one selected:\n%s", s)
	}
	tm.quit()
}

// TestTmuxCancel cancels a run started here with Ctrl-C, after a
// confirmation, and a run started by reel run in another terminal.
func TestTmuxCancel(t *testing.T) {
	tm := project(t, map[string]string{"slow": slowYAML})
	tm.start(100, 30)
	tm.wait(15*time.Second, "slow")
	tm.keys("Enter")
	tm.wait(10*time.Second, "running", "waiting")
	tm.keys("C-c")
	tm.wait(5*time.Second, "Cancel run")
	tm.keys("n")
	time.Sleep(300 * time.Millisecond)
	if s := tm.screen(); !strings.Contains(s, "running") {
		t.Fatalf("n did not keep the run going:\n%s", s)
	}
	tm.keys("C-c")
	tm.wait(5*time.Second, "Cancel run")
	tm.keys("y")
	tm.wait(15*time.Second, "⊘ cancelled")
	if st, _ := tm.runStatus("slow"); st != "cancelled" {
		t.Fatalf("the transcript says %q", st)
	}

	// A run another process records shows up in Monitoring, and is
	// cancelled through that process.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	other := tm.reelCmd(ctx, "run", "slow")
	var out bytes.Buffer
	other.Stdout, other.Stderr = &out, &out
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- other.Wait() }()
	tm.wait(15*time.Second, "▶ running")
	tm.keys("n") // the newest run comes first; n goes to the older one
	tm.keys("p")
	tm.keys("C-c")
	tm.wait(5*time.Second, "Cancel run")
	tm.keys("y")
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatalf("reel run did not stop; the screen:\n%s", tm.screen())
	}
	tm.wait(10*time.Second, "asked process")
	all, _ := runs.NewStore(tm.storage(), runs.Options{}).All()
	cancelled := 0
	for _, r := range all {
		if s, _ := r.Summarize(); s.Status == "cancelled" {
			cancelled++
		}
	}
	if cancelled != 2 {
		t.Errorf("%d cancelled runs, want 2; reel run said:\n%s", cancelled, out.String())
	}
	tm.quit()
}

// TestTmuxHistorySearchDiff searches the history, opens a run from a hit,
// diffs two runs side by side and reads a run's conversation.
func TestTmuxHistorySearchDiff(t *testing.T) {
	tm := project(t, map[string]string{"greet": greetYAML})
	ctx := context.Background()
	for _, who := range []string{"alice", "bob"} {
		if out, err := tm.reelCmd(ctx, "run", "greet", "--input", "who="+who).CombinedOutput(); err != nil {
			t.Fatalf("reel run: %v\n%s", err, out)
		}
	}
	tm.start(100, 30)
	tm.wait(15*time.Second, "greet")
	tm.keys("3")
	tm.wait(10*time.Second, "2 runs", "✓ success")
	tm.keys("/")
	tm.text("alice")
	tm.keys("Enter")
	s := tm.wait(10*time.Second, "hits for \"alice\"", "hello alice (calm) #1")
	if strings.Contains(s, "hello bob") {
		t.Errorf("a hit from the other run:\n%s", s)
	}
	tm.keys("Enter")
	tm.wait(10*time.Second, "✓ greet", "iteration 2")
	tm.keys("Escape")
	tm.keys("Escape")
	tm.wait(10*time.Second, "2 runs")
	tm.keys("m", "Down", "d")
	tm.wait(10*time.Second, "diff ", "A ", "B ", "changed: output", "hello alice (calm)", "hello bob (calm)")
	tm.keys("Escape")
	tm.keys("c")
	tm.wait(10*time.Second, "Run greet", "hello")
	tm.quit()
}

// TestTmuxExternalLogs tails a Claude Code session file as it is appended
// to, and imports it with one key.
func TestTmuxExternalLogs(t *testing.T) {
	tm := project(t, nil)
	dir := filepath.Join(tm.home, ".claude", "projects", "-work-demo")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	lines, err := os.ReadFile(filepath.Join("testdata", "claude-session.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	all := strings.SplitAfter(strings.TrimRight(string(lines), "\n")+"\n", "\n")
	all = all[:len(all)-1] // after the last newline
	session := filepath.Join(dir, "0a1b2c3d-1111-4222-8333-444455556666.jsonl")
	if err := os.WriteFile(session, []byte(all[0]), 0o644); err != nil {
		t.Fatal(err)
	}
	tm.start(100, 30)
	tm.keys("5")
	tm.wait(10*time.Second, "Claude Code", "0a1b2c3d-1111-4222-8333-444455556666.jsonl")
	f, err := os.OpenFile(session, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range all[1:] {
		// a line written in two pieces: nothing shows until it is whole
		f.WriteString(l[:len(l)/2])
		time.Sleep(300 * time.Millisecond)
		f.WriteString(l[len(l)/2:])
		time.Sleep(200 * time.Millisecond)
	}
	f.Close()
	tm.wait(10*time.Second, "User: List the Go files", "Tool: Bash", "Output: main.go", "Assistant: There is one Go file")
	tm.keys("i")
	tm.wait(15*time.Second, "imported as run")
	tm.keys("c")
	tm.wait(15*time.Second, "4 Conversations", "There is one Go file")
	tm.quit()
}

// TestTmuxConversationMarkdown reads an imported Claude Code session whose
// reply is Markdown with hostile escapes in it: Conversations shows it
// laid out (heading, bullets, numbers, an aligned table, a quote bar,
// indented code, a link's URL, thinking folded), no escape from the
// transcript reaches the terminal, and NO_COLOR leaves colours out.
func TestTmuxConversationMarkdown(t *testing.T) {
	for _, noColor := range []bool{false, true} {
		t.Run(fmt.Sprint("NO_COLOR=", noColor), func(t *testing.T) {
			tm := project(t, nil)
			session, err := filepath.Abs(filepath.Join("testdata", "claude-markdown.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			if out, err := tm.reelCmd(context.Background(), "import", "--from", "claude-session-log", session).CombinedOutput(); err != nil {
				t.Fatalf("reel import: %v\n%s", err, out)
			}
			var extra []string
			if noColor {
				extra = append(extra, "NO_COLOR=1")
			}
			tm.start(80, 60, extra...)
			tm.wait(15*time.Second, "1 Workflows")
			tm.keys("4")
			// the reply whole, though tool results are cut to 3 lines
			s := tm.wait(15*time.Second, "tool results cut to 3 lines", "▸ Thinking (2 lines folded)",
				"• first point", "  ◦ nested point", "1. one", "2. two",
				"file              │ lines │ status", "──────────────────┼───────┼───────",
				"main.go           │   120 │   ok", "util_long_name.go │     7 │  fix",
				"│ a quoted remark", "    func main() {}", "See the docs (https://example.com/docs).")
			if strings.Contains(s, "**") || strings.Contains(s, "|:--") || strings.Contains(s, "```") || strings.Contains(s, "<details>") {
				t.Errorf("Markdown shown as written, not laid out:\n%s", s)
			}
			for _, w := range []string{"The build is green and fast; run go test ./... to check.", "Hostile:  and red and  end."} {
				if noColor {
					w = strings.Replace(w, "go test ./...", "`go test ./...`", 1)
				}
				if !strings.Contains(s, w) {
					t.Errorf("the screen does not show %q:\n%s", w, s)
				}
			}
			esc := tm.tmux("capture-pane", "-p", "-e", "-t", "reel")
			if strings.Contains(esc, "\x1b]") || strings.Contains(esc, "\a") || strings.Contains(esc, "SGVsbG8") || strings.Contains(esc, "ZW50aXR5") {
				t.Errorf("an escape sequence from the transcript reached the terminal:\n%q", esc)
			}
			if hasColour(esc) == noColor {
				t.Errorf("NO_COLOR=%v but colours %v:\n%q", noColor, !noColor, esc)
			}
			tm.quit()
		})
	}
}

// TestTmuxNoColor checks colours are on by default and off with NO_COLOR.
func TestTmuxNoColor(t *testing.T) {
	for _, noColor := range []bool{false, true} {
		t.Run(fmt.Sprint("NO_COLOR=", noColor), func(t *testing.T) {
			tm := project(t, map[string]string{"broken": brokenYAML})
			var extra []string
			if noColor {
				extra = append(extra, "NO_COLOR=1")
			}
			tm.start(80, 24, extra...)
			tm.wait(15*time.Second, "broken")
			esc := tm.tmux("capture-pane", "-p", "-e", "-t", "reel")
			coloured := hasColour(esc)
			if coloured == noColor {
				t.Errorf("NO_COLOR=%v but colours %v:\n%q", noColor, coloured, esc)
			}
			tm.quit()
		})
	}
}

// TestTmuxSignal ends the TUI with SIGTERM and SIGHUP: the terminal is
// given back.
func TestTmuxSignal(t *testing.T) {
	for _, sig := range []string{"TERM", "HUP"} {
		t.Run(sig, func(t *testing.T) {
			tm := project(t, map[string]string{"greet": greetYAML})
			tm.start(80, 24)
			tm.wait(15*time.Second, "greet")
			pids := strings.TrimSpace(tm.tmux("list-panes", "-t", "reel", "-F", "#{pane_pid}"))
			out, err := exec.Command("pgrep", "-P", pids, "-f", "reel tui").Output()
			if err != nil {
				// env -i exec'd into reel: the pane's child is reel
				out, err = exec.Command("pgrep", "-P", pids).Output()
			}
			if err != nil {
				t.Fatalf("find reel tui: %v", err)
			}
			pid := strings.Fields(string(out))[0]
			if err := exec.Command("kill", "-"+sig, pid).Run(); err != nil {
				t.Fatal(err)
			}
			tm.wait(10*time.Second, "EXIT:")
			if alt := strings.TrimSpace(tm.tmux("display-message", "-p", "-t", "reel", "#{alternate_on}")); alt != "0" {
				t.Errorf("the alternate screen is still on after SIG%s", sig)
			}
			if cur := strings.TrimSpace(tm.tmux("display-message", "-p", "-t", "reel", "#{cursor_flag}")); cur != "1" {
				t.Errorf("the cursor is still hidden after SIG%s", sig)
			}
		})
	}
}

var sgr = regexp.MustCompile(`\x1b\[([0-9;:]*)m`)

// hasColour says whether a screen captured with its escapes sets a
// foreground or background colour (SGR 30-37, 38, 40-47, 48, 90-97,
// 100-107; 39 and 49 are the defaults).
func hasColour(screen string) bool {
	for _, m := range sgr.FindAllStringSubmatch(screen, -1) {
		for _, p := range strings.FieldsFunc(m[1], func(r rune) bool { return r == ';' || r == ':' }) {
			n, err := strconv.Atoi(p)
			if err != nil {
				continue
			}
			if n >= 30 && n <= 38 || n >= 40 && n <= 48 || n >= 90 && n <= 97 || n >= 100 && n <= 107 {
				return true
			}
		}
	}
	return false
}
