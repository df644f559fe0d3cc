// Package warn collects the warnings a reader meets in a damaged file.
// It keeps the first few of each kind and counts the rest, so a file of a
// million broken lines yields a handful of messages and a count, in memory
// that does not grow with the file.
package warn

import (
	"fmt"
	"strings"
)

// Defaults.
const (
	// PerKind is how many messages of one kind are kept.
	PerKind = 10
	// maxKinds bounds the kinds tracked; later kinds share one.
	maxKinds  = 64
	otherKind = "\x00other"
)

// List is a bounded list of warnings. The zero value is ready to use.
type List struct {
	// PerKind overrides how many messages of one kind are kept.
	PerKind int
	kinds   map[string]*kind
	order   []*kind
	msgs    []entry
	total   int
}

type kind struct {
	key        string
	kept, more int
	example    string
}

type entry struct {
	msg string
	k   *kind
}

// Addf adds a message; its kind is the format, so messages differing only
// in their line numbers or values count as one kind.
func (l *List) Addf(format string, args ...any) {
	l.Add(format, fmt.Sprintf(format, args...))
}

// Add adds msg as a message of kind key.
func (l *List) Add(key, msg string) {
	l.total++
	kd := l.kind(key, msg)
	per := l.PerKind
	if per <= 0 {
		per = PerKind
	}
	if kd.kept >= per {
		kd.more++
		return
	}
	kd.kept++
	l.msgs = append(l.msgs, entry{msg, kd})
}

// kind returns the kind of key, making it (with example) when new.
func (l *List) kind(key, example string) *kind {
	if l.kinds == nil {
		l.kinds = map[string]*kind{}
	}
	if kd := l.kinds[key]; kd != nil {
		return kd
	}
	if len(l.kinds) >= maxKinds {
		key = otherKind
		if kd := l.kinds[key]; kd != nil {
			return kd
		}
	}
	kd := &kind{key: key, example: example}
	l.kinds[key] = kd
	l.order = append(l.order, kd)
	return kd
}

// Merge adds o's messages and counts to l, kinds kept apart as in o.
func (l *List) Merge(o *List) {
	if o == nil {
		return
	}
	for _, e := range o.msgs {
		l.Add(e.k.key, e.msg)
	}
	for _, kd := range o.order {
		if kd.more > 0 {
			l.kind(kd.key, kd.example).more += kd.more
			l.total += kd.more
		}
	}
}

// Len is how many messages were added, kept or not.
func (l *List) Len() int {
	if l == nil {
		return 0
	}
	return l.total
}

// Strings returns the kept messages in order, each kind's count of the
// ones left out after its last kept message: "… and 999990 more like this".
func (l *List) Strings() []string {
	if l == nil || l.total == 0 {
		return nil
	}
	last := map[*kind]int{}
	for i, e := range l.msgs {
		last[e.k] = i
	}
	out := make([]string, 0, len(l.msgs)+len(l.order))
	for i, e := range l.msgs {
		out = append(out, e.msg)
		if last[e.k] == i && e.k.more > 0 {
			out = append(out, fmt.Sprintf("… and %d more like this (%s)", e.k.more, summary(e.k.example)))
		}
	}
	for _, kd := range l.order {
		if kd.kept == 0 && kd.more > 0 {
			out = append(out, fmt.Sprintf("… and %d more like this (%s)", kd.more, summary(kd.example)))
		}
	}
	return out
}

// summary shortens an example message for the count line.
func summary(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if r := []rune(s); len(r) > 80 {
		s = string(r[:79]) + "…"
	}
	return s
}
