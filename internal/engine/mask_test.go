package engine

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reelhq/reel/transcript"
	"github.com/reelhq/reel/transcript/secrets"
)

const (
	// envSecret is not a credential shape: only the environment rule can
	// find it.
	envSecret = "zq8-env-secret-value-4711"
	// shapeSecret is in no environment: only the shape rule can find it.
	shapeSecret = "ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5"
)

// errPad puts the shape secret across byte 200 of the failing step's
// stderr line, where the step error is cut. Each step writes one stream
// only, so that its display lines come in a fixed order.
var errPad = strings.Repeat("p", 190)

var maskWorkflow = `
name: mask
inputs: [{name: tok, default: ""}]
states:
  initial: leak
  leak:
    type: step
    command: 'echo "key=$REEL_TEST_API_KEY shape={{.inputs.tok}}"'
    on_success: fails
  fails:
    type: step
    command: 'echo "warn $REEL_TEST_API_KEY" >&2; echo "` + errPad + ` {{.inputs.tok}} and $REEL_TEST_API_KEY" >&2; exit 3'
    on_failure: end
  end: {type: terminal, status: failure, message: 'gave up: {{.states.fails.Error}} {{.env.REEL_TEST_API_KEY}}'}
`

// maskRun runs maskWorkflow and returns its display, its audit trail and
// the concatenation of its transcripts, all normalized.
func maskRun(t *testing.T, mask, noTranscript bool) (display, audit, transcripts []byte) {
	t.Helper()
	h := newHarness(t)
	h.e.Environ = append(os.Environ(), "REEL_TEST_API_KEY="+envSecret)
	if mask {
		h.e.Masker = secrets.NewMasker(h.e.Environ)
	}
	h.e.NoTranscript = noTranscript
	rep := h.run(context.Background(), maskWorkflow, map[string]string{"tok": shapeSecret})
	if rep.Status != "failure" || rep.ExitCode != 3 {
		t.Fatalf("mask=%v no-transcript=%v: report %+v", mask, noTranscript, rep)
	}
	audit, err := os.ReadFile(filepath.Join(h.storage, "audit.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for i, line := range bytes.Split(bytes.TrimSuffix(audit, []byte("\n")), []byte("\n")) {
		if !json.Valid(line) {
			t.Fatalf("audit line %d is not JSON: %s", i+1, line)
		}
	}
	files, _ := filepath.Glob(filepath.Join(h.storage, "transcripts", "*.jsonl"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		transcripts = append(transcripts, b...)
	}
	if noTranscript != (len(files) == 0) {
		t.Fatalf("no-transcript=%v but %d transcripts", noTranscript, len(files))
	}
	return normalize(h.display.Bytes()), normalize(audit), transcripts
}

// With a Masker the display and the audit trail lose every secret the
// transcript loses, with and without the transcript, and nothing else.
func TestMaskSecretsDisplayAndAudit(t *testing.T) {
	type outputs struct{ display, audit, transcripts []byte }
	got := map[[2]bool]outputs{}
	for _, mask := range []bool{false, true} {
		for _, off := range []bool{false, true} {
			d, a, tr := maskRun(t, mask, off)
			got[[2]bool{mask, off}] = outputs{d, a, tr}
			named := map[string][]byte{"display": d, "audit trail": a}
			if !off {
				named["transcript"] = tr
			}
			for what, b := range named {
				for _, secret := range []string{envSecret, shapeSecret} {
					if leaked := bytes.Contains(b, []byte(secret)); leaked == mask {
						t.Errorf("mask=%v no-transcript=%v: %s contains %s = %v:\n%s", mask, off, what, secret, leaked, b)
					}
				}
				if masked := bytes.Contains(b, []byte(secrets.Masked)); masked != mask {
					t.Errorf("mask=%v no-transcript=%v: %s contains %s = %v:\n%s", mask, off, what, secrets.Masked, masked, b)
				}
			}
		}
	}
	for _, mask := range []bool{false, true} {
		on, off := got[[2]bool{mask, false}], got[[2]bool{mask, true}]
		if !bytes.Equal(on.display, off.display) {
			t.Errorf("mask=%v: display differs without transcript:\n%s\n---\n%s", mask, on.display, off.display)
		}
		if !bytes.Equal(on.audit, off.audit) {
			t.Errorf("mask=%v: audit differs without transcript:\n%s\n---\n%s", mask, on.audit, off.audit)
		}
	}
	// masking replaces the secrets and changes nothing else
	r := strings.NewReplacer(envSecret, secrets.Masked, shapeSecret, secrets.Masked)
	plain, masked := got[[2]bool{false, false}], got[[2]bool{true, false}]
	if want := r.Replace(string(plain.display)); want != string(masked.display) {
		t.Errorf("masked display:\n%s\nwant:\n%s", masked.display, want)
	}
	if want := r.Replace(string(plain.audit)); want != string(masked.audit) {
		t.Errorf("masked audit:\n%s\nwant:\n%s", masked.audit, want)
	}
	// each place a secret reaches the display is masked
	for _, want := range []string{
		"leak │ key=[MASKED] shape=[MASKED]",
		"fails │ warn [MASKED]\n",
		"✘ fails (<d>): exit status 3: " + errPad + " [MASKED]…\n",
		"■ gave up: exit status 3: " + errPad + " [MASKED]… [MASKED]\n",
	} {
		if !bytes.Contains(masked.display, []byte(want)) {
			t.Errorf("masked display lacks %q:\n%s", want, masked.display)
		}
	}
}

// An agent's output reaches the display masked, like its messages in the
// transcript. The provider is a script printing a claude stream whose text
// holds both secrets.
func TestMaskSecretsAgentOutput(t *testing.T) {
	for _, mask := range []bool{false, true} {
		h := newHarness(t)
		text := "use $REEL_TEST_API_KEY and " + shapeSecret
		h.write("fake-claude", "#!/bin/sh\ncat <<X\n"+
			`{"type":"system","subtype":"init","session_id":"s1","model":"claude-sonnet-4-5","tools":[]}`+"\n"+
			`{"type":"assistant","session_id":"s1","message":{"id":"m1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"`+text+`"}],"usage":{"input_tokens":10,"output_tokens":2}}}`+"\n"+
			`{"type":"result","subtype":"success","is_error":false,"num_turns":1,"result":"`+text+`","session_id":"s1","usage":{"input_tokens":10,"output_tokens":2}}`+"\nX\n")
		if err := os.Chmod(filepath.Join(h.dir, "fake-claude"), 0o755); err != nil {
			t.Fatal(err)
		}
		h.e.Environ = append(os.Environ(), "REEL_TEST_API_KEY="+envSecret)
		if mask {
			h.e.Masker = secrets.NewMasker(h.e.Environ)
		}
		rep := h.run(context.Background(), `
name: ag
states:
  initial: ai
  ai: {type: agent, provider: claude, prompt: hi, options: {command: ./fake-claude}}
`, nil)
		if rep.Status != "success" {
			t.Fatalf("mask=%v: report %+v\n%s", mask, rep, h.display.Bytes())
		}
		tr, err := os.ReadFile(rep.TranscriptPath)
		if err != nil {
			t.Fatal(err)
		}
		for what, b := range map[string][]byte{"display": h.display.Bytes(), "transcript": tr} {
			for _, secret := range []string{envSecret, shapeSecret} {
				if leaked := bytes.Contains(b, []byte(secret)); leaked == mask {
					t.Errorf("mask=%v: %s contains %s = %v:\n%s", mask, what, secret, leaked, b)
				}
			}
		}
		if want := "ai │ use [MASKED] and [MASKED]\n"; mask && !bytes.Contains(h.display.Bytes(), []byte(want)) {
			t.Errorf("display lacks %q:\n%s", want, h.display.Bytes())
		}
	}
}

// A multi-line secret (a key file in an environment variable) is masked in
// command output as a whole; the display shows output line by line and a
// step error quotes its last line, so each of its lines is masked too.
func TestMaskSecretsMultiLineValue(t *testing.T) {
	const key = "-----BEGIN TEST KEY-----\nline1secretAAAA\r\nline2secretBBBB\n-----END TEST KEY-----"
	for _, mask := range []bool{false, true} {
		h := newHarness(t)
		h.e.Environ = append(os.Environ(), "DEPLOY_KEY="+key)
		if mask {
			h.e.Masker = secrets.NewMasker(h.e.Environ)
		}
		rep := h.run(context.Background(), `
name: pem
states:
  initial: show
  show: {type: step, command: 'printf "%s\n" "$DEPLOY_KEY" >&2; exit 1'}
`, nil)
		if rep.ExitCode != 3 {
			t.Fatalf("report %+v", rep)
		}
		audit, err := os.ReadFile(filepath.Join(h.storage, "audit.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		tr, err := os.ReadFile(rep.TranscriptPath)
		if err != nil {
			t.Fatal(err)
		}
		for what, b := range map[string][]byte{"display": h.display.Bytes(), "audit trail": audit, "transcript": tr} {
			for _, secret := range []string{"line1secretAAAA", "line2secretBBBB", "END TEST KEY"} {
				if what == "audit trail" && secret != "END TEST KEY" {
					continue // the step error is the last line only
				}
				if leaked := bytes.Contains(b, []byte(secret)); leaked == mask {
					t.Errorf("mask=%v: %s contains %q = %v:\n%s", mask, what, secret, leaked, b)
				}
			}
		}
	}
}

// displayedPieces writes input to an outputWriter of a masking display in
// chunks of the given sizes and returns the pieces it displayed, prefixes
// removed.
func displayedPieces(t *testing.T, m *secrets.Masker, input string, chunks []int) []string {
	t.Helper()
	var buf bytes.Buffer
	r := &run{e: &Engine{Display: &buf, Masker: m}}
	w := r.newOutputWriter("p")
	for rest := input; rest != ""; chunks = chunks[1:] {
		n := min(chunks[0], len(rest))
		w.Write([]byte(rest[:n]))
		rest = rest[n:]
	}
	w.flush()
	var pieces []string
	for _, line := range strings.SplitAfter(buf.String(), "\n") {
		if line == "" {
			continue
		}
		p, ok := strings.CutPrefix(line, "  p │ ")
		if !ok || !strings.HasSuffix(p, "\n") {
			t.Fatalf("display line %q", line)
		}
		pieces = append(pieces, strings.TrimSuffix(p, "\n"))
	}
	return pieces
}

// A long line without newlines is shown in pieces; a masking display cuts
// it only where no secret straddles the cut, so the pieces mask exactly as
// the whole line does. Property test over random lines and write sizes.
func TestMaskedLongLinesAreCutBetweenSecrets(t *testing.T) {
	m := secrets.NewMasker([]string{"REEL_TEST_API_KEY=" + envSecret})
	words := []string{"plain", "x", "progress=42%", envSecret, shapeSecret,
		"sk-ant-Qz8Lp3Vx7Nq2Wm5Rt9Ky4Hb6Jc1Fd0Gs3Xa7Ue2M", "AKIAZ52HGXYRN4WBTQ7K",
		"Authorization: Bearer tK9mW2qX7vB4nL8pR3sY6zC1dF5gH0", "xbearer  " + strings.Repeat("u", 20)}
	seps := []string{" ", "  ", "\t", " "}
	rng := rand.New(rand.NewSource(1))
	for iter := range 200 {
		var in strings.Builder
		size := rng.Intn(3 * longLine)
		if iter%10 == 0 {
			size = maxHeldLine / 2
		}
		for in.Len() < size {
			in.WriteString(words[rng.Intn(len(words))])
			if rng.Intn(200) == 0 {
				in.WriteString("\n")
			} else {
				in.WriteString(seps[rng.Intn(len(seps))])
			}
		}
		input := in.String()
		var chunks []int
		for n := 0; n < len(input); {
			c := 1 + rng.Intn(2*longLine)
			chunks = append(chunks, c)
			n += c
		}
		pieces := displayedPieces(t, m, input, chunks)
		var want strings.Builder
		for line := range strings.SplitSeq(strings.TrimSuffix(input, "\n"), "\n") {
			want.WriteString(m.MaskString(line))
		}
		got := strings.Join(pieces, "")
		if got != want.String() {
			t.Fatalf("iteration %d: pieces do not mask as the whole lines do\ngot:  %.300q\nwant: %.300q", iter, got, want.String())
		}
		for _, p := range pieces {
			if len(p) > maxHeldLine+2*longLine {
				t.Fatalf("iteration %d: piece of %d bytes", iter, len(p))
			}
			// "xbearer uuu…" is not a bearer token (the keyword must start a
			// word): it stays, and the cut must not make it one.
			for _, secret := range []string{envSecret, shapeSecret, "q2Wm5Rt9", "7vB4nL8p", "HGXYRN4W"} {
				if strings.Contains(p, secret) {
					t.Fatalf("iteration %d: piece shows %q: %q", iter, secret, p)
				}
			}
		}
	}
}

// A line with nowhere to cut is held up to maxHeldLine, then shown anyway:
// memory stays bounded whatever the process prints.
func TestMaskedLineWithoutWhitespaceIsBounded(t *testing.T) {
	m := secrets.NewMasker(nil)
	input := strings.Repeat("y", 3*maxHeldLine)
	chunks := make([]int, len(input)/1000+1)
	for i := range chunks {
		chunks[i] = 1000
	}
	pieces := displayedPieces(t, m, input, chunks)
	if strings.Join(pieces, "") != input {
		t.Fatal("output lost")
	}
	if len(pieces) < 3 {
		t.Fatalf("%d pieces", len(pieces))
	}
	for _, p := range pieces[:len(pieces)-1] {
		if len(p) <= maxHeldLine || len(p) > maxHeldLine+1000 {
			t.Fatalf("piece of %d bytes, want just over %d", len(p), maxHeldLine)
		}
	}
	// without a masker, the cut stays at longLine
	plain := displayedPieces(t, nil, strings.Repeat("y ", longLine), []int{longLine + 1, 1 << 20})
	if len(plain) != 2 || len(plain[0]) != longLine+1 {
		t.Fatalf("unmasked pieces %d, first %d bytes", len(plain), len(plain[0]))
	}
}

// Whatever a process prints and however the pipe splits it, a masking
// display shows every byte of every line once, masked as the whole line
// would be (lines end at \n; the one trailing \r a terminal would eat is
// dropped).
func FuzzMaskedOutputWriter(f *testing.F) {
	f.Add("plain ", uint16(2000), uint16(700))
	f.Add("Authorization: Bearer tK9mW2qX7vB4nL8pR3sY6zC1dF5gH0\t", uint16(300), uint16(4097))
	f.Add(shapeSecret+" "+envSecret+"\r\n", uint16(500), uint16(1))
	f.Add("xbearer\n"+strings.Repeat("u", 20)+" ", uint16(1000), uint16(9000))
	f.Add("\xff\x00 sk-proj-7Hq2Lm9Xv4Tn8Rb3Wk6Z  ", uint16(3000), uint16(333))
	m := secrets.NewMasker([]string{"REEL_TEST_API_KEY=" + envSecret})
	f.Fuzz(func(t *testing.T, unit string, reps, chunk uint16) {
		if unit == "" || strings.ContainsAny(unit, "\v\f") {
			// \v and \f separate words for the cut but not for the
			// bearer shape; the fixed cases cover what they do
			return
		}
		// just past maxHeldLine: longer inputs only repeat themselves
		input := strings.Repeat(unit, 1+int(reps)%((maxHeldLine+2*longLine)/len(unit)+1))
		chunks := make([]int, len(input)/(1+int(chunk))+1)
		for i := range chunks {
			chunks[i] = 1 + int(chunk)
		}
		pieces := displayedPieces(t, m, input, chunks)
		var want strings.Builder
		lines := strings.Split(input, "\n")
		for i, line := range lines {
			if i < len(lines)-1 {
				line = strings.TrimRight(line, "\r")
			}
			want.WriteString(m.MaskString(line))
		}
		if got := strings.Join(pieces, ""); got != want.String() {
			// A line with no safe cut in maxHeldLine bytes is cut anyway,
			// and what is cut open stays masked to its end: more may be
			// masked, never less.
			forced := false
			for _, l := range lines {
				forced = forced || len(l) > maxHeldLine
			}
			if !forced {
				t.Fatalf("pieces do not mask as the whole lines do\ngot:  %.300q\nwant: %.300q", got, want.String())
			}
			if leak := unmaskedBeyond(got, want.String()); leak != "" {
				t.Fatalf("pieces show %.300q, which the whole lines mask\ngot:  %.300q\nwant: %.300q", leak, got, want.String())
			}
		}
		for _, p := range pieces {
			if strings.Contains(p, envSecret) || strings.Contains(p, shapeSecret) {
				t.Fatalf("piece shows a secret: %.300q", p)
			}
		}
	})
}

// unmaskedBeyond returns a run of text that got shows and want masks, or
// "": got must be want with more masked, so each run of text between two
// Masked in got lies within one such run of want.
func unmaskedBeyond(got, want string) string {
	for seg := range strings.SplitSeq(got, secrets.Masked) {
		found := false
		for w := range strings.SplitSeq(want, secrets.Masked) {
			if strings.Contains(w, seg) {
				found = true
				break
			}
		}
		if !found {
			return seg
		}
	}
	return ""
}

// A token longer than maxHeldLine with no whitespace is cut where the
// display must show it, and its rest, without the prefix that made it a
// credential, stays masked up to its end (found by FuzzMaskedOutputWriter:
// the rest was shown).
func TestMaskedTokenLongerThanHeldLine(t *testing.T) {
	m := secrets.NewMasker([]string{"REEL_TEST_API_KEY=" + envSecret})
	token := strings.Repeat("sk-"+strings.Repeat("0123456789", 2), 2913)
	for _, c := range []struct {
		input string
		chunk int
	}{
		{token, 229},
		{token, 1 << 20},
		{"x " + token + " after " + shapeSecret + "\n", 4096},
		{strings.Repeat("y", maxHeldLine-4) + ",sk-7Hq2Lm9Xv4Tn8Rb3Wk6Zp1Yc5Fd0Gs7Ja2Ue9Mo4 tail", 1},
		{strings.Repeat("y", maxHeldLine-5) + " " + envSecret + " tail", 100},
		{strings.Repeat("y", maxHeldLine-5) + " Bearer tJ4nW8qK2vX6mB9pL3rS7yZ1cD5fG0hT3kN8wQ2x tail", 7},
		{strings.Repeat("y", maxHeldLine) + "," + `"api_key":"vR7kM2pX9nT4wB8qL3sY6zC1dF5gH0jK2mN7xQ4v"` + " tail", 3},
	} {
		chunks := make([]int, len(c.input)/c.chunk+1)
		for i := range chunks {
			chunks[i] = c.chunk
		}
		pieces := displayedPieces(t, m, c.input, chunks)
		got := strings.Join(pieces, "")
		for _, secret := range []string{"0123456789", "Lm9Xv4Tn8R", envSecret, shapeSecret, "qK2vX6mB9p", "M2pX9nT4wB"} {
			if strings.Contains(got, secret) {
				t.Errorf("chunks of %d: display shows %q: %.200q … %.200q", c.chunk, secret, got, got[max(0, len(got)-200):])
			}
		}
		if !strings.Contains(c.input, "\n") && !strings.HasSuffix(got, " tail") && strings.HasSuffix(c.input, " tail") {
			t.Errorf("chunks of %d: the text after the token is lost: %.200q", c.chunk, got[max(0, len(got)-200):])
		}
		if leak := unmaskedBeyond(got, m.MaskString(strings.TrimSuffix(c.input, "\n"))); leak != "" {
			t.Errorf("chunks of %d: display shows %.100q, masked whole", c.chunk, leak)
		}
	}
}

// BenchmarkMaskedDisplay streams 1 MiB of command output (a secret every
// 50 lines) through a step's display writer with the masker of a real
// environment, and without one, beside a plain standard-library display
// of the same lines (bufio.Scanner, prefix, fmt.Fprintln). x-vs-stdlib is
// the baseline's time over the masked display's, as in every benchmark
// here (higher is better for reel); masking costs, so it is below 1.
func BenchmarkMaskedDisplay(b *testing.B) {
	var sb strings.Builder
	for i := 0; sb.Len() < 1<<20; i++ {
		fmt.Fprintf(&sb, "[%05d] compiled ./pkg/module%d/file.go ok in 0.%03ds\n", i, i%97, i%1000)
		if i%50 == 0 {
			fmt.Fprintf(&sb, "connecting with key %s and token %s\n", envSecret, shapeSecret)
		}
	}
	out := []byte(sb.String())
	m := secrets.NewMasker(append(os.Environ(), "REEL_TEST_API_KEY="+envSecret))
	display := func(m *secrets.Masker) time.Duration {
		r := &run{e: &Engine{Display: io.Discard, Masker: m}}
		start := time.Now()
		w := r.newOutputWriter("build")
		for rest := out; len(rest) > 0; {
			n := min(len(rest), 32<<10) // what a pipe read returns
			w.Write(rest[:n])
			rest = rest[n:]
		}
		w.flush()
		return time.Since(start)
	}
	baseline := func() time.Duration {
		start := time.Now()
		sc := bufio.NewScanner(bytes.NewReader(out))
		for sc.Scan() {
			fmt.Fprintln(io.Discard, "  build │ "+sc.Text())
		}
		return time.Since(start)
	}
	// minima: the least disturbed measurement on a shared machine
	masked, plain, base := time.Duration(1<<62), time.Duration(1<<62), time.Duration(1<<62)
	b.SetBytes(int64(len(out)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		base = min(base, baseline())
		masked = min(masked, display(m))
		plain = min(plain, display(nil))
	}
	b.ReportMetric(float64(len(out))/masked.Seconds()/1e6, "masked-MB/s")
	b.ReportMetric(float64(base)/float64(plain), "unmasked-x-vs-stdlib")
	b.ReportMetric(float64(base)/float64(masked), "x-vs-stdlib")
}

// countingMasker counts what goes through the engine's masker.
type countingMasker struct {
	*secrets.Masker
	mu      sync.Mutex
	events  int
	strings []string
}

func (c *countingMasker) MaskEvent(e *transcript.ExchangeEvent) {
	c.mu.Lock()
	c.events++
	c.mu.Unlock()
	c.Masker.MaskEvent(e)
}

func (c *countingMasker) MaskString(s string) string {
	c.mu.Lock()
	c.strings = append(c.strings, s)
	c.mu.Unlock()
	return c.Masker.MaskString(s)
}

// Each event is masked once, whether the transcript is on or off, and the
// audit trail and the display take its masked fields rather than masking
// again; what they show beside the events (the workflow's name, a step's
// path, an output prefix) is masked once each.
func TestEveryEventIsMaskedOnce(t *testing.T) {
	for _, noTranscript := range []bool{false, true} {
		h := newHarness(t)
		h.e.Environ = append(os.Environ(), "REEL_TEST_API_KEY="+envSecret)
		h.e.Masker = secrets.NewMasker(h.e.Environ)
		h.e.NoTranscript = noTranscript
		c := &countingMasker{Masker: h.e.Masker}
		h.e.masksOnce.Do(func() { h.e.masksBy = c })
		rep := h.run(context.Background(), maskWorkflow, map[string]string{"tok": shapeSecret})
		if rep.ExitCode != 3 {
			t.Fatalf("report %+v", rep)
		}
		audit, err := os.ReadFile(filepath.Join(h.storage, "audit.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		want := bytes.Count(audit, []byte("\n")) // one per run or step start and end
		if !noTranscript {
			tr, err := os.ReadFile(rep.TranscriptPath)
			if err != nil {
				t.Fatal(err)
			}
			want = bytes.Count(tr, []byte("\n"))
		}
		if c.events != want {
			t.Errorf("no-transcript=%v: %d MaskEvent calls for %d events", noTranscript, c.events, want)
		}
		slices.Sort(c.strings)
		if wantStrings := []string{"  fails │ ", "  leak │ ", "end", "fails", "leak", "mask"}; !slices.Equal(c.strings, wantStrings) {
			t.Errorf("no-transcript=%v: MaskString calls %q, want %q", noTranscript, c.strings, wantStrings)
		}
		for _, secret := range []string{envSecret, shapeSecret} {
			if bytes.Contains(h.display.Bytes(), []byte(secret)) || bytes.Contains(audit, []byte(secret)) {
				t.Errorf("no-transcript=%v: %s shown", noTranscript, secret)
			}
		}
	}
}
