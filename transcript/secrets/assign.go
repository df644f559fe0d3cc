package secrets

import "strings"

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
	if s[i] == '>' {
		return sc.xmlElement(s, i, spans)
	}
	opEnd, nameEnd, isOp := operator(s, i)
	if !isOp {
		return spans, 0, false
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
	case !maskableFor(name, v):
		ok = false
	case s[i] == ',':
		ok = openParen(s, k-1) || credentialLike(v)
	case vquoted:
		ok = quotedValue(s[j], v)
	case !spaced || upperName(name):
		ok = true
	default:
		// name: value, name = value: YAML and INI, or code, whose values
		// are names and calls.
		ok = !identifierLike(v) && !calls(s, v1)
	}
	if !ok {
		return spans, 0, false
	}
	return append(spans, span{v0, v1, &valueBytes}), v1, true
}

// operator finds the extent of the assignment operator at s[i] ('=', ':'
// or the ',' of setProperty("NAME", "value")) and where the name before it
// ends; ok is false when the byte is no assignment (a comparison, a URL's
// "://", an unquoted ',').
func operator(s string, i int) (opEnd, nameEnd int, ok bool) {
	switch s[i] {
	case '=':
		if i > 0 && strings.IndexByte("=!<>", s[i-1]) >= 0 {
			return 0, 0, false // ==, !=, <=, >=: the first '=' or a comparison
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
			return 0, 0, false
		}
		opEnd, nameEnd = i+1, i
	case ',':
		// setProperty("NAME", "value"): both quoted.
		if i == 0 || s[i-1] != '"' && s[i-1] != '\'' {
			return 0, 0, false
		}
		opEnd, nameEnd = i+1, i
	}
	return opEnd, nameEnd, true
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
	if v == "" || class == secretClass && !maskableFor(s[k:i], v) || class == hintName && !credentialLike(v) {
		return spans, 0, false
	}
	return append(spans, span{v0, v1, &valueBytes}), v1, true
}
