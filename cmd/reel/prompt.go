package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"

	"github.com/reelhq/reel/internal/engine"
	"github.com/reelhq/reel/internal/workflow"
)

// promptInputs asks for each missing input in turn, on the terminal: its
// name, type and description, a numbered menu for an enum, and asks again
// after an answer the input's validation refuses.
func promptInputs(in io.Reader, out io.Writer, missing []workflow.Input, given map[string]string, p palette) error {
	rd := bufio.NewReader(in)
	for _, input := range missing {
		fmt.Fprintf(out, "%s %s\n", p.bold(input.Name), p.dim(fmt.Sprintf("(%s, required)", input.Type)))
		if input.Description != "" {
			fmt.Fprintf(out, "  %s\n", input.Description)
		}
		var enum []string
		if input.Validation != nil {
			enum = input.Validation.Enum
		}
		for i, v := range enum {
			fmt.Fprintf(out, "  %d) %s\n", i+1, v)
		}
		for {
			if len(enum) > 0 {
				fmt.Fprintf(out, "Select 1-%d: ", len(enum))
			} else {
				fmt.Fprint(out, "> ")
			}
			line, err := rd.ReadString('\n')
			answer := strings.TrimRight(line, "\r\n")
			if err != nil && (err != io.EOF || answer == "") {
				fmt.Fprintln(out)
				return fmt.Errorf("input %q: no answer (%v)", input.Name, err)
			}
			if len(enum) > 0 {
				n, nerr := strconv.Atoi(strings.TrimSpace(answer))
				switch {
				case nerr == nil && n >= 1 && n <= len(enum):
					answer = enum[n-1]
				case !contains(enum, answer):
					fmt.Fprintf(out, "  %s\n", p.wrap("31", fmt.Sprintf("enter a number from 1 to %d", len(enum))))
					continue
				}
			}
			if answer == "" {
				fmt.Fprintf(out, "  %s\n", p.wrap("31", "a value is required"))
				continue
			}
			if err := workflow.CheckInputValue(input, answer); err != nil {
				fmt.Fprintf(out, "  %s\n", p.wrap("31", err.Error()))
				continue
			}
			given[input.Name] = answer
			break
		}
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// pauser is the interactive mode's conversation: before each step it shows
// what the step is about to run and asks what to do. Parallel branches ask
// one at a time.
type pauser struct {
	mu          sync.Mutex
	in          *bufio.Reader
	out         io.Writer
	breakpoints []string
	p           palette
	n           int
}

func newPauser(in io.Reader, out io.Writer, breakpoints []string, p palette) *pauser {
	return &pauser{in: bufio.NewReader(in), out: out, breakpoints: breakpoints, p: p}
}

// shownLines caps how much of a resolved field the pause shows before
// "inspect" shows it all.
const shownLines = 6

func (pa *pauser) pause(ctx context.Context, s engine.StepInfo) engine.Action {
	if len(pa.breakpoints) > 0 && !contains(pa.breakpoints, s.Name) && !contains(pa.breakpoints, s.Path) {
		return engine.Continue
	}
	pa.mu.Lock()
	defer pa.mu.Unlock()
	if ctx.Err() != nil {
		return engine.Abort
	}
	pa.n++
	head := s.Path
	if s.Iteration > 0 || strings.Contains(s.Path, ".") {
		head += fmt.Sprintf(" [%d]", s.Iteration)
	}
	fmt.Fprintf(pa.out, "\n%s %s %s\n", pa.p.wrap("36", "⏸"), pa.p.bold(head), pa.p.dim("("+s.Type+")"))
	pa.fields(s, shownLines)
	if s.Next != "" {
		fmt.Fprintf(pa.out, "  %s %s\n", pa.p.dim("next:"), s.Next)
	}
	for {
		fmt.Fprint(pa.out, "[c]ontinue [s]kip [a]bort [i]nspect > ")
		line, err := pa.in.ReadString('\n')
		answer := strings.ToLower(strings.TrimSpace(line))
		if err != nil && answer == "" {
			fmt.Fprintln(pa.out, "\nno answer: aborting")
			return engine.Abort
		}
		switch answer {
		case "", "c", "continue":
			return engine.Continue
		case "s", "skip":
			return engine.Skip
		case "a", "abort", "q", "quit":
			return engine.Abort
		case "i", "inspect":
			pa.fields(s, 0)
		default:
			fmt.Fprintf(pa.out, "  %s\n", pa.p.wrap("31", fmt.Sprintf("%q: answer c, s, a or i", answer)))
		}
	}
}

// fields prints the step's resolved values, each cut to maxLines (0: all).
func (pa *pauser) fields(s engine.StepInfo, maxLines int) {
	for _, f := range s.Resolved {
		lines := strings.Split(strings.TrimRight(f.Value, "\n"), "\n")
		more := 0
		if maxLines > 0 && len(lines) > maxLines {
			more = len(lines) - maxLines
			lines = lines[:maxLines]
		}
		fmt.Fprintf(pa.out, "  %s %s\n", pa.p.dim(f.Name+":"), lines[0])
		for _, l := range lines[1:] {
			fmt.Fprintf(pa.out, "    %s\n", l)
		}
		if more > 0 {
			fmt.Fprintf(pa.out, "    %s\n", pa.p.dim(fmt.Sprintf("… %d more line(s): [i]nspect shows them", more)))
		}
	}
}
