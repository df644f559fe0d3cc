package secrets

import "strings"

// span is a part of a string to replace by Masked. cont is the set of
// bytes that would have extended it had the string gone on (nil:
// tokenBytes); a LineMasker masks them after a forced cut.
type span struct {
	start, end int
	cont       *charSet
}

// scan is what one maskShapes call learned that keeps it linear on
// hostile input: where rules that look far ahead already failed, and
// where the words that give a command line its meaning first occur.
type scan struct {
	// jwtBad: no JWT starts before this offset (a run without ".ey").
	jwtBad int
	// noQuote[q]: no closing quote q after the first failed search.
	noQuote [3]bool
	// noTagEnd: no '<' after the first failed search.
	noTagEnd bool
	// No value ends in [termFrom, term): term is the end of every value
	// starting there.
	termFrom, term int
	// kubeSecret: the YAML document s[kubeFrom:kubeTo] says "kind:
	// Secret".
	kubeFrom, kubeTo int
	kubeSecret       bool
	// cmds: where each command word of cmdWords first occurs (-1:
	// nowhere, -2: not looked, cmdBefore: in the text before this one).
	cmds [len(cmdWords)]int
}

// cmdWords are the commands whose flags carry a password (curl -u
// user:password, mysql -pPASSWORD, docker login -p PASSWORD, sshpass -p
// PASSWORD).
var cmdWords = [...]string{"curl", "mysql", "mariadb", "login", "sshpass"}

const (
	cmdCurl = iota
	cmdMySQL
	cmdMariaDB
	cmdLogin
	cmdSSHPass
)

func newScan() scan {
	sc := scan{term: -1}
	for k := range sc.cmds {
		sc.cmds[k] = -2
	}
	return sc
}

// cmdBefore, in scan.cmds, says the command was given before the text.
const cmdBefore = -3

// after reports whether command word k occurs in s before i.
func (sc *scan) after(s string, k, i int) bool {
	if sc.cmds[k] == -2 {
		sc.cmds[k] = strings.Index(s, cmdWords[k])
	}
	return sc.cmds[k] == cmdBefore || sc.cmds[k] >= 0 && sc.cmds[k] < i
}

// maskShapes masks every credential shape and secret assignment in s.
func maskShapes(s string) string {
	s, _ = maskShapesOpen(s)
	return s
}

// maskShapesOpen is maskShapes that also tells, when the last masked span
// runs to the end of s, which bytes would have extended it (nil when none
// does).
func maskShapesOpen(s string) (string, *charSet) { return maskShapesIn(s, [len(cmdWords)]bool{}) }

// maskShapesIn is maskShapesOpen for the rest of a command line: cmds are
// the commands the text before s gave.
func maskShapesIn(s string, cmds [len(cmdWords)]bool) (string, *charSet) {
	sc := newScan()
	for k, given := range cmds {
		if given {
			sc.cmds[k] = cmdBefore
		}
	}
	spans := sc.spans(s)
	if len(spans) == 0 {
		return s, nil
	}
	var open *charSet
	if last := spans[len(spans)-1]; last.end == len(s) {
		open = last.cont
		if open == nil {
			open = &tokenBytes
		}
	}
	return maskSpans(s, spans), open
}

// maskSpans is s with each of spans (in order, not overlapping) replaced
// by Masked.
func maskSpans(s string, spans []span) string {
	var b strings.Builder
	b.Grow(len(s))
	last := 0
	for _, sp := range spans {
		b.WriteString(s[last:sp.start])
		b.WriteString(Masked)
		last = sp.end
	}
	b.WriteString(s[last:])
	return b.String()
}

// opByte marks the bytes that may be an assignment's operator.
var opByte = func() (t [256]bool) {
	for _, c := range []byte("=:,>") {
		t[c] = true
	}
	return t
}()

// shapeSpans returns the spans of s that maskShapes replaces, in order and
// not overlapping.
func shapeSpans(s string) []span {
	sc := newScan()
	return sc.spans(s)
}

// spans is shapeSpans with sc's knowledge of the text.
func (sc *scan) spans(s string) []span {
	var spans []span
	for i := 0; i < len(s); {
		c := s[i]
		if opByte[c] {
			var next int
			var ok bool
			if spans, next, ok = sc.assignment(s, i, spans); ok {
				i = next
				continue
			}
		}
		if i+1 >= len(s) || !index.hasPair(c, s[i+1]) {
			i++
			continue
		}
		if sp, ok := matchAt(sc, s, i); ok {
			if sp.end > sp.start {
				spans = append(spans, sp)
			}
			i = max(sp.end, i+1)
			continue
		}
		i++
	}
	// A rule that looks back (the Azure secret, a Telegram token's bot
	// number) may start inside the span before it.
	for k := 1; k < len(spans); k++ {
		spans[k].start = max(spans[k].start, spans[k-1].end)
	}
	return spans
}

// matchAt tries every rule that may start at i.
func matchAt(sc *scan, s string, i int) (span, bool) {
	c := s[i]
	wordStart := i == 0 || !alnum[s[i-1]]
	for _, k := range index.pairShapes(c, s[i+1]) {
		sh := &shapes[k]
		if !wordStart && !sh.inWord {
			continue
		}
		if sp, ok, _ := sh.match(s, i); ok {
			return sp, true
		}
	}
	return matchAnchor(sc, s, i, wordStart)
}
