package secrets

import (
	"slices"
	"sort"
	"strings"
)

// The credential shapes the Masker recognises without knowing the
// environment. The checklist is the default rule set of gitleaks (the
// well-known secret scanner): every rule whose secret has a literal
// prefix, or a literal anchor such as "://" or "-----BEGIN", is here,
// written for a single left-to-right scan instead of one regular
// expression per rule. Rules that gitleaks can only find by a keyword near
// a high-entropy string ("cohere … <40 chars>") are covered by the
// secret-name rules instead (secretName): NAME=value, "name": "value".
//
// A shape is masked whole ("[MASKED]"); where a part is not secret and
// helps to read the record (the scheme and user of a URL, the host of a
// webhook, the BEGIN and END lines of a private key, the keyword of an
// Authorization header) that part stays.

// charSet is a set of bytes.
type charSet [256]bool

func set(spec string) *charSet {
	var s charSet
	for i := 0; i < len(spec); i++ {
		if i+2 < len(spec) && spec[i+1] == '-' {
			for c := spec[i]; c <= spec[i+2]; c++ {
				s[c] = true
			}
			i += 2
			continue
		}
		s[spec[i]] = true
	}
	return &s
}

var (
	alnum    = set("A-Za-z0-9")
	word     = set("A-Za-z0-9_")
	wordDash = set("A-Za-z0-9_-")
	upperNum = set("A-Z0-9")
	hexLower = set("a-f0-9")
	hexAny   = set("a-fA-F0-9")
	letters  = set("A-Za-z")
	b64      = set("A-Za-z0-9+/=")
	b64url   = set("A-Za-z0-9_=-")
	tokenish = set("A-Za-z0-9_.=:/+~-")
	// gluedWord continues a word past a credential's body; '.', ':', '/'
	// and '=' end it (a sentence, a URL, a key=value list go on).
	gluedWord = set("A-Za-z0-9_+~-")
	slackBody = set("A-Za-z0-9.-")
	pathish   = set("A-Za-z0-9_/+@-")
	jwtBody   = set("A-Za-z0-9_.=/+-")
	azureHead = set("A-Za-z0-9_~.")
	azureBody = set("A-Za-z0-9_~.-")
)

// shape is a credential that starts with a literal prefix and continues
// with min..max bytes of body (max 0: no bound). A body running past max is
// a longer word, not the credential. keep bytes of the prefix stay visible.
type shape struct {
	prefix string
	body   *charSet
	min    int
	max    int
	keep   int
	// mid is a literal the body must hold (a JWT's ".ey").
	mid string
	// inWord: the shape is matched inside a word too ("id0ghp_…"), set
	// by buildIndex for a prefix of four or more bytes holding a
	// separator, distinctive enough; a short or all-letter one ("SK",
	// "AKIA", "sk-" in "task-…") would find credentials in plain words.
	inWord bool
}

// shapes; buildIndex orders those sharing a first byte longest prefix
// first.
var shapes = []shape{
	// Private keys and cloud.
	{prefix: "AKIA", body: upperNum, min: 16, max: 16},
	{prefix: "ASIA", body: upperNum, min: 16, max: 16},
	{prefix: "ABIA", body: upperNum, min: 16, max: 16},
	{prefix: "ACCA", body: upperNum, min: 16, max: 16},
	{prefix: "A3T", body: upperNum, min: 17, max: 17},
	{prefix: "AIza", body: wordDash, min: 35},                    // Google Cloud and Gemini API keys
	{prefix: "LTAI", body: alnum, min: 20, max: 20},              // Alibaba Cloud
	{prefix: "ABSK", body: b64, min: 100},                        // Amazon Bedrock
	{prefix: "AKCp", body: alnum, min: 69},                       // Artifactory
	{prefix: "AGE-SECRET-KEY-1", body: upperNum, min: 58},        // age
	{prefix: "ATATT3", body: b64url, min: 100},                   // Atlassian
	{prefix: "ATBB", body: b64url, min: 32},                      // Bitbucket app password
	{prefix: "ops_eyJ", body: b64, min: 100},                     // 1Password service account
	{prefix: "hvs.", body: wordDash, min: 24},                    // Vault service token
	{prefix: "hvb.", body: wordDash, min: 24},                    // Vault batch token
	{prefix: "dapi", body: hexLower, min: 32, max: 32},           // Databricks
	{prefix: "doo_v1_", body: hexLower, min: 64},                 // DigitalOcean
	{prefix: "dop_v1_", body: hexLower, min: 64},                 // DigitalOcean
	{prefix: "dor_v1_", body: hexLower, min: 64},                 // DigitalOcean
	{prefix: "dp.pt.", body: alnum, min: 40},                     // Doppler
	{prefix: "dt0c01.", body: set("A-Za-z0-9."), min: 80},        // Dynatrace
	{prefix: "dckr_pat_", body: wordDash, min: 20},               // Docker Hub
	{prefix: "sha256~", body: wordDash, min: 43},                 // OpenShift
	{prefix: "glc_", body: b64, min: 32},                         // Grafana Cloud
	{prefix: "glsa_", body: word, min: 32},                       // Grafana service account
	{prefix: "eyJrIjoi", body: b64, min: 70},                     // Grafana API key
	{prefix: "fo1_", body: wordDash, min: 43},                    // Fly.io
	{prefix: "fm1a_", body: b64, min: 100},                       // Fly.io
	{prefix: "fm1r_", body: b64, min: 100},                       // Fly.io
	{prefix: "fm2_", body: b64, min: 100},                        // Fly.io
	{prefix: "pul-", body: hexLower, min: 40},                    // Pulumi
	{prefix: "pnu_", body: alnum, min: 36},                       // Prefect
	{prefix: "pscale_tkn_", body: set("A-Za-z0-9_=.-"), min: 32}, // PlanetScale
	{prefix: "pscale_oauth_", body: set("A-Za-z0-9_=.-"), min: 32},
	{prefix: "pscale_pw_", body: set("A-Za-z0-9_=.-"), min: 32},
	{prefix: "PMAK-", body: set("a-fA-F0-9-"), min: 50},    // Postman
	{prefix: "sntrys_", body: b64url, min: 50},             // Sentry
	{prefix: "sntryu_", body: hexLower, min: 64},           // Sentry
	{prefix: "SG.", body: set("A-Za-z0-9_=.-"), min: 60},   // SendGrid
	{prefix: "xkeysib-", body: set("A-Za-z0-9-"), min: 64}, // Brevo
	{prefix: "shpat_", body: hexAny, min: 32},              // Shopify
	{prefix: "shpca_", body: hexAny, min: 32},
	{prefix: "shppa_", body: hexAny, min: 32},
	{prefix: "shpss_", body: hexAny, min: 32},
	{prefix: "lin_api_", body: alnum, min: 40}, // Linear
	{prefix: "ntn_", body: alnum, min: 40},     // Notion
	{prefix: "npm_", body: alnum, min: 36},     // npm
	{prefix: "pypi-AgEIcHlwaS5vcmc", body: wordDash, min: 50},
	{prefix: "rubygems_", body: hexLower, min: 48},
	{prefix: "CLOJARS_", body: alnum, min: 60},
	{prefix: "ico-", body: alnum, min: 32, max: 32}, // Infracost
	{prefix: "rdme_", body: alnum, min: 70},         // readme.com
	{prefix: "tk-us-", body: wordDash, min: 48},     // Scalingo
	{prefix: "fio-u-", body: b64url, min: 64},       // Frame.io
	{prefix: "nvapi-", body: wordDash, min: 40},     // NVIDIA
	{prefix: "EZAK", body: alnum, min: 54},          // EasyPost
	{prefix: "EZTK", body: alnum, min: 54},
	{prefix: "SK", body: hexAny, min: 32, max: 32}, // Twilio
	// Payment.
	{prefix: "sk_live_", body: alnum, min: 10}, // Stripe
	{prefix: "sk_test_", body: alnum, min: 10},
	{prefix: "sk_prod_", body: alnum, min: 10},
	{prefix: "rk_live_", body: alnum, min: 10},
	{prefix: "rk_test_", body: alnum, min: 10},
	{prefix: "rk_prod_", body: alnum, min: 10},
	{prefix: "whsec_", body: alnum, min: 24},
	{prefix: "sq0atp-", body: wordDash, min: 22}, // Square
	{prefix: "sq0csp-", body: wordDash, min: 22},
	{prefix: "EAAA", body: wordDash, min: 22, max: 60},
	{prefix: "shippo_live_", body: hexAny, min: 40},
	{prefix: "shippo_test_", body: hexAny, min: 40},
	{prefix: "FLWSECK_TEST-", body: alnum, min: 12}, // Flutterwave
	{prefix: "FLWSECK-", body: alnum, min: 12},
	{prefix: "duffel_live_", body: b64url, min: 43},
	{prefix: "duffel_test_", body: b64url, min: 43},
	// Version control.
	{prefix: "github_pat_", body: word, min: 20},
	{prefix: "ghp_", body: alnum, min: 20},
	{prefix: "gho_", body: alnum, min: 20},
	{prefix: "ghu_", body: alnum, min: 20},
	{prefix: "ghs_", body: alnum, min: 20},
	{prefix: "ghr_", body: alnum, min: 20},
	{prefix: "glpat-", body: set("A-Za-z0-9_.-"), min: 20}, // GitLab
	{prefix: "glptt-", body: hexLower, min: 40},
	{prefix: "glcbt-", body: wordDash, min: 20},
	{prefix: "gldt-", body: wordDash, min: 20},
	{prefix: "glrt-", body: set("A-Za-z0-9_.-"), min: 20},
	{prefix: "gloas-", body: wordDash, min: 64},
	{prefix: "glsoat-", body: wordDash, min: 20},
	{prefix: "glft-", body: wordDash, min: 20},
	{prefix: "glimt-", body: wordDash, min: 25},
	{prefix: "glagent-", body: wordDash, min: 50},
	{prefix: "glffct-", body: wordDash, min: 20},
	{prefix: "GR1348941", body: wordDash, min: 20},
	// Chat.
	{prefix: "xapp-", body: set("A-Za-z0-9-"), min: 10},
	{prefix: "xox", body: slackBody, min: 12},
	{prefix: "hooks.slack.com/", body: pathish, min: 20, keep: len("hooks.slack.com/")},
	{prefix: "discord.com/api/webhooks/", body: pathish, min: 20, keep: len("discord.com/api/webhooks/")},
	{prefix: "discordapp.com/api/webhooks/", body: pathish, min: 20, keep: len("discordapp.com/api/webhooks/")},
	{prefix: "webhook.office.com/webhookb2/", body: pathish, min: 20, keep: len("webhook.office.com/webhookb2/")},
	{prefix: "api.telegram.org/bot", body: set("A-Za-z0-9_:-"), min: 30, keep: len("api.telegram.org/bot")},
	// LLM providers. sk- covers OpenAI (sk-proj-, sk-svcacct-, sk-admin-),
	// Anthropic (sk-ant-api03-, sk-ant-admin01-), OpenRouter (sk-or-v1-)
	// and DeepSeek.
	{prefix: "sk-", body: wordDash, min: 16},
	{prefix: "hf_", body: letters, min: 30},      // Hugging Face
	{prefix: "api_org_", body: letters, min: 30}, // Hugging Face
	{prefix: "pplx-", body: alnum, min: 40},      // Perplexity
	{prefix: "gsk_", body: alnum, min: 40},       // Groq
	{prefix: "xai-", body: alnum, min: 50},       // xAI
	{prefix: "r8_", body: alnum, min: 30},        // Replicate
	// Tokens that carry their own structure.
	{prefix: "eyJ", body: jwtBody, min: 20, mid: ".ey"}, // JWT
}

// Anchors that are not a prefix at a word start: they are matched by hand
// in maskShapes.
const (
	pemBegin = "-----BEGIN"
	pemEnd   = "-----END"
)

// shapeIndex finds the rules that may start at a position without trying
// them all: a position is looked at only when its first two bytes are the
// first two bytes of some prefix (or an anchor of a hand-matched rule).
type shapeIndex struct {
	pairs   [1 << 16 / 64]uint64
	byFirst [256][]int // indexes into shapes
}

var index = buildIndex()

// tokenBytes are the bytes that may continue a credential token: every
// shape's body, a word glued to it, and the bodies of the hand-matched
// rules. valueBytes continue the value of an assignment. A LineMasker masks
// them after a forced cut inside a masked span (see LineMasker.Force).
var tokenBytes, valueBytes charSet

func buildIndex() *shapeIndex {
	x := &shapeIndex{}
	for _, cs := range []*charSet{gluedWord, tokenish, azureBody} {
		unionInto(&tokenBytes, cs)
	}
	for c := range valueBytes {
		valueBytes[c] = !valueEnd(byte(c))
	}
	for i, s := range shapes {
		unionInto(&tokenBytes, s.body)
		shapes[i].inWord = len(s.prefix) >= 4 && strings.ContainsAny(s.prefix, "_-.")
		x.addPair(s.prefix[0], s.prefix[1])
		x.byFirst[s.prefix[0]] = append(x.byFirst[s.prefix[0]], i)
	}
	for _, ks := range x.byFirst {
		// Longest prefix first, so the most specific rule wins.
		sort.SliceStable(ks, func(a, b int) bool { return len(shapes[ks[a]].prefix) > len(shapes[ks[b]].prefix) })
	}
	x.addPair('-', '-') // -----BEGIN … PRIVATE KEY-----
	x.addPair(':', '/') // scheme://user:password@host
	x.addPair('Q', '~') // Azure AD client secret: xxx8Q~…
	x.addPair('-', 'u') // curl -u user:password
	for _, w := range []string{"bearer", "authorization"} {
		for _, a := range []byte{w[0], w[0] - 32} {
			for _, b := range []byte{w[1], w[1] - 32} {
				x.addPair(a, b)
			}
		}
	}
	return x
}

func unionInto(dst, src *charSet) {
	for c, in := range src {
		dst[c] = dst[c] || in
	}
}

func (x *shapeIndex) addPair(a, b byte) {
	p := uint16(a)<<8 | uint16(b)
	x.pairs[p>>6] |= 1 << (p & 63)
}

func (x *shapeIndex) hasPair(a, b byte) bool {
	p := uint16(a)<<8 | uint16(b)
	return x.pairs[p>>6]&(1<<(p&63)) != 0
}

// span is a part of a string to replace by Masked. cont is the set of
// bytes that would have extended it had the string gone on (nil:
// tokenBytes); a LineMasker masks them after a forced cut.
type span struct {
	start, end int
	cont       *charSet
}

// scan is what one maskShapes call learned that keeps it linear on
// hostile input: where rules that look far ahead already failed.
type scan struct {
	// jwtBad: no JWT starts before this offset (a run without ".ey").
	jwtBad int
	// curl is where "curl" first occurs (-1: nowhere, -2: not looked).
	curl int
	// noQuote[q]: no closing quote q after the first failed search.
	noQuote [2]bool
	// No value ends in [termFrom, term): term is the end of every value
	// starting there.
	termFrom, term int
}

// valueEndFrom returns where an unquoted value starting at p ends. Values
// starting inside the last one found share its end, so a text of many
// separators and no value end is scanned once.
func (sc *scan) valueEndFrom(s string, p int) int {
	if sc.termFrom <= p && p <= sc.term {
		return sc.term
	}
	e := p
	for e < len(s) && !valueEnd(s[e]) {
		e++
	}
	sc.termFrom, sc.term = p, e
	return e
}

// maskShapes masks every credential shape and secret assignment in s.
func maskShapes(s string) string {
	s, _ = maskShapesOpen(s)
	return s
}

// maskShapesOpen is maskShapes that also tells, when the last masked span
// runs to the end of s, which bytes would have extended it (nil when none
// does).
func maskShapesOpen(s string) (string, *charSet) {
	spans := shapeSpans(s)
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

// shapeSpans returns the spans of s that maskShapes replaces, in order and
// not overlapping.
func shapeSpans(s string) []span {
	var spans []span
	sc := scan{curl: -2, term: -1}
	for i := 0; i < len(s); {
		c := s[i]
		if c == '=' || c == ':' {
			if sp, ok := assignment(&sc, s, i); ok {
				spans = append(spans, sp)
				i = sp.end
				continue
			}
		}
		if i+1 >= len(s) || !index.hasPair(c, s[i+1]) {
			i++
			continue
		}
		if sp, ok := matchAt(&sc, s, i); ok {
			if sp.end > sp.start {
				spans = append(spans, sp)
			}
			i = max(sp.end, i+1)
			continue
		}
		i++
	}
	// A rule that looks back (the Azure secret) may start inside the span
	// before it.
	for k := 1; k < len(spans); k++ {
		spans[k].start = max(spans[k].start, spans[k-1].end)
	}
	return spans
}

// matchAt tries every rule that may start at i.
func matchAt(sc *scan, s string, i int) (span, bool) {
	c := s[i]
	wordStart := i == 0 || !alnum[s[i-1]]
	for _, k := range index.byFirst[c] {
		sh := &shapes[k]
		if !wordStart && !sh.inWord || sh.mid != "" && i < sc.jwtBad {
			continue
		}
		sp, ok, runEnd := sh.match(s, i)
		if ok {
			return sp, true
		}
		if sh.mid != "" && runEnd > sc.jwtBad {
			// No ".ey" up to runEnd: a JWT starting inside the run
			// ends there too and fails the same way.
			sc.jwtBad = runEnd
		}
	}
	switch {
	case c == '-' && strings.HasPrefix(s[i:], pemBegin):
		return privateKey(s, i)
	case c == ':' && strings.HasPrefix(s[i:], "://"):
		return urlPassword(s, i)
	case c == 'Q' && s[i+1] == '~':
		return azureSecret(s, i)
	case c == '-' && s[i+1] == 'u':
		if sc.curl == -2 {
			sc.curl = strings.Index(s, "curl")
		}
		if sc.curl < 0 || sc.curl > i {
			return span{}, false
		}
		return curlUser(s, i)
	case wordStart && (c|0x20 == 'b'):
		return bearer(s, i)
	case wordStart && (c|0x20 == 'a'):
		return authorization(s, i)
	}
	return span{}, false
}

// match tries the shape at i. runEnd is where the body run ended, also
// when the shape did not match.
func (sh *shape) match(s string, i int) (sp span, ok bool, runEnd int) {
	if !strings.HasPrefix(s[i:], sh.prefix) {
		return span{}, false, i
	}
	j := i + len(sh.prefix)
	n := 0
	for j+n < len(s) && sh.body[s[j+n]] && (sh.max == 0 || n <= sh.max) {
		n++
	}
	if n < sh.min || sh.max > 0 && n > sh.max {
		return span{}, false, j + n
	}
	if sh.mid != "" && !strings.Contains(s[j:j+n], sh.mid) {
		return span{}, false, j + n
	}
	// A word glued to the credential ("ghp_…ghp_…", two tokens pasted
	// together) is masked to its end: the body's charset stops at the
	// seam and would leave the second token's body visible.
	end := j + n
	for end < len(s) && gluedWord[s[end]] {
		end++
	}
	return span{i + sh.keep, end, nil}, true, j + n
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
			if colon < 0 || k == colon+1 {
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
	if n < 31 || n > 34 {
		return span{}, false
	}
	return span{start, i + 2 + n, nil}, true
}

// curlUser masks the password of curl's -u user:password (or --user).
func curlUser(s string, i int) (span, bool) {
	if i == 0 || s[i-1] != ' ' && s[i-1] != '\t' && s[i-1] != '-' {
		return span{}, false
	}
	j := i + 2
	if i > 0 && s[i-1] == '-' {
		if !strings.HasPrefix(s[i+1:], "user") {
			return span{}, false
		}
		j = i + 1 + len("user")
	}
	if j >= len(s) || s[j] != ' ' && s[j] != '=' {
		return span{}, false
	}
	j++
	quote := byte(0)
	if j < len(s) && (s[j] == '\'' || s[j] == '"') {
		quote = s[j]
		j++
	}
	colon := -1
	k := j
	for ; k < len(s) && k-j < maxValue; k++ {
		c := s[k]
		if quote != 0 && c == quote || quote == 0 && (c == ' ' || c == '\t' || c == '\n') {
			break
		}
		if c == ':' && colon < 0 {
			colon = k
		}
	}
	if colon <= j || k-colon-1 < 3 || allDigits(s[colon+1:k]) {
		return span{}, false
	}
	return span{colon + 1, k, &valueBytes}, true
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
	if n < 12 {
		return span{}, false
	}
	return span{j, j + n, nil}, true
}

// authSchemes are the schemes of an Authorization value that the
// credential follows after a space.
var authSchemes = []string{"basic", "token", "apikey", "key"}

// authorization masks the credential of an Authorization header or
// field: "Authorization: Basic <b64>", "authorization=token <t>", or a bare
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
	for j < len(s) && (s[j] == ' ' || s[j] == '"' || s[j] == '\'') {
		j++
	}
	k := j
	for k < len(s) && letters[s[k]] {
		k++
	}
	scheme := strings.ToLower(s[j:k])
	if scheme == "bearer" {
		return span{}, false
	}
	if slices.Contains(authSchemes, scheme) {
		if k >= len(s) || s[k] != ' ' {
			return span{}, false
		}
		j = k + 1
	}
	n := 0
	for j+n < len(s) && tokenish[s[j+n]] {
		n++
	}
	if n < 8 {
		return span{}, false
	}
	return span{j, j + n, nil}, true
}

// maxValue bounds the value of an assignment (or curl -u) the masker
// looks at: a longer one is data, not a credential, and the bound keeps a
// scan of hostile text linear.
const maxValue = 16 << 10

// nameBytes are the bytes of a variable, key or flag name.
var nameBytes = set("A-Za-z0-9_.-")

// assignment masks the value of a secret-named assignment at the
// separator i ('=' or ':'): NAME=value (an environment dump, a .env file, a
// query string, --password=value), "name": "value" (JSON, YAML), name =
// "value" (code). The name must say secret (secretName). Unquoted values
// are taken only where code is unlikely: after an all-capitals name, or
// with no space around the separator. Values that are references
// ($VAR, ${{ … }}, {{ … }}, <placeholder>) or plain numbers are left.
func assignment(sc *scan, s string, i int) (span, bool) {
	if s[i] == ':' && (i+1 < len(s) && (s[i+1] == '/' || s[i+1] == ':') || i > 0 && s[i-1] == ':') {
		return span{}, false
	}
	// The name, back from the separator, past one closing quote and
	// spaces.
	k := i
	spaced := false
	for k > 0 && s[k-1] == ' ' {
		k--
		spaced = true
	}
	if k > 0 && (s[k-1] == '"' || s[k-1] == '\'') {
		k--
	}
	end := k
	for k > 0 && nameBytes[s[k-1]] {
		k--
	}
	name := s[k:end]
	if len(name) < 3 || !secretName(strings.TrimLeft(name, "-.")) {
		return span{}, false
	}
	// The value.
	j := i + 1
	if j < len(s) && s[j] == '=' { // :=
		j++
	}
	for j < len(s) && s[j] == ' ' {
		j++
		spaced = true
	}
	var v0, v1 int
	if j < len(s) && (s[j] == '"' || s[j] == '\'') {
		q := s[j]
		qi := 0
		if q == '\'' {
			qi = 1
		}
		if sc.noQuote[qi] {
			return span{}, false
		}
		v0 = j + 1
		v1 = strings.IndexByte(s[v0:], q)
		if v1 < 0 {
			// No later value quoted so closes either.
			sc.noQuote[qi] = true
			return span{}, false
		}
		v1 += v0
	} else {
		if spaced && !upperName(name) {
			return span{}, false
		}
		v0 = j
		v1 = sc.valueEndFrom(s, v0)
	}
	if v1-v0 >= maxValue {
		return span{}, false
	}
	if !maskableValue(s[v0:v1]) {
		return span{}, false
	}
	return span{v0, v1, &valueBytes}, true
}

// maskableValue reports whether the value of a secret-named field is worth
// masking: not too short to mean anything, not a reference to something
// else ($VAR, ${{ … }}, {{ … }}, <placeholder>), not a plain number.
func maskableValue(v string) bool {
	return len(v) >= 6 && !isReference(v) && !allDigits(v)
}

func valueEnd(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\r', '"', '\'', ';', '&', ',', ')', ']', '}', '<', '>', '`', '(':
		return true
	}
	return false
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

func isReference(v string) bool {
	switch v[0] {
	case '$', '{', '<', '%', '@':
		return true
	case '[':
		return strings.HasPrefix(v, Masked[:len(Masked)-1])
	}
	return strings.Trim(v, "*xX.") == ""
}

func allDigits(v string) bool {
	for i := 0; i < len(v); i++ {
		if v[i] < '0' || v[i] > '9' {
			return false
		}
	}
	return true
}

// secretName reports whether the name of an environment variable, a
// workflow input, a JSON key or a flag says its value is secret: it holds
// PASSWORD, PASSWD, PASSPHRASE, SECRET, TOKEN, CREDENTIAL, APIKEY,
// API_KEY, PRIVATE_KEY or ACCESS_KEY (in any case, camelCase included), or
// its last word is KEY, or PAT, PASS, PWD or PW after another word
// (GITHUB_PAT, DB_PASS, MYSQL_PWD, deployKey; not PWD, the working
// directory).
func secretName(name string) bool {
	if len(name) > 128 {
		name = name[len(name)-128:]
	}
	for _, s := range secretWords {
		if containsFold(name, s) {
			return true
		}
	}
	w := lastWord(name)
	if strings.EqualFold(w, "KEY") {
		return true
	}
	// PWD alone is the shell's working directory, PAT or PASS alone rarely
	// a credential: these words say secret after another word only
	// (GITHUB_PAT, DB_PASS, MYSQL_PWD).
	if len(w) == len(name) {
		return false
	}
	for _, s := range [...]string{"PAT", "PASS", "PWD", "PW"} {
		if strings.EqualFold(w, s) {
			return true
		}
	}
	return false
}

var secretWords = [...]string{"PASSWORD", "PASSWD", "PASSPHRASE", "SECRET", "TOKEN", "CREDENTIAL",
	"APIKEY", "API_KEY", "API-KEY", "PRIVATE_KEY", "PRIVATEKEY", "ACCESS_KEY", "ACCESSKEY"}

// containsFold reports whether s holds the upper-case ASCII word sub in
// any case, without allocating.
func containsFold(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i]&^0x20 != sub[0] {
			continue
		}
		j := 1
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
			return true
		}
	}
	return false
}

// lastWord is the last word of a name: after the last '_', '-' or '.', or
// the last capitalised word of camelCase.
func lastWord(name string) string {
	end := len(name)
	for end > 0 && (name[end-1] == '_' || name[end-1] == '-' || name[end-1] == '.') {
		end--
	}
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
	return name[i:end]
}

// SafeCut returns the last index i of b, i >= from and i > 0, that starts
// a word after whitespace where no credential the masker knows can
// straddle the cut, or 0 when there is none: masking b[:i] and b[i:]
// apart masks what masking b whole would. A display that must show a
// long line before its end cuts it there.
//
// Credential shapes contain no whitespace; the ones that span it are
// introduced by a keyword or a separator: "Bearer <t>", "Authorization:
// Basic <b64>", "NAME = value", "\"name\": \"value\"", "curl -u
// user:pass". So a cut is refused after a word ending in such a keyword or
// in ':' or '=', and before a word starting with ':' or '='.
func SafeCut(b []byte, from int) int {
	for i := len(b) - 1; i > 0 && i >= from; i-- {
		if isCutSpace(b[i]) || !isCutSpace(b[i-1]) || b[i] == ':' || b[i] == '=' {
			continue
		}
		j := i - 1
		for j > 0 && isCutSpace(b[j-1]) {
			j--
		}
		if j > 0 && !introducesSecret(b[:j]) {
			return i
		}
	}
	return 0
}

func isCutSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'
}

// introducesSecret reports whether the text before a run of whitespace
// ends in something whose credential follows that whitespace.
func introducesSecret[T string | []byte](b T) bool {
	switch b[len(b)-1] {
	case ':', '=':
		return true
	}
	if hasSuffixFold(b, "bearer") || hasSuffixFold(b, "-u") {
		return true
	}
	for _, kw := range authSchemes {
		if hasSuffixFold(b, kw) {
			return true
		}
	}
	return false
}

func hasSuffixFold[T string | []byte](b T, suffix string) bool {
	return len(b) >= len(suffix) && strings.EqualFold(string(b[len(b)-len(suffix):]), suffix)
}
