package secrets

import "strings"

// The rules matched by hand: credentials found from an anchor that is not
// a prefix at a word start (a key block's BEGIN line, a URL's "://", the
// "Q~" of an Azure secret, a JWT's ".ey", a Telegram token's ":A"), and
// the credentials of headers and command lines (Authorization, Bearer,
// curl -u, mysql -p, docker login -p, --password VALUE).

const (
	pemBegin = "-----BEGIN"
	pemEnd   = "-----END"
)

// anchorPairs are the first two bytes where matchAnchor looks.
var anchorPairs = func() []string {
	p := []string{"--", "-u", "-p", ":/", ":A", "Q~", "ey"}
	for c := range 256 {
		if wordDash[c] {
			p = append(p, "|"+string(rune(c)))
		}
	}
	return p
}()

// matchAnchor tries the hand-matched rules at i.
func matchAnchor(sc *scan, s string, i int, wordStart bool) (span, bool) {
	c, d := s[i], s[i+1]
	switch {
	case c == '-' && d == '-':
		if strings.HasPrefix(s[i:], pemBegin) {
			return privateKey(s, i)
		}
		return longFlag(sc, s, i)
	case c == '-' && d == 'u':
		return curlShortUser(sc, s, i)
	case c == '-' && d == 'p':
		return shortPassword(sc, s, i)
	case c == ':' && d == '/' && strings.HasPrefix(s[i:], "://"):
		return urlPassword(s, i)
	case c == ':' && d == 'A':
		return telegramToken(s, i)
	case c == 'Q' && d == '~':
		return azureSecret(s, i)
	case c == '|':
		return facebookToken(s, i)
	case wordStart && c == 'e' && d == 'y':
		if i < sc.jwtBad {
			return span{}, false
		}
		sp, ok, bad := jwt(s, i)
		sc.jwtBad = max(sc.jwtBad, bad)
		return sp, ok
	case wordStart && (c|0x20 == 'b'):
		return bearer(s, i)
	case wordStart && (c|0x20 == 'a'):
		return authorization(s, i)
	}
	return span{}, false
}

// privateKey masks the body of a PEM private key block, keeping its BEGIN
// and END lines. A block without its END line (cut, or split across
// strings) is masked to the end of s.
func privateKey(s string, i int) (span, bool) {
	rest := s[i+len(pemBegin):]
	eol := strings.Index(rest, "-----")
	if eol < 0 || eol > 100 || !strings.Contains(rest[:eol], "PRIVATE KEY") {
		return span{}, false
	}
	start := i + len(pemBegin) + eol + len("-----")
	end := strings.Index(s[start:], pemEnd)
	if end < 0 {
		return span{start, len(s), nil}, true
	}
	if end < 64 {
		return span{}, false // too short for a key: a placeholder
	}
	return span{start, start + end, nil}, true
}

// urlPassword masks the password of scheme://user:password@host, keeping
// the scheme, the user and the host. i is the position of "://".
func urlPassword(s string, i int) (span, bool) {
	if i == 0 || !alnum[s[i-1]] {
		return span{}, false
	}
	j := i + 3
	colon := -1
	for k := j; k < len(s); k++ {
		switch c := s[k]; {
		case c == ':' && colon < 0:
			colon = k
		case c == '@':
			if colon < 0 || k == colon+1 || isReference(s[colon+1:k]) {
				return span{}, false
			}
			return span{colon + 1, k, nil}, true
		case c == '/' || c == '?' || c == '#' || c <= ' ' || c == '"' || c == '\'' || c == '<' || c == '>' || c == '`':
			return span{}, false
		}
	}
	return span{}, false
}

// azureSecret matches an Azure AD client secret, xxxNQ~ and 31-34 more
// bytes. i is the position of "Q~".
func azureSecret(s string, i int) (span, bool) {
	start := i - 4
	if start < 0 || !('0' <= s[i-1] && s[i-1] <= '9') {
		return span{}, false
	}
	az := azureHead
	for k := start; k < i-1; k++ {
		if !az[s[k]] {
			return span{}, false
		}
	}
	if start > 0 && az[s[start-1]] {
		return span{}, false
	}
	n := 0
	for j := i + 2; j < len(s) && azureBody[s[j]] && n <= 34; j++ {
		n++
	}
	if n < 31 || n > 34 || placeholder(s[i+2:i+2+n]) {
		return span{}, false
	}
	return span{start, i + 2 + n, nil}, true
}

// jwtBody is what a JWT's payload and signature are made of (escaped
// slashes included, as JSON writes them).
var jwtBody = set("A-Za-z0-9/\\_-")

// jwt matches a JSON Web Token at i: ey + 17 or more letters and digits,
// ".ey" + 17 or more, '.', and a signature that may be missing. bad is
// where the header run ended when it was not followed by ".ey": no JWT
// starts before it.
func jwt(s string, i int) (sp span, ok bool, bad int) {
	j := i + 2
	for j < len(s) && alnum[s[j]] {
		j++
	}
	if !strings.HasPrefix(s[j:], ".ey") {
		return span{}, false, j
	}
	if j-i < 19 {
		return span{}, false, i
	}
	k := j + 3
	for k < len(s) && jwtBody[s[k]] {
		k++
	}
	if k-j-1 < 19 || k >= len(s) || s[k] != '.' {
		return span{}, false, i
	}
	k++
	for k < len(s) && jwtBody[s[k]] {
		k++
	}
	for n := 0; n < 2 && k < len(s) && s[k] == '='; n++ {
		k++
	}
	return span{i, k, nil}, true, i
}

// telegramToken matches a Telegram bot token, the bot's number, ":A" and
// 34 bytes. i is the position of ':'.
func telegramToken(s string, i int) (span, bool) {
	return numberedToken(s, i, 5, 16, i+2, 34, 34)
}

// facebookToken matches a Facebook app access token, the app's 15 or 16
// digits, '|' and 27 to 40 bytes. i is the position of '|'.
func facebookToken(s string, i int) (span, bool) {
	return numberedToken(s, i, 15, 16, i+1, 27, 40)
}

// numberedToken matches a token made of a number of lo to hi digits that
// ends at i, a separator, and from b on lo2 to hi2 bytes of [A-Za-z0-9_-].
func numberedToken(s string, i, lo, hi, b, lo2, hi2 int) (span, bool) {
	start := i
	for start > 0 && i-start <= hi && digits[s[start-1]] {
		start--
	}
	if n := i - start; n < lo || n > hi || start > 0 && alnum[s[start-1]] {
		return span{}, false
	}
	end := b
	for end < len(s) && wordDash[s[end]] && end-b <= hi2 {
		end++
	}
	if n := end - b; n < lo2 || n > hi2 {
		return span{}, false
	}
	return span{start, end, nil}, true
}

// bearer masks the token of "Bearer <token>", keeping the keyword.
func bearer(s string, i int) (span, bool) {
	if len(s)-i < 6 || !strings.EqualFold(s[i:i+6], "bearer") {
		return span{}, false
	}
	j := i + 6
	ws := j
	for j < len(s) && (s[j] == ' ' || s[j] == '\t') {
		j++
	}
	if j == ws {
		return span{}, false
	}
	n := 0
	for j+n < len(s) && tokenish[s[j+n]] {
		n++
	}
	if !headerCredential(s[j : j+n]) {
		return span{}, false
	}
	return span{j, j + n, nil}, true
}

// headerCredential reports whether v, the credential of a header, is
// one: 8 bytes or more, and a digit, a symbol or 20 bytes (a word is not
// one: "Bearer authentication"), and no placeholder.
func headerCredential(v string) bool {
	if len(v) < 8 || placeholder(v) {
		return false
	}
	if len(v) >= 20 {
		return true
	}
	for i := 0; i < len(v); i++ {
		if !letters[v[i]] {
			return true
		}
	}
	return false
}

// authorization masks the credential of an Authorization header or
// field, keeping its scheme: "Authorization: Basic <b64>",
// "authorization=token <t>", "Authorization: Api-Token <t>", or a bare
// credential. Bearer is left to its own rule.
func authorization(s string, i int) (span, bool) {
	const key = "authorization"
	if len(s)-i < len(key) || !strings.EqualFold(s[i:i+len(key)], key) {
		return span{}, false
	}
	j := i + len(key)
	if j < len(s) && (s[j] == '"' || s[j] == '\'') {
		j++
	}
	for j < len(s) && s[j] == ' ' {
		j++
	}
	if j >= len(s) || s[j] != ':' && s[j] != '=' {
		return span{}, false
	}
	j++
	for j < len(s) && (s[j] == ' ' || s[j] == '\t' || s[j] == '"' || s[j] == '\'') {
		j++
	}
	// A scheme is a word followed by a space: the credential comes after.
	k := j
	for k < len(s) && k-j < 32 && (letters[s[k]] || s[k] == '-') {
		k++
	}
	if k > j && k < len(s) && s[k] == ' ' {
		if strings.EqualFold(s[j:k], "bearer") {
			return span{}, false
		}
		for j = k; j < len(s) && s[j] == ' '; j++ {
		}
	}
	n := 0
	for j+n < len(s) && tokenish[s[j+n]] {
		n++
	}
	if !headerCredential(s[j : j+n]) {
		return span{}, false
	}
	return span{j, j + n, nil}, true
}

// curlShortUser masks the password of curl's -u user:password. i is the
// position of "-u".
func curlShortUser(sc *scan, s string, i int) (span, bool) {
	if i > 0 && s[i-1] != ' ' && s[i-1] != '\t' || !sc.after(s, cmdCurl, i) {
		return span{}, false
	}
	return userPassword(s, i+2)
}

// longFlag masks the value of a long flag that carries a secret: curl's
// --user user:password, and a secret-named flag followed by its value
// after a space (--password VALUE, --token VALUE, --client-secret VALUE;
// --password=VALUE is an assignment). i is the position of "--".
func longFlag(sc *scan, s string, i int) (span, bool) {
	if i > 0 && s[i-1] != ' ' && s[i-1] != '\t' {
		return span{}, false
	}
	j := i + 2
	for j < len(s) && j-i < 66 && (wordDash[s[j]] || s[j] == '.') {
		j++
	}
	name := s[i+2 : j]
	if name == "user" && sc.after(s, cmdCurl, i) {
		return userPassword(s, j)
	}
	if j+1 >= len(s) || s[j] != ' ' || s[j+1] == '-' || !secretName(name) {
		return span{}, false
	}
	return flagValue(s, j+1)
}

// shortPassword masks the password of -p: attached in mysql and mariadb
// (-pPASSWORD), after a space in docker (or podman) login and sshpass.
// i is the position of "-p".
func shortPassword(sc *scan, s string, i int) (span, bool) {
	if i > 0 && s[i-1] != ' ' && s[i-1] != '\t' || i+2 >= len(s) {
		return span{}, false
	}
	switch c := s[i+2]; {
	case c == ' ' && (sc.after(s, cmdLogin, i) || sc.after(s, cmdSSHPass, i)):
		if i+3 < len(s) && s[i+3] != '-' {
			return flagValue(s, i+3)
		}
	case c != ' ' && c != '\t' && c != '-' && c != '=' && (sc.after(s, cmdMySQL, i) || sc.after(s, cmdMariaDB, i)):
		return flagValue(s, i+2)
	}
	return span{}, false
}

// flagValue masks the command-line value at j, quoted or up to the next
// whitespace.
func flagValue(s string, j int) (span, bool) {
	v0, v1 := j, j
	if q := s[j]; q == '"' || q == '\'' {
		e := strings.IndexByte(s[j+1:min(len(s), j+1+maxValue)], q)
		if e < 0 {
			return span{}, false
		}
		v0, v1 = j+1, j+1+e
	} else {
		for v1 < len(s) && v1-j < maxValue && !isSpace(s[v1]) {
			v1++
		}
	}
	if v := s[v0:v1]; len(v) < 3 || isReference(v) || placeholder(v) || placeholderWord(v) {
		return span{}, false
	}
	return span{v0, v1, &valueBytes}, true
}

// userPassword masks the password of a user:password credential at j,
// after curl's -u or --user ('=' or up to five spaces first): quoted
// whole ("user:pass"), in parts ("user":"pass", user:'pass') or not. A
// credential with no password ("key:") is an API key given as the user:
// the user is masked.
func userPassword(s string, j int) (span, bool) {
	if j < len(s) && s[j] == '=' {
		j++
	} else {
		k := j
		for k < len(s) && k-j < 5 && (s[k] == ' ' || s[k] == '\t') {
			k++
		}
		j = k
	}
	u0, u1, p0, p1 := -1, -1, -1, -1
	part := func(k int) (int, int, int, bool) { // a part at k: [a, b), and where it ends
		if k < len(s) && (s[k] == '"' || s[k] == '\'') {
			e := strings.IndexByte(s[k+1:min(len(s), k+1+maxValue)], s[k])
			if e < 0 {
				return 0, 0, 0, false
			}
			return k + 1, k + 1 + e, k + 2 + e, true
		}
		e := k
		for e < len(s) && e-k < maxValue && !isSpace(s[e]) && s[e] != ':' && s[e] != '"' && s[e] != '\'' {
			e++
		}
		return k, e, e, true
	}
	a, b, next, ok := part(j)
	if !ok {
		return span{}, false
	}
	if next < len(s) && s[next] == ':' {
		// user:pass, "user":"pass", user:'pass'
		u0, u1 = a, b
		if p0, p1, _, ok = part(next + 1); !ok {
			return span{}, false
		}
		if p1 < len(s) && s[p1] == ':' { // a password holding ':'
			for p1 < len(s) && p1-p0 < maxValue && !isSpace(s[p1]) && s[p1] != '"' && s[p1] != '\'' {
				p1++
			}
		}
	} else if colon := strings.IndexByte(s[a:b], ':'); colon >= 0 {
		// "user:pass"
		u0, u1, p0, p1 = a, a+colon, a+colon+1, b
	} else {
		return span{}, false
	}
	switch user, pass := s[u0:u1], s[p0:p1]; {
	case isReference(user) && user != "":
		return span{}, false // <user:password>
	case pass != "":
		if len(pass) < 3 || isReference(pass) || placeholder(pass) || placeholderWord(pass) || allDigits(pass) {
			return span{}, false
		}
		return span{p0, p1, &valueBytes}, true
	case len(user) >= 8 && !isReference(user) && !placeholder(user) && !placeholderWord(user):
		return span{u0, u1, &valueBytes}, true
	}
	return span{}, false
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}
