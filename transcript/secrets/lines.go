package secrets

import "strings"

// LineMasker masks text that arrives a line at a time, such as a
// process's output shown on a terminal, and lines too long to hold whole,
// which are shown in pieces. Besides what MaskString masks in each line or
// piece, it masks
//
//   - the lines between the BEGIN and END lines of a private key block,
//     which no single line gives away;
//   - after a piece cut where no safe cut was found (Force), the rest of a
//     token masked up to the cut, up to the token's end: the rest alone
//     lacks the prefix that made it a credential.
type LineMasker struct {
	ms    []*Masker
	inKey bool
	// open holds the bytes that continue a token masked up to the last
	// forced cut (nil: none is open).
	open *charSet
}

// holdWindow bounds the tail of a forced piece that Force keeps back
// because it may begin a secret. It is longer than every shape's prefix
// and shortest body (TestHoldWindow).
const holdWindow = 4096

// Lines returns a LineMasker for one stream of lines. The extra maskers
// (nil ones are skipped) mask each line after m: the engine adds one for
// the lines of multi-line secret values.
func (m *Masker) Lines(extra ...*Masker) *LineMasker {
	l := &LineMasker{}
	for _, x := range append([]*Masker{m}, extra...) {
		if x != nil {
			l.ms = append(l.ms, x)
		}
	}
	return l
}

// MaskLine masks a line (without its newline), or what is left of one
// after a safe cut (SafeCut) or a forced one (Force): what MaskString
// masks, the body of a private key block, and the rest of a token a
// forced cut left open.
func (l *LineMasker) MaskLine(line string) string {
	if l == nil || len(l.ms) == 0 {
		return line
	}
	lead, rest := l.continued(line)
	l.open = nil
	if rest == "" {
		return lead
	}
	s, _ := l.mask(rest)
	return lead + s
}

// Force masks the first part of b, a line that must be shown before its
// end and holds no safe cut, and returns it with the number of bytes of b
// it covers. A tail that may begin a secret (a credential prefix, the
// beginning of a secret value, a keyword or name introducing one) is left
// out when it is within the last holdWindow bytes, for the next call to
// mask with what follows; a token masked up to the cut stays masked in
// what follows, up to its end. n is 0 only when b is no longer than
// holdWindow.
func (l *LineMasker) Force(b []byte) (masked string, n int) {
	if l == nil || len(l.ms) == 0 {
		return string(b), len(b)
	}
	lead, rest := l.continued(string(b))
	if rest == "" {
		// the open token goes on
		return lead, len(b)
	}
	l.open = nil
	h := l.holdFrom(rest)
	s, open := l.mask(rest[:h])
	l.open = open
	return lead + s, len(b) - len(rest) + h
}

// continued splits off the rest of a token left open by the last forced
// cut, masked.
func (l *LineMasker) continued(s string) (lead, rest string) {
	if l.open == nil {
		return "", s
	}
	n := 0
	for n < len(s) && l.open[s[n]] {
		n++
	}
	if n == 0 {
		return "", s
	}
	return Masked, s[n:]
}

// mask masks s with the key block state and every masker; open is set
// when a masked span runs to the end of s.
func (l *LineMasker) mask(s string) (string, *charSet) {
	if s == "" {
		return s, nil
	}
	s = l.keyBlock(s)
	if s == Masked {
		return s, nil
	}
	var open *charSet
	for _, m := range l.ms {
		var o *charSet
		if m.replacer != nil {
			s = m.replacer.Replace(s)
		}
		if s, o = maskShapesOpen(s); o != nil {
			open = o
		}
	}
	return s, open
}

// keyBlock returns Masked for a line inside a private key block (between
// its BEGIN and END lines), the line with the key body before the END
// line masked for the line that ends the block, and line itself
// otherwise, following the block from line to line.
func (l *LineMasker) keyBlock(line string) string {
	if l == nil {
		return line
	}
	if l.inKey {
		i := strings.Index(line, pemEnd)
		if i < 0 {
			return Masked
		}
		l.inKey = false
		if i > 0 {
			return Masked + line[i:]
		}
		return line
	}
	if i := strings.Index(line, pemBegin); i >= 0 && strings.Contains(line[i:], "PRIVATE KEY") && !strings.Contains(line[i:], pemEnd) {
		l.inKey = true
	}
	return line
}

// holdFrom returns where the tail of s that may begin a secret starts,
// looking at the last holdWindow bytes (len(s): there is none). Holding
// too much costs only a later display; holding too little would show the
// start of a secret that the bytes after the cut complete.
func (l *LineMasker) holdFrom(s string) int {
	from := max(0, len(s)-holdWindow)
	h := len(s)
	hold := func(i int) {
		if i >= from && i < h {
			h = i
		}
	}
	// The last word.
	w := len(s)
	for w > 0 && !isCutSpace(s[w-1]) {
		w--
	}
	hold(w)
	// Inside a word longer than the window: the earliest rule that may
	// start in the window and still be matching at the end.
	for p := from; p < h; p++ {
		if shapeOpenAt(s, p) {
			hold(p)
			break
		}
	}
	tail := s[from:]
	for k := min(len(pemBegin)-1, len(tail)); k > 0; k-- {
		if strings.HasSuffix(tail, pemBegin[:k]) {
			hold(len(s) - k)
			break
		}
	}
	if i := strings.LastIndex(tail, pemBegin); i >= 0 && !strings.Contains(tail[i+len(pemBegin):], "-----") {
		hold(from + i)
	}
	if i := strings.LastIndex(tail, "://"); i > 0 {
		hold(from + i - 1) // the password is known by its '@'
	}
	if i := strings.LastIndex(tail, "Q~"); i >= 0 && len(tail)-i < 40 {
		hold(from + i - 4)
	}
	if strings.HasSuffix(tail, "Q") {
		hold(len(s) - 5)
	}
	// a name, maybe quoted, that its separator and value may follow
	k := len(s)
	for k > from && (s[k-1] == ' ' || s[k-1] == '"' || s[k-1] == '\'') {
		k--
	}
	for k > from && nameBytes[s[k-1]] {
		k--
	}
	if k < len(s) && (k > from || k == 0) {
		hold(k)
	}
	if i := strings.LastIndexAny(tail, "=:"); i >= 0 {
		// name=value, "name": "value" without the value's end
		k := from + i
		for k > 0 && (s[k-1] == ' ' || s[k-1] == '"' || s[k-1] == '\'') {
			k--
		}
		e := k
		for k > 0 && nameBytes[s[k-1]] {
			k--
		}
		if secretName(strings.TrimLeft(s[k:e], "-.")) {
			hold(k)
		}
	}
	// The beginning of a secret value.
	for _, m := range l.ms {
		for _, v := range m.values {
			for p := max(from, len(s)-len(v)+1); p < len(s); p++ {
				if s[p] == v[0] && strings.HasPrefix(v, s[p:]) {
					hold(p)
					break
				}
			}
		}
	}
	// The words introducing what is held: "Bearer <t>", "Authorization:
	// Basic <b64>", "NAME = value", "curl -u user:pw".
	for h > from && isCutSpace(s[h-1]) {
		j := h
		for j > 0 && isCutSpace(s[j-1]) {
			j--
		}
		if j == 0 || !introducesSecret(s[:j]) {
			break
		}
		k := j
		for k > 0 && !isCutSpace(s[k-1]) {
			k--
		}
		if k < from {
			break
		}
		h = k
	}
	return h
}

// shapeOpenAt reports whether a credential shape may start at p and be cut
// short by the end of s: its prefix cut, or its body running to the end
// without reaching its shortest length (or a JWT's ".ey").
func shapeOpenAt(s string, p int) bool {
	wordStart := p == 0 || !alnum[s[p-1]]
	for _, k := range index.byFirst[s[p]] {
		sh := &shapes[k]
		if !wordStart && !sh.inWord {
			continue
		}
		rest := s[p:]
		if len(rest) <= len(sh.prefix) {
			if strings.HasPrefix(sh.prefix, rest) {
				return true
			}
			continue
		}
		if !strings.HasPrefix(rest, sh.prefix) {
			continue
		}
		body := rest[len(sh.prefix):]
		n := 0
		for n < len(body) && sh.body[body[n]] {
			n++
		}
		if n == len(body) && (sh.max == 0 || n <= sh.max) && (n < sh.min || sh.mid != "" && !strings.Contains(body, sh.mid)) {
			return true
		}
	}
	return false
}
