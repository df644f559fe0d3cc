package secrets

import (
	"fmt"
	"math/rand"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// Each case is one rule of the checklist (gitleaks' default rules, by
// family) or a near miss that must stay as it is.
func TestMaskRules(t *testing.T) {
	m := NewMasker(nil)
	key := "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7\nVJTUt9Us8cKjMzEfYyjiWA4R4/M2bS1GB4t7NXp98C3SC6dVMvDuictGeurT8jNb\n"
	cases := []struct{ in, want string }{
		// Private keys, whatever their source.
		{"-----BEGIN RSA PRIVATE KEY-----\n" + key + "-----END RSA PRIVATE KEY-----\n",
			"-----BEGIN RSA PRIVATE KEY-----[MASKED]-----END RSA PRIVATE KEY-----\n"},
		{`{"private_key": "-----BEGIN PRIVATE KEY-----\n` + key + `"}`, `{"private_key": "[MASKED]"}`},
		{`"-----BEGIN PRIVATE KEY-----\n` + key + `"`, `"-----BEGIN PRIVATE KEY-----[MASKED]`},
		{"-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n-----END OPENSSH PRIVATE KEY-----",
			"-----BEGIN OPENSSH PRIVATE KEY-----[MASKED]-----END OPENSSH PRIVATE KEY-----"},
		// A block too short to be a key is a placeholder.
		{"-----BEGIN PRIVATE KEY-----\nanything\n-----END PRIVATE KEY-----", "-----BEGIN PRIVATE KEY-----\nanything\n-----END PRIVATE KEY-----"},
		{"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----", "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----"},
		// Cloud.
		{"aws AKIAZ52HGXYRN4WBTEST ok", "aws [MASKED] ok"},
		{"aws AKIAIOSFODNN7EXAMPLE ok", "aws AKIAIOSFODNN7EXAMPLE ok"}, // the documentation's example key
		{"ASIAY34FZKBOKMUTVV7A", "[MASKED]"},
		{"key=AIzaSyA-abcdefghijklmnopqrstuvwxyz12345", "key=[MASKED]"},
		{"secret: abc8Q~abcdefghijklmnopqrstuvwxyz0123456 end", "secret: [MASKED] end"},
		{"LTAI5tABCDEFGHIJKLMNOPQR", "[MASKED]"},
		// Payment.
		{"stripe sk_live_51HabcdefGHIJKLmnop", "stripe [MASKED]"},
		{"rk_live_0123456789abcdefXYZ", "[MASKED]"},
		{"sk_test_4eC39HqLyjWDarjtT1zdp7dc", "[MASKED]"},
		{"whsec_0123456789abcdefghijklmnop", "[MASKED]"},
		{"sq0atp-0123456789abcdefghijkl", "[MASKED]"},
		// Version control.
		{"ghp_abcdefghijklmnopqrstuvwxyz0123456789", "[MASKED]"},
		{"gho_abcdefghijklmnopqrstuvwxyz0123456789 ghu_abcdefghijklmnopqrstuvwxyz0123456789", "[MASKED] [MASKED]"},
		{"ghs_abcdefghijklmnopqrstuvwxyz0123456789 ghr_abcdefghijklmnopqrstuvwxyz0123456789", "[MASKED] [MASKED]"},
		{"github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz", "[MASKED]"},
		{"token glpat-Hk3vX9qLm2Rt7WzB5nY1", "token [MASKED]"},
		{"token glpat-xxxxxxxxxxxxxxxxxxxx1", "token glpat-xxxxxxxxxxxxxxxxxxxx1"}, // a placeholder
		{"glrt-t1_abcdefghijklmnopqrstuvwxyz", "[MASKED]"},
		// Chat.
		{"xoxb-2917361735-3059274619385-Kx7Tq9LmW2vRb4NzY8pHc1sD", "[MASKED]"},
		{"xoxp-4620571392-5038172940-6193847205-9f4c2b7d1e8a5036bc47d9e2f1a8c305", "[MASKED]"},
		{"https://hooks.slack.com/services/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", "https://hooks.slack.com/[MASKED]"},
		{"https://github.com/xoxa-nyc/xoxa-nyc.github.io/blob/master/README.md", "https://github.com/xoxa-nyc/xoxa-nyc.github.io/blob/master/README.md"},
		{"https://discord.com/api/webhooks/123456789012345678/abcdefghijklmnop", "https://discord.com/api/webhooks/[MASKED]"},
		// LLM providers.
		{"key sk-proj-abcdefghijklmnop1234 end", "key [MASKED] end"},
		{"sk-ant-api03-" + strings.Repeat("Xq7vT2mN9pL4kR8sW1yZ6bC3dF5gH0jKq", 3)[:93] + "AA", "[MASKED]"},
		{"sk-or-v1-0123456789abcdef0123456789abcdef", "[MASKED]"},
		{"hf_abcdefghijklmnopqrstuvwxyzABCDEFGH", "[MASKED]"},
		{"gsk_Xq7vT2mN9pL4kR8sW1yZ6bC3dF5gH0jKqXq7vT2mN9pL4k", "[MASKED]"},
		{"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", "[MASKED]"},
		// Others from the list.
		{"npm_abcdefghijklmnopqrstuvwxyz0123456789", "[MASKED]"},
		{"hvs.CAESI" + strings.Repeat("Xq7vT2mN9pL4kR8sW1yZ6bC3dF5gH0jKq", 3)[:90], "[MASKED]"},
		{"dop_v1_" + strings.Repeat("9f4c2b7d1e8a5036", 4), "[MASKED]"},
		{"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", "[MASKED]"},
		// Inside a longer word, or with the wrong length, a prefix is not a key.
		{"http://assets.example.com/video_box.ico-7a388b69018576d24b59331fd60aab0c.png", "http://assets.example.com/video_box.ico-7a388b69018576d24b59331fd60aab0c.png"},
		{"<img src=\"./assets/vipul-f0eb1acf0da84c06a50c5b2c59932001997786b1.png\">", "<img src=\"./assets/vipul-f0eb1acf0da84c06a50c5b2c59932001997786b1.png\">"},
		{"jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U", "jwt [MASKED]"},
		// URLs with credentials: the password only.
		{"DATABASE_URL=postgres://app:s3cretpass@db.internal:5432/app", "DATABASE_URL=postgres://app:[MASKED]@db.internal:5432/app"},
		{"redis://:hunter2hunter@cache:6379", "redis://:[MASKED]@cache:6379"},
		{"git clone https://x-access-token:abc123def456@github.com/o/r", "git clone https://x-access-token:[MASKED]@github.com/o/r"},
		{"see https://example.com/path?q=1 and mailto:user@example.com", "see https://example.com/path?q=1 and mailto:user@example.com"},
		// Authorization.
		{"Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.payload", "Authorization: Bearer [MASKED]"},
		// Two tokens pasted together: the second body is not left visible.
		{"ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5 and", "[MASKED] and"},
		{"token ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5.", "token [MASKED]."},
		// Glued to a word: a distinctive prefix is still found, a short one not.
		{"id0ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5 x", "id0[MASKED] x"},
		{"task-0123456789abcdefgh", "task-0123456789abcdefgh"},
		{"Authorization: Basic dXNlcjpwYXNzd29yZA==", "Authorization: Basic [MASKED]"},
		{"curl -u admin:hunter2 https://x", "curl -u admin:[MASKED] https://x"},
		{"curl --user 'admin:hunter2' https://x", "curl --user 'admin:[MASKED]' https://x"},
		{"docker run -u 1000:1000 img", "docker run -u 1000:1000 img"},
		// Secret-named assignments.
		{"export DB_PASSWORD=hunter2hunter2", "export DB_PASSWORD=[MASKED]"},
		{"MY_APIKEY=abcdef123456 GITHUB_PAT=zyxwvu987654 X_PWD=qwerty12 Y_PASS=asdfgh12", "MY_APIKEY=[MASKED] GITHUB_PAT=[MASKED] X_PWD=[MASKED] Y_PASS=[MASKED]"},
		{"GOOGLE_CREDENTIALS=/tmp/creds.json", "GOOGLE_CREDENTIALS=/tmp/creds.json"}, // where the secret is, not the secret
		{`{"api_key": "abcdef123456", "user": "bob"}`, `{"api_key": "[MASKED]", "user": "bob"}`},
		{"password: 'correct horse'", "password: '[MASKED]'"},
		{"--token=abcdef123456 --verbose", "--token=[MASKED] --verbose"},
		{"Server=db;User Id=sa;Password=Pa55word!;", "Server=db;User Id=sa;Password=[MASKED];"},
		{"X-Api-Key: abcdef123456", "X-Api-Key: [MASKED]"},
		{"password: str", "password: str"}, // a type annotation
		{"X_API_KEY: abcdef123456", "X_API_KEY: [MASKED]"},
		// Near misses.
		{"task-1234567890abcdefghij", "task-1234567890abcdefghij"},
		{"token := lexer.Next()", "token := lexer.Next()"},
		{"max_tokens: 409600", "max_tokens: 409600"},
		{"TOKEN=${{ secrets.TOKEN }}", "TOKEN=${{ secrets.TOKEN }}"},
		{"PASSWORD=******", "PASSWORD=******"},
		{"they key money", "they key money"},
		{"basic understanding, bearer of news", "basic understanding, bearer of news"},
		{"ok in 0.123s: compiled ./pkg/module/file.go", "ok in 0.123s: compiled ./pkg/module/file.go"},
	}
	for _, c := range cases {
		if got := m.MaskString(c.in); got != c.want {
			t.Errorf("MaskString(%q)\n got %q\nwant %q", c.in, got, c.want)
		}
	}
}

func TestSecretName(t *testing.T) {
	for _, n := range []string{"OPENAI_API_KEY", "MY_APIKEY", "GITHUB_PAT", "MYSQL_PWD", "DB_PASS", "DB_PASSWD", "SMTP_PASSWORD",
		"GOOGLE_CREDENTIALS", "AWS_SECRET_ACCESS_KEY", "HF_TOKEN", "TOKEN_GITHUB", "api_key", "apiKey", "api.key", "Api-Key",
		"deployKey", "password", "ssh-key", "KEY", "SECRET", "TOKEN", "private_key", "mySecretString", "todo_secret_do_not_commit",
		"ClearTextPassword", "BUNDLE_GEMS__CONTRIBSYS__COM", "authtoken", "--password", "$dbPassword", "NON_PROD_DB_PASSWORD", "nonProdToken"} {
		if !secretName(n) {
			t.Errorf("secretName(%q) = false", n)
		}
	}
	for _, n := range []string{"HOME", "PATH", "PWD", "OLDPWD", "MONKEY", "KEYBOARD", "PASSAGE", "COMPASS_DIR", "USER", "SHELL", "LANG", "KEY_LENGTH",
		// what names, locates or counts a secret
		"ACCESS_KEY_ID", "CLIENT_SECRET_ID", "SECRET_NAME", "TOKEN_URL", "PASSWORD_FILE", "credentialsId", "passwordVariable", "max_tokens",
		"secrets", "keyVaultToStoreSecrets", "--password-stdin",
		// qualified keys and tokens
		"public_key", "publicToken", "primaryKey", "foreignKey", "csrf-token", "nextPageToken", "authenticity_token",
		// longer words
		"tokenizer", "secretary", "io.jsonwebtoken",
		// stand-ins
		"nonMatchingToken", "NON_MATCHING_TOKEN", "FAKE_API_KEY", "dummyPassword", "invalid_token", "mockSecret", "wrongPassword"} {
		if secretName(n) {
			t.Errorf("secretName(%q) = true", n)
		}
	}
}

func TestMaskerInputsAndEnvironment(t *testing.T) {
	m := NewMasker([]string{"DB_PASS=pa55w0rd-db", "api_token=tok-123456", "region=eu-west-1"})
	got := m.MaskString("pa55w0rd-db tok-123456 eu-west-1")
	if got != "[MASKED] [MASKED] eu-west-1" {
		t.Fatalf("got %q", got)
	}
}

func TestLineMaskerMasksKeyBlocksAcrossLines(t *testing.T) {
	lm := NewMasker(nil).Lines()
	in := []string{"deploying", "-----BEGIN EC PRIVATE KEY-----", "MHcCAQEEIIrYSSNQFaA2Hwf1duRSxKtLYX5CB04fSeQ6tF1aY/PuoAoGCCqGSM49",
		"AwEHoUQDQgAEPR3tU2Fta9ktY+6P9G0cWO+0kETA6SFs38GecTyudlHz6xvCdz8q", "-----END EC PRIVATE KEY-----", "done AKIAIOSFODNN7EXAMPLE"}
	want := []string{"deploying", "-----BEGIN EC PRIVATE KEY-----", Masked, Masked, "-----END EC PRIVATE KEY-----", "done [MASKED]"}
	in[5] = "done AKIAZ52HGXYRN4WBTEST"
	for i, l := range in {
		if got := lm.MaskLine(l); got != want[i] {
			t.Errorf("line %d: %q, want %q", i, got, want[i])
		}
	}
}

// maskShapesSlow is maskShapes without the index: every rule is tried at
// every position. The two must agree.
func maskShapesSlow(s string) string {
	var spans []span
	sc := newScan()
	for i := 0; i < len(s); {
		if opByte[s[i]] {
			if out, next, ok := sc.assignment(s, i, spans); ok {
				spans, i = out, next
				continue
			}
		}
		if i+1 < len(s) {
			if sp, ok := slowMatchAt(&sc, s, i); ok {
				if sp.end > sp.start {
					spans = append(spans, sp)
				}
				i = max(sp.end, i+1)
				continue
			}
		}
		i++
	}
	var b strings.Builder
	last := 0
	for _, sp := range spans {
		sp.start = max(sp.start, last)
		b.WriteString(s[last:sp.start])
		b.WriteString(Masked)
		last = sp.end
	}
	b.WriteString(s[last:])
	return b.String()
}

// byLength is every rule, longest prefix first, as the index orders them.
var byLength = func() []int {
	ks := make([]int, len(shapes))
	for k := range ks {
		ks[k] = k
	}
	sort.SliceStable(ks, func(a, b int) bool { return len(shapes[ks[a]].prefix) > len(shapes[ks[b]].prefix) })
	return ks
}()

func slowMatchAt(sc *scan, s string, i int) (span, bool) {
	wordStart := i == 0 || !alnum[s[i-1]]
	for _, k := range byLength {
		if !wordStart && !shapes[k].inWord {
			continue
		}
		if sp, ok, _ := shapes[k].match(s, i); ok {
			return sp, true
		}
	}
	return matchAnchor(sc, s, i, wordStart)
}

// TestMaskIndexChangesNothing builds random strings from pieces of every
// rule and checks the indexed scan against trying every rule everywhere.
func TestMaskIndexChangesNothing(t *testing.T) {
	pieces := []string{" ", "\n", "=", ":", "://", "@", "\"", "'", "-", "_", ".", "/", "é", "\x00", "Q~", "8", "-u ", "curl ",
		"Bearer ", "bEaReR\t", "Authorization: ", "basic ", "PASSWORD", "_KEY", "token", "api_key", "-----BEGIN ", "PRIVATE KEY-----", "-----END ",
		"ABCDEFGHIJKLMNOP", "abcdefghij0123456789", "0123456789abcdef", "ey", "J", "${"}
	for _, sh := range shapes {
		pieces = append(pieces, sh.prefix, sh.prefix[:len(sh.prefix)/2+1])
	}
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < 30000; i++ {
		var sb strings.Builder
		for n := rng.Intn(14); n >= 0; n-- {
			p := pieces[rng.Intn(len(pieces))]
			if rng.Intn(4) == 0 {
				p = strings.Repeat(p, 1+rng.Intn(8))
			}
			sb.WriteString(p)
		}
		s := sb.String()
		if got, want := maskShapes(s), maskShapesSlow(s); got != want {
			t.Fatalf("maskShapes(%q)\n= %q\nslow scan gives %q", s, got, want)
		}
	}
}

// TestMaskIsLinear feeds inputs built to make a naive scan quadratic: four
// times the input must take about four times as long, not sixteen. On a
// busy machine one measurement can be late by far more than that, so an
// input is measured again, up to three times, before it fails: a
// quadratic scan is slow every time.
func TestMaskIsLinear(t *testing.T) {
	if raceEnabled {
		t.Skip("timing under the race detector means nothing")
	}
	m := NewMasker(nil)
	timeOf := func(s string) time.Duration {
		best := time.Duration(1 << 62)
		for range 7 {
			start := time.Now()
			m.MaskString(s)
			best = min(best, time.Since(start))
		}
		return best
	}
	for name, unit := range map[string]string{
		"jwt without a payload": "eyJ-",
		"unclosed quotes":       `PASSWORD="x `,
		"curl users":            "curl -u=-u=",
		"key headers":           "-----BEGIN ",
		"urls":                  "a://b:c",
		"bearer":                "bearer x ",
		"names":                 "API_KEY:",
		"xml elements":          "<aToken>x",
		"xml attributes":        `key="a_token" value=`,
		"calls":                 `setProperty("A_TOKEN", `,
		"typed names":           "var xToken string = ",
		"yaml":                  "x_token: ",
		"flags":                 "--password ",
		"mysql":                 "mysql -p",
		"schemes":               "Authorization: Api-Token ",
		"jwt parts":             "eyAAAAAAAAAAAAAAAAAAAA.ey",
		"telegram":              "12345:A",
		"facebook":              "1234567890123456|",
		"vendors":               "SumoLogicMessageBirdCloudflare=",
	} {
		small := strings.Repeat(unit, (256<<10)/len(unit))
		if name == "yaml" {
			small = "kind: Secret\ndata:\n" + strings.Repeat("  x: \n", (256<<10)/6)
		}
		large := strings.Repeat(small, 4)
		for try := 1; ; try++ {
			t1, t4 := timeOf(small), timeOf(large)
			if t4 <= 8*t1+20*time.Millisecond {
				break
			}
			if try == 3 {
				t.Errorf("%s: %s for 256 KiB, %s for 1 MiB: not linear", name, t1, t4)
				break
			}
		}
	}
}

// FuzzMaskString: run with -fuzzminimizetime=100x; minimizing with the
// slow reference scan otherwise stalls the fuzzer on a busy machine.
func FuzzMaskString(f *testing.F) {
	for _, s := range []string{"AKIAZ52HGXYRN4WBTEST", "postgres://a:b@c", "X_TOKEN=abcdef123", "-----BEGIN RSA PRIVATE KEY-----\nx", "Bearer abcdefghijklmnop", "abc8Q~abcdefghijklmnopqrstuvwxyz0123456",
		"<apiToken>\n  k3Y9x7Qw2Lm5\n</apiToken>", `<add key="ClearTextPassword" value="Pa55w0rd!x"/>`, `setProperty("X_TOKEN", "k3Y9x7Qw2Lm5")`,
		"kind: Secret\ndata:\n  password: cGFzc3dvcmQxMjM=\n  ca: |\n    LS0tLS1C\n", "curl --user  'u:p4ssw0rd' -u \":k3Y9x\"", "mysql -uroot -pS3cret db",
		"docker login -p S3cr3tPass", "Authorization: Api-Token 22cb987851bc", "x_token: k3Y9x7Qw2Lm5", "var xToken string = `k3Y9x7Qw2Lm5`",
		"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N", "123456789:AAbbccddeeffgghhiijjkkllmmnnooppqqr", "1308742762612587|rhoK1cbv0DOU_RTX_87O4MkX7AI"} {
		f.Add(s)
	}
	m := NewMasker([]string{"FUZZ_SECRET=fuzz-secret-value"})
	f.Fuzz(func(t *testing.T, s string) {
		got := m.MaskString(s)
		if utf8.ValidString(s) && !utf8.ValidString(got) {
			t.Fatalf("masking broke UTF-8: %q -> %q", s, got)
		}
		if strings.Contains(got, "fuzz-secret-value") {
			t.Fatalf("environment secret left: %q", got)
		}
		if again := m.MaskString(got); again != got {
			t.Fatalf("not idempotent: %q -> %q -> %q", s, got, again)
		}
		if got2 := maskShapesSlow(m.replacer.Replace(s)); got2 != got {
			t.Fatalf("index and slow scan differ on %q: %q vs %q", s, got, got2)
		}
	})
}

// stdlibMasker is the standard-library way to do what the prefix rules do:
// one regular expression per rule, run when its prefix is in the string.
type stdlibMasker []struct {
	anchor string
	re     *regexp.Regexp
}

func newStdlibMasker() stdlibMasker {
	var out stdlibMasker
	add := func(anchor, expr string) {
		out = append(out, struct {
			anchor string
			re     *regexp.Regexp
		}{anchor, regexp.MustCompile(expr)})
	}
	for _, sh := range shapes {
		rep := fmt.Sprintf("{%d,}", sh.min)
		if sh.max > 0 {
			rep = fmt.Sprintf("{%d,%d}", sh.min, sh.max)
		}
		add(sh.prefix, `\b`+regexp.QuoteMeta(sh.prefix)+classOf(sh.body)+rep)
	}
	add("://", `[A-Za-z0-9+.-]+://[^:@/\s]*:[^@/\s]+@`)
	add("", `(?i:bearer)\s+[A-Za-z0-9_\-\.=:/+~]{12,}`)
	return out
}

func (sm stdlibMasker) mask(s string) string {
	for _, r := range sm {
		if strings.Contains(s, r.anchor) {
			s = r.re.ReplaceAllString(s, Masked)
		}
	}
	return s
}

func classOf(cs *charSet) string {
	var b strings.Builder
	b.WriteByte('[')
	for c := 0; c < 256; c++ {
		if cs[c] {
			b.WriteString(regexp.QuoteMeta(string(rune(c))))
		}
	}
	b.WriteByte(']')
	return b.String()
}

func TestSafeCut(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int
	}{
		{"", 0},
		{"word", 0},
		{" word", 0},
		{"a b", 2},
		{"a b  c", 5},
		{"a b   ", 2},
		{"a Bearer tok", 2},
		{"a xBEARER\t tok", 2},
		{"Bearer tok", 0},
		{"bear tok", 5},
		{"x Authorization: Basic abc", 2},
		{"x AuthoriZAtion: AuthoriZAtion: v", 2},
		{"k NAME = v", 2},
		{"k \"name\": \"v\"", 2},
		{"k curl -u user:pass", 7},
		{"k x-api-key abc", 2},
		{"k Authorization:Api-Token abc", 2},
		{`k "authorization= Basic abc`, 2},
		{"k curl --password secret", 7},
	} {
		if got := SafeCut([]byte(c.in), 0); got != c.want {
			t.Errorf("SafeCut(%q) = %d, want %d", c.in, got, c.want)
		}
		if got := SafeCut([]byte(c.in), c.want+1); got != 0 {
			t.Errorf("SafeCut(%q, %d) = %d, want 0", c.in, c.want+1, got)
		}
	}
}

// What makes a value too plain to be a credential, at the edges gitleaks'
// own true positives set: they hold 1234567890 and klmnopqrstuvwx, so a
// count is the ten digits in order or 16 letters in a row; a version is
// three numbers; a key or token is 10 bytes at least, a password may be
// shorter.
func TestValueChecks(t *testing.T) {
	for v, want := range map[string]bool{
		"sk_abcdefghijklmnopqrstuvwxyz123": true, "0123456789ABCDEFGHJKMNPQRSTVWXYZ": true, "xABCDEFGHIJKLMNOPy": true,
		"ZyxAbCdEfGhIjKlMnOpQ": true, "12345678-ABCD-ABCD-ABCD-1234567890AB": false, "klmnopqrstuvwx-3456yza789": false,
		"h3kq9zmw7r2txv5p": false, "/0123456789": true, "/012345678": false,
	} {
		if got := counted(v); got != want {
			t.Errorf("counted(%q) = %v", v, got)
		}
	}
	for v, want := range map[string]bool{
		"rc2.7.1_20261104_0830-SNAPSHOT": true, "v10.0.12": true, "1.2": false, "a.1.2": false, "1.b.2": false,
		"dt0c01.YBENB2EBXUX2TBVJ6MTK95K1.RTMq": false, "4.5x.6": false, "x1.22.333y": true,
	} {
		if got := hasVersion(v); got != want {
			t.Errorf("hasVersion(%q) = %v", v, got)
		}
	}
	for n, want := range map[string]bool{
		"API_KEY": true, "accessToken": true, "deployKey": true, "GITHUB_PAT": true, "private_key": true, "SUMO_ACCESS_KEY": true,
		"DB_PASSWORD": false, "client_secret": false, "SECRET_KEY": false, "passphrase": false, "DB_PASS": false, "creds": false,
	} {
		if got := generatedName(n); got != want {
			t.Errorf("generatedName(%q) = %v", n, got)
		}
	}
}
