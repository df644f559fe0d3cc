package webview

import (
	"bytes"

	"github.com/reelhq/reel/internal/runs"
)

// Standalone renders the run's page as one self-contained HTML document
// (reel replay --format html): style and script inlined, run links turned
// into anchors. It returns the warnings met reading the run; the page
// holds what could be read.
func Standalone(run *runs.Run, opts RunOptions) ([]byte, []string, error) {
	r, err := LoadRun(run, opts)
	if err != nil {
		return nil, nil, err
	}
	views, err := New()
	if err != nil {
		return nil, nil, err
	}
	var buf bytes.Buffer
	if err := views.Render(&buf, &Page{Name: "run", Title: r.Workflow, Standalone: true, Data: r}); err != nil {
		return nil, nil, err
	}
	return buf.Bytes(), r.Warnings, nil
}
