package main

import (
	"bytes"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/reelhq/reel/internal/index"
	"github.com/reelhq/reel/transcript"
)

// Issue 24, point 12: a narrow terminal keeps short ids (8 characters, as
// the web) and the cost, and lets the started time, the duration and the
// tokens go first.
func TestRunsTableNarrow(t *testing.T) {
	cost := 0.5991
	runs := []index.Run{{
		RunID: "d237bfd9-959c-4e55-8f1f-0ab2357f44e7", Workflow: "agent-workflows-monorepo-v2: please move the + button to its own button",
		Status: "success", Started: time.Date(2025, 10, 24, 20, 50, 22, 0, time.UTC), DurationMS: 2331586,
		Usage: transcript.Usage{TotalTokens: 371118}, CostUSD: &cost,
	}}
	for _, c := range []struct {
		width int
		want  []string
		gone  []string
	}{
		{0, []string{"d237bfd9-959c-4e55-8f1f-0ab2357f44e7", "STARTED", "371118", "$0.5991"}, nil},
		{100, []string{"d237bfd9 ", "STARTED", "TOKENS", "$0.5991"}, []string{"d237bfd9-"}},
		{60, []string{"d237bfd9 ", "success", "$0.5991"}, []string{"d237bfd9-", "STARTED"}},
		{40, []string{"d237bfd9 ", "success", "$0.5991", "COST"}, []string{"STARTED", "DURATION", "TOKENS"}},
	} {
		var b bytes.Buffer
		if err := writeRuns(&b, runs, palette{}, c.width); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		for _, w := range c.want {
			if !strings.Contains(out, w) {
				t.Errorf("width %d: no %q in\n%s", c.width, w, out)
			}
		}
		for _, g := range c.gone {
			if strings.Contains(out, g) {
				t.Errorf("width %d: %q kept in\n%s", c.width, g, out)
			}
		}
		for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
			if c.width > 0 && utf8.RuneCountInString(l) > c.width {
				t.Errorf("width %d: line of %d: %q", c.width, utf8.RuneCountInString(l), l)
			}
		}
	}
}
