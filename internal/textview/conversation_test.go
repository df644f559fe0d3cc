package textview

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/reelhq/reel/internal/engine"
	"github.com/reelhq/reel/internal/exectree"
	"github.com/reelhq/reel/internal/golden"
	"github.com/reelhq/reel/internal/rerun"
	"github.com/reelhq/reel/internal/runs"
	"github.com/reelhq/reel/internal/transcripttest"
	"github.com/reelhq/reel/internal/workflow"
	"github.com/reelhq/reel/transcript"
)

// conversationRuns runs testdata/chats.yaml with the real engine and the
// example fake claude (examples/agents/fake-cli.sh), whose second turn of
// review fails the first time: the run fails inside the conversation, is
// resumed (review runs again, whole), and is then replayed (run
// --replay-from). It returns the resumed run's file and the replay's.
func conversationRuns(t *testing.T) (resumed, replayed string) {
	t.Helper()
	dir := t.TempDir()
	transcripttest.FakeClaude(t, dir, "matters")
	wfPath := filepath.Join(dir, "chats.yaml")
	b, err := os.ReadFile(filepath.Join("testdata", "chats.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(wfPath, b, 0o644); err != nil {
		t.Fatal(err)
	}
	e := &engine.Engine{Storage: filepath.Join(dir, "storage"), ProjectDir: dir}
	load := func() *workflow.Workflow {
		wf, err := workflow.Load(wfPath, e.LoadOptions())
		if err != nil {
			t.Fatal(err)
		}
		return wf
	}
	ctx := context.Background()
	rep, err := e.Run(ctx, load(), engine.RunOptions{})
	if err != nil || rep.Status != "failure" {
		t.Fatalf("first attempt: %v %+v", err, rep)
	}
	rec, err := rerun.Load(rep.TranscriptPath, rerun.Options{Exchange: true})
	if err != nil {
		t.Fatal(err)
	}
	if rep, err = e.Resume(ctx, load(), rec, engine.ResumeOptions{}); err != nil || rep.Status != "success" {
		t.Fatalf("resume: %v %+v", err, rep)
	}
	resumed = rep.TranscriptPath
	if rec, err = rerun.Load(resumed, rerun.Options{Exchange: true}); err != nil {
		t.Fatal(err)
	}
	if rep, err = e.Run(ctx, load(), engine.RunOptions{ReplayFrom: rec}); err != nil || rep.Status != "success" {
		t.Fatalf("replay: %v %+v", err, rep)
	}
	return resumed, rep.TranscriptPath
}

var turnHead = regexp.MustCompile(`── turn (\d+)/(\d+) ──`)

// Replay numbers a conversation step's turns per execution, as reel tree
// counts them: the attempt cut short in its second turn has two, the
// resume's run of the step its own three (not four to six), and a replay
// of the run the same as the run.
func TestReplayNumbersTurns(t *testing.T) {
	resumed, replayed := conversationRuns(t)
	var all bytes.Buffer
	for _, file := range []string{resumed, replayed} {
		var out bytes.Buffer
		warnings, err := Replay(context.Background(), &out, runs.Open(file, runs.Options{}), Options{})
		if err != nil || len(warnings) > 0 {
			t.Fatalf("%v %q", err, warnings)
		}
		tree, err := exectree.Build(runs.Open(file, runs.Options{}), exectree.Options{})
		if err != nil {
			t.Fatal(err)
		}
		// The headings, in order, are 1/N … N/N for each agent execution
		// the tree shows with N turns.
		var want []string
		exectree.Walk(tree.Root, func(n *exectree.Node, _ int) {
			if n.Kind == transcript.KindAgent && n.UserTurns > 1 {
				for i := 1; i <= n.UserTurns; i++ {
					want = append(want, fmt.Sprintf("── turn %d/%d ──", i, n.UserTurns))
				}
			}
		})
		got := turnHead.FindAllString(out.String(), -1)
		if strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("%s: turn headings\n%q\nwant (from the tree)\n%q\n%s", filepath.Base(file), got, want, out.String())
		}
		all.Write(out.Bytes())
	}
	if got := turnHead.FindAllString(all.String(), -1); len(got) != 2+3+2+3+2 {
		t.Errorf("%d turn headings, want 12: %q", len(got), got)
	}
	golden.Check(t, filepath.Join("testdata", "conversation.txt"), stable(all.Bytes()))

	var md bytes.Buffer
	if _, err := Replay(context.Background(), &md, runs.Open(resumed, runs.Options{}), Options{Format: Markdown}); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(md.String(), "**turn "); n != 7 {
		t.Errorf("markdown: %d turn headings, want 7:\n%s", n, md.String())
	}
}

var (
	uuidRE     = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	timeRE     = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z`)
	durationRE = regexp.MustCompile(`\b\d+(\.\d+)?(ms|µs|s|m)\b`)
	pathRE     = regexp.MustCompile(`/\S*/fake-claude`)
)

// stable replaces what differs between runs: ids, times, durations and the
// temporary directory.
func stable(b []byte) []byte {
	b = uuidRE.ReplaceAll(b, []byte("RUN-ID"))
	b = timeRE.ReplaceAll(b, []byte("TIME"))
	b = durationRE.ReplaceAll(b, []byte("DURATION"))
	return pathRE.ReplaceAll(b, []byte("…/fake-claude"))
}

// What a CLI wrote as a user message (a slash command, its output, a
// caveat, an environment context, a compaction summary) takes no turn
// number: reel tree counts the two turns the user took, and the replays
// number those alone.
func TestNoiseTakesNoTurn(t *testing.T) {
	file := transcripttest.WriteNoisySession(t, t.TempDir())
	tree, err := exectree.Build(runs.Open(file, runs.Options{}), exectree.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var agent *exectree.Node
	exectree.Walk(tree.Root, func(n *exectree.Node, _ int) {
		if n.Kind == transcript.KindAgent {
			agent = n
		}
	})
	if agent == nil || agent.UserTurns != 2 {
		t.Fatalf("tree: agent step %+v, want 2 user turns", agent)
	}
	var out bytes.Buffer
	if _, err := Replay(context.Background(), &out, runs.Open(file, runs.Options{}), Options{}); err != nil {
		t.Fatal(err)
	}
	got := turnHead.FindAllString(out.String(), -1)
	if want := []string{"── turn 1/2 ──", "── turn 2/2 ──"}; !slices.Equal(got, want) {
		t.Errorf("turn headings %q, want %q:\n%s", got, want, out.String())
	}
	// the second turn's heading comes right before the request, after the noise
	if i, j := strings.Index(out.String(), "turn 2/2"), strings.Index(out.String(), "context compacted"); i < j {
		t.Errorf("turn 2 heads the noise:\n%s", out.String())
	}
	var md bytes.Buffer
	if _, err := Replay(context.Background(), &md, runs.Open(file, runs.Options{}), Options{Format: Markdown}); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(md.String(), "**turn "); n != 2 || !strings.Contains(md.String(), "**turn 2/2**") {
		t.Errorf("markdown: %d turn headings, want 1/2 and 2/2:\n%s", n, md.String())
	}
}
