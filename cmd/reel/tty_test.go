package main

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/reelhq/reel/internal/exectree"
)

// console is the reel binary running on a pseudo-terminal: what a user at
// a terminal sees and types.
type console struct {
	t    *testing.T
	cmd  *exec.Cmd
	ptmx *os.File
	mu   sync.Mutex
	out  bytes.Buffer
	seen int // how much of the plain text expect consumed
	// keepColour makes wait return the whole output, colours kept.
	keepColour bool
	done       chan struct{}
}

func startConsole(t *testing.T, dir string, env []string, args ...string) *console {
	t.Helper()
	cmd := exec.Command(reelBinary(t), args...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "REEL_STORAGE=", "NO_COLOR=", "COLUMNS="), env...)
	ptmx, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: 100})
	if err != nil {
		t.Fatal(err)
	}
	c := &console{t: t, cmd: cmd, ptmx: ptmx, done: make(chan struct{})}
	go func() {
		defer close(c.done)
		buf := make([]byte, 4096)
		for {
			n, err := ptmx.Read(buf)
			c.mu.Lock()
			c.out.Write(buf[:n])
			c.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() { cmd.Process.Kill(); ptmx.Close() })
	return c
}

// expect waits until the screen shows s (colours aside) after what earlier
// expects consumed, and consumes up to it.
func (c *console) expect(s string) {
	c.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		c.mu.Lock()
		plain := ansi.ReplaceAllString(c.out.String(), "")
		i := strings.Index(plain[c.seen:], s)
		if i >= 0 {
			c.seen += i + len(s)
			c.mu.Unlock()
			return
		}
		c.mu.Unlock()
		time.Sleep(10 * time.Millisecond)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t.Fatalf("the terminal never showed %q; it shows:\n%q", s, ansi.ReplaceAllString(c.out.String(), "")[c.seen:])
}

var ansi = regexp.MustCompile("\x1b\\[[0-9;]*m")

func (c *console) send(s string) {
	c.t.Helper()
	if _, err := io.WriteString(c.ptmx, s); err != nil {
		c.t.Fatal(err)
	}
}

// wait returns the exit status and everything not yet consumed.
func (c *console) wait() (int, string) {
	c.t.Helper()
	err := c.cmd.Wait()
	select {
	case <-c.done:
	case <-time.After(5 * time.Second):
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	// the rest, colours kept
	rest := c.out.String()
	if plain := ansi.ReplaceAllString(rest, ""); c.seen > 0 {
		rest = plain[c.seen:]
		if c.keepColour {
			rest = c.out.String()
		}
	}
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		c.t.Fatal(err)
	}
	return code, rest
}

const promptWorkflow = `
name: deploy
description: Deploy to an environment
inputs:
  - name: env
    type: string
    required: true
    description: Target environment
    validation: {enum: [dev, staging, prod]}
  - {name: replicas, type: integer, required: true, description: How many}
  - {name: note, default: "none"}
states:
  initial: go
  go: {type: step, command: 'echo deploying {{.inputs.env}} x{{.inputs.replicas}} {{.inputs.note}}'}
`

// On a terminal, missing required inputs are asked for: an enum as a
// numbered menu, every answer checked and asked again when refused.
func TestPromptForInputsOnTerminal(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, ".reel", "workflows", "deploy.yaml"), promptWorkflow, 0o644)
	c := startConsole(t, dir, nil, "run", "deploy")
	c.expect("env (string, required)")
	c.expect("Target environment")
	c.expect("1) dev")
	c.expect("3) prod")
	c.expect("Select 1-3: ")
	c.send("9\r")
	c.expect("enter a number from 1 to 3")
	c.expect("Select 1-3: ")
	c.send("2\r")
	c.expect("replicas (integer, required)")
	c.expect("> ")
	c.send("many\r")
	c.expect(`"many" is not an integer`)
	c.expect("> ")
	c.send("3\r")
	c.keepColour = true
	code, rest := c.wait()
	if code != 0 || !strings.Contains(rest, "deploying staging x3 none") {
		t.Fatalf("exit %d\n%q", code, rest)
	}
	// The display on a terminal is coloured.
	if !strings.Contains(rest, "\x1b[32m✔\x1b[0m go") {
		t.Fatalf("no colour on a terminal:\n%q", rest)
	}

	// Without a terminal, the missing inputs are an error that names them.
	res := runBinary(t, dir, "run", "deploy", "--input", "replicas=2")
	if res.code != exitUser || !strings.Contains(res.stderr, "missing required input(s): env (string): Target environment, one of dev, staging, prod") ||
		regexpRunID.MatchString(res.stderr) || strings.Contains(res.stderr, "transcript") {
		t.Fatalf("no terminal: %+v", res)
	}
}

// Colour only on a terminal, and never with NO_COLOR or --no-color.
func TestColourOnlyOnTerminal(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "wf.yaml"), "name: c\nstates:\n  initial: a\n  a: {type: step, command: 'echo hi'}\n", 0o644)
	for _, c := range []struct {
		env    []string
		args   []string
		colour bool
	}{
		{nil, nil, true},
		{[]string{"NO_COLOR=1"}, nil, false},
		{nil, []string{"--no-color"}, false},
	} {
		con := startConsole(t, dir, c.env, append([]string{"run", "wf.yaml"}, c.args...)...)
		code, out := con.wait()
		if code != 0 || strings.Contains(out, "\x1b[") != c.colour {
			t.Fatalf("%v %v: exit %d, colour %v:\n%q", c.env, c.args, code, !c.colour, out)
		}
		con = startConsole(t, dir, c.env, append([]string{"runs"}, c.args...)...)
		if _, out := con.wait(); strings.Contains(out, "\x1b[") != c.colour {
			t.Fatalf("runs %v %v: colour %v:\n%q", c.env, c.args, !c.colour, out)
		}
	}
	if res := runBinary(t, dir, "run", "wf.yaml"); strings.Contains(res.stdout+res.stderr, "\x1b[") {
		t.Fatalf("colour in a pipe:\n%q", res.stdout)
	}

	// Every command that colours: on a terminal only, never with NO_COLOR
	// or --no-color.
	for _, args := range [][]string{
		{"status", "--latest"}, {"replay", "--latest"}, {"search", "hi"}, {"list"}, {"config", "show"}, {"tree", "--latest"},
		{"stats", "--latest"}, {"events", "--latest"}, {"tools", "--latest"}, {"tail", "--latest"}, {"verify"}, {"validate", "wf.yaml"}, {"diagram", "wf.yaml"},
	} {
		if res := runBinary(t, dir, args...); strings.Contains(res.stdout+res.stderr, "\x1b[") {
			t.Errorf("%v: colour in a pipe:\n%q", args, res.stdout)
		}
		for _, c := range []struct {
			env, flags []string
		}{{[]string{"NO_COLOR=1"}, nil}, {nil, []string{"--no-color"}}} {
			con := startConsole(t, dir, c.env, append(slices.Clone(args), c.flags...)...)
			con.keepColour = true
			if _, out := con.wait(); strings.Contains(out, "\x1b[") {
				t.Errorf("%v %v %v: colour on a terminal:\n%q", args, c.env, c.flags, out)
			}
		}
	}
	for _, args := range [][]string{{"status", "--latest"}, {"replay", "--latest", "--instant"}, {"search", "hi"}} {
		con := startConsole(t, dir, nil, args...)
		con.keepColour = true
		if _, out := con.wait(); !strings.Contains(out, "\x1b[") {
			t.Errorf("%v: no colour on a terminal:\n%q", args, out)
		}
	}
}

// Interactive mode on a terminal: pauses before each step with what it
// will run; skip, inspect and abort.
func TestInteractiveOnTerminal(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "wf.yaml"), `
name: inter
states:
  initial: first
  first: {type: step, command: 'echo one', on_success: each}
  each: {type: for_each, items: '["a","b"]', body: [item], on_complete: last}
  item: {type: step, command: 'echo item-{{.loop.Item}} after {{.states.first.Output}}'}
  last: {type: step, command: 'echo last'}
`, 0o644)
	storage := filepath.Join(dir, "st")
	c := startConsole(t, dir, nil, "run", "wf.yaml", "--interactive", "--breakpoint", "item,last", "--storage", storage)
	c.expect("⏸")
	c.expect("each.item [0]")
	c.expect("command: echo item-a after one")
	c.expect("> ")
	c.send("s\r")
	c.expect("skipped")
	c.expect("each.item [1]")
	c.expect("> ")
	c.send("i\r")
	c.expect("loop.Item: b")
	c.send("c\r")
	c.expect("item-b after one")
	c.expect("⏸")
	c.expect("last")
	c.send("a\r")
	code, rest := c.wait()
	if code == 0 || !strings.Contains(rest, "aborted before last") {
		t.Fatalf("abort: exit %d\n%q", code, rest)
	}
	if res := runBinary(t, dir, "verify", storage); res.code != 0 {
		t.Fatalf("verify: %+v", res)
	}
	st := runBinary(t, dir, "status", "--latest", "--storage", storage, "--json")
	var at exectree.Standing
	if err := jsonUnmarshal(st.stdout, &at); err != nil || at.Status != "cancelled" || at.Steps.Succeeded != 4 {
		t.Fatalf("status after abort: %v %+v\n%s", err, at, st.stdout)
	}
}

func jsonUnmarshal(s string, v any) error { return json.Unmarshal([]byte(s), v) }
