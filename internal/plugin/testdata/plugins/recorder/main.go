// Command recorder is a test event plugin: it appends every event it
// receives to the file its config names (log), a line each, after waiting
// its config's delay; it answers workflow.completed and workflow.failed
// with recorder.done, and every recorder.* event with recorder.chain (so
// that the host's propagation limit shows).
package main

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/reelhq/reel/internal/plugin/pluginv1"
	"github.com/reelhq/reel/internal/plugin/testdata/plugins/kit"
)

func main() {
	var (
		mu    sync.Mutex
		f     *os.File
		delay time.Duration
	)
	kit.Serve(&kit.Plugin{
		Name: "recorder",
		Init: func(cfg map[string]any) error {
			path, _ := cfg["log"].(string)
			if path == "" {
				return errors.New("config log is not set")
			}
			if d, ok := cfg["delay"].(string); ok && d != "" {
				var err error
				if delay, err = time.ParseDuration(d); err != nil {
					return err
				}
			}
			var err error
			f, err = os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
			return err
		},
		Shutdown: func() {
			mu.Lock()
			defer mu.Unlock()
			fmt.Fprintln(f, "shutdown")
			f.Close()
		},
		HandleEvent: func(ev *pluginv1.HandleEventRequest) []*pluginv1.HandleEventRequest {
			time.Sleep(delay)
			m := ev.GetMetadata()
			mu.Lock()
			fmt.Fprintf(f, "%s step=%s depth=%d source=%s status=%s attempt=%s path=%s\n", ev.GetType(), m["step_name"], ev.GetPropagationDepth(), ev.GetSource(), m["status"], m["attempt"], m["step_path"])
			mu.Unlock()
			switch ev.GetType() {
			case "workflow.completed", "workflow.failed":
				return []*pluginv1.HandleEventRequest{{Type: "recorder.done", Metadata: map[string]string{"of": ev.GetType()}}}
			case "recorder.done", "recorder.chain":
				return []*pluginv1.HandleEventRequest{{Type: "recorder.chain"}}
			}
			return nil
		},
	})
}
