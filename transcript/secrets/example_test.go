package secrets_test

import (
	"fmt"
	"os"

	"github.com/reelhq/reel/transcript"
	"github.com/reelhq/reel/transcript/secrets"
)

func ExampleMasker_MaskString() {
	m := secrets.NewMasker([]string{"DB_PASSWORD=s3cr3t-pa55", "HOME=/home/dev"})
	fmt.Println(m.MaskString("connecting to db with s3cr3t-pa55 from /home/dev"))
	fmt.Println(m.MaskString("x_token: Zf3D0LXCM3EIMbgJpUNnkRtOfOueHznB"))
	fmt.Println(m.MaskString(`curl -H "Authorization: Api-Token 22cb987851bc5659129114c62e60c79a"`))
	fmt.Println(m.MaskString("OPENAI_API_KEY=sk-proj-YOUR_API_KEY_HERE"))
	// Output:
	// connecting to db with [MASKED] from /home/dev
	// x_token: [MASKED]
	// curl -H "Authorization: Api-Token [MASKED]"
	// OPENAI_API_KEY=sk-proj-YOUR_API_KEY_HERE
}

// A Recorder masks every event before it is written or broadcast.
func ExampleNewMasker() {
	dir, _ := os.MkdirTemp("", "transcripts")
	defer os.RemoveAll(dir)
	rec, err := transcript.Create(dir, transcript.NewRunID(), transcript.Options{
		Masker: secrets.NewMasker([]string{"API_TOKEN=tok-5f3e9a1c7b"}),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	rec.Record(transcript.ExchangeEvent{Type: transcript.RunStarted, Payload: &transcript.StepPayload{Name: "deploy", Kind: transcript.KindWorkflow}})
	rec.Record(transcript.ExchangeEvent{Type: transcript.StepStarted, Path: "push", Payload: &transcript.StepPayload{
		Name: "push", Kind: transcript.KindCommand, Command: "git push https://ci:tok-5f3e9a1c7b@example.com/repo.git",
	}})
	rec.Close()
	events, _ := transcript.ReadFile(rec.Path())
	fmt.Println(events[1].Step().Command)
	// Output:
	// git push https://ci:[MASKED]@example.com/repo.git
}
