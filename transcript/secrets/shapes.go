package secrets

import (
	"sort"
	"strings"
)

// The credential shapes the Masker recognises without knowing the
// environment. The checklist is the default rule set of gitleaks (the
// well-known secret scanner): every rule whose secret has a literal
// prefix is here, with gitleaks' lengths and boundaries, written for a
// single left-to-right scan instead of one regular expression per rule.
// Rules anchored elsewhere (a private key's BEGIN line, a URL's "://", a
// JWT's ".ey") are matched by hand (anchors.go); rules that gitleaks can
// only find by a keyword near a random-looking string ("cohere … <40
// chars>") are the assignment rules (assign.go, names.go).
//
// A shape is masked whole ("[MASKED]"); where a part is not secret and
// helps to read the record (the host of a webhook, the keyword of an
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
	alnum     = set("A-Za-z0-9")
	alnumDot  = set("A-Za-z0-9.")
	digits    = set("0-9")
	word      = set("A-Za-z0-9_")
	wordDash  = set("A-Za-z0-9_-")
	alnumDash = set("A-Za-z0-9-")
	upperNum  = set("A-Z0-9")
	upperDash = set("A-Z0-9-")
	hexLower  = set("a-f0-9")
	hexDash   = set("a-f0-9-")
	hexAny    = set("a-fA-F0-9")
	letters   = set("A-Za-z")
	lowerNum  = set("a-z0-9")
	b64       = set("A-Za-z0-9+/=")
	b64url    = set("A-Za-z0-9_=-")
	b64any    = set("A-Za-z0-9+/=_-")
	wordDot   = set("A-Za-z0-9_=.-")
	tokenish  = set("A-Za-z0-9_.=:/+~@-")
	// gluedWord continues a word past a credential's body; '.', ':', '/'
	// and '=' end it (a sentence, a URL, a key=value list go on).
	gluedWord = set("A-Za-z0-9_+~-")
	pathish   = set("A-Za-z0-9_/+@-")
	azureHead = set("A-Za-z0-9_~.")
	azureBody = set("A-Za-z0-9_~.-")
)

// shape is a credential that starts with a literal prefix and continues
// with min..max bytes of body (max 0: no bound). A body running past max
// is a longer word, not the credential.
type shape struct {
	prefix string
	body   *charSet
	min    int
	max    int
	// keep bytes of the prefix stay visible.
	keep int
	// lead: the body starts with leadMin bytes of lead (Slack's xoxb- is
	// followed by a team number).
	lead    *charSet
	leadMin int
	// mids: the body holds one of these (a Sentry token's region_url).
	mids []string
	// bound: the body must end the token, as gitleaks' suffix
	// (?:[\x60'"\s;]|\\[nr]|$) says: at the end of the text, whitespace, a
	// quote or backquote, ';', or an escaped \n or \r. Without it, a
	// word glued to the body is masked with it.
	bound bool
	// anyBody: a body of few distinct bytes is not taken for a
	// placeholder (gitleaks asks no entropy of the rule, and its prefix
	// says enough).
	anyBody bool
	// check, when set, says whether a body is one (a structure the
	// charset cannot say).
	check func(body string) bool
	// inWord: the shape is matched inside a word too ("id0ghp_…"), set
	// by buildIndex for a prefix of four or more bytes holding '_' or '.'
	// (distinctive enough); a short, all-letter or dashed one ("SK",
	// "AKIA", "pul-" in "vipul-…") would find credentials in plain words.
	inWord bool
	// atWord: matched at a word's start only, though the prefix would
	// make it inWord: Stripe's sk_test_ ends words (task_test_,
	// disk_live_), and gitleaks' rule asks a word boundary.
	atWord bool
}

// shapes; buildIndex orders those sharing a first byte longest prefix
// first.
var shapes = []shape{
	// Cloud.
	{prefix: "AKIA", body: upperNum, min: 16, max: 16},
	{prefix: "ASIA", body: upperNum, min: 16, max: 16},
	{prefix: "ABIA", body: upperNum, min: 16, max: 16},
	{prefix: "ACCA", body: upperNum, min: 16, max: 16},
	{prefix: "A3T", body: upperNum, min: 17, max: 17},
	{prefix: "AIza", body: wordDash, min: 35, max: 35, bound: true},                            // Google Cloud and Gemini
	{prefix: "LTAI", body: alnum, min: 20, max: 20, bound: true},                               // Alibaba Cloud
	{prefix: "ABSK", body: b64, min: 109, max: 271, bound: true},                               // Amazon Bedrock
	{prefix: "bedrock-api-key-YmVkcm9jay5hbWF6b25hd3MuY29t", body: b64},                        // Amazon Bedrock, short-lived
	{prefix: "AKCp", body: alnum, min: 69, max: 69},                                            // Artifactory
	{prefix: "cmVmd", body: alnum, min: 59, max: 59},                                           // Artifactory reference token
	{prefix: "AGE-SECRET-KEY-1", body: upperNum, min: 58, anyBody: true},                       // age
	{prefix: "A3-", body: upperDash, min: 36, max: 37},                                         // 1Password secret key
	{prefix: "ops_eyJ", body: b64, min: 250},                                                   // 1Password service account
	{prefix: "ATATT3", body: b64url, min: 100},                                                 // Atlassian
	{prefix: "ATBB", body: b64url, min: 32},                                                    // Bitbucket app password
	{prefix: "hvs.", body: wordDash, min: 90, max: 120, bound: true},                           // Vault service token
	{prefix: "hvb.", body: wordDash, min: 138, max: 300, bound: true},                          // Vault batch token
	{prefix: "dapi", body: hexLower, min: 32, max: 32, bound: true},                            // Databricks
	{prefix: "doo_v1_", body: hexLower, min: 64, max: 64, bound: true},                         // DigitalOcean
	{prefix: "dop_v1_", body: hexLower, min: 64, max: 64, bound: true},                         // DigitalOcean
	{prefix: "dor_v1_", body: hexLower, min: 64, max: 64, bound: true},                         // DigitalOcean
	{prefix: "dp.pt.", body: alnum, min: 43, max: 43},                                          // Doppler
	{prefix: "dt0c01.", body: alnumDot, min: 89, max: 89},                                      // Dynatrace
	{prefix: "dckr_pat_", body: wordDash, min: 20},                                             // Docker Hub
	{prefix: "sha256~", body: wordDash, min: 43, max: 43},                                      // OpenShift
	{prefix: "glc_", body: b64, min: 32, max: 403, bound: true},                                // Grafana Cloud
	{prefix: "glsa_", body: word, min: 41, max: 41, bound: true},                               // Grafana service account
	{prefix: "eyJrIjoi", body: b64, min: 70, max: 403, bound: true},                            // Grafana API key
	{prefix: "fo1_", body: wordDash, min: 43, max: 43, bound: true},                            // Fly.io
	{prefix: "fm1a_", body: b64, min: 100, bound: true},                                        // Fly.io
	{prefix: "fm1r_", body: b64, min: 100, bound: true},                                        // Fly.io
	{prefix: "fm2_", body: b64, min: 100, bound: true},                                         // Fly.io
	{prefix: "pul-", body: hexLower, min: 40, max: 40, bound: true},                            // Pulumi
	{prefix: "pnu_", body: alnum, min: 36, max: 36, bound: true},                               // Prefect
	{prefix: "pscale_tkn_", body: wordDot, min: 32, max: 64, bound: true},                      // PlanetScale
	{prefix: "pscale_oauth_", body: wordDot, min: 32, max: 64, bound: true},                    // PlanetScale
	{prefix: "pscale_pw_", body: wordDot, min: 32, max: 64, bound: true},                       // PlanetScale
	{prefix: "PMAK-", body: set("a-fA-F0-9-"), min: 59, max: 59, bound: true},                  // Postman
	{prefix: "sntrys_eyJpYXQiO", body: b64any, min: 63, mids: sentryRegion, check: sentryBody}, // Sentry organization token
	{prefix: "sntryu_", body: hexLower, min: 64, max: 64, bound: true},                         // Sentry user token
	{prefix: "SG.", body: wordDot, min: 66, max: 66, bound: true},                              // SendGrid
	{prefix: "xkeysib-", body: alnumDash, min: 81, max: 81, bound: true},                       // Brevo
	{prefix: "shpat_", body: hexAny, min: 32, max: 32},                                         // Shopify
	{prefix: "shpca_", body: hexAny, min: 32, max: 32},                                         // Shopify
	{prefix: "shppa_", body: hexAny, min: 32, max: 32},                                         // Shopify
	{prefix: "shpss_", body: hexAny, min: 32, max: 32},                                         // Shopify
	{prefix: "lin_api_", body: alnum, min: 40, max: 40},                                        // Linear
	{prefix: "ntn_", body: alnum, min: 46, max: 46, lead: digits, leadMin: 11, bound: true},    // Notion
	{prefix: "npm_", body: alnum, min: 36, max: 36, bound: true},                               // npm
	{prefix: "pypi-AgEIcHlwaS5vcmc", body: wordDash, min: 50, max: 1000},                       // PyPI
	{prefix: "rubygems_", body: hexLower, min: 48, max: 48, bound: true},                       // RubyGems
	{prefix: "CLOJARS_", body: alnum, min: 60, max: 60},                                        // Clojars
	{prefix: "ico-", body: alnum, min: 32, max: 32, bound: true},                               // Infracost
	{prefix: "rdme_", body: lowerNum, min: 70, max: 70, bound: true},                           // readme.com
	{prefix: "tk-us-", body: wordDash, min: 48, max: 48, bound: true},                          // Scalingo
	{prefix: "fio-u-", body: b64url, min: 64, max: 64},                                         // Frame.io
	{prefix: "nvapi-", body: wordDash, min: 40},                                                // NVIDIA
	{prefix: "EZAK", body: alnum, min: 54, max: 54},                                            // EasyPost
	{prefix: "EZTK", body: alnum, min: 54, max: 54},                                            // EasyPost
	{prefix: "SK", body: hexAny, min: 32, max: 32},                                             // Twilio
	{prefix: "p8e-", body: alnum, min: 32, max: 32, bound: true},                               // Adobe
	{prefix: "4b1d", body: alnum, min: 38, max: 38},                                            // ClickHouse Cloud
	{prefix: "v1.0-", body: hexDash, min: 171, max: 171, bound: true},                          // Cloudflare Origin CA
	{prefix: "dnkey-", body: b64url, min: 79, max: 79, bound: true},                            // Defined Networking
	{prefix: "sl.", body: b64url, min: 135, max: 135, bound: true},                             // Dropbox short-lived
	{prefix: "_gitlab_session=", body: lowerNum, min: 32, max: 32, keep: len("_gitlab_session=")},
	{prefix: "pat.", body: wordDot, min: 68, max: 68, mids: dot},                  // Harness
	{prefix: "sat.", body: wordDot, min: 68, max: 68, mids: dot},                  // Harness
	{prefix: "pat", body: alnumDot, min: 79, max: 79, mids: dot},                  // Airtable
	{prefix: "HRKU-AA", body: wordDash, min: 58, max: 58, bound: true},            // Heroku
	{prefix: "s-s4t2ud-", body: hexLower, min: 64, max: 64, bound: true},          // 42 Intra
	{prefix: "s-s4t2af-", body: hexLower, min: 64, max: 64, bound: true},          // 42 Intra
	{prefix: "NRJS-", body: hexLower, min: 19, max: 19, bound: true},              // New Relic
	{prefix: "NRII-", body: set("a-z0-9-"), min: 32, max: 32, bound: true},        // New Relic
	{prefix: "NRAK-", body: alnum, min: 27, max: 27, bound: true},                 // New Relic
	{prefix: "API-", body: upperNum, min: 26, max: 26, bound: true},               // Octopus Deploy
	{prefix: "access-sandbox-", body: hexDash, min: 36, max: 36, bound: true},     // Plaid
	{prefix: "access-development-", body: hexDash, min: 36, max: 36, bound: true}, // Plaid
	{prefix: "access-production-", body: hexDash, min: 36, max: 36, bound: true},  // Plaid
	{prefix: "sm_aat_", body: alnum, min: 16, max: 16, bound: true},               // SettleMint
	{prefix: "sm_pat_", body: alnum, min: 16, max: 16, bound: true},               // SettleMint
	{prefix: "sm_sat_", body: alnum, min: 16, max: 16, bound: true},               // SettleMint
	{prefix: "tfp_", body: wordDot, min: 59, max: 59, bound: true},                // Typeform
	{prefix: "AQVN", body: wordDash, min: 35, max: 38, bound: true},               // Yandex
	{prefix: "sgp_local_", body: hexAny, min: 40, max: 40, bound: true},           // Sourcegraph
	{prefix: "sgp_", body: set("a-fA-F0-9_"), min: 40, max: 57, bound: true, check: sourcegraphBody},
	{prefix: "squ_", body: alnum, min: 40, max: 40, bound: true},                           // SonarQube
	{prefix: "sqp_", body: alnum, min: 40, max: 40, bound: true},                           // SonarQube
	{prefix: "sqa_", body: alnum, min: 40, max: 40, bound: true},                           // SonarQube
	{prefix: "ZXlK", body: b64any, min: 60, bound: true},                                   // a JWT, base64-encoded
	{prefix: "sc_", body: authressBody, min: 50, max: 200, mids: authressAcc, bound: true}, // Authress
	{prefix: "ext_", body: authressBody, min: 50, max: 200, mids: authressAcc, bound: true},
	{prefix: "scauth_", body: authressBody, min: 50, max: 200, mids: authressAcc, bound: true},
	{prefix: "authress_", body: authressBody, min: 50, max: 200, mids: authressAcc, bound: true},
	// Payment.
	{prefix: "sk_live_", body: alnum, min: 10, max: 99, bound: true, atWord: true}, // Stripe
	{prefix: "sk_test_", body: alnum, min: 10, max: 99, bound: true, atWord: true},
	{prefix: "sk_prod_", body: alnum, min: 10, max: 99, bound: true, atWord: true},
	{prefix: "rk_live_", body: alnum, min: 10, max: 99, bound: true, atWord: true},
	{prefix: "rk_test_", body: alnum, min: 10, max: 99, bound: true, atWord: true},
	{prefix: "rk_prod_", body: alnum, min: 10, max: 99, bound: true, atWord: true},
	{prefix: "whsec_", body: alnum, min: 24},
	{prefix: "sq0atp-", body: wordDash, min: 22, max: 60, bound: true}, // Square
	{prefix: "sq0csp-", body: wordDash, min: 22, max: 60, bound: true},
	{prefix: "EAAA", body: wordDash, min: 22, max: 60, bound: true},
	{prefix: "EAAM", body: alnum, min: 100, bound: true}, // Facebook page token
	{prefix: "EAAC", body: alnum, min: 100, bound: true},
	{prefix: "shippo_live_", body: hexAny, min: 40, max: 40, bound: true},
	{prefix: "shippo_test_", body: hexAny, min: 40, max: 40, bound: true},
	{prefix: "FLWSECK_TEST-", body: alnumDash, min: 12}, // Flutterwave
	{prefix: "FLWSECK-", body: alnumDash, min: 12},
	{prefix: "FLWPUBK_TEST-", body: alnumDash, min: 32},
	{prefix: "duffel_live_", body: b64url, min: 43, max: 43},
	{prefix: "duffel_test_", body: b64url, min: 43, max: 43},
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
	// Chat. Slack's tokens start with numbers (a team, a user).
	{prefix: "xapp-", body: alnumDash, min: 20, lead: digits, leadMin: 1},
	{prefix: "xoxb-", body: alnumDash, min: 20, lead: digits, leadMin: 8},
	{prefix: "xoxp-", body: alnumDash, min: 40, lead: digits, leadMin: 10},
	{prefix: "xoxe-", body: alnumDash, min: 40, lead: digits, leadMin: 1},
	{prefix: "xoxe.xoxb-", body: alnumDash, min: 160, lead: digits, leadMin: 1},
	{prefix: "xoxe.xoxp-", body: alnumDash, min: 160, lead: digits, leadMin: 1},
	{prefix: "xoxo-", body: alnumDash, min: 12, lead: digits, leadMin: 1},
	{prefix: "xoxs-", body: alnumDash, min: 12, lead: digits, leadMin: 1},
	{prefix: "xoxa-", body: alnumDash, min: 8, max: 50},
	{prefix: "xoxr-", body: alnumDash, min: 8, max: 50},
	{prefix: "hooks.slack.com/", body: pathish, min: 20, keep: len("hooks.slack.com/")},
	{prefix: "discord.com/api/webhooks/", body: pathish, min: 20, keep: len("discord.com/api/webhooks/")},
	{prefix: "discordapp.com/api/webhooks/", body: pathish, min: 20, keep: len("discordapp.com/api/webhooks/")},
	{prefix: "webhook.office.com/webhookb2/", body: set("A-Za-z0-9_/+@-"), min: 20, keep: len("webhook.office.com/webhookb2/")},
	{prefix: "api.telegram.org/bot", body: set("A-Za-z0-9_:-"), min: 30, keep: len("api.telegram.org/bot")},
	// LLM providers. sk- covers OpenAI (sk-proj-, sk-svcacct-, sk-admin-),
	// Anthropic (sk-ant-api03-, sk-ant-admin01-), OpenRouter (sk-or-v1-)
	// and DeepSeek.
	{prefix: "sk-", body: wordDash, min: 16},
	{prefix: "hf_", body: letters, min: 34, max: 34, bound: true},      // Hugging Face
	{prefix: "api_org_", body: letters, min: 34, max: 34, bound: true}, // Hugging Face
	{prefix: "pplx-", body: alnum, min: 48, max: 48},                   // Perplexity
	{prefix: "gsk_", body: alnum, min: 40},                             // Groq
	{prefix: "xai-", body: alnum, min: 50},                             // xAI
	{prefix: "r8_", body: alnum, min: 30},                              // Replicate
}

// sourcegraphBody: 40 hex digits, after 16 more and '_' or not, random.
func sourcegraphBody(b string) bool {
	u := strings.IndexByte(b, '_')
	return (len(b) == 40 && u < 0 || len(b) == 57 && u == 16 && !strings.Contains(b[17:], "_")) && random(b)
}

// sentryBody: base64 JSON, '_' and a 43-byte signature.
func sentryBody(b string) bool {
	u := strings.LastIndexByte(b, '_')
	return u >= 0 && len(b)-u-1 == 43 && !strings.ContainsAny(b[u+1:], "_-=")
}

var (
	authressBody = set("A-Za-z0-9._+/=-")
	authressAcc  = []string{".acc_", ".acc-"}
	dot          = []string{"."}
	sentryRegion = []string{"LCJyZWdpb25fdXJs", "InJlZ2lvbl91cmwi", "cmVnaW9uX3VybCI6"}
)

// shapeIndex finds the rules that may start at a position without trying
// them all: a position is looked at only when its first two bytes are the
// first two bytes of some prefix (or an anchor of a hand-matched rule),
// and then only the shapes whose prefix starts with them are tried.
type shapeIndex struct {
	pairs   [1 << 16 / 64]uint64
	byFirst [256][]int // indexes into shapes, longest prefix first
	// byPair[pairAt[p]:pairAt[p+1]] are the shapes whose prefix starts
	// with the pair p, longest prefix first.
	pairAt [1<<16 + 1]uint16
	byPair []uint8
}

// pairShapes returns the shapes whose prefix starts with a and b.
func (x *shapeIndex) pairShapes(a, b byte) []uint8 {
	p := int(a)<<8 | int(b)
	return x.byPair[x.pairAt[p]:x.pairAt[p+1]]
}

var index = buildIndex()

// tokenBytes are the bytes that may continue a credential token: every
// shape's body, a word glued to it, and the bodies of the hand-matched
// rules. valueBytes continue the value of an assignment. A LineMasker masks
// them after a forced cut inside a masked span (see LineMasker.Force).
var tokenBytes, valueBytes charSet

func buildIndex() *shapeIndex {
	x := &shapeIndex{}
	for _, cs := range []*charSet{gluedWord, tokenish, azureBody, jwtBody} {
		unionInto(&tokenBytes, cs)
	}
	for c := range valueBytes {
		valueBytes[c] = !valueEnd(byte(c))
	}
	for i, s := range shapes {
		unionInto(&tokenBytes, s.body)
		shapes[i].inWord = !s.atWord && len(s.prefix) >= 4 && strings.ContainsAny(s.prefix, "_.")
		x.addPair(s.prefix[0], s.prefix[1])
		x.byFirst[s.prefix[0]] = append(x.byFirst[s.prefix[0]], i)
	}
	for _, ks := range x.byFirst {
		// Longest prefix first, so the most specific rule wins.
		sort.SliceStable(ks, func(a, b int) bool { return len(shapes[ks[a]].prefix) > len(shapes[ks[b]].prefix) })
	}
	if len(shapes) > 256 {
		panic("secrets: more shapes than byPair can index")
	}
	var count [1 << 16]uint16
	for _, ks := range x.byFirst {
		for _, k := range ks {
			count[int(shapes[k].prefix[0])<<8|int(shapes[k].prefix[1])]++
		}
	}
	for p := range count {
		x.pairAt[p+1] = x.pairAt[p] + count[p]
	}
	x.byPair = make([]uint8, len(shapes))
	next := x.pairAt
	for _, ks := range x.byFirst {
		for _, k := range ks { // in byFirst's order: longest prefix first
			p := int(shapes[k].prefix[0])<<8 | int(shapes[k].prefix[1])
			x.byPair[next[p]] = uint8(k)
			next[p]++
		}
	}
	for _, p := range anchorPairs {
		x.addPair(p[0], p[1])
	}
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
	body := s[j : j+n]
	for k := 0; k < sh.leadMin; k++ {
		if !sh.lead[body[k]] {
			return span{}, false, j + n
		}
	}
	if sh.mids != nil && !containsAny(body, sh.mids) || !sh.anyBody && placeholder(body) || sh.check != nil && !sh.check(body) {
		return span{}, false, j + n
	}
	end := j + n
	if sh.bound {
		if !tokenEnds(s, end) {
			return span{}, false, end
		}
		return span{i + sh.keep, end, nil}, true, end
	}
	// A word glued to the credential ("ghp_…ghp_…", two tokens pasted
	// together) is masked to its end: the body's charset stops at the
	// seam and would leave the second token's body visible.
	for end < len(s) && gluedWord[s[end]] {
		end++
	}
	return span{i + sh.keep, end, nil}, true, j + n
}

// tokenEnds reports whether a token may end at i: at the end of s,
// whitespace, a quote, a backquote, ';', or an escaped \n or \r (gitleaks'
// suffix after a secret).
func tokenEnds(s string, i int) bool {
	if i >= len(s) {
		return true
	}
	switch s[i] {
	case ' ', '\t', '\n', '\r', '\v', '\f', '"', '\'', '`', ';':
		return true
	case '\\':
		return i+1 < len(s) && (s[i+1] == 'n' || s[i+1] == 'r')
	}
	return false
}

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// placeholder reports whether v, a credential's body or a secret's value,
// is a stand-in for one: a run of few distinct bytes ("xxxxxxxx",
// "XXXX-XXXX", "aaaa", "1111="), or text that says so ("EXAMPLE",
// "YOUR_TOKEN_HERE", "<placeholder>"). Documentation and templates are
// full of them, and a masked placeholder only hides what the text says.
func placeholder(v string) bool {
	var seen [256]bool
	distinct := 0
	for i := 0; i < len(v) && distinct <= 4; i++ {
		c := v[i]
		if !seen[c] && c != '-' && c != '_' && c != '.' && c != '=' {
			seen[c] = true
			distinct++
		}
	}
	if distinct <= 3 && len(v) >= 3 {
		return true
	}
	// One byte two thirds of the value: AIzaaaaa…, glc_1111…, 0000…TUVWXYZ.
	if len(v) >= 12 {
		var counts [256]int
		most := 0
		for i := 0; i < len(v); i++ {
			counts[v[i]]++
			most = max(most, counts[v[i]])
		}
		if 3*most >= 2*len(v) {
			return true
		}
	}
	for _, w := range placeholderWords {
		if lastIndexFold(v, w) >= 0 {
			return true
		}
	}
	return false
}

// placeholderWords in a value say it stands in for a secret.
var placeholderWords = []string{"EXAMPLE", "XXXXXX", "YOUR_", "YOUR-", "_HERE", "-HERE", "PLACEHOLDER", "REDACTED", "CHANGEME", "******", "####"}
