// Command benchgen writes benchmark transcripts from the shared event mix
// (../shared/bench/mix.jsonl) for scripts/bench-read.sh.
//
// As the mix's README asks, each mix line is decoded into the transcript
// types once and the values are then written with seq 1..N (and, here, a
// fresh run id per file and timestamps 1 ms apart, in reel's fixed-width
// layout). Lines are encoded with transcript.AppendEvent, the recorder's
// own encoder, and written in large blocks, so generating hundreds of
// megabytes takes seconds.
//
//	benchgen -mix MIX -file OUT -mb 100            one transcript of ≥100 MB
//	benchgen -mix MIX -dir DIR -runs 1000 -mb 500  1000 transcripts, ≥500 MB in all
//	benchgen -mix MIX -dir DIR -tree 100000 -children 200
//	                                               a run of 100k events calling 200 children
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	reelruns "github.com/reelhq/reel/internal/runs"
	"github.com/reelhq/reel/transcript"
)

func main() {
	var (
		mixPath  = flag.String("mix", "../shared/bench/mix.jsonl", "the event mix")
		file     = flag.String("file", "", "write one transcript here")
		dir      = flag.String("dir", "", "write transcripts into this directory")
		mb       = flag.Int("mb", 100, "total size in megabytes")
		runs     = flag.Int("runs", 0, "number of transcripts (with -dir)")
		tree     = flag.Int("tree", 0, "events in the root run of a tree (with -dir)")
		children = flag.Int("children", 200, "child runs of the tree")
	)
	flag.Parse()
	var mix []transcript.ExchangeEvent
	var err error
	src := reelruns.Open(*mixPath, reelruns.Options{})
	for rec, rerr := range src.Events(reelruns.FullDecode) {
		if rerr != nil {
			err = rerr
			break
		}
		mix = append(mix, *rec.Event())
	}
	if err != nil || len(mix) == 0 || src.Warnings().Len() > 0 {
		fatal(fmt.Errorf("read mix: %v %q (%d events)", err, src.Warnings().Strings(), len(mix)))
	}
	switch {
	case *file != "":
		err = writeSized(*file, runID(0), "", mix, int64(*mb)<<20)
	case *dir != "" && *runs > 0:
		per := (int64(*mb)<<20)/int64(*runs) + 1
		for i := 0; i < *runs && err == nil; i++ {
			id := runID(i + 1)
			err = writeSized(filepath.Join(*dir, id+".jsonl"), id, "", mix, per)
		}
	case *dir != "" && *tree > 0:
		err = writeTree(*dir, mix, *tree, *children)
	default:
		flag.Usage()
		os.Exit(2)
	}
	if err != nil {
		fatal(err)
	}
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "benchgen:", err)
	os.Exit(1)
}

// runID makes a valid UUID v4 from n, so the files are reproducible.
func runID(n int) string {
	return fmt.Sprintf("%08x-0000-4000-8000-%012x", n>>16, n)
}

var epoch = time.Date(2026, 6, 8, 8, 14, 42, 0, time.UTC)

// writer stamps and encodes events into one transcript file.
type writer struct {
	f    *os.File
	bw   *bufio.Writer
	seq  uint64
	size int64
	buf  []byte
	id   string
	par  string
}

func create(path, id, parent string) (*writer, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, err
	}
	return &writer{f: f, bw: bufio.NewWriterSize(f, 1<<20), id: id, par: parent}, nil
}

func (w *writer) write(e transcript.ExchangeEvent) error {
	w.seq++
	e.Seq, e.RunID, e.ParentRunID = w.seq, w.id, w.par
	e.Timestamp = epoch.Add(time.Duration(w.seq) * time.Millisecond)
	var err error
	w.buf, err = transcript.AppendEvent(w.buf[:0], &e)
	if err != nil {
		return err
	}
	w.buf = append(w.buf, '\n')
	w.size += int64(len(w.buf))
	_, err = w.bw.Write(w.buf)
	return err
}

func (w *writer) close() error {
	if err := w.bw.Flush(); err != nil {
		return err
	}
	return w.f.Close()
}

func runEvent(t transcript.EventType, name string) transcript.ExchangeEvent {
	return transcript.ExchangeEvent{Type: t, Payload: &transcript.StepPayload{Name: name, Kind: transcript.KindWorkflow}}
}

// writeSized writes run.started, the mix repeated until size is reached,
// and run.completed.
func writeSized(path, id, parent string, mix []transcript.ExchangeEvent, size int64) error {
	w, err := create(path, id, parent)
	if err != nil {
		return err
	}
	if err := w.write(runEvent(transcript.RunStarted, "bench")); err != nil {
		return err
	}
	for w.size < size {
		for _, e := range mix {
			if err := w.write(e); err != nil {
				return err
			}
		}
	}
	if err := w.write(runEvent(transcript.RunCompleted, "bench")); err != nil {
		return err
	}
	return w.close()
}

// writeTree writes a root run of about events events whose mix groups run
// in a for_each loop, one iteration per group, and which calls children
// sub-workflows spread evenly over the loop.
func writeTree(dir string, mix []transcript.ExchangeEvent, events, children int) error {
	rootID := runID(1 << 20)
	w, err := create(filepath.Join(dir, rootID+".jsonl"), rootID, "")
	if err != nil {
		return err
	}
	groups := events / len(mix)
	every := groups / max(children, 1)
	w.write(runEvent(transcript.RunStarted, "tree"))
	w.write(transcript.ExchangeEvent{Type: transcript.StepStarted, Path: "each", Payload: &transcript.StepPayload{Name: "each", Kind: transcript.KindForEach}})
	child := 0
	for g := 0; g < groups; g++ {
		for _, e := range mix {
			e.Path = "each." + e.Path
			e.Iteration = g
			if err := w.write(e); err != nil {
				return err
			}
		}
		if child < children && every > 0 && g%every == every-1 {
			child++
			cid := runID(1<<20 + child)
			call := transcript.StepPayload{Name: "call", Kind: transcript.KindCallWorkflow}
			w.write(transcript.ExchangeEvent{Type: transcript.StepStarted, Path: "each.call", Iteration: g, Payload: &call})
			w.write(transcript.ExchangeEvent{Type: transcript.CallWorkflowStarted, Path: "each.call", Iteration: g, ChildRunID: cid, Payload: &call})
			if err := writeSized(filepath.Join(dir, cid+".jsonl"), cid, rootID, mix, 64<<10); err != nil {
				return err
			}
			w.write(transcript.ExchangeEvent{Type: transcript.CallWorkflowCompleted, Path: "each.call", Iteration: g, ChildRunID: cid, Payload: &call})
			w.write(transcript.ExchangeEvent{Type: transcript.StepCompleted, Path: "each.call", Iteration: g, Payload: &call})
		}
	}
	w.write(transcript.ExchangeEvent{Type: transcript.StepCompleted, Path: "each", Payload: &transcript.StepPayload{Name: "each", Kind: transcript.KindForEach}})
	if err := w.write(runEvent(transcript.RunCompleted, "tree")); err != nil {
		return err
	}
	return w.close()
}
