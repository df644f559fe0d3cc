package diagram

import (
	"bytes"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/reelhq/reel/internal/golden"
	"github.com/reelhq/reel/internal/workflow"
)

// every kind of state, nested blocks, every kind of edge
const all = `
name: every-kind
states:
  initial: build
  build: {type: step, command: 'make', on_success: fan, on_failure: {message: 'broke', status: 3}}
  fan: {type: parallel, parallel: [lint, each], strategy: all_succeed, on_success: ask}
  lint: {type: step, command: 'lint'}
  each: {type: for_each, items: '["a","b"]', body: [check, spin]}
  check: {type: operation, operation: http.request, inputs: {url: 'http://x'}}
  spin: {type: while, while: 'loop.Index < 2', body: [tick]}
  tick: {type: stamp}
  ask:
    type: agent
    provider: claude
    prompt: 'is "it" ok?'
    transitions:
      - {when: 'states.ask.Output == "again"', goto: build}
      - {goto: sub}
  sub: {type: call_workflow, workflow: child, on_success: done, on_failure: failed}
  done: {type: terminal}
  failed: {type: terminal, status: failure}
`

func load(t *testing.T) *workflow.Workflow {
	t.Helper()
	wf, err := workflow.Parse([]byte(all), "all.yaml", workflow.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return wf
}

func TestDOT(t *testing.T) {
	var b bytes.Buffer
	if err := DOT(&b, load(t)); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "testdata/every-kind.dot", b.Bytes())
	// Graphviz itself accepts it, when it is installed.
	if dot, err := exec.LookPath("dot"); err == nil {
		cmd := exec.Command(dot, "-Tsvg")
		cmd.Stdin = bytes.NewReader(b.Bytes())
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("dot: %v\n%s", err, out)
		}
	}
}

func TestMermaid(t *testing.T) {
	var b bytes.Buffer
	if err := Mermaid(&b, load(t)); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "testdata/every-kind.mmd", b.Bytes())
	s := b.String()
	for _, want := range []string{`subgraph s_group_fan ["fan (parallel)"]`, `s_ask -->|"when states.ask.Output == #quot;again#quot;"| s_build`, "linkStyle"} {
		if !strings.Contains(s, want) {
			t.Errorf("mermaid lacks %q", want)
		}
	}
}

// Every state is drawn exactly once, whatever nests it.
func TestEveryStateOnce(t *testing.T) {
	wf := load(t)
	var d, m bytes.Buffer
	DOT(&d, wf)
	Mermaid(&m, wf)
	for _, name := range wf.Order {
		if c := len(regexp.MustCompile(`(?m)^\s*"`+name+`" \[shape=`).FindAllString(d.String(), -1)); c != 1 {
			t.Errorf("dot draws %s %d times", name, c)
		}
		if c := len(regexp.MustCompile(`(?m)^\s*s_`+name+`[\[({>]`).FindAllString(m.String(), -1)); c != 1 {
			t.Errorf("mermaid draws %s %d times", name, c)
		}
	}
}

// Any valid workflow draws without panicking, every state once, braces and
// subgraphs balanced.
func FuzzDiagram(f *testing.F) {
	f.Add([]byte(all))
	f.Add([]byte("name: x\nstates:\n  initial: a\n  a: {type: terminal, status: failure}\n"))
	f.Add([]byte("name: \"q\\\"uote\"\nstates:\n  initial: a-b\n  a-b: {type: parallel, parallel: [a_b]}\n  a_b: {type: step, command: x}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		wf, err := workflow.Parse(data, "f.yaml", workflow.Options{})
		if err != nil {
			return
		}
		var d, m bytes.Buffer
		if err := DOT(&d, wf); err != nil {
			t.Fatal(err)
		}
		if err := Mermaid(&m, wf); err != nil {
			t.Fatal(err)
		}
		lines := func(b bytes.Buffer, closer string) (opens, closes int) {
			for _, l := range strings.Split(b.String(), "\n") {
				switch l = strings.TrimSpace(l); {
				case strings.HasPrefix(l, "subgraph "):
					opens++
				case l == closer:
					closes++
				}
			}
			return
		}
		if o, c := lines(d, "}"); o != c-1 {
			t.Fatalf("unbalanced clusters (%d, %d):\n%s", o, c, d.String())
		}
		if o, c := lines(m, "end"); o != c {
			t.Fatalf("unbalanced subgraphs (%d, %d):\n%s", o, c, m.String())
		}
	})
}
