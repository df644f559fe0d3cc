package main

import (
	"bytes"
	"testing"
)

// A lineCutter cuts each line at the width, whatever the writes' sizes,
// counts runes not bytes, and keeps a last line without its newline.
func TestLineCutter(t *testing.T) {
	var b bytes.Buffer
	w, flush := fitTo(&b, 6)
	for _, part := range []string{"short\nabcdef", "ghij\n", "ééééééé\n\n", "tail-no-newline"} {
		if _, err := w.Write([]byte(part)); err != nil {
			t.Fatal(err)
		}
	}
	if err := flush(); err != nil {
		t.Fatal(err)
	}
	if got, want := b.String(), "short\nabcde…\nééééé…\n\ntail-…"; got != want {
		t.Fatalf("got %q", got)
	}
	var plain bytes.Buffer
	if w, _ := fitTo(&plain, 0); w != &plain {
		t.Fatal("width 0 must not wrap the writer")
	}
}
