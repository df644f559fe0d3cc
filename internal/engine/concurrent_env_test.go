package engine

import (
	"context"
	"os"
	"strings"
	"sync"
	"testing"
)

// Runs of one engine share its Environ: each step must still see its own
// run's REEL_RUN_ID, however much spare capacity the caller's slice has.
func TestConcurrentRunsKeepTheirOwnEnvironment(t *testing.T) {
	h := newHarness(t)
	env := make([]string, 0, len(os.Environ())+64)
	h.e.Environ = append(env, os.Environ()...)
	wf := h.load("wf.yaml", `name: env
states:
  initial: show
  show:
    type: step
    command: sleep 0.01; echo "$REEL_RUN_ID"
    on_success: done
  done:
    type: terminal
`)
	var wg sync.WaitGroup
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rep, err := h.e.Run(context.Background(), wf, RunOptions{})
			if err != nil {
				t.Error(err)
				return
			}
			b, _ := os.ReadFile(rep.TranscriptPath)
			if !strings.Contains(string(b), `"output":"`+rep.RunID+`\n"`) {
				t.Errorf("run %s saw another run's id:\n%s", rep.RunID, b)
			}
		}()
	}
	wg.Wait()
}
