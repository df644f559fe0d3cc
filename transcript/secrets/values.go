package secrets

import (
	"math"
	"strings"
)

// Whether a value is worth masking: not a reference, a placeholder or the
// name of a secret, and, where its name only hints at a secret or code is
// likely, random enough to be a credential.

// maskableValue reports whether the value of a secret-named field is worth
// masking: not too short to mean anything, not a reference to something
// else ($VAR, ${{ … }}, {{ … }}, <placeholder>), not a placeholder, not a
// plain number (a long one is: a client id), not a count typed out.
func maskableValue(v string) bool {
	return len(v) >= 6 && !isReference(v) && !placeholder(v) && !placeholderWord(v) && (!allDigits(v) || len(v) >= 14) &&
		!secretNamed(v) && !counted(v)
}

// counted reports whether v holds a count typed out: the ten digits in
// order (0123456789) or 16 letters of the alphabet in a row
// (abcdefghijklmnop, in any case). Generated credentials hold neither
// (the chance is below 16^-9 a position); hand-made examples do
// (sk_abcdefghijklmnopqrstuvwxyz123). Shorter runs are not enough:
// gitleaks' own examples of real shapes hold 1234567890 and
// klmnopqrstuvwx. Only values whose name alone says secret are judged so:
// a vendor's prefix says enough (reel's tests plant
// ghp_abcdefghijklmnopqrstuvwxyz0123456789 as a token).
func counted(v string) bool {
	digitRun, letterRun := 1, 1
	for i := 1; i < len(v); i++ {
		p, c := v[i-1], v[i]
		if '0' <= p && p < '9' && c == p+1 {
			digitRun, letterRun = digitRun+1, 1
		} else if p, c = p|0x20, c|0x20; 'a' <= p && p < 'z' && c == p+1 {
			digitRun, letterRun = 1, letterRun+1
		} else {
			digitRun, letterRun = 1, 1
		}
		if digitRun >= 10 || letterRun >= 16 {
			return true
		}
	}
	return false
}

// maskableFor is maskableValue for the value of name, a name that says
// secret: a key or a token, which a service generates, is also no
// shorter than minGenerated (gitleaks' generic rule finds none shorter);
// a password or a secret, which people choose, may be.
func maskableFor(name, v string) bool {
	return maskableValue(v) && (len(v) >= minGenerated || !generatedName(name))
}

// minGenerated is the shortest key or token masked.
const minGenerated = 10

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
	return !dottedName(v) && !hasVersion(v) && random(v)
}

// hasVersion reports whether v holds a version number, three numbers
// joined by dots (rc0.15.0_20231217-SNAPSHOT, v2.3.1-linux): a build or a
// release, not a credential, which holds no dot between digits.
func hasVersion(v string) bool {
	for i := strings.IndexByte(v, '.'); i > 0 && i+1 < len(v); {
		if digits[v[i-1]] {
			j := i + 1
			for j < len(v) && digits[v[j]] {
				j++
			}
			if j > i+1 && j+1 < len(v) && v[j] == '.' && digits[v[j+1]] {
				return true
			}
		}
		k := strings.IndexByte(v[i+1:], '.')
		if k < 0 {
			break
		}
		i += 1 + k
	}
	return false
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
