package warn

import (
	"fmt"
	"strings"
	"testing"
)

func TestListKeepsTheFirstOfEachKindAndCountsTheRest(t *testing.T) {
	var l List
	for i := 1; i <= 1_000_000; i++ {
		l.Addf("line %d: not a transcript event", i)
		if i%100_000 == 0 {
			l.Addf("line %d: torn", i)
		}
	}
	got := l.Strings()
	if l.Len() != 1_000_010 {
		t.Fatalf("Len = %d", l.Len())
	}
	want := []string{
		"line 1: not a transcript event", "line 2: not a transcript event", "line 3: not a transcript event",
		"line 4: not a transcript event", "line 5: not a transcript event", "line 6: not a transcript event",
		"line 7: not a transcript event", "line 8: not a transcript event", "line 9: not a transcript event",
		"line 10: not a transcript event",
		"… and 999990 more like this (line 1: not a transcript event)",
		"line 100000: torn", "line 200000: torn", "line 300000: torn", "line 400000: torn", "line 500000: torn",
		"line 600000: torn", "line 700000: torn", "line 800000: torn", "line 900000: torn", "line 1000000: torn",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got\n%s", strings.Join(got, "\n"))
	}
}

func TestListBoundsKinds(t *testing.T) {
	var l List
	for i := 0; i < 10_000; i++ {
		l.Add(fmt.Sprint(i), fmt.Sprint("kind ", i))
	}
	if n := len(l.Strings()); n > maxKinds*PerKind+maxKinds {
		t.Fatalf("%d messages kept", n)
	}
	var empty *List
	if empty.Strings() != nil {
		t.Fatal("nil list has messages")
	}
}

func TestMergeKeepsKindsAndCounts(t *testing.T) {
	var a, b, all List
	for i := 0; i < 25; i++ {
		a.Addf("%s: line %d: bad", "a.jsonl", i)
		b.Addf("%s: line %d: bad", "b.jsonl", i)
	}
	all.Merge(&a)
	all.Merge(&b)
	got := all.Strings()
	if all.Len() != 50 || len(got) != 11 || got[10] != "… and 40 more like this (a.jsonl: line 0: bad)" {
		t.Fatalf("Len %d, got %q", all.Len(), got)
	}
}
