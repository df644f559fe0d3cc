package runs_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/reelhq/reel/internal/runs"
	"github.com/reelhq/reel/internal/runstatus"
	"github.com/reelhq/reel/internal/transcripttest"
	"github.com/reelhq/reel/internal/warn"
	"github.com/reelhq/reel/transcript"
)

// collect reads the run in mode and returns copies of what it yielded.
func collect(t *testing.T, r *runs.Run, mode runs.Mode, types ...transcript.EventType) ([]runs.Record, []transcript.ExchangeEvent, error) {
	t.Helper()
	var recs []runs.Record
	var evs []transcript.ExchangeEvent
	for rec, err := range r.Events(mode, types...) {
		if err != nil {
			return recs, evs, err
		}
		c := *rec
		c.Raw = bytes.Clone(rec.Raw)
		recs = append(recs, c)
		if mode == runs.FullDecode {
			evs = append(evs, *rec.Event())
		}
	}
	return recs, evs, nil
}

// The three modes yield the same lines; the full decode is what the
// library's ReadFile decodes, and the envelope what it carries.
func TestModesAgree(t *testing.T) {
	path := transcripttest.WriteSample(t, t.TempDir(), transcripttest.Variant{})
	want, err := transcript.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	lines := bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n"))
	run := runs.Open(path, runs.Options{})
	for _, mode := range []runs.Mode{runs.RawLines, runs.EnvelopeOnly, runs.FullDecode} {
		var off int64
		i := 0
		for rec, err := range run.Events(mode) {
			if err != nil {
				t.Fatal(err)
			}
			if rec.Line != i+1 || rec.Offset != off || !bytes.Equal(rec.Raw, lines[i]) || rec.Type != want[i].Type {
				t.Fatalf("mode %d line %d: %+v", mode, i+1, rec)
			}
			env := rec.Envelope()
			if env.Seq != want[i].Seq || env.RunID != want[i].RunID || string(env.Path) != want[i].Path || !env.Time().Equal(want[i].Timestamp) {
				t.Fatalf("mode %d line %d: envelope %+v, event %+v", mode, i+1, env, want[i])
			}
			if !reflect.DeepEqual(*rec.Event(), want[i]) {
				t.Fatalf("mode %d line %d: event\n%+v\nwant\n%+v", mode, i+1, *rec.Event(), want[i])
			}
			off += int64(len(rec.Raw)) + 1
			i++
		}
		if i != len(want) || run.Warnings().Len() != 0 || run.Status() != runstatus.Success {
			t.Fatalf("mode %d: %d records of %d, warnings %q, status %q", mode, i, len(want), run.Warnings().Strings(), run.Status())
		}
	}
	recs, _, err := collect(t, run, runs.EnvelopeOnly, transcript.ToolCall, transcript.RunCompleted)
	n := 0
	for _, ev := range want {
		if ev.Type == transcript.ToolCall || ev.Type == transcript.RunCompleted {
			n++
		}
	}
	if err != nil || len(recs) != n || recs[len(recs)-1].Type != transcript.RunCompleted {
		t.Fatalf("types: %d records, want %d (%v)", len(recs), n, err)
	}
	// a filter that leaves out run.completed still finds how the run ended
	if _, _, err := collect(t, run, runs.RawLines, transcript.ToolCall); err != nil || run.Status() != runstatus.Success {
		t.Fatalf("status through a filter: %q %v", run.Status(), err)
	}
}

const good = `{"seq":%d,"run_id":"11111111-1111-4111-8111-111111111111","type":"%s","path":"a","iteration":0,"timestamp":"2026-06-08T08:14:42.000000Z","payload":%s}`

func line(seq int, typ, payload string) string { return fmt.Sprintf(good, seq, typ, payload) + "\n" }

const stepPayload = `{"name":"a","kind":"command"}`

// Every kind of damage is a warning of its own kind; what reads is
// yielded, whatever the mode.
func TestDamagePolicy(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "x.jsonl")
	body := line(1, "run.started", `{"name":"w","kind":"workflow"}`) +
		"\x00\xff{{{ garbage\n" + // not JSON
		`{"a":1}` + "\n" + // no type
		`{"seq":4,"type":"step.started","path":7}` + "\n" + // a broken envelope
		line(5, "step.teleported", `{"x":1}`) + // a newer reel's event
		line(6, "message.user", `{"role":"user","blocks":[{"type":"hologram","fidelity":"router"}]}`) + // a newer reel's block
		line(7, "step.started", `{"name":"`+strings.Repeat("x", 300)+`","kind":"command"}`) + // over the line limit
		line(8, "step.completed", stepPayload) +
		`{"seq":9,"type":"step.st` // torn, partial
	os.WriteFile(p, []byte(body), 0o600)
	for _, mode := range []runs.Mode{runs.RawLines, runs.EnvelopeOnly, runs.FullDecode} {
		r := runs.Open(p, runs.Options{Limits: transcript.Limits{MaxLineSize: 256}})
		recs, _, err := collect(t, r, mode)
		if err != nil {
			t.Fatal(err)
		}
		var seqs []string
		for _, rec := range recs {
			seqs = append(seqs, fmt.Sprint(rec.Line))
		}
		// the broken envelope reads as a line with a type until asked for
		// its envelope, which runs.RawLines does not
		want := "1 5 6 8"
		if mode == runs.RawLines {
			want = "1 4 5 6 8"
		}
		if got := strings.Join(seqs, " "); got != want {
			t.Errorf("mode %d: lines %s, want %s", mode, got, want)
		}
		w := strings.Join(r.Warnings().Strings(), "\n")
		for _, cause := range []string{"line 2: not a transcript event", "line 3: not a transcript event", `line 5: unknown event type "step.teleported"`,
			"line 7: line exceeds limit", "line 9: torn final line"} {
			if !strings.Contains(w, p+": "+cause) {
				t.Errorf("mode %d: warnings lack %q:\n%s", mode, cause, w)
			}
		}
		if mode == runs.FullDecode && !strings.Contains(w, `line 6: unknown block type "hologram"`) {
			t.Errorf("unknown block not reported:\n%s", w)
		}
		if mode != runs.RawLines && !strings.Contains(w, p+": line 4: ") {
			t.Errorf("broken envelope not reported:\n%s", w)
		}
		if r.Status() != runstatus.Interrupted {
			t.Errorf("status %q", r.Status())
		}
	}
	// A torn final line that is a whole event is used (the record is
	// durable up to its last byte), and still reported.
	whole := line(1, "run.started", `{"name":"w","kind":"workflow"}`) + strings.TrimSuffix(line(2, "run.completed", `{"name":"w","kind":"workflow","result":{"status":"cancelled"}}`), "\n")
	os.WriteFile(p, []byte(whole), 0o600)
	r := runs.Open(p, runs.Options{})
	recs, _, err := collect(t, r, runs.FullDecode)
	if err != nil || len(recs) != 2 || recs[1].Offset != int64(strings.Index(whole, "\n")+1) || r.Status() != runstatus.Cancelled || r.Warnings().Len() != 1 {
		t.Fatalf("whole torn line: %d records, %v, status %q, warnings %q", len(recs), err, r.Status(), r.Warnings().Strings())
	}
}

// A million broken lines cost a few messages and a count.
func TestDamageIsBounded(t *testing.T) {
	p := filepath.Join(t.TempDir(), "x.jsonl")
	var b bytes.Buffer
	b.WriteString(line(1, "run.started", `{"name":"w","kind":"workflow"}`))
	const bad = 1_000_000
	for i := range bad {
		if i%2 == 0 {
			b.WriteString("garbage\n")
		} else {
			b.WriteString(`{"seq":2,"type":"step.started"}` + "\n")
		}
	}
	os.WriteFile(p, b.Bytes(), 0o600)
	r := runs.Open(p, runs.Options{})
	n := 0
	for _, err := range r.Events(runs.EnvelopeOnly) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	shown := r.Warnings().Strings()
	if n != 1 || r.Warnings().Len() != bad || len(shown) > 2*(warn.PerKind+1) {
		t.Fatalf("%d records, %d warnings, %d shown", n, r.Warnings().Len(), len(shown))
	}
	if !strings.Contains(strings.Join(shown, "\n"), "499990 more like this") {
		t.Errorf("no count of the rest:\n%s", strings.Join(shown, "\n"))
	}
}

// What stops a read: a file that cannot be opened, or is empty, is an
// error; a file over the size limit is read up to it.
func TestReadEnds(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]*string{"missing": nil, "empty": new(string)} {
		p := filepath.Join(dir, name+".jsonl")
		if body != nil {
			os.WriteFile(p, []byte(*body), 0o600)
		}
		_, _, err := collect(t, runs.Open(p, runs.Options{}), runs.RawLines)
		want := os.ErrNotExist
		if body != nil {
			want = transcript.ErrEmpty
		}
		if !errors.Is(err, want) || !strings.Contains(err.Error(), p) {
			t.Errorf("%s: %v", name, err)
		}
	}
	p := filepath.Join(dir, "big.jsonl")
	var b strings.Builder
	for i := 1; i <= 100; i++ {
		b.WriteString(line(i, "step.started", stepPayload))
	}
	os.WriteFile(p, []byte(b.String()), 0o600)
	r := runs.Open(p, runs.Options{Limits: transcript.Limits{MaxFileSize: 2000}})
	recs, _, err := collect(t, r, runs.FullDecode)
	if err != nil || len(recs) == 0 || len(recs) >= 100 || !strings.Contains(strings.Join(r.Warnings().Strings(), ""), "transcript exceeds limit") {
		t.Fatalf("over the size limit: %d records, %v, %q", len(recs), err, r.Warnings().Strings())
	}
}

// The status is the last attempt's: its run.completed, or running while a
// recorder holds the file, else interrupted.
func TestStatus(t *testing.T) {
	dir := t.TempDir()
	rec, err := transcript.Create(dir, transcript.NewRunID(), transcript.Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := runs.Open(rec.Path(), runs.Options{})
	check := func(want string) {
		t.Helper()
		if _, _, err := collect(t, r, runs.RawLines, transcript.MessageUser); err != nil || r.Status() != want {
			t.Fatalf("status %q (%v), want %s", r.Status(), err, want)
		}
	}
	rec.Record(transcript.ExchangeEvent{Type: transcript.RunStarted, Payload: &transcript.StepPayload{Name: "w", Kind: "workflow"}})
	check(runstatus.Running)
	rec.Record(transcript.ExchangeEvent{Type: transcript.RunCompleted, Payload: &transcript.StepPayload{Name: "w", Kind: "workflow", Error: "boom"}})
	check(runstatus.Failure)
	rec.Record(transcript.ExchangeEvent{Type: transcript.RunStarted, Payload: &transcript.StepPayload{Name: "w", Kind: "workflow", Attempt: 2}})
	check(runstatus.Running)
	rec.Close()
	check(runstatus.Interrupted)
	// a read stopped early has not found out
	for range r.Events(runs.RawLines) {
		break
	}
	if r.Status() != "" {
		t.Fatalf("status after a partial read: %q", r.Status())
	}
}

// Strict reads give each line's damage as transcript.Reader does, for
// reel verify.
func TestStrict(t *testing.T) {
	p := filepath.Join(t.TempDir(), "x.jsonl")
	body := line(1, "run.started", `{"name":"w","kind":"workflow"}`) + "garbage\n" + line(3, "step.teleported", `{}`) +
		strings.TrimSuffix(line(4, "step.started", stepPayload), "\n") + "\r\n" + `{"seq":5`
	os.WriteFile(p, []byte(body), 0o600)
	rd := transcript.NewReader(strings.NewReader(body))
	var want []string
	for {
		ev, err := rd.Next()
		if err != nil && err.Error() == "EOF" {
			break
		}
		want = append(want, fmt.Sprintf("%d %s %v", rd.Line(), ev.Type, err))
	}
	var got []string
	for rec, err := range runs.Open(p, runs.Options{Strict: true}).Events(runs.FullDecode) {
		got = append(got, fmt.Sprintf("%d %s %v", rec.Line, rec.Event().Type, err))
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("strict:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// Follow gives the events from a seq on, then live ones as they are
// written, leaving out a damaged line, until run.completed.
func TestFollow(t *testing.T) {
	dir := t.TempDir()
	rec, err := transcript.Create(dir, transcript.NewRunID(), transcript.Options{})
	if err != nil {
		t.Fatal(err)
	}
	step := func(i int) {
		if _, err := rec.Record(transcript.ExchangeEvent{Type: transcript.StepStarted, Path: fmt.Sprint("s", i), Payload: &transcript.StepPayload{Name: "s", Kind: "command"}}); err != nil {
			t.Error(err)
		}
	}
	rec.Record(transcript.ExchangeEvent{Type: transcript.RunStarted, Payload: &transcript.StepPayload{Name: "w", Kind: "workflow"}})
	for i := range 5 {
		step(i)
	}
	go func() {
		for i := 5; i < 50; i++ {
			time.Sleep(time.Millisecond)
			step(i)
		}
		rec.Record(transcript.ExchangeEvent{Type: transcript.RunCompleted, Payload: &transcript.StepPayload{Name: "w", Kind: "workflow"}})
		rec.Close()
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	r := runs.Open(rec.Path(), runs.Options{Poll: 2 * time.Millisecond})
	var seqs []uint64
	for rec, err := range r.Follow(ctx, 4) {
		if err != nil {
			t.Fatal(err)
		}
		if rec.Envelope().Seq != rec.Event().Seq {
			t.Fatalf("envelope and event disagree: %+v", rec)
		}
		seqs = append(seqs, rec.Event().Seq)
	}
	if len(seqs) != 49 || seqs[0] != 4 || seqs[48] != 52 {
		t.Fatalf("followed seqs %v", seqs)
	}
	// A damaged line is left out and reported; a writer that died is an
	// error, not a wait forever.
	p := filepath.Join(dir, "dead.jsonl")
	os.WriteFile(p, []byte(line(1, "run.started", `{"name":"w","kind":"workflow"}`)+"garbage\n"+line(3, "step.started", stepPayload)), 0o600)
	r = runs.Open(p, runs.Options{Poll: time.Millisecond, Stale: 20 * time.Millisecond})
	seqs = seqs[:0]
	var last error
	for rec, err := range r.Follow(ctx, 0) {
		if err != nil {
			last = err
			break
		}
		seqs = append(seqs, rec.Event().Seq)
	}
	if !errors.Is(last, transcript.ErrWriterGone) || len(seqs) != 2 || r.Warnings().Len() != 1 {
		t.Fatalf("dead writer: %v, seqs %v, warnings %q", last, seqs, r.Warnings().Strings())
	}
}

// Property: over any mix of events and damage, a read yields exactly the
// lines that are events, in order, and counts every other one.
func TestReadsEveryEventAndCountsTheRest(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	p := filepath.Join(t.TempDir(), "x.jsonl")
	junk := []string{"garbage", `{"a":1}`, "", "[1,2]", `{"type":1}`, "\x00\x01\x02", `"type"`}
	for trial := range 200 {
		var b strings.Builder
		var want []int
		bad := 0
		for i := 1; i <= rng.IntN(60); i++ {
			if rng.IntN(3) == 0 {
				b.WriteString(junk[rng.IntN(len(junk))] + "\n")
				bad++
				continue
			}
			b.WriteString(line(i, "step.started", stepPayload))
			want = append(want, i)
		}
		if b.Len() == 0 {
			continue
		}
		os.WriteFile(p, []byte(b.String()), 0o600)
		for _, mode := range []runs.Mode{runs.RawLines, runs.EnvelopeOnly, runs.FullDecode} {
			r := runs.Open(p, runs.Options{})
			var got []int
			for rec, err := range r.Events(mode) {
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, int(rec.Envelope().Seq))
			}
			if !reflect.DeepEqual(got, want) && (len(got) > 0 || len(want) > 0) || r.Warnings().Len() != bad {
				t.Fatalf("trial %d mode %d: seqs %v, want %v; %d warnings, want %d\n%s", trial, mode, got, want, r.Warnings().Len(), bad, b.String())
			}
		}
	}
}

// FuzzEvents: whatever a file holds, a read ends, yields records whose
// lines are in order and hold no newline, and decodes in runs.FullDecode what
// the library decodes.
func FuzzEvents(f *testing.F) {
	f.Add([]byte(line(1, "run.started", `{"name":"w","kind":"workflow"}`) + "garbage\n" + `{"seq":3`))
	f.Add([]byte(line(1, "tool.call", `{"name":"Read","call_id":"c","input":{},"output":null,"fidelity":"router"}`) + "\r\n\n\n"))
	f.Add([]byte{})
	// one file per fuzzing process, whose calls run one at a time
	p := filepath.Join(f.TempDir(), "x.jsonl")
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		for _, mode := range []runs.Mode{runs.RawLines, runs.EnvelopeOnly, runs.FullDecode} {
			r := runs.Open(p, runs.Options{Limits: transcript.Limits{MaxLineSize: 4096}})
			last := 0
			for rec, err := range r.Events(mode) {
				if err != nil {
					if rec != nil || !errors.Is(err, transcript.ErrEmpty) {
						t.Fatalf("error %v with record %v", err, rec)
					}
					break
				}
				if rec.Line <= last || bytes.IndexByte(rec.Raw, '\n') >= 0 || !bytes.Equal(data[rec.Offset:rec.Offset+int64(len(rec.Raw))], rec.Raw) {
					t.Fatalf("record %+v after line %d", rec, last)
				}
				last = rec.Line
				if mode == runs.FullDecode {
					want, _ := transcript.DecodeEvent(rec.Raw)
					if got := rec.Event(); got.Type != want.Type || got.Seq != want.Seq || got.Path != want.Path {
						t.Fatalf("decoded %+v, library %+v", got, want)
					}
				}
			}
		}
	})
}

// A line counts once in the warnings, whatever readers ask of it: the tree
// asks an exchange event for its envelope, the page for its event.
func TestDamageCountsALineOnce(t *testing.T) {
	p := filepath.Join(t.TempDir(), "x.jsonl")
	os.WriteFile(p, []byte(line(1, "run.started", `{"name":"w","kind":"workflow"}`)+`{"seq":2,"type":"tool.call","path":5}`+"\n"+
		strings.TrimSuffix(line(3, "message.user", `{"role":"user","blocks":[{"type":"hologram","fidelity":"router"}]}`), "\n")), 0o600)
	r := runs.Open(p, runs.Options{})
	n := 0
	for rec, err := range r.Events(runs.RawLines) {
		if err != nil {
			t.Fatal(err)
		}
		rec.Envelope()
		rec.Event()
		rec.Event()
		n++
	}
	if n != 3 || r.Warnings().Len() != 2 {
		t.Fatalf("%d records, warnings %q; want one for the broken line and one for the torn one", n, r.Warnings().Strings())
	}
}
