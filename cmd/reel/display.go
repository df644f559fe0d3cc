package main

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"github.com/reelhq/reel/internal/engine"
)

// colorDisplay is the writer the engine's display goes to: w itself, or,
// when colour is allowed, w behind a writer that colours the status marks
// the display starts its lines with.
func colorDisplay(cmd *cobra.Command, w io.Writer) io.Writer {
	if !useColor(cmd, w) {
		return w
	}
	return &markColorer{w: w}
}

// markColorer colours the first mark of each display line (after the
// indentation): ✔ green, ✘ red, ⊘ and ↷ yellow, ▶ and ● bold. Step
// output lines start with a path and "│", never with a mark.
type markColorer struct {
	mu  sync.Mutex
	w   io.Writer
	buf []byte
}

var markCodes = map[string]string{"✔": "32", "✘": "31", "⊘": "33", "↷": "33", "▶": "1", "●": "1", "■": "1"}

func (c *markColorer) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.buf = append(c.buf, p...)
	for {
		i := bytes.IndexByte(c.buf, '\n')
		if i < 0 {
			return len(p), nil
		}
		line := string(c.buf[:i])
		c.buf = c.buf[i+1:]
		if _, err := io.WriteString(c.w, colourMark(line)+"\n"); err != nil {
			return len(p), err
		}
	}
}

func colourMark(line string) string {
	body := strings.TrimLeft(line, " ")
	indent := line[:len(line)-len(body)]
	for mark, code := range markCodes {
		if strings.HasPrefix(body, mark+" ") {
			return indent + "\x1b[" + code + "m" + mark + "\x1b[0m" + body[len(mark):]
		}
	}
	return line
}

// writePlan prints a dry run's plan.
func writePlan(w io.Writer, plan *engine.Plan, p palette) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s %s %s\n", p.bold("Dry run:"), p.bold(plan.Workflow), p.dim("("+plan.File+")"))
	if plan.Description != "" {
		fmt.Fprintf(&b, "%s\n", plan.Description)
	}
	if len(plan.Inputs) > 0 {
		fmt.Fprintln(&b, "\nInputs:")
		for _, k := range sortedKeys(plan.Inputs) {
			fmt.Fprintf(&b, "  %s = %v\n", k, plan.Inputs[k])
		}
	}
	if len(plan.Hooks) > 0 {
		fmt.Fprintln(&b, "\nWorkflow hooks:")
		for _, f := range plan.Hooks {
			lines := strings.Split(strings.TrimRight(f.Value, "\n"), "\n")
			fmt.Fprintf(&b, "  %s %s\n", p.dim(f.Name+":"), lines[0])
			for _, l := range lines[1:] {
				fmt.Fprintf(&b, "    %s\n", l)
			}
		}
	}
	fmt.Fprintln(&b, "\nPlan (in the order the flow reaches the states):")
	n := 0
	var step func(s *engine.PlanStep, depth int)
	step = func(s *engine.PlanStep, depth int) {
		ind := strings.Repeat("    ", depth)
		var label string
		if depth == 0 {
			n++
			label = fmt.Sprintf("%d. %s", n, s.Name)
		} else {
			label = "• " + s.Path
		}
		fmt.Fprintf(&b, "\n%s%s %s\n", ind, p.bold(label), p.dim("("+s.Type+")"))
		for _, f := range s.Fields {
			lines := strings.Split(strings.TrimRight(f.Value, "\n"), "\n")
			fmt.Fprintf(&b, "%s   %s %s\n", ind, p.dim(f.Name+":"), lines[0])
			for _, l := range lines[1:] {
				fmt.Fprintf(&b, "%s     %s\n", ind, l)
			}
		}
		for _, e := range s.Next {
			on := "on " + e.On
			if e.On == "always" || strings.HasPrefix(e.On, "when ") {
				on = e.On
			}
			fmt.Fprintf(&b, "%s   → %s: %s\n", ind, on, e.To)
		}
		for _, c := range s.Children {
			step(c, depth+1)
		}
	}
	for _, s := range plan.Steps {
		step(s, 0)
	}
	fmt.Fprintln(&b, "\nNothing was run (dry run).")
	_, err := w.Write(b.Bytes())
	return err
}
