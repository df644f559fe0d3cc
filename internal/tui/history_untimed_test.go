package tui

import (
	"strings"
	"testing"
	"time"

	"github.com/reelhq/reel/internal/index"
	"github.com/reelhq/reel/internal/runstatus"
)

// An imported recording without times shows "—" for its start and
// duration in History, as in every other view, and its cost as every
// view shows it.
func TestHistoryUntimedRun(t *testing.T) {
	h := newHistoryTab(&env{st: newStyles(true)})
	usd := 0.0038
	h.runs = []index.Run{
		{RunID: "37466a8f-2805-4688-b683-bc574c1baeea", Workflow: "import:reply", Status: runstatus.Success, Untimed: true,
			Started: time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC), Tokens: 1214, CostUSD: &usd},
		{RunID: "65be842d-7174-4dda-b0d3-2b975ae88e92", Workflow: "timed", Status: runstatus.Success,
			Started: time.Date(2025, 12, 3, 14, 0, 0, 0, time.UTC), DurationMS: 55_000, Tokens: 10, UnpricedSteps: 1},
	}
	lines := strings.Split(h.view(120, 10), "\n")
	var untimed, timed string
	for _, l := range lines {
		switch {
		case strings.Contains(l, "37466a8f"):
			untimed = l
		case strings.Contains(l, "65be842d"):
			timed = l
		}
	}
	if f := strings.Fields(untimed); len(f) < 9 || f[5] != "—" || f[6] != "—" || f[8] != "$0.0038" {
		t.Errorf("untimed run's line %q: want — for its start and duration, $0.0038", untimed)
	}
	if !strings.Contains(timed, "55s") || !strings.Contains(timed, h.runs[1].Started.Local().Format("01-02 15:04")) || !strings.HasSuffix(strings.TrimSpace(timed), "—") {
		t.Errorf("timed run's line %q: want its start, its duration, and — for an unknown cost", timed)
	}
}
