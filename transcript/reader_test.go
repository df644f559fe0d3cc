package transcript

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

func goldenLines(t testing.TB) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "wire.golden.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestReaderErrorsDoNotStopIt(t *testing.T) {
	data := goldenLines(t)
	lines := strings.SplitAfter(string(data), "\n")
	var in strings.Builder
	in.WriteString(lines[0])
	in.WriteString("{not json}\n") // malformed in the middle
	in.WriteString(lines[1])
	in.WriteString(strings.TrimSuffix(lines[2], "\n") + "\r\n") // CRLF
	in.WriteString(strings.Replace(lines[3], `"step.started"`, `"step.paused"`, 1))
	in.WriteString(strings.TrimSuffix(lines[4], "\n")[:40]) // torn final line
	rd := NewReader(iotest.OneByteReader(strings.NewReader(in.String())))
	type res struct {
		seq uint64
		err error
	}
	var got []res
	for {
		ev, err := rd.Next()
		if err == io.EOF {
			break
		}
		got = append(got, res{ev.Seq, err})
	}
	if len(got) != 6 {
		t.Fatalf("got %d results: %+v", len(got), got)
	}
	var le *LineError
	if got[0].err != nil || got[0].seq != 1 {
		t.Fatalf("line 1: %+v", got[0])
	}
	if !errors.As(got[1].err, &le) || le.Line != 2 || !errors.Is(got[1].err, ErrMalformed) || errors.Is(got[1].err, ErrTornLine) {
		t.Fatalf("line 2: %v", got[1].err)
	}
	if le.Offset != int64(len(lines[0])) {
		t.Fatalf("offset %d", le.Offset)
	}
	if got[2].err != nil || got[2].seq != 2 {
		t.Fatalf("line 3: %+v", got[2])
	}
	if !errors.Is(got[3].err, ErrMalformed) || !strings.Contains(got[3].err.Error(), "CRLF") || got[3].seq != 3 {
		t.Fatalf("line 4: %+v", got[3])
	}
	if !errors.Is(got[4].err, ErrUnknownEventType) || got[4].seq != 4 {
		t.Fatalf("line 5: %+v", got[4])
	}
	if !errors.Is(got[5].err, ErrTornLine) || errors.Is(got[5].err, ErrMalformed) || !strings.Contains(got[5].err.Error(), "line 6") {
		t.Fatalf("line 6: %v", got[5].err)
	}
	if rd.Line() != 6 {
		t.Fatalf("Line() = %d", rd.Line())
	}
}

func TestReaderLimits(t *testing.T) {
	data := goldenLines(t)
	lines := strings.SplitAfter(string(data), "\n")
	long := `{"pad":"` + strings.Repeat("x", 5000) + `"}` + "\n"
	rd := NewReader(strings.NewReader(lines[0] + long + lines[1]))
	rd.SetLimits(Limits{MaxLineSize: 1000})
	if _, err := rd.Next(); err != nil {
		t.Fatal(err)
	}
	_, err := rd.Next()
	if !errors.Is(err, ErrLineTooLong) || !strings.Contains(err.Error(), "1000") {
		t.Fatalf("long line: %v", err)
	}
	if ev, err := rd.Next(); err != nil || ev.Seq != 2 {
		t.Fatalf("after long line: %v %v", ev.Seq, err)
	}
	// The over-long line streams through in small reads without being held.
	huge := strings.Repeat("y", 3<<20)
	rd = NewReader(io.MultiReader(strings.NewReader(huge+"\n"), strings.NewReader(lines[0])))
	rd.SetLimits(Limits{MaxLineSize: 1 << 20})
	if _, err := rd.Next(); !errors.Is(err, ErrLineTooLong) {
		t.Fatalf("huge line: %v", err)
	}
	if ev, err := rd.Next(); err != nil || ev.Seq != 1 {
		t.Fatalf("after huge line: %v", err)
	}
	if len(rd.buf) > 4<<20 {
		t.Fatalf("buffer grew to %d", len(rd.buf))
	}
	// An over-long torn tail is reported once.
	rd = NewReader(strings.NewReader(lines[0] + huge))
	rd.SetLimits(Limits{MaxLineSize: 1 << 20})
	rd.Next()
	if _, err := rd.Next(); !errors.Is(err, ErrLineTooLong) {
		t.Fatalf("long tail: %v", err)
	}
	if _, err := rd.Next(); err != io.EOF {
		t.Fatalf("after long tail: %v", err)
	}
	// File limit ends the read.
	rd = NewReader(strings.NewReader(string(data)))
	rd.SetLimits(Limits{MaxFileSize: int64(len(lines[0]) + len(lines[1]))})
	rd.Next()
	rd.Next()
	_, err = rd.Next()
	if !errors.Is(err, ErrFileTooLarge) {
		t.Fatalf("file limit: %v", err)
	}
	if _, err2 := rd.Next(); !errors.Is(err2, ErrFileTooLarge) {
		t.Fatal("file limit is not sticky")
	}
}

func TestReadAllAndReadFile(t *testing.T) {
	data := goldenLines(t)
	evs, err := ReadAll(bytes.NewReader(data))
	if err != nil || len(evs) != len(wireEvents()) {
		t.Fatalf("%d events, %v", len(evs), err)
	}
	withUnknown := string(data) + strings.Replace(strings.SplitAfter(string(data), "\n")[1], `"step.started"`, `"step.resumed"`, 1)
	evs, err = ReadAll(strings.NewReader(withUnknown))
	if err != nil || len(evs) != len(wireEvents())+1 || evs[len(evs)-1].Type != "step.resumed" {
		t.Fatalf("unknown type: %d %v", len(evs), err)
	}
	evs, err = ReadAll(strings.NewReader(string(data) + "garbage\n"))
	if !errors.Is(err, ErrMalformed) || len(evs) != len(wireEvents()) {
		t.Fatalf("garbage: %d %v", len(evs), err)
	}
	if _, err := ReadFile(filepath.Join(t.TempDir(), "none.jsonl")); err == nil || !strings.Contains(err.Error(), "open transcript") {
		t.Fatalf("missing file: %v", err)
	}
	_, err = ReadAll(iotest.ErrReader(errors.New("disk on fire")))
	if err == nil || !strings.Contains(err.Error(), "disk on fire") {
		t.Fatalf("read error: %v", err)
	}
	p := filepath.Join(t.TempDir(), "x.jsonl")
	os.WriteFile(p, []byte("{"), 0o600)
	if _, err := ReadFile(p); !errors.Is(err, ErrTornLine) || !strings.Contains(err.Error(), p) {
		t.Fatalf("torn: %v", err)
	}
}

// randomEvent builds an arbitrary valid event for property tests.
func randomEvent(rng *rand.Rand, seq uint64) ExchangeEvent {
	str := func() string {
		const alphabet = "ab \x00\n\t\"\\/é😀<>&\u2028"
		n := rng.Intn(12)
		var b strings.Builder
		for i := 0; i < n; i++ {
			r := []rune(alphabet)
			b.WriteRune(r[rng.Intn(len(r))])
		}
		return b.String()
	}
	raw := func() any {
		switch rng.Intn(4) {
		case 0:
			return nil
		case 1:
			b, _ := json.Marshal(map[string]any{"k": str(), "n": rng.Intn(1000), "list": []any{true, nil, 1.5}})
			return json.RawMessage(b)
		case 2:
			b, _ := json.Marshal(str())
			return json.RawMessage(b)
		}
		return json.RawMessage(`[1,{"a":[]},-2.5e-3]`)
	}
	fid := []Fidelity{FidelityRouter, FidelityAgentEmitted}[rng.Intn(2)]
	e := ExchangeEvent{Seq: seq, RunID: testRun, Type: EventTypes[rng.Intn(len(EventTypes))], Path: str(), Iteration: rng.Intn(5),
		Timestamp: time.Unix(rng.Int63n(4e9), int64(rng.Intn(1e6))*1000).UTC()}
	if rng.Intn(3) == 0 {
		e.ParentRunID = NewRunID()
	}
	switch e.Type {
	case RunStarted, RunCompleted, StepStarted, StepCompleted, CallWorkflowStarted, CallWorkflowCompleted:
		e.Payload = &StepPayload{Name: str(), Kind: "k" + str(), Command: str(), Attempt: rng.Intn(3), Error: str(), Result: raw()}
		if e.Type == CallWorkflowStarted {
			e.ChildRunID = NewRunID()
		}
	case MessageUser, MessageAssistant:
		role := "user"
		if e.Type == MessageAssistant {
			role = "assistant"
		}
		p := &MessagePayload{Role: role, Blocks: []ContentBlock{}}
		for i := rng.Intn(4); i > 0; i-- {
			b := ContentBlock{Type: BlockTypes[rng.Intn(len(BlockTypes))], Fidelity: fid}
			switch b.Type {
			case BlockText:
				b.Text = str()
			case BlockThinking:
				b.Thinking = str()
			case BlockToolUse:
				b.ToolName, b.ToolID, b.ToolInput = str(), str(), raw()
			case BlockToolResult:
				b.ToolID, b.ToolContent = str(), raw()
			case BlockCommand:
				b.Command = str()
			case BlockStream:
				b.Chunk = str()
			}
			p.Blocks = append(p.Blocks, b)
		}
		e.Payload = p
	default:
		e.Payload = &ToolPayload{Name: str(), CallID: "c" + str(), Input: raw(), Output: raw(), Error: str(), Fidelity: fid}
	}
	return e
}

// TestRoundTripProperty: encode → decode gives back the same value, and
// decode → encode gives back the same bytes, for arbitrary valid events.
func TestRoundTripProperty(t *testing.T) {
	rng := rand.New(rand.NewSource(42))
	var stream []byte
	var want []ExchangeEvent
	for i := 0; i < 3000; i++ {
		e := randomEvent(rng, uint64(i+1))
		line, err := AppendEvent(nil, &e)
		if err != nil {
			t.Fatalf("encode %+v: %v", e, err)
		}
		got, err := DecodeEvent(line)
		if err != nil {
			t.Fatalf("decode %s: %v", line, err)
		}
		if !reflect.DeepEqual(normalize(e), got) {
			t.Fatalf("round trip:\n in: %#v\nout: %#v\nline: %s", normalize(e), got, line)
		}
		again, _ := AppendEvent(nil, &got)
		if !bytes.Equal(again, line) {
			t.Fatalf("bytes differ:\n%s\n%s", line, again)
		}
		stream = append(append(stream, line...), '\n')
		want = append(want, got)
	}
	// Streaming in random chunk sizes yields the same events, seq monotonic.
	got, err := ReadAll(iotest.HalfReader(bytes.NewReader(stream)))
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("stream read: %v", err)
	}
	for i := 1; i < len(got); i++ {
		if got[i].Seq != got[i-1].Seq+1 {
			t.Fatal("seq not monotonic")
		}
	}
}

// normalize maps a written event to what a reader returns: strings with
// invalid UTF-8 fixed, times truncated to microseconds in UTC, free-form
// values as compact raw JSON.
func normalize(e ExchangeEvent) ExchangeEvent {
	e.Timestamp = e.Timestamp.Truncate(time.Microsecond).UTC()
	fix := func(v any) any {
		if v == nil {
			return nil
		}
		b, _ := appendValue(nil, v)
		if string(b) == "null" {
			return nil
		}
		return json.RawMessage(b)
	}
	switch p := e.Payload.(type) {
	case *StepPayload:
		c := *p
		c.Result = fix(c.Result)
		e.Payload = &c
	case *ToolPayload:
		c := *p
		c.Input, c.Output = fix(c.Input), fix(c.Output)
		e.Payload = &c
	case *MessagePayload:
		c := *p
		c.Blocks = append([]ContentBlock{}, p.Blocks...)
		for i := range c.Blocks {
			c.Blocks[i].ToolInput = fix(c.Blocks[i].ToolInput)
			c.Blocks[i].ToolContent = fix(c.Blocks[i].ToolContent)
		}
		e.Payload = &c
	}
	return e
}

// Decode of the line NextLine returned is Next: same event, same errors
// with the same line and offset, for a reader that looks at raw lines
// first and decodes only some.
func TestDecodeIsNext(t *testing.T) {
	data := string(goldenLines(t))
	lines := strings.SplitAfter(data, "\n")
	in := lines[0] + "garbage\n" + strings.TrimSuffix(lines[1], "\n") + "\r\n" + lines[2] + `{"seq":9`
	next, raw := NewReader(strings.NewReader(in)), NewReader(strings.NewReader(in))
	for {
		want, werr := next.Next()
		line, err := raw.NextLine()
		if err == io.EOF || werr == io.EOF {
			if err != werr {
				t.Fatalf("ends apart: %v, %v", err, werr)
			}
			return
		}
		var got ExchangeEvent
		if err == nil {
			got, err = raw.Decode(line)
		} else {
			got, _ = raw.Decode(line)
		}
		var le, wle *LineError
		if !reflect.DeepEqual(got, want) || (err == nil) != (werr == nil) ||
			errors.As(err, &le) && (!errors.As(werr, &wle) || le.Line != wle.Line || le.Offset != wle.Offset || le.Err.Error() != wle.Err.Error()) {
			t.Fatalf("line %d: Decode %+v, %v; Next %+v, %v", raw.Line(), got, err, want, werr)
		}
	}
}

// A follower names the line it decoded last, and gives its bytes.
func TestFollowerLineAndRaw(t *testing.T) {
	lines := strings.SplitAfter(string(goldenLines(t)), "\n")
	p := filepath.Join(t.TempDir(), "x.jsonl")
	os.WriteFile(p, []byte(lines[0]+lines[1]), 0o600)
	fl, err := Follow(t.Context(), p, 0, FollowOptions{Stale: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer fl.Close()
	for i := 1; i <= 2; i++ {
		if _, err := fl.Next(t.Context()); err != nil {
			t.Fatal(err)
		}
		if fl.Line() != i || string(fl.Raw())+"\n" != lines[i-1] {
			t.Fatalf("line %d, raw %q", fl.Line(), fl.Raw())
		}
	}
}
