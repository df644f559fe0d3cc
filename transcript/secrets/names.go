package secrets

import "strings"

// What a name says about its value. The words are gitleaks' (its generic
// rule's keywords and allowlist, and the identifiers of its vendor rules);
// the matching is ours: case-insensitive, over the words of snake_case,
// kebab-case, dotted and camelCase names, in one pass over an upper-case
// copy of the name, since it runs at every operator of every text.

// nameClass is how much a name says its value is secret.
type nameClass uint8

const (
	// plainName: the value is not taken for a secret because of its name.
	plainName nameClass = iota
	// hintName (a vendor, "auth", "access", "api"): the value is masked
	// when it looks like a credential (credentialLike).
	hintName
	// secretClass (password, token, secret, api_key, …): the value is
	// masked unless it is a reference, a placeholder or too short.
	secretClass
)

// secretName reports whether the name of an environment variable, a
// workflow input, a JSON key or a flag says its value is secret: it holds
// PASSWORD, PASSWD, PASSPHRASE, SECRET, TOKEN, CREDENTIAL, CREDS, APIKEY,
// API_KEY, PRIVATE_KEY or ACCESS_KEY (in any case, camelCase included), or
// its last word is KEY, or PAT, PASS, PWD or PW after another word
// (GITHUB_PAT, DB_PASS, MYSQL_PWD, deployKey; not PWD, the working
// directory), or it is a Bundler credential (BUNDLE_GEMS__EXAMPLE__COM).
// A name whose last word says it holds something else (API_KEY_ID,
// SECRET_NAME, TOKEN_URL, PASSWORD_FILE), whose secret word is a plural
// (max_tokens, secrets) or is qualified (public_key, primaryKey,
// csrf_token, nextPageToken) is not secret.
func secretName(name string) bool { return classifyName(name) == secretClass }

// maxName bounds the name looked at (its end: the words that matter).
const maxName = 128

// classifyName says what name says about its value.
func classifyName(name string) nameClass {
	if len(name) > maxName {
		name = name[len(name)-maxName:]
	}
	for name != "" && nameTrim[name[0]] {
		name = name[1:]
	}
	for name != "" && nameTrim[name[len(name)-1]] {
		name = name[:len(name)-1]
	}
	if name == "" {
		return plainName
	}
	var buf [maxName]byte
	up := buf[:len(name)]
	for i := 0; i < len(name); i++ {
		c := name[i]
		if 'a' <= c && c <= 'z' {
			c -= 'a' - 'A'
		}
		up[i] = c
	}
	class := wordsClass(name, up)
	if class != plainName && standIn(name, up) {
		return plainName
	}
	return class
}

// wordsClass is classifyName of a trimmed name, up in upper case.
func wordsClass(name string, up []byte) nameClass {
	ls, le := lastWordAt(name, len(name))
	last := up[ls:le]
	if notSecretLast[string(last)] {
		if hasVendor(name, up) {
			return hintName
		}
		return plainName
	}
	if at := secretWordAt(up); at >= 0 {
		if ws, we := lastWordAt(name, trimSep(name, at)); qualifiers[string(up[ws:we])] {
			return plainName
		}
		return secretClass
	}
	if string(last) == "KEY" {
		if ws, we := lastWordAt(name, trimSep(name, ls)); qualifiers[string(up[ws:we])] {
			return plainName
		}
		return secretClass
	}
	// PWD alone is the shell's working directory, PAT or PASS alone rarely
	// a credential: these words say secret after another word only
	// (GITHUB_PAT, DB_PASS, MYSQL_PWD).
	if ls > 0 && secretLast[string(last)] {
		return secretClass
	}
	if len(up) > 7 && string(up[:7]) == "BUNDLE_" && strings.Contains(name[7:], "__") {
		return secretClass // user:password for a gem host
	}
	if hasVendor(name, up) || hasHintWord(name, up) {
		return hintName
	}
	return plainName
}

// generatedName reports whether name, one that says secret, says key or
// token (API_KEY, accessToken, deployKey, GITHUB_PAT): a credential a
// service generates, rather than a password, a passphrase or a secret,
// which people choose.
func generatedName(name string) bool {
	up := []byte(strings.ToUpper(name))
	if at := secretWordAt(up); at >= 0 {
		return up[at] == 'T' || up[at] == 'A' || hasPrefixAt(up, at, "PRIVATE")
	}
	switch strings.ToUpper(lastWord(strings.Trim(name, "_.$@-"))) {
	case "KEY", "PAT":
		return true
	}
	return false
}

// nameTrim are the bytes around a name that are not part of it
// (--password, $password, @token).
var nameTrim = set("_.$@-")

// secretLast say secret as the last word after another one.
var secretLast = wordSet("PAT", "PASS", "PWD", "PW")

// notSecretLast, as a name's last word, say that it names, locates or
// counts a secret rather than holding one.
var notSecretLast = wordSet("ID", "IDS", "NAME", "NAMES", "URL", "URI", "URLS", "ENDPOINT", "HOST", "FILE", "FILES",
	"PATH", "DIR", "TYPE", "KIND", "VARIABLE", "VAR", "LENGTH", "LEN", "SIZE", "COUNT", "FORMAT", "FIELD", "PARAM",
	"HEADER", "PREFIX", "EXPIRY", "EXPIRES", "EXPIRATION", "TTL", "ENABLED", "REQUIRED", "POLICY", "MODE", "VERSION",
	"LIMIT", "TIMEOUT", "LOCATION", "ALGORITHM", "ALG", "ISSUER", "AUDIENCE", "SCOPE", "SCOPES", "REGEX", "PATTERN",
	"TEMPLATE", "PROVIDER", "LABEL", "INDEX", "ENV", "REF", "REFS", "USAGE", "STORE", "VAULT", "ROTATION", "LOGIN",
	"USER", "USERNAME", "EMAIL", "STDIN")

// qualifiers, as the word before the secret word, say that the key or
// token is not a credential.
var qualifiers = wordSet("PUBLIC", "PUB", "FOREIGN", "PRIMARY", "SCHEMA", "SORT", "PARTITION", "BUCKET", "CACHE",
	"IDEMPOTENCY", "ROUTING", "HOT", "IDX", "NATURAL", "SEQUENCE", "CSRF", "XSRF", "NEXT", "PAGE", "CONTINUATION",
	"CURSOR", "SYNC", "MAX", "NUM", "INPUT", "OUTPUT", "PROMPT", "COMPLETION", "TOTAL", "SORTING", "UNIQUE", "COMPOSITE",
	"HASH", "SHARD", "LOOKUP", "DEDUP", "DEDUPE", "RANGE", "CLUSTERING", "MAP", "OBJECT", "ROW", "TABLE", "ENTRY",
	"TRANSLATION", "I18N", "LOCALE", "MESSAGE", "AUTHENTICITY")

func wordSet(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}

// secretWordAt returns where the last secret word of up (an upper-case
// name) starts, or -1. The words: PASSWORD, PASSWD, PASSPHRASE, SECRET,
// TOKEN, CREDENTIAL(S), CREDS, and API, PRIVATE or ACCESS before KEY, with
// or without a separator. A plural at the end of the name names a
// collection (secrets:, max_tokens), and a few longer words only begin
// like one (tokenizer, secretary, jsonwebtoken, a library).
func secretWordAt(up []byte) int {
	at := -1
	for i := 0; i < len(up); i++ {
		n := 0
		switch up[i] {
		case 'P':
			n = prefixLen(up[i:], "PASSWORD", "PASSWD", "PASSPHRASE")
			if n == 0 {
				n = keyAfter(up[i:], "PRIVATE")
			}
		case 'S':
			if n = prefixLen(up[i:], "SECRET"); n > 0 && hasPrefixAt(up, i+n, "AR") {
				n = 0
			}
		case 'T':
			if n = prefixLen(up[i:], "TOKEN"); n > 0 && (hasPrefixAt(up, i+n, "IZ") || i >= 7 && string(up[i-7:i]) == "JSONWEB") {
				n = 0
			}
		case 'C':
			if n = prefixLen(up[i:], "CREDENTIAL", "CREDS"); n == len("CREDENTIAL") {
				n = -n // a plural is still credentials
			}
		case 'A':
			if n = keyAfter(up[i:], "API"); n == 0 {
				n = keyAfter(up[i:], "ACCESS")
			}
		}
		if n < 0 {
			at = i
			continue
		}
		if n == 0 {
			continue
		}
		// A plural at the end of the name, or before a separator.
		if e := i + n; e < len(up) && up[e] == 'S' && (e+1 == len(up) || up[e+1] == '_' || up[e+1] == '-' || up[e+1] == '.') {
			continue
		}
		at = i
	}
	return at
}

// keyAfter returns the length of word, a separator or none, and KEY at
// the start of up (0: not there).
func keyAfter(up []byte, word string) int {
	if !hasPrefixAt(up, 0, word) {
		return 0
	}
	n := len(word)
	if n < len(up) && (up[n] == '_' || up[n] == '-' || up[n] == '.') {
		n++
	}
	if !hasPrefixAt(up, n, "KEY") {
		return 0
	}
	return n + 3
}

// prefixLen returns the length of the first of words that up starts
// with, or 0.
func prefixLen(up []byte, words ...string) int {
	for _, w := range words {
		if hasPrefixAt(up, 0, w) {
			return len(w)
		}
	}
	return 0
}

func hasPrefixAt(up []byte, i int, w string) bool {
	return i <= len(up) && len(up)-i >= len(w) && string(up[i:i+len(w)]) == w
}

// trimSep returns i moved back over the separators before it.
func trimSep(name string, i int) int {
	for i > 0 && (name[i-1] == '_' || name[i-1] == '-' || name[i-1] == '.') {
		i--
	}
	return i
}

// lastWordAt returns the bounds of the last word of name[:end]: after the
// last '_', '-' or '.', or the last capitalised word of camelCase.
func lastWordAt(name string, end int) (int, int) {
	end = trimSep(name, end)
	i := end
	for i > 0 {
		c := name[i-1]
		if c == '_' || c == '-' || c == '.' {
			break
		}
		i--
		// camelCase: a capital after a lower-case letter starts the word.
		if 'A' <= c && c <= 'Z' && i > 0 && 'a' <= name[i-1] && name[i-1] <= 'z' {
			break
		}
	}
	return i, end
}

// lastWord is the last word of a name.
func lastWord(name string) string {
	i, e := lastWordAt(name, len(name))
	return name[i:e]
}

// wordStart reports whether a word of name starts at i: at its start,
// after a separator, or at a camelCase capital.
func wordStart(name string, i int) bool {
	if i == 0 {
		return true
	}
	p, c := name[i-1], name[i]
	if !alnum[p] {
		return true
	}
	return ('a' <= p && p <= 'z' || '0' <= p && p <= '9') && 'A' <= c && c <= 'Z'
}

// vendors are the services whose name, in a variable's, says its value
// is their credential when it looks like one (gitleaks' vendor rules),
// grouped by first letter.
var vendors = func() (t [26][]string) {
	for _, v := range []string{"ADAFRUIT", "ADOBE", "AIRTABLE", "ALGOLIA", "ALIBABA", "ASANA", "ATLASSIAN",
		"CONFLUENCE", "JIRA", "BEAMER", "BITBUCKET", "BITTREX", "MERAKI", "CLOUDFLARE", "CODECOV", "COHERE",
		"COINBASE", "CONFLUENT", "CONTENTFUL", "DATADOG", "DNKEY", "DISCORD", "DRONECI", "DROPBOX", "ETSY",
		"FACEBOOK", "FASTLY", "FINICITY", "FINNHUB", "FLICKR", "FRESHBOOKS", "GITTER", "GOCARDLESS", "HEROKU",
		"HUBSPOT", "INTERCOM", "JFROG", "ARTIFACTORY", "BINTRAY", "XRAY", "KRAKEN", "KUCOIN", "LAUNCHDARKLY",
		"LINKEDIN", "LOOKER", "MAILCHIMP", "MAILGUN", "MAPBOX", "MATTERMOST", "MESSAGEBIRD", "MESSAGE_BIRD",
		"NETLIFY", "NEWRELIC", "NEW_RELIC", "NEW-RELIC", "NYTIMES", "OKTA", "PLAID", "PRIVATEAI", "PRIVATE_AI",
		"RAPIDAPI", "SENDBIRD", "SENTRY", "SNYK", "SONAR", "SQUARESPACE", "SUMO", "TELEGR", "TRAVIS", "TWITCH",
		"TWITTER", "TYPEFORM", "YANDEX", "ZENDESK", "SOURCEGRAPH", "CONTRIBSYS"} {
		t[v[0]-'A'] = append(t[v[0]-'A'], v)
	}
	return t
}()

// hasVendor reports whether name (up in upper case) holds a vendor's name
// at the start of one of its words, written in one case or capitalised
// (SUMO_KEY, sumologic, SumoAccessID, MessageBird; not sumObj, CameraKit,
// SetSysctl).
func hasVendor(name string, up []byte) bool {
	for i := 0; i < len(up); i++ {
		if up[i] < 'A' || up[i] > 'Z' || !wordStart(name, i) {
			continue
		}
		for _, v := range vendors[up[i]-'A'] {
			if !hasPrefixAt(up, i, v) {
				continue
			}
			if c := name[i]; 'A' <= c && c <= 'Z' || !hasUpper(name[i:i+len(v)]) {
				return true // SUMO, Sumo, MessageBird, sumo; not sumO
			}
		}
	}
	return false
}

func hasUpper(s string) bool {
	for i := 0; i < len(s); i++ {
		if 'A' <= s[i] && s[i] <= 'Z' {
			return true
		}
	}
	return false
}

// standIn reports whether name's words (up in upper case) say that its
// value stands in for a credential: FAKE_API_KEY, dummyPassword,
// invalid_token, mockSecret, nonMatchingToken. Tests are full of them,
// and what they hold is made to look like the real thing. (NON alone
// does not: NON_PROD_PASSWORD is a password.)
func standIn(name string, up []byte) bool {
	var after []byte
	for end := len(name); end > 0; {
		s, e := lastWordAt(name, end)
		if e == s {
			break
		}
		if standInWords[string(up[s:e])] || string(up[s:e]) == "NON" && string(after) == "MATCHING" {
			return true
		}
		after, end = up[s:e], s
	}
	return false
}

var standInWords = wordSet("FAKE", "DUMMY", "MOCK", "MOCKED", "BOGUS", "INVALID", "WRONG", "NONMATCHING")

// hasHintWord reports whether one of name's words is AUTH, ACCESS or API
// (gitleaks' generic keywords that do not say secret alone).
func hasHintWord(name string, up []byte) bool {
	for end := len(name); end > 0; {
		s, e := lastWordAt(name, end)
		if e == s {
			break
		}
		switch string(up[s:e]) {
		case "AUTH", "ACCESS", "API":
			return true
		}
		end = s
	}
	return false
}

// wordIn reports whether w is one of list, in any case.
func wordIn(w string, list []string) bool {
	if w == "" {
		return false
	}
	for _, s := range list {
		if strings.EqualFold(w, s) {
			return true
		}
	}
	return false
}

// lastIndexFold is the index of the last occurrence of the upper-case
// ASCII word sub in s, in any case, without allocating; -1 when none.
func lastIndexFold(s, sub string) int {
	for i := len(s) - len(sub); i >= 0; i-- {
		if s[i]&^0x20 != sub[0] && s[i] != sub[0] {
			continue
		}
		j := 0
		for ; j < len(sub); j++ {
			c := s[i+j]
			if 'a' <= c && c <= 'z' {
				c -= 'a' - 'A'
			}
			if c != sub[j] {
				break
			}
		}
		if j == len(sub) {
			return i
		}
	}
	return -1
}
