package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reelhq/reel/transcript"
)

// An AWF conversation step (mode: conversation) through the built binary:
// the user's turns come from stdin, each resumes the session, and the
// transcript holds every turn inside the one step.
func TestRunModeConversationFromStdin(t *testing.T) {
	dir := t.TempDir()
	// The fake claude answers with the prompt it got and insists on
	// --resume s1 after the first turn.
	writeFile(t, filepath.Join(dir, "fake-claude"), `#!/bin/sh
last=
resume=
prev=
for a in "$@"; do
	[ "$prev" = "--resume" ] && resume=$a
	prev=$a
	last=$a
done
if [ -f "$0.ran" ] && [ "$resume" != s1 ]; then echo "no session" >&2; exit 1; fi
: > "$0.ran"
printf '{"type":"system","subtype":"init","session_id":"s1","model":"m"}\n'
printf '{"type":"assistant","session_id":"s1","message":{"id":"m-%s","role":"assistant","content":[{"type":"text","text":"got: %s"}]}}\n' "$$" "$last"
printf '{"type":"result","subtype":"success","is_error":false,"num_turns":1,"result":"got: %s","session_id":"s1","usage":{"input_tokens":5,"output_tokens":1}}\n' "$last"
`, 0o755)
	writeFile(t, filepath.Join(dir, ".awf", "workflows", "chat.yaml"), `
name: chat
states:
  initial: chat
  chat:
    type: agent
    provider: claude
    mode: conversation
    prompt: hello
    options: {command: ../../fake-claude}
`, 0o644)
	storage := filepath.Join(dir, "store")
	cmd := exec.Command(reelBinary(t), "run", "chat", "--storage", storage)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "REEL_STORAGE=")
	cmd.Stdin = strings.NewReader("and then\nquit\n")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v\nstdout:\n%s\nstderr:\n%s", err, out.String(), errb.String())
	}
	if !strings.Contains(out.String(), "got: and then") {
		t.Errorf("display:\n%s", out.String())
	}
	m := transcriptLine.FindStringSubmatch(errb.String())
	if m == nil {
		t.Fatalf("no transcript path in %q", errb.String())
	}
	events, err := transcript.ReadFile(m[1])
	if err != nil {
		t.Fatal(err)
	}
	var users []string
	for _, ev := range events {
		if ev.Type == transcript.MessageUser {
			users = append(users, ev.Message().Blocks[0].Text)
		}
	}
	if strings.Join(users, "|") != "hello|and then" {
		t.Errorf("message.user %q", users)
	}
	verifyStorage(t, storage)
}

// Vibe session files and opencode JSON streams import as transcripts that
// verify, with the format detected.
func TestImportVibeAndOpencode(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join("..", "..", "internal", "normalize", "testdata", "recordings")
	for _, f := range []string{"vibe-streaming/session-messages.jsonl", "opencode-json/tools-and-steps.jsonl"} {
		b, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(dir, "in", filepath.Base(f)), string(b), 0o644)
	}
	storage := filepath.Join(dir, "store")
	res := runBinary(t, dir, "import", "in", "--storage", storage)
	if res.code != 0 || !strings.Contains(res.stdout, "vibe-streaming") || !strings.Contains(res.stdout, "opencode-json") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", res.code, res.stdout, res.stderr)
	}
	verifyStorage(t, storage)
}

// The agent examples run as documented, with their fake CLI, and their
// transcripts verify.
func TestAgentExamplesRun(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{
		"providers":    "opencode used 2500 tokens",
		"conversation": "stop_condition after 4 messages; The word was BANANA42.",
		"chat":         "turn 1",
		"skills-role":  "Needs work",
	} {
		t.Run(name, func(t *testing.T) {
			storage := filepath.Join(t.TempDir(), "store")
			res := runBinary(t, root, "run", filepath.Join("examples", "agents", name+".yaml"), "--storage", storage)
			if res.code != 0 || !strings.Contains(res.stdout, want) {
				t.Fatalf("exit %d, want %q in\n%s\nstderr:\n%s", res.code, want, res.stdout, res.stderr)
			}
			verifyStorage(t, storage)
		})
	}
}
