package otlp

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"math/rand/v2"
	"testing"
	"testing/quick"

	"go.opentelemetry.io/otel/trace"
)

const runA = "21791b27-ec71-4544-87c5-92e54057a181"

func TestTraceIDIsTheRunIDsBytes(t *testing.T) {
	id, err := TraceID(runA)
	if err != nil {
		t.Fatal(err)
	}
	if got := id.String(); got != "21791b27ec71454487c592e54057a181" {
		t.Errorf("trace id %s", got)
	}
	for _, bad := range []string{"", "21791b27ec71454487c592e54057a181", "21791b27-ec71-4544-87c5-92e54057a18g", "21791b27-ec71-4544-87c5_92e54057a181", runA + "0"} {
		if _, err := TraceID(bad); err == nil {
			t.Errorf("TraceID(%q) accepted", bad)
		}
	}
}

// The span id input, written out by hand from the layout documented on
// appendStepKey and in docs/opentelemetry.md.
func handInput(run, path string, iteration, attempt int64, occurrence uint64) []byte {
	u, _ := hex.DecodeString(run[0:8] + run[9:13] + run[14:18] + run[19:23] + run[24:])
	b := append([]byte{}, u...)
	b = binary.BigEndian.AppendUint32(b, uint32(len(path)))
	b = append(b, path...)
	b = binary.BigEndian.AppendUint64(b, uint64(iteration))
	b = binary.BigEndian.AppendUint64(b, uint64(attempt))
	if occurrence > 0 {
		b = binary.BigEndian.AppendUint64(b, occurrence)
	}
	return b
}

func TestStepSpanIDFollowsTheDocumentedLayout(t *testing.T) {
	u, _ := uuidBytes(runA)
	cases := []struct {
		path               string
		iteration, attempt int
		occurrence         uint64
		want               string // pinned: changing the layout changes every exported id
	}{
		{"", 0, 0, 0, "b6cbf6f075aa594d"},
		{"checks.test", 0, 1, 0, ""},
		{"each_file.inspect", 2, 0, 0, ""},
		{"outer.inner.check", 0, 0, 1, ""},
		{"x", -1, 0, 0, ""},
	}
	for _, c := range cases {
		got := stepSpanID(stepKey{run: u, path: c.path, iteration: c.iteration, attempt: c.attempt, occurrence: c.occurrence})
		sum := sha256.Sum256(handInput(runA, c.path, int64(c.iteration), int64(c.attempt), c.occurrence))
		if want := hex.EncodeToString(sum[:8]); got.String() != want {
			t.Errorf("%+v: span id %s, SHA-256 of the documented input gives %s", c, got, want)
		}
		if c.want != "" && got.String() != c.want {
			t.Errorf("%+v: span id %s, pinned %s", c, got, c.want)
		}
	}
}

func TestToolSpanIDFollowsTheDocumentedLayout(t *testing.T) {
	u, _ := uuidBytes(runA)
	owner := stepKey{run: u, path: "review", attempt: 0}
	got := toolSpanID(owner, "toolu_01DemoRead", 0)
	in := handInput(runA, "review", 0, 0, 0)
	in = binary.BigEndian.AppendUint64(in, 0) // the owner's occurrence, always written
	in = binary.BigEndian.AppendUint32(in, uint32(len("toolu_01DemoRead")))
	in = append(in, "toolu_01DemoRead"...)
	in = binary.BigEndian.AppendUint64(in, 0)
	sum := sha256.Sum256(in)
	if got.String() != hex.EncodeToString(sum[:8]) {
		t.Errorf("tool span id %s, want %x", got, sum[:8])
	}
	if toolSpanID(owner, "toolu_01DemoRead", 1) == got {
		t.Error("the second pair with the same call id got the first's span id")
	}
	if stepSpanID(owner) == got {
		t.Error("a tool pair got its step's span id")
	}
}

// decodeStepKey parses a span id input back, proving the layout
// unambiguous: two different keys cannot share an input.
func decodeStepKey(b []byte) (stepKey, bool) {
	var k stepKey
	if len(b) < 36 {
		return k, false
	}
	copy(k.run[:], b[:16])
	n := int(binary.BigEndian.Uint32(b[16:20]))
	if len(b) < 20+n+16 {
		return k, false
	}
	k.path = string(b[20 : 20+n])
	rest := b[20+n:]
	k.iteration = int(int64(binary.BigEndian.Uint64(rest[0:8])))
	k.attempt = int(int64(binary.BigEndian.Uint64(rest[8:16])))
	switch len(rest) {
	case 16:
	case 24:
		k.occurrence = binary.BigEndian.Uint64(rest[16:24])
		if k.occurrence == 0 {
			return k, false
		}
	default:
		return k, false
	}
	return k, true
}

func TestStepKeyInputIsUnambiguous(t *testing.T) {
	f := func(run [16]byte, path string, iteration, attempt int32, occurrence uint64) bool {
		k := stepKey{run: run, path: path, iteration: int(iteration), attempt: int(attempt), occurrence: occurrence}
		got, ok := decodeStepKey(appendStepKey(nil, k, false))
		return ok && got == k
	}
	if err := quick.Check(f, &quick.Config{MaxCount: 5000, Rand: nil}); err != nil {
		t.Error(err)
	}
}

func TestSpanIDsOfDistinctKeysDiffer(t *testing.T) {
	u, _ := uuidBytes(runA)
	r := rand.New(rand.NewPCG(1, 2))
	seen := map[trace.SpanID]stepKey{}
	paths := []string{"", "a", "a.b", "ab", "a.b.c", "review", "each.review"}
	for i := 0; i < 20000; i++ {
		k := stepKey{run: u, path: paths[r.IntN(len(paths))], iteration: r.IntN(50), attempt: r.IntN(4), occurrence: uint64(r.IntN(3))}
		id := stepSpanID(k)
		if !id.IsValid() {
			t.Fatalf("%+v: invalid span id", k)
		}
		if prev, ok := seen[id]; ok && prev != k {
			t.Fatalf("%+v and %+v share span id %s", prev, k, id)
		}
		seen[id] = k
	}
}

func TestIDGeneratorHandsOutTheContextsIDs(t *testing.T) {
	tid, _ := TraceID(runA)
	sid := trace.SpanID{1, 2, 3, 4, 5, 6, 7, 8}
	ctx := withIDs(context.Background(), tid, sid)
	g := idGenerator{}
	if gt, gs := g.NewIDs(ctx); gt != tid || gs != sid {
		t.Errorf("NewIDs = %s %s", gt, gs)
	}
	if gs := g.NewSpanID(ctx, tid); gs != sid {
		t.Errorf("NewSpanID = %s", gs)
	}
	// Without ids in the context it behaves as the SDK's: random, valid.
	if gt, gs := g.NewIDs(context.Background()); !gt.IsValid() || !gs.IsValid() {
		t.Error("random ids are invalid")
	}
}
