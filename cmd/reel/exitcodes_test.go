package main

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/reelhq/reel/internal/exitcode"
	"github.com/reelhq/reel/internal/index"
)

// readmeExitTable parses the "Exit codes" table of docs/lifecycle.md: its code columns
// and, for each command a row names, the codes whose cell says something
// (the "other" column's codes are the numbers before a colon).
func readmeExitTable(t *testing.T) (columns []string, table map[string]map[int]string) {
	t.Helper()
	b, err := os.ReadFile("../../docs/lifecycle.md")
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(b), "\n## Exit codes\n")
	if !ok {
		t.Fatal("docs/lifecycle.md has no Exit codes section")
	}
	table = map[string]map[int]string{}
	cmdName := regexp.MustCompile("`([a-z][a-z ]*)`")
	other := regexp.MustCompile(`(\d+): `)
	sc := bufio.NewScanner(strings.NewReader(sec))
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "|") {
			if columns != nil {
				break
			}
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		switch {
		case columns == nil:
			columns = cells
			continue
		case strings.HasPrefix(cells[0], "---"):
			continue
		}
		if len(cells) != len(columns) {
			t.Fatalf("docs/lifecycle.md exit table row has %d cells, the header %d: %s", len(cells), len(columns), line)
		}
		codes := map[int]string{}
		for i, c := range cells[1:] {
			if c == "" {
				continue
			}
			if n, err := strconv.Atoi(columns[i+1]); err == nil {
				codes[n] = c
				continue
			}
			for _, m := range other.FindAllStringSubmatch(c, -1) {
				n, _ := strconv.Atoi(m[1])
				codes[n] = c
			}
		}
		for _, m := range cmdName.FindAllStringSubmatch(cells[0], -1) {
			table[m[1]] = codes
		}
	}
	if len(table) == 0 {
		t.Fatal("docs/lifecycle.md exit table: no rows")
	}
	return columns, table
}

// The exit-code table of docs/lifecycle.md is what the code returns: its columns are
// package exitcode's constants, and every status it gives a command is
// produced by a real run of that command here (or is listed, with the
// reason, as not practical to provoke); every case here is in the table.
func TestExitCodeTableMatchesTheCode(t *testing.T) {
	columns, table := readmeExitTable(t)
	want := []string{"command", strconv.Itoa(exitcode.OK), strconv.Itoa(exitcode.User), strconv.Itoa(exitcode.Workflow),
		strconv.Itoa(exitcode.Execution), strconv.Itoa(exitcode.System), "other"}
	if strings.Join(columns, "|") != strings.Join(want, "|") {
		t.Fatalf("docs/lifecycle.md exit table columns %q, want %q", columns, want)
	}
	if _, ok := table["run"][exitcode.Cancelled]; !ok {
		t.Fatalf("docs/lifecycle.md exit table: run lacks %d (exitcode.Cancelled)", exitcode.Cancelled)
	}
	if exitUser != exitcode.User || exitWorkflow != exitcode.Workflow || exitExecution != exitcode.Execution || exitSystem != exitcode.System {
		t.Fatal("cmd/reel's exit statuses are not package exitcode's")
	}

	dir := t.TempDir()
	storage := filepath.Join(dir, "st")
	env := append(os.Environ(), "REEL_STORAGE="+storage, "NO_COLOR=1")
	writeFile(t, filepath.Join(dir, "ok.yaml"), "name: ok\nstates:\n  initial: a\n  a: {type: step, command: 'echo hi', on_success: d}\n  d: {type: terminal}\n", 0o644)
	writeFile(t, filepath.Join(dir, "bad.yaml"), "name: bad\nstates:\n  initial: a\n  a: {type: step, command: 'true', on_success: nowhere}\n", 0o644)
	writeFile(t, filepath.Join(dir, "fails.yaml"), "name: fails\nstates:\n  initial: a\n  a: {type: step, command: 'exit 3'}\n", 0o644)
	writeFile(t, filepath.Join(dir, "changes.yaml"), "name: changes\nstates:\n  initial: a\n  a: {type: step, command: 'exit 3'}\n", 0o644)
	writeFile(t, filepath.Join(dir, "slow.yaml"), "name: slow\nstates:\n  initial: a\n  a: {type: step, command: 'touch started; sleep 30'}\n", 0o644)
	writeFile(t, filepath.Join(dir, "afile"), "not a directory\n", 0o644)
	writeFile(t, filepath.Join(dir, "garbage.jsonl"), "{\"not\": \"an event\"}\n", 0o644)
	run := func(args ...string) cliResult { return runBinaryEnv(t, dir, env, args...) }
	idOf := func(res cliResult) string {
		t.Helper()
		m := regexpRunID.FindStringSubmatch(res.stderr)
		if m == nil {
			t.Fatalf("no run id: %+v", res)
		}
		return m[1]
	}
	okID := idOf(run("run", "ok.yaml"))
	failID := idOf(run("run", "fails.yaml"))
	changesID := idOf(run("run", "changes.yaml"))
	// A copy of a transcript with a damaged line after its events.
	okPath := filepath.Join(storage, "transcripts", okID+".jsonl")
	b, err := os.ReadFile(okPath)
	if err != nil {
		t.Fatal(err)
	}
	damaged := filepath.Join(dir, "damaged.jsonl")
	writeFile(t, damaged, string(b)+"garbage\n", 0o644)
	session := filepath.Join(dir, "session.jsonl")
	writeFile(t, session, `{"parentUuid":null,"isSidechain":false,"cwd":"/w","sessionId":"s-1","type":"user","message":{"role":"user","content":"hello"},"uuid":"u1","timestamp":"2025-11-01T10:00:00.000Z"}
{"parentUuid":"u1","isSidechain":false,"sessionId":"s-1","type":"assistant","message":{"model":"claude-sonnet-4-5","id":"m1","type":"message","role":"assistant","content":[{"type":"text","text":"hi"}],"usage":{"input_tokens":1,"output_tokens":1}},"uuid":"u2","timestamp":"2025-11-01T10:00:01.000Z"}
`, 0o644)
	badConfig := filepath.Join(dir, "badconfig")
	writeFile(t, filepath.Join(badConfig, ".reel", "config.yaml"), "bogus: [\n", 0o644)
	noWorkflowDir := filepath.Join(dir, "nowfdir")
	writeFile(t, filepath.Join(noWorkflowDir, ".reel", "workflows"), "a file, not a directory\n", 0o644)

	// A storage whose run index is a planted symlink.
	symlinkedIndex := filepath.Join(dir, "symlinked")
	if err := os.MkdirAll(symlinkedIndex, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "afile"), index.Path(symlinkedIndex)); err != nil {
		t.Fatal(err)
	}

	type exitCase struct {
		command string
		code    int
		args    []string
		in      string // the working directory, dir when empty
		setup   func()
	}
	cases := []exitCase{
		{"run", 0, []string{"run", "ok.yaml"}, "", nil},
		{"run", 1, []string{"run", "ok.yaml", "-i", "nope"}, "", nil},
		{"run", 1, []string{"run", filepath.Join(dir, "ok.yaml")}, badConfig, nil},
		{"run", 2, []string{"run", "bad.yaml"}, "", nil},
		{"run", 3, []string{"run", "fails.yaml"}, "", nil},
		{"run", 4, []string{"run", "ok.yaml", "--storage", filepath.Join(dir, "afile", "st")}, "", nil},
		{"resume", 0, []string{"resume", changesID}, "", func() {
			writeFile(t, filepath.Join(dir, "changes.yaml"), "name: changes\nstates:\n  initial: a\n  a: {type: step, command: 'exit 0'}\n", 0o644)
		}},
		{"resume", 1, []string{"resume", "00000000"}, "", nil},
		{"resume", 2, []string{"resume", failID}, "", func() {
			writeFile(t, filepath.Join(dir, "fails.yaml"), "name: fails\nstates:\n  initial: a\n  a: {type: step, command: 'exit 3', on_success: nowhere}\n", 0o644)
		}},
		{"resume", 3, []string{"resume", failID}, "", func() {
			writeFile(t, filepath.Join(dir, "fails.yaml"), "name: fails\nstates:\n  initial: a\n  a: {type: step, command: 'exit 3'}\n", 0o644)
		}},
		{"validate", 0, []string{"validate", "ok.yaml"}, "", nil},
		{"validate", 1, []string{"validate", "nosuch.yaml"}, "", nil},
		{"validate", 2, []string{"validate", "bad.yaml"}, "", nil},
		{"diff", 0, []string{"diff", okID, okID}, "", nil},
		{"diff", 1, []string{"diff", okID, failID}, "", nil},
		{"diff", 2, []string{"diff", okID, "nosuch"}, "", nil},
		{"verify", 0, []string{"verify", okPath}, "", nil},
		{"verify", 1, []string{"verify", "garbage.jsonl"}, "", nil},
		{"verify", 2, []string{"verify", "nosuch.jsonl"}, "", nil},
		{"runs", 0, []string{"runs"}, "", nil},
		{"runs", 1, []string{"runs", "--storage", filepath.Join(dir, "nosuch")}, "", nil},
		{"runs", 2, []string{"runs", "--status", "bogus"}, "", nil},
		{"search", 0, []string{"search", "hi"}, "", nil},
		{"search", 1, []string{"search", "zzqqxx"}, "", nil},
		{"search", 2, []string{"search"}, "", nil},
		{"index", 0, []string{"index"}, "", nil},
		{"index", 1, []string{"index", "--storage", filepath.Join(dir, "nosuch")}, "", nil},
		{"index", 2, []string{"index", "--storage", symlinkedIndex}, "", nil},
		{"serve", 1, []string{"serve", "--storage", filepath.Join(dir, "nosuch")}, "", nil},
		{"serve", 2, []string{"serve", "--addr", "0.0.0.0:0"}, "", nil},
		{"import", 0, []string{"import", session}, "", nil},
		{"import", 1, []string{"import", session, "nosuch.jsonl"}, "", nil},
		{"import", 2, []string{"import", "--from", "bogus", session}, "", nil},
		{"export", 0, []string{"export", okID, "--to", "agentlog", filepath.Join(dir, "out.agentlog")}, "", nil},
		{"export", 1, []string{"export", okID, "--to", "agentlog", filepath.Join(dir, "out.agentlog")}, "", nil},
		{"export", 2, []string{"export", okID, "--to", "bogus", filepath.Join(dir, "x")}, "", nil},
		{"diagram", 0, []string{"diagram", "ok.yaml"}, "", nil},
		{"diagram", 1, []string{"diagram", "nosuch"}, "", nil},
		{"diagram", 2, []string{"diagram", "bad.yaml"}, "", nil},
		{"list", 0, []string{"list"}, "", nil},
		{"list", 1, []string{"list"}, badConfig, nil},
		{"list", 2, []string{"list"}, noWorkflowDir, nil},
		{"config show", 0, []string{"config", "show"}, "", nil},
		{"config show", 1, []string{"config", "show"}, badConfig, nil},
		{"version", 0, []string{"version"}, "", nil},
	}
	for _, c := range []string{"status", "tree", "replay", "tail", "tools", "events", "stats"} {
		cases = append(cases,
			exitCase{c, 0, []string{c, okID}, "", nil},
			exitCase{c, 1, []string{c, damaged}, "", nil},
			exitCase{c, 2, []string{c, "nosuch"}, "", nil})
	}
	tested := map[string]map[int]bool{}
	for _, c := range cases {
		if c.setup != nil {
			c.setup()
		}
		wd := dir
		if c.in != "" {
			wd = c.in
		}
		res := runBinaryEnv(t, wd, env, c.args...)
		if res.code != c.code {
			t.Errorf("reel %s: exit %d, want %d\nstderr: %s", strings.Join(c.args, " "), res.code, c.code, res.stderr)
		}
		if _, ok := table[c.command][c.code]; !ok {
			t.Errorf("reel %s exits %d: docs/lifecycle.md's table does not give %s that status", strings.Join(c.args, " "), c.code, c.command)
		}
		if tested[c.command] == nil {
			tested[c.command] = map[int]bool{}
		}
		tested[c.command][c.code] = true
	}

	// 130: a run cancelled by SIGTERM (SIGINT: TestRunSignalWritesRunCompleted).
	cmd, _ := startRun(t, dir, "run", "slow.yaml", "--storage", storage)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(filepath.Join(dir, "started")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatal("the slow step never started")
		}
	}
	cmd.Process.Signal(syscall.SIGTERM)
	cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != exitcode.Cancelled {
		t.Errorf("run cancelled by SIGTERM: exit %d, want %d", code, exitcode.Cancelled)
	}
	tested["run"][exitcode.Cancelled] = true

	// Documented statuses not provoked here, and why.
	untested := map[string]map[int]string{
		"resume": {exitcode.System: "the same path as run's (runOutput.finish)", exitcode.Cancelled: "the same path as run's (signalContext)"},
		"serve":  {exitcode.OK: "serve runs until a signal stops it"},
	}
	for command, codes := range table {
		for code := range codes {
			if !tested[command][code] && untested[command][code] == "" {
				t.Errorf("docs/lifecycle.md: %s exits %d, but no case here provokes it", command, code)
			}
		}
	}
}
