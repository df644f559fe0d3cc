package otlp

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"

	"go.opentelemetry.io/otel/trace"
)

// TraceID is the trace id of a top-level run: the run id's 16 bytes
// (docs/decisions.md §11). Child runs use their top-level run's.
func TraceID(runID string) (trace.TraceID, error) {
	var id trace.TraceID
	b, err := uuidBytes(runID)
	if err != nil {
		return id, err
	}
	copy(id[:], b[:])
	return id, nil
}

// uuidBytes decodes a canonical UUID (8-4-4-4-12 hex digits).
func uuidBytes(s string) ([16]byte, error) {
	var b [16]byte
	if len(s) != 36 || s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' {
		return b, fmt.Errorf("run id %q is not a canonical UUID", s)
	}
	var h [32]byte
	n := 0
	for i := 0; i < 36; i++ {
		if i == 8 || i == 13 || i == 18 || i == 23 {
			continue
		}
		h[n] = s[i]
		n++
	}
	if _, err := hex.Decode(b[:], h[:]); err != nil {
		return b, fmt.Errorf("run id %q is not a canonical UUID", s)
	}
	return b, nil
}

// stepKey names one step execution of a run, the input of its span id.
// The run itself is the step at path "" (iteration 0, attempt = the
// run.started attempt, 0 when absent).
type stepKey struct {
	run       [16]byte
	path      string
	iteration int
	attempt   int
	// occurrence tells apart executions that share path, iteration and
	// attempt (a state revisited through transitions, the inner loop of
	// a nested loop in a later outer iteration): the n-th such execution
	// in transcript order, counted from 0.
	occurrence uint64
}

// appendStepKey writes the span id input of a step execution:
//
//	run id     16 bytes, the UUID's bytes
//	len(path)  uint32, big endian
//	path       UTF-8 bytes
//	iteration  int64, big endian two's complement
//	attempt    int64, big endian two's complement
//	occurrence uint64, big endian, only when it is not 0
//
// Without an occurrence this is exactly docs/decisions.md §11's run_id + path +
// iteration + attempt.
func appendStepKey(b []byte, k stepKey, withOccurrence bool) []byte {
	b = append(b, k.run[:]...)
	b = binary.BigEndian.AppendUint32(b, uint32(len(k.path)))
	b = append(b, k.path...)
	b = binary.BigEndian.AppendUint64(b, uint64(int64(k.iteration)))
	b = binary.BigEndian.AppendUint64(b, uint64(int64(k.attempt)))
	if withOccurrence || k.occurrence != 0 {
		b = binary.BigEndian.AppendUint64(b, k.occurrence)
	}
	return b
}

// stepSpanID is the first 8 bytes of SHA-256 of the step key.
func stepSpanID(k stepKey) trace.SpanID {
	var buf [128]byte
	return spanIDOf(appendStepKey(buf[:0], k, false))
}

// toolSpanID identifies the n-th tool pair with callID inside the step
// execution owner (n counted from 0). Its input is the owner's step key
// with the occurrence always written, then
//
//	len(call id) uint32, big endian
//	call id      bytes
//	n            uint64, big endian
//
// so it is always longer than any step input sharing its path and cannot
// be one.
func toolSpanID(owner stepKey, callID string, n uint64) trace.SpanID {
	var buf [160]byte
	b := appendStepKey(buf[:0], owner, true)
	b = binary.BigEndian.AppendUint32(b, uint32(len(callID)))
	b = append(b, callID...)
	b = binary.BigEndian.AppendUint64(b, n)
	return spanIDOf(b)
}

func spanIDOf(input []byte) trace.SpanID {
	sum := sha256.Sum256(input)
	var id trace.SpanID
	copy(id[:], sum[:8])
	if !id.IsValid() {
		// An all-zero span id is invalid in OpenTelemetry; the next 8
		// bytes stand in (2^-64 odds, but a dropped span is worse).
		copy(id[:], sum[8:16])
	}
	return id
}

// idGenerator hands the SDK the ids the mapper chose, carried in the
// context of Tracer.Start: sdktrace.WithIDGenerator is the SDK's supported
// way to choose span ids, and it keeps the SDK building every span (limits,
// status rules, resource, scope) as for any instrumented program.
type idGenerator struct{}

type idsKey struct{}

type ids struct {
	trace trace.TraceID
	span  trace.SpanID
}

func withIDs(ctx context.Context, t trace.TraceID, s trace.SpanID) context.Context {
	return context.WithValue(ctx, idsKey{}, ids{t, s})
}

func (idGenerator) NewIDs(ctx context.Context) (trace.TraceID, trace.SpanID) {
	if v, ok := ctx.Value(idsKey{}).(ids); ok {
		return v.trace, v.span
	}
	var t trace.TraceID
	var s trace.SpanID
	rand.Read(t[:])
	rand.Read(s[:])
	return t, s
}

func (idGenerator) NewSpanID(ctx context.Context, _ trace.TraceID) trace.SpanID {
	if v, ok := ctx.Value(idsKey{}).(ids); ok {
		return v.span
	}
	var s trace.SpanID
	rand.Read(s[:])
	return s
}
