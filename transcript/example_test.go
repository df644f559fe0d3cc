package transcript_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/reelhq/reel/transcript"
)

// recordRun writes a small run into dir: a workflow with one agent step
// that asked for a tool.
func recordRun(dir string) (path string, err error) {
	rec, err := transcript.Create(dir, transcript.NewRunID(), transcript.Options{})
	if err != nil {
		return "", err
	}
	defer rec.Close()
	events := []transcript.ExchangeEvent{
		{Type: transcript.RunStarted, Payload: &transcript.StepPayload{Name: "review", Kind: transcript.KindWorkflow}},
		{Type: transcript.StepStarted, Path: "ask", Payload: &transcript.StepPayload{Name: "ask", Kind: "agent"}},
		{Type: transcript.MessageUser, Path: "ask", Payload: &transcript.MessagePayload{Role: "user", Blocks: []transcript.ContentBlock{
			{Type: transcript.BlockText, Fidelity: transcript.FidelityRouter, Text: "Which Go files are here?"},
		}}},
		{Type: transcript.ToolCall, Path: "ask", Payload: &transcript.ToolPayload{Name: "Glob", CallID: "c1", Input: map[string]any{"pattern": "*.go"}, Fidelity: transcript.FidelityAgentEmitted}},
		{Type: transcript.ToolResult, Path: "ask", Payload: &transcript.ToolPayload{Name: "Glob", CallID: "c1", Output: "main.go", Fidelity: transcript.FidelityAgentEmitted}},
		{Type: transcript.MessageAssistant, Path: "ask", Payload: &transcript.MessagePayload{Role: "assistant", Blocks: []transcript.ContentBlock{
			{Type: transcript.BlockText, Fidelity: transcript.FidelityAgentEmitted, Text: "Only main.go."},
		}}},
		{Type: transcript.StepCompleted, Path: "ask", Payload: &transcript.StepPayload{Name: "ask", Kind: "agent"}},
		{Type: transcript.RunCompleted, Payload: &transcript.StepPayload{Name: "review", Kind: transcript.KindWorkflow,
			Result: transcript.RunResult{Status: "success"}}},
	}
	for _, e := range events {
		if _, err := rec.Record(e); err != nil {
			return "", err
		}
	}
	return rec.Path(), nil
}

// Record a run: one Recorder per run, each Record durable once it returns.
func ExampleCreate() {
	storage, _ := os.MkdirTemp("", "reel-example")
	defer os.RemoveAll(storage)

	rec, err := transcript.Create(transcript.Dir(storage), transcript.NewRunID(), transcript.Options{})
	if err != nil {
		log.Fatal(err)
	}
	seq, err := rec.Record(transcript.ExchangeEvent{
		Type:    transcript.RunStarted,
		Payload: &transcript.StepPayload{Name: "hello", Kind: transcript.KindWorkflow},
	})
	if err != nil {
		log.Fatal(err)
	}
	if err := rec.Close(); err != nil {
		log.Fatal(err)
	}
	fmt.Println("seq", seq, "in", filepath.Base(filepath.Dir(rec.Path())))
	// Output: seq 1 in transcripts
}

// Read a finished run line by line: damage to one line is an error for that
// line only, and the reader goes on.
func ExampleNewReader() {
	storage, _ := os.MkdirTemp("", "reel-example")
	defer os.RemoveAll(storage)
	path, err := recordRun(transcript.Dir(storage))
	if err != nil {
		log.Fatal(err)
	}

	f, err := os.Open(path)
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	r := transcript.NewReader(f)
	for {
		e, err := r.Next()
		if err == io.EOF {
			break
		}
		var lineErr *transcript.LineError
		if errors.As(err, &lineErr) {
			fmt.Println("skipping a damaged line:", err)
			continue
		}
		if err != nil {
			log.Fatal(err)
		}
		switch p := e.Payload.(type) {
		case *transcript.ToolPayload:
			if e.Type == transcript.ToolCall {
				fmt.Printf("%d %s %s %s\n", e.Seq, e.Type, e.Path, p.Name)
			}
		case *transcript.MessagePayload:
			fmt.Printf("%d %s %s %q\n", e.Seq, e.Type, e.Path, p.Blocks[0].Text)
		}
	}
	// Output:
	// 3 message.user ask "Which Go files are here?"
	// 4 tool.call ask Glob
	// 6 message.assistant ask "Only main.go."
}

// Follow a run while it is written: the follower reads the file from a seq
// and then waits for new lines, ending after run.completed (or with
// ErrWriterGone when the writer died without writing it).
func ExampleFollow() {
	storage, _ := os.MkdirTemp("", "reel-example")
	defer os.RemoveAll(storage)
	dir := transcript.Dir(storage)
	rec, err := transcript.Create(dir, transcript.NewRunID(), transcript.Options{})
	if err != nil {
		log.Fatal(err)
	}
	rec.Record(transcript.ExchangeEvent{Type: transcript.RunStarted,
		Payload: &transcript.StepPayload{Name: "live", Kind: transcript.KindWorkflow}})

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	fl, err := transcript.Follow(ctx, rec.Path(), 1, transcript.FollowOptions{Poll: 10 * time.Millisecond})
	if err != nil {
		log.Fatal(err)
	}
	defer fl.Close()

	go func() { // the writer goes on while the follower reads
		rec.Record(transcript.ExchangeEvent{Type: transcript.RunCompleted,
			Payload: &transcript.StepPayload{Name: "live", Kind: transcript.KindWorkflow,
				Result: transcript.RunResult{Status: "success"}}})
		rec.Close()
	}()
	for {
		e, err := fl.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(e.Seq, e.Type)
	}
	// Output:
	// 1 run.started
	// 2 run.completed
}
