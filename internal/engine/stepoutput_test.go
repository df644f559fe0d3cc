package engine

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// Two branches printing in turn, each line waiting until the display has
// shown the other branch's line before it (or for a second, when the mode
// shows nothing yet), and a step printing to stdout and stderr in turn.
const stepOutputWorkflow = `
name: modes
states:
  initial: fan
  fan: {type: parallel, parallel: [a, b], on_success: mixed}
  a: {type: step, command: 'echo a1; WAIT b1; echo a2'}
  b: {type: step, command: 'WAIT a1; echo b1; WAIT a2; echo b2'}
  mixed: {type: step, command: 'echo o1; WAIT o1; echo e1 >&2; WAIT e1; echo o2', on_success: end}
  end: {type: terminal}
`

// shownWriter is a display that leaves a file named for each line of
// output it is given, so that a step can wait until the display has
// shown a line.
type shownWriter struct {
	w   io.Writer
	dir string
}

func (s shownWriter) Write(p []byte) (int, error) {
	for l := range strings.SplitSeq(string(p), "\n") {
		if _, text, ok := strings.Cut(l, " │ "); ok {
			os.WriteFile(filepath.Join(s.dir, "shown-"+text), nil, 0o644)
		}
	}
	return s.w.Write(p)
}

// outputLines are the display's step output lines ("a │ a1" as "a1"), in
// the order shown, and the index of each step's end line.
func outputLines(display string) (lines []string, ended map[string]int) {
	ended = map[string]int{}
	for l := range strings.SplitSeq(display, "\n") {
		if _, text, ok := strings.Cut(l, " │ "); ok {
			lines = append(lines, text)
			continue
		}
		if name, ok := strings.CutPrefix(strings.TrimSpace(l), "✔ "); ok {
			name, _, _ = strings.Cut(name, " ")
			ended[name] = len(lines)
		}
	}
	return lines, ended
}

func TestStepOutputModes(t *testing.T) {
	for _, tc := range []struct {
		mode StepOutput
		want []string
	}{
		// each line as it comes: the branches interleave
		{StreamOutput, []string{"a1", "b1", "a2", "b2", "o1", "e1", "o2"}},
		// each step's lines together once it ends, stdout then stderr
		{BufferOutput, []string{"a1", "a2", "b1", "b2", "o1", "o2", "e1"}},
		{HideOutput, nil},
	} {
		t.Run(map[StepOutput]string{StreamOutput: "stream", BufferOutput: "buffer", HideOutput: "hide"}[tc.mode], func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			h.e.StepOutput = tc.mode
			h.e.Display = shownWriter{&h.display, h.dir}
			wait := fmt.Sprintf(`for i in $(seq 100); do [ -f %s/shown-${1} ] && break; sleep 0.01; done`, h.dir)
			body := regexp.MustCompile(`WAIT (\w+)`).ReplaceAllString(stepOutputWorkflow, wait)
			rep := h.succeed(body, nil)
			lines, ended := outputLines(h.display.String())
			if !slices.Equal(lines, tc.want) {
				t.Errorf("output lines %q, want %q\n%s", lines, tc.want, h.display.String())
			}
			// every line of a step shows before the step's end
			for step, prefixes := range map[string]string{"fan.a": "a", "fan.b": "b", "mixed": "oe"} {
				n := map[string]int{"a": 2, "b": 2, "oe": 3}[prefixes]
				if tc.mode == HideOutput {
					n = 0
				}
				shown := 0
				for _, l := range lines[:ended[step]] {
					if strings.ContainsRune(prefixes, rune(l[0])) {
						shown++
					}
				}
				if _, ok := ended[step]; !ok || shown != n {
					t.Errorf("%s: %d of its lines before its end line, want %d\n%s", step, shown, n, h.display.String())
				}
			}
			// the transcript keeps what the display left out
			if out := stepResult(t, rep.TranscriptPath, "fan.b")["output"]; out != "b1\nb2\n" {
				t.Errorf("recorded output of b %q", out)
			}
		})
	}
}

// A conversation the user answers shows its replies whatever the mode:
// the user could not answer them otherwise.
func TestStepOutputShowsConversationReplies(t *testing.T) {
	for _, mode := range []StepOutput{BufferOutput, HideOutput} {
		h, wf, _ := agentRun(t, interactiveWorkflow)
		h.e.StepOutput = mode
		h.e.Stdin = strings.NewReader("List the risks.\nexit\n")
		rep := h.run(context.Background(), wf, nil)
		if rep.Status != "success" {
			t.Fatalf("mode %d: report %+v\n%s", mode, rep, h.display.String())
		}
		d := h.display.String()
		reply := strings.Index(d, "chat │ turn 2\n")
		prompt := strings.LastIndex(d, "chat │ > (your reply")
		if reply < 0 || prompt < reply {
			t.Errorf("mode %d: turn 2's reply is not shown before the prompt for turn 3:\n%s", mode, d)
		}
		// the step after it follows the mode
		if mode == HideOutput && strings.Contains(d, "after │") {
			t.Errorf("mode %d: the command step's output shows:\n%s", mode, d)
		}
	}
}
