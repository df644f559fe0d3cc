package agent

import (
	"bytes"
	"testing"
	"testing/quick"
)

// Whatever the writes, tailBuffer holds exactly the last max bytes.
func TestTailBufferKeepsTheEnd(t *testing.T) {
	f := func(writes [][]byte, max uint8) bool {
		m := int(max%64) + 1
		tb := &tailBuffer{max: m}
		var all []byte
		for _, w := range writes {
			if n, err := tb.Write(w); n != len(w) || err != nil {
				return false
			}
			all = append(all, w...)
		}
		want := all
		if len(want) > m {
			want = want[len(want)-m:]
		}
		return bytes.Equal(tb.buf, want) && tb.total == int64(len(all))
	}
	if err := quick.Check(f, nil); err != nil {
		t.Error(err)
	}
	tb := &tailBuffer{max: 8}
	tb.Write([]byte("0123456789 \x00\xff end  "))
	if s := tb.String(); s != "…\uFFFD\uFFFD end" {
		t.Errorf("String = %q", s)
	}
}
