package secrets

import "strings"

// LineMasker masks text that arrives a line at a time, such as a
// process's output shown on a terminal, and lines too long to hold whole,
// which are shown in pieces. Besides what MaskString masks in each line or
// piece, it masks
//
//   - the lines between the BEGIN and END lines of a private key block,
//     which no single line gives away;
//   - the value of an element whose start tag ends the line before
//     (<password>, a line, </password>), and the values of a YAML data:
//     block that look like base64 (a Kubernetes Secret), which no single
//     line gives away either;
//   - after a piece cut where no safe cut was found (Force), the rest of a
//     token masked up to the cut, up to the token's end: the rest alone
//     lacks the prefix that made it a credential.
type LineMasker struct {
	m     *Masker
	inKey bool
	// tag is the class of the element whose start tag ended the last line
	// (plainName: none), tagName its name.
	tag     nameClass
	tagName string
	// inData: in a data: block indented by dataIndent; inScalar: in a
	// block scalar (key: |) of it, indented more than scalarIndent.
	inData, inScalar         bool
	dataIndent, scalarIndent int
	// cmds are the commands of cmdWords that the text before this one
	// gave (a forced piece of the same line, or a line continued by a
	// trailing backslash): a -u or -p here may be theirs.
	cmds [len(cmdWords)]bool
	// open holds the bytes that continue a token masked up to the last
	// forced cut (nil: none is open).
	open *charSet
}

// holdWindow bounds the tail of a forced piece that Force keeps back
// because it may begin a secret. It is longer than every shape's prefix
// and shortest body (TestHoldWindow).
const holdWindow = 4096

// Lines returns a LineMasker for one stream of lines (one that masks
// nothing when m is nil). A secret whose value spans lines is found line
// by line when m has its lines (WithLinesOf).
func (m *Masker) Lines() *LineMasker {
	return &LineMasker{m: m}
}

// MaskLine masks a line (without its newline), or what is left of one
// after a safe cut (SafeCut) or a forced one (Force): what MaskString
// masks, the body of a private key block, and the rest of a token a
// forced cut left open.
func (l *LineMasker) MaskLine(line string) string {
	if l == nil || l.m == nil {
		return line
	}
	lead, rest := l.continued(line)
	l.open = nil
	if rest == "" {
		return lead
	}
	s, _ := l.mask(rest, false)
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
	if l == nil || l.m == nil {
		return string(b), len(b)
	}
	lead, rest := l.continued(string(b))
	if rest == "" {
		// the open token goes on
		return lead, len(b)
	}
	l.open = nil
	h := l.holdFrom(rest)
	s, open := l.mask(rest[:h], true)
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
// when a masked span runs to the end of s. piece says the line goes on
// after s.
func (l *LineMasker) mask(s string, piece bool) (string, *charSet) {
	if s == "" {
		return s, nil
	}
	s = l.keyBlock(s)
	if s == Masked {
		return s, nil
	}
	line := s
	s = l.multiLine(s)
	defer l.noteTag(line)
	cmds := l.cmds
	if piece || strings.HasSuffix(strings.TrimRight(line, " \t\r"), "\\") {
		for k, w := range cmdWords {
			l.cmds[k] = l.cmds[k] || strings.Contains(line, w)
		}
	} else {
		l.cmds = [len(cmdWords)]bool{}
	}
	if l.m.replacer != nil {
		s = l.m.replacer.Replace(s)
	}
	return maskShapesIn(s, cmds)
}

// multiLine masks what a line holds of a secret that an earlier line
// introduced: the value of a secret-named element whose start tag ended
// the line before, a value of a YAML data: block that looks like base64,
// the lines of a block scalar in it.
func (l *LineMasker) multiLine(line string) string {
	ind := skipBlanks(line, 0, len(line))
	body := strings.TrimRight(line[ind:], " \t\r")
	if l.inScalar {
		if body == "" {
			return line
		}
		if ind > l.scalarIndent {
			return line[:ind] + Masked
		}
		l.inScalar = false
	}
	if class := l.tag; class != plainName && body != "" {
		l.tag = plainName
		v := body
		if i := strings.IndexByte(v, '<'); i >= 0 {
			v = strings.TrimRight(v[:i], " \t")
		}
		if v != "" && (class == secretClass && maskableFor(l.tagName, v) || credentialLike(v)) {
			return line[:ind] + Masked + body[len(v):]
		}
	}
	if l.inData && body != "" && body[0] != '#' {
		if ind <= l.dataIndent {
			l.inData = false
		} else if c := strings.IndexByte(body, ':'); c > 0 && allIn(body[:c], nameBytes) {
			v := strings.TrimLeft(body[c+1:], " \t")
			switch {
			case v == "|" || v == ">" || strings.HasPrefix(v, "|-") || strings.HasPrefix(v, ">-"):
				l.inScalar, l.scalarIndent = true, ind
			case base64Value(v):
				return line[:ind] + body[:len(body)-len(v)] + Masked
			}
		}
	}
	if body == "data:" || body == "stringData:" {
		l.inData, l.dataIndent = true, ind
	}
	return line
}

// base64Value reports whether v looks like the base64 of a secret: 10
// bytes or more of base64, padded or mixing cases and digits.
func base64Value(v string) bool {
	v = strings.Trim(v, `"'`)
	if len(v) < 10 || !allIn(v, b64) {
		return false
	}
	if v[len(v)-1] == '=' {
		return true
	}
	lower, upper, digit := cases(v)
	return lower && upper && digit
}

// noteTag notes whether line ends with the start tag of an element whose
// name says secret, the value being on the next line.
func (l *LineMasker) noteTag(line string) {
	t := strings.TrimRight(line, " \t\r")
	if !strings.HasSuffix(t, ">") {
		return
	}
	i := strings.LastIndexByte(t, '<')
	if i < 0 || !allIn(t[i+1:len(t)-1], nameBytes) || i+1 == len(t)-1 {
		return
	}
	l.tag, l.tagName = classifyName(t[i+1:len(t)-1]), t[i+1:len(t)-1]
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
	if i := strings.LastIndexAny(tail, "=:,>"); i >= 0 {
		// name=value, "name": "value", ("NAME", "value"), <name>value
		// without the value's end
		k := from + i
		for k > 0 && strings.IndexByte(" \t\"'<:?.+", s[k-1]) >= 0 && from+i-k < 8 {
			k--
		}
		e := k
		for k > 0 && nameBytes[s[k-1]] {
			k--
		}
		if classifyName(s[k:e]) != plainName || strings.EqualFold(s[k:e], "value") || strings.EqualFold(s[k:e], "data") {
			hold(k)
		}
	}
	// The beginning of a secret value.
	for _, v := range l.m.values {
		for p := max(from, len(s)-len(v)+1); p < len(s); p++ {
			if s[p] == v[0] && strings.HasPrefix(v, s[p:]) {
				hold(p)
				break
			}
		}
	}
	// The words introducing what is held: "Bearer <t>", "Authorization:
	// Basic <b64>", "NAME = value", "curl -u user:pw", "--token <t>".
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
		if n == len(body) && (sh.max == 0 || n <= sh.max) && (n < sh.min || sh.mids != nil && !containsAny(body, sh.mids)) {
			return true
		}
	}
	// A JWT is known by its second part.
	if wordStart && strings.HasPrefix(s[p:], "ey") {
		for q := p; q < len(s); q++ {
			if !jwtBody[s[q]] && s[q] != '.' && s[q] != '=' {
				return false
			}
		}
		return true
	}
	return false
}

// SafeCut returns the last index i of b, i >= from and i > 0, that starts
// a word after whitespace where no credential the masker knows can
// straddle the cut, or 0 when there is none: masking b[:i] and b[i:]
// apart masks what masking b whole would. A display that must show a
// long line before its end cuts it there.
//
// Credential shapes contain no whitespace; the ones that span it are
// introduced by a keyword, a flag or an operator: "Bearer <t>",
// "Authorization: Api-Token <t>", "NAME = value", "\"name\": \"value\"",
// "setProperty(\"NAME\", \"value\")", "<password> value", "curl -u
// user:pass", "--password value". So a cut is refused after a word ending
// in such a keyword or operator, and before a word starting with ':' or
// '='.
func SafeCut(b []byte, from int) int {
	for i := len(b) - 1; i > 0 && i >= from; i-- {
		if isCutSpace(b[i]) || !isCutSpace(b[i-1]) || b[i] == ':' || b[i] == '=' {
			continue
		}
		j := i - 1
		for j > 0 && isCutSpace(b[j-1]) {
			j--
		}
		if j > 0 && !introducesSecret(string(b[:j])) {
			return i
		}
	}
	return 0
}

func isCutSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'
}

// introducers are the words after which a credential follows a space.
var introducers = []string{"bearer", "basic", "token", "apikey", "key", "api-token", "-u", "--user", "-p"}

// introducesSecret reports whether b, the text before a run of
// whitespace, ends in something whose credential follows that whitespace.
func introducesSecret(b string) bool {
	switch b[len(b)-1] {
	case ':', '=', '>':
		return true
	case ',':
		return len(b) >= 2 && (b[len(b)-2] == '"' || b[len(b)-2] == '\'')
	}
	w := b[strings.LastIndexAny(b, " \t\r\v\f")+1:]
	for _, kw := range introducers {
		if hasSuffixFold(w, kw) {
			return true
		}
	}
	if strings.HasPrefix(w, "--") && secretName(w[2:]) {
		return true
	}
	// Authorization: <scheme> <credential>, the scheme glued to the colon
	// or not.
	if g := strings.TrimLeft(w, "\"'"); hasPrefixFold(g, "authorization:") || hasPrefixFold(g, "authorization=") {
		return true
	}
	before := strings.TrimRight(b[:len(b)-len(w)], " \t")
	before = strings.TrimRight(before, "\"'")
	return hasSuffixFold(before, "authorization:") || hasSuffixFold(before, "authorization=")
}

func hasPrefixFold(b, prefix string) bool {
	return len(b) >= len(prefix) && strings.EqualFold(b[:len(prefix)], prefix)
}

func hasSuffixFold(b, suffix string) bool {
	return len(b) >= len(suffix) && strings.EqualFold(b[len(b)-len(suffix):], suffix)
}
