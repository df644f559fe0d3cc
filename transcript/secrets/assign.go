package secrets

import (
	"math"
	"strings"
)

// Assignments: a value given to a name that says secret (names.go), in
// every form gitleaks knows (its GenerateSampleSecrets), found from the
// operator: NAME=value (.env, shell, query strings, --flag=value),
// "name": "value" (JSON), name: value (YAML, headers), name = value (INI,
// TOML, code), make's := ::= :::= ?=, PHP's .=, "name" => "value"
// (Logstash, PHP), Go's backquotes, setProperty("NAME", "value"),
// <name>value</name> and <add key="name" value="value"/> (XML), and the
// data of a Kubernetes Secret.

// maxValue bounds the value of an assignment (or a flag) the masker
// looks at: a longer one is data, not a credential, and the bound keeps a
// scan of hostile text linear.
const maxValue = 16 << 10

// nameBytes are the bytes of a variable, key or flag name.
var nameBytes = set("A-Za-z0-9_.-")

// assignment masks the value of a secret-named assignment whose operator
// starts at i, appending its spans; next is where the scan goes on.
func (sc *scan) assignment(s string, i int, spans []span) (out []span, next int, ok bool) {
	var opEnd, nameEnd int
	switch s[i] {
	case '=':
		if i > 0 && strings.IndexByte("=!<>", s[i-1]) >= 0 {
			return spans, 0, false // ==, !=, <=, >=: the first '=' or a comparison
		}
		opEnd = i + 1
		if opEnd < len(s) && (s[opEnd] == '=' || s[opEnd] == '>') {
			opEnd++ // ==, =>
		}
		// make's := ::= :::= ?=, PHP's .=, +=
		nameEnd = i
		for n := 0; n < 3 && nameEnd > 0 && strings.IndexByte(":?.+", s[nameEnd-1]) >= 0; n++ {
			nameEnd--
		}
	case ':':
		if i+1 < len(s) && (s[i+1] == ':' || s[i+1] == '=' || s[i+1] == '/') || i > 0 && s[i-1] == ':' {
			return spans, 0, false
		}
		opEnd, nameEnd = i+1, i
	case ',':
		// setProperty("NAME", "value"): both quoted.
		if i == 0 || s[i-1] != '"' && s[i-1] != '\'' {
			return spans, 0, false
		}
		opEnd, nameEnd = i+1, i
	case '>':
		return sc.xmlElement(s, i, spans)
	}
	// The name, back from the operator, past spaces and a closing quote.
	k := nameEnd
	spaced := false
	for k > 0 && nameEnd-k < 20 && (s[k-1] == ' ' || s[k-1] == '\t') {
		k--
		spaced = true
	}
	quoted := k > 0 && (s[k-1] == '"' || s[k-1] == '\'')
	if quoted {
		k--
	} else if s[i] == ',' {
		return spans, 0, false
	}
	end := k
	for k > 0 && end-k < maxName && nameBytes[s[k-1]] {
		k--
	}
	if k == end {
		return spans, 0, false
	}
	name := s[k:end]
	class := classifyName(name)
	if class == plainName && !quoted && s[i] != ',' {
		// var xToken string = "…": the name, then its type.
		class = typedName(s, k, name)
	}
	// The value.
	j := opEnd
	for n := 0; j < len(s) && n < 5 && (s[j] == ' ' || s[j] == '\t' || s[j] == '=' || s[i] == ',' && (s[j] == '\n' || s[j] == '\r')); n++ {
		spaced = spaced || s[j] != '='
		j++
	}
	var v0, v1 int
	vquoted := j < len(s) && (s[j] == '"' || s[j] == '\'' || s[j] == '`')
	if vquoted {
		if v0, v1, ok = sc.quoted(s, j); !ok {
			return spans, 0, false
		}
	} else {
		if s[i] == ',' {
			return spans, 0, false
		}
		v0, v1 = j, sc.valueEndFrom(s, j)
	}
	if v1 == v0 {
		if s[i] == ':' && (name == "data" || name == "stringData") {
			return sc.kubeData(s, k, v1, spans)
		}
		return spans, 0, false
	}
	if v1-v0 >= maxValue {
		return spans, 0, false
	}
	v := s[v0:v1]
	if class == plainName && strings.EqualFold(name, "value") {
		// <add key="ClearTextPassword" value="…"/>: the name is the
		// attribute before.
		class = keyAttribute(s, k)
	}
	if class != plainName && vquoted && strings.EqualFold(name, "key") && valueAttributeAt(s, v1+1) {
		return spans, 0, false // <add key="…" value="…"/>: judged at value=
	}
	switch {
	case class == plainName:
		return spans, 0, false
	case class == hintName:
		ok = credentialLike(v) && (vquoted && quotedValue(s[j], v) || !vquoted && !calls(s, v1))
	case s[i] == ',':
		ok = maskableValue(v) && (openParen(s, k-1) || credentialLike(v))
	case vquoted:
		ok = maskableValue(v) && quotedValue(s[j], v)
	case !spaced || upperName(name):
		ok = maskableValue(v)
	default:
		// name: value, name = value: YAML and INI, or code, whose values
		// are names and calls.
		ok = maskableValue(v) && !identifierLike(v) && !calls(s, v1)
	}
	if !ok {
		return spans, 0, false
	}
	return append(spans, span{v0, v1, &valueBytes}), v1, true
}

// typedName is the class of a declared name before its type (Go's var
// xToken string = …, const), or plainName. k is where typ starts.
func typedName(s string, k int, typ string) nameClass {
	if len(typ) > 20 || !allIn(typ, letters) {
		return plainName
	}
	e := k
	for e > 0 && k-e < 3 && (s[e-1] == ' ' || s[e-1] == '\t') {
		e--
	}
	if e == k {
		return plainName
	}
	b := e
	for b > 0 && e-b < maxName && nameBytes[s[b-1]] {
		b--
	}
	if b == e || b < 2 || s[b-1] != ' ' {
		return plainName
	}
	if kw := lastWord(strings.TrimRight(s[max(0, b-8):b], " ")); kw != "var" && kw != "const" {
		return plainName
	}
	return classifyName(s[b:e])
}

// keyAttribute is the class of the attribute value before the name at k:
// the "X" of key="X" value= or name="X" value=.
func keyAttribute(s string, k int) nameClass {
	e := k
	for e > 0 && k-e < 8 && (s[e-1] == ' ' || s[e-1] == '\t' || s[e-1] == '\n') {
		e--
	}
	if e == k || e == 0 || s[e-1] != '"' && s[e-1] != '\'' {
		return plainName
	}
	q := s[e-1]
	b := strings.LastIndexByte(s[max(0, e-1-maxName):e-1], q)
	if b < 0 {
		return plainName
	}
	b += max(0, e-1-maxName)
	key := s[b+1 : e-1]
	a := b
	for a > 0 && b-a < 4 && (s[a-1] == ' ' || s[a-1] == '=') {
		a--
	}
	attr := a
	for attr > 0 && a-attr < 8 && letters[s[attr-1]] {
		attr--
	}
	if n := s[attr:a]; !strings.EqualFold(n, "key") && !strings.EqualFold(n, "name") {
		return plainName
	}
	return classifyName(key)
}

// valueAttributeAt reports whether a value= attribute follows at j.
func valueAttributeAt(s string, j int) bool {
	for j < len(s) && (s[j] == ' ' || s[j] == '\t' || s[j] == '\n') {
		j++
	}
	if len(s)-j < 5 || !strings.EqualFold(s[j:j+5], "value") {
		return false
	}
	for j += 5; j < len(s) && s[j] == ' '; j++ {
	}
	return j < len(s) && s[j] == '='
}

// openParen reports whether the quoted name whose opening quote is at q
// opens a call's arguments: setProperty("NAME", "value").
func openParen(s string, q int) bool {
	b := q
	for b > 0 && q-b < 8 && (s[b-1] == ' ' || s[b-1] == '\t') {
		b--
	}
	return b > 0 && s[b-1] == '('
}

// quotedValue reports whether v, quoted with q, is a value rather than
// code that happens to sit between two quotes (x = "a" + y + "b") or a
// shell command (`cmd args`).
func quotedValue(q byte, v string) bool {
	if q == '`' && strings.ContainsAny(v, " \t\n") {
		return false
	}
	if v[len(v)-1] == ':' {
		return false
	}
	return !strings.Contains(v, " = ") && !strings.Contains(v, " + ")
}

// identifierLike reports whether v reads as a name in code (lexer.Next,
// os.environ, None, hashedPassword): letters, '_', '.' and '$' only.
func identifierLike(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; !letters[c] && c != '_' && c != '.' && c != '$' {
			return false
		}
	}
	return true
}

// calls reports whether the unquoted value ending at v1 is a function
// being called (token = getToken(…)).
func calls(s string, v1 int) bool {
	return v1 < len(s) && (s[v1] == '(' || s[v1] == '[')
}

// quoted returns the value quoted at j, without its quotes.
func (sc *scan) quoted(s string, j int) (v0, v1 int, ok bool) {
	q := s[j]
	qi := strings.IndexByte("\"'`", q)
	if sc.noQuote[qi] {
		return 0, 0, false
	}
	v0 = j + 1
	e := strings.IndexByte(s[v0:], q)
	if e < 0 {
		// No later value quoted so closes either.
		sc.noQuote[qi] = true
		return 0, 0, false
	}
	return v0, v0 + e, true
}

// valueEndFrom returns where an unquoted value starting at p ends. Values
// starting inside the last one found share its end, so a text of many
// separators and no value end is scanned once.
func (sc *scan) valueEndFrom(s string, p int) int {
	if sc.termFrom <= p && p <= sc.term {
		return sc.term
	}
	e := p
	for e < len(s) && !valueEnd(s[e]) && !(s[e] == '\\' && e+1 < len(s) && strings.IndexByte("nrt", s[e+1]) >= 0) {
		e++
	}
	sc.termFrom, sc.term = p, e
	return e
}

func valueEnd(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\r', '"', '\'', ';', '&', ',', ')', ']', '}', '<', '>', '`', '(', '[':
		return true
	}
	return false
}

// xmlElement masks the text of an element whose tag names a secret,
// <password>value</password>, the value on its line or on the next. i is
// the position of the start tag's '>'.
func (sc *scan) xmlElement(s string, i int, spans []span) ([]span, int, bool) {
	k := i
	for k > 0 && i-k < maxName && nameBytes[s[k-1]] {
		k--
	}
	if k == i || k == 0 || s[k-1] != '<' {
		return spans, 0, false
	}
	class := classifyName(s[k:i])
	if class == plainName || sc.noTagEnd {
		return spans, 0, false
	}
	v0 := i + 1
	for v0 < len(s) && v0-i < 64 && isSpace(s[v0]) {
		v0++
	}
	e := strings.IndexByte(s[v0:min(len(s), v0+maxValue)], '<')
	if e < 0 {
		if len(s)-v0 <= maxValue {
			sc.noTagEnd = true
		}
		return spans, 0, false
	}
	v1 := v0 + e
	if !strings.HasPrefix(s[v1:], "</") {
		return spans, 0, false
	}
	for v1 > v0 && isSpace(s[v1-1]) {
		v1--
	}
	v := s[v0:v1]
	if v == "" || class == secretClass && !maskableValue(v) || class == hintName && !credentialLike(v) {
		return spans, 0, false
	}
	return append(spans, span{v0, v1, &valueBytes}), v1, true
}

// kubeData masks the values of the data (or stringData) of a Kubernetes
// Secret: the lines under "data:", more indented than it, each "key:
// value" or a block scalar (key: |). k is where the name starts, e where
// its line's value would.
func (sc *scan) kubeData(s string, k, e int, spans []span) ([]span, int, bool) {
	// "data:" alone on its line, and the text a Secret.
	ls := k
	for ls > 0 && (s[ls-1] == ' ' || s[ls-1] == '\t') {
		ls--
	}
	if ls > 0 && s[ls-1] != '\n' {
		return spans, 0, false
	}
	indent := k - ls
	eol := lineEnd(s, e)
	if rest := strings.TrimSpace(s[e:eol]); rest != "" && rest[0] != '#' {
		return spans, 0, false
	}
	if !sc.isKubeSecret(s, k) {
		return spans, 0, false
	}
	found := false
	p := eol + 1
	for p < len(s) {
		le := lineEnd(s, p)
		in := skipBlanks(s, p, le)
		if in == le || s[in] == '#' {
			p = le + 1
			continue
		}
		lineIndent := in - p
		if lineIndent <= indent {
			break
		}
		c := in
		for c < le && nameBytes[s[c]] {
			c++
		}
		if c == in || c >= le || s[c] != ':' {
			break
		}
		v0 := skipBlanks(s, c+1, le)
		v1 := le
		for v1 > v0 && isSpace(s[v1-1]) {
			v1--
		}
		if v0 < v1 && (s[v0] == '|' || s[v0] == '>') {
			// A block scalar: the more indented lines after it.
			b0, b1 := -1, -1
			q := le + 1
			for q < len(s) {
				qe := lineEnd(s, q)
				qi := skipBlanks(s, q, qe)
				if qi < qe && qi-q <= lineIndent {
					break
				}
				if qi < qe {
					if b0 < 0 {
						b0 = qi
					}
					b1 = qe
				}
				q = qe + 1
			}
			if b0 >= 0 {
				for b1 > b0 && isSpace(s[b1-1]) {
					b1--
				}
				spans = append(spans, span{b0, b1, &valueBytes})
				found = true
			}
			p = min(q, len(s))
			continue
		}
		if v1-v0 >= 2 && (s[v0] == '"' || s[v0] == '\'') && s[v1-1] == s[v0] {
			v0, v1 = v0+1, v1-1
		}
		// Base64 of 10 bytes or more, as gitleaks: shorter values are
		// flags and names ("YmFyCg==", bar).
		if v := s[v0:v1]; len(strings.TrimRight(v, "=")) >= 10 && !isReference(v) {
			spans = append(spans, span{v0, v1, &valueBytes})
			found = true
		}
		p = le + 1
	}
	if !found {
		return spans, 0, false
	}
	return spans, min(p, len(s)), true
}

// isKubeSecret reports whether the YAML document of s holding i (the
// text between two "---" lines) says "kind: Secret" (any case, quoted or
// not). The answer is kept for the document.
func (sc *scan) isKubeSecret(s string, i int) bool {
	if i >= sc.kubeFrom && i < sc.kubeTo {
		return sc.kubeSecret
	}
	from := strings.LastIndex(s[:i], "\n---")
	if from < 0 {
		from = 0
	}
	to := strings.Index(s[i:], "\n---")
	if to < 0 {
		to = len(s)
	} else {
		to += i
	}
	sc.kubeFrom, sc.kubeTo, sc.kubeSecret = from, to, false
	doc := s[from:to]
	for p := 0; ; {
		k := strings.Index(doc[p:], "kind:")
		if k < 0 {
			break
		}
		j := p + k + len("kind:")
		for j < len(doc) && (doc[j] == ' ' || doc[j] == '\t' || doc[j] == '"' || doc[j] == '\'') {
			j++
		}
		if len(doc)-j >= 6 && strings.EqualFold(doc[j:j+6], "secret") && (j+6 == len(doc) || !word[doc[j+6]]) {
			sc.kubeSecret = true
			break
		}
		p = j
	}
	return sc.kubeSecret
}

func lineEnd(s string, p int) int {
	if i := strings.IndexByte(s[p:], '\n'); i >= 0 {
		return p + i
	}
	return len(s)
}

// maskableValue reports whether the value of a secret-named field is worth
// masking: not too short to mean anything, not a reference to something
// else ($VAR, ${{ … }}, {{ … }}, <placeholder>), not a placeholder, not a
// plain number (a long one is: a client id).
func maskableValue(v string) bool {
	return len(v) >= 6 && !isReference(v) && !placeholder(v) && !placeholderWord(v) && (!allDigits(v) || len(v) >= 14) &&
		!secretNamed(v)
}

// secretNamed reports whether v is itself the name of a secret rather
// than one (ACCESS_TOKEN, api-key, secret/mysecret): words in one case
// with no digit, one of them saying secret.
func secretNamed(v string) bool {
	if strings.IndexByte(v, '_') < 0 && strings.IndexByte(v, '-') < 0 && strings.IndexByte(v, '.') < 0 && strings.IndexByte(v, '/') < 0 {
		return false
	}
	if !allIn(v, nameWords) {
		return false
	}
	lower, upper, _ := cases(v)
	return lower != upper && classifyName(v) == secretClass
}

// nameWords are the bytes of a name made of words without digits.
var nameWords = set("A-Za-z_./-")

// cases reports which of lower-case letters, upper-case letters and
// digits v holds.
func cases(v string) (lower, upper, digit bool) {
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case 'a' <= c && c <= 'z':
			lower = true
		case 'A' <= c && c <= 'Z':
			upper = true
		case '0' <= c && c <= '9':
			digit = true
		}
	}
	return lower, upper, digit
}

// skipBlanks returns the index of the first byte at or after i, before
// end, that is not a space or a tab.
func skipBlanks(s string, i, end int) int {
	for i < end && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	return i
}

// credentialLike reports whether v, the value of a name that only hints
// at a secret or of an unquoted assignment in code, looks like a
// credential rather than an identifier, an expression, a path or a
// version: 8 bytes or more without spaces or brackets, letters and
// digits both (or 14 digits or more), not a dotted name (os.environ,
// config.v2), not a path or a URL.
func credentialLike(v string) bool {
	if len(v) < 8 || !maskableValue(v) {
		return false
	}
	var nDigits, nLetters int
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case '0' <= c && c <= '9':
			nDigits++
		case letters[c]:
			nLetters++
		case c <= ' ' || strings.IndexByte("()[]{}<>,;:\"'`", c) >= 0:
			return false
		}
	}
	switch {
	case nLetters == 0:
		return nDigits >= 14
	case nDigits == 0:
		return false
	case v[0] == '/' || v[0] == '.' || v[0] == '~':
		return false
	}
	return !dottedName(v) && random(v)
}

// random reports whether v's bytes are as varied as a generated
// credential's: its Shannon entropy reaches three quarters of the most
// its length allows, up to 3 bits a byte. A repeated or counted pattern
// (0000…TUVWXYZ, aaaa1111bbbb2222) is not.
func random(v string) bool {
	var counts [256]int
	for i := 0; i < len(v); i++ {
		counts[v[i]]++
	}
	h := 0.0
	n := float64(len(v))
	for _, c := range counts {
		if c > 0 {
			p := float64(c) / n
			h -= p * math.Log2(p)
		}
	}
	return h >= min(3, 0.75*math.Log2(n))
}

// dottedName reports whether v is a dotted name (os.environ, config.v2,
// sm02915.int.contoso.com): two or more parts, each a word starting with
// a letter with digits only at its end.
func dottedName(v string) bool {
	parts := 0
	for p := range strings.SplitSeq(v, ".") {
		parts++
		if p == "" || !letters[p[0]] {
			return false
		}
		digit := false
		for i := 0; i < len(p); i++ {
			switch c := p[i]; {
			case '0' <= c && c <= '9':
				digit = true
			case word[c] || c == '-':
				if digit {
					return false
				}
			default:
				return false
			}
		}
	}
	return parts >= 2
}

func upperName(name string) bool {
	hasLetter := false
	for i := 0; i < len(name); i++ {
		c := name[i]
		if 'a' <= c && c <= 'z' {
			return false
		}
		if 'A' <= c && c <= 'Z' {
			hasLetter = true
		}
	}
	return hasLetter
}

// isReference reports whether v refers to a value kept elsewhere: $VAR,
// ${VAR}, $(cmd), {{ template }}, <placeholder>, %VAR%, @file,
// [PLACEHOLDER] (and [MASKED]), or asterisks.
func isReference(v string) bool {
	if v == "" {
		return false
	}
	switch v[0] {
	case '$', '<', '%', '@', '[':
		return true
	case '{':
		// {{ template }}, {Name} (a format string's field)
		return strings.HasPrefix(v, "{{") || allIn(strings.TrimSuffix(v[1:], "}"), lettersUnderscore)
	}
	return allIn(v, stars)
}

// placeholderWord reports whether v is a word that stands for a secret
// rather than being one (curl -u user:password).
func placeholderWord(v string) bool {
	return wordIn(v, placeholderValues)
}

var placeholderValues = []string{"password", "passwd", "pass", "pwd", "secret", "token", "apikey", "api_key", "test",
	"testing", "changeme", "username", "user", "example", "dummy", "none", "null", "nil", "undefined", "true", "false",
	"foo", "bar", "foobar", "xxx", "yyy"}

var (
	lettersUnderscore = set("A-Za-z_")
	stars             = set("*xX.")
)

// allIn reports whether every byte of v is in cs.
func allIn(v string, cs *charSet) bool {
	for i := 0; i < len(v); i++ {
		if !cs[v[i]] {
			return false
		}
	}
	return true
}

func allDigits(v string) bool {
	for i := 0; i < len(v); i++ {
		if v[i] < '0' || v[i] > '9' {
			return false
		}
	}
	return true
}
