package index

import (
	"github.com/reelhq/reel/internal/rawjson"
	"github.com/reelhq/reel/transcript"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// maxTermLen bounds an indexed term in bytes. Longer runs of letters and
// digits are base64 images, hashes and minified blobs: nobody searches for
// them by hand, and indexing them would bloat the index with terms that each
// occur once.
const maxTermLen = 64

// wordByte marks the ASCII bytes that belong to a term.
var wordByte = func() (t [utf8.RuneSelf]bool) {
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	for c := 'a'; c <= 'z'; c++ {
		t[c] = true
		t[c-'a'+'A'] = true
	}
	return t
}()

// lowerWord maps an ASCII byte of a term to its lowercase form and every
// other byte to 0: one table lookup per byte on the indexing hot path.
var lowerWord = func() (t [256]byte) {
	for c := range utf8.RuneSelf {
		if wordByte[c] {
			t[c] = byte(unicode.ToLower(rune(c)))
		}
	}
	return t
}()

// tokenizer turns text into lowercase terms: maximal runs of letters and
// digits (Unicode categories L and N). It is the one definition of a term,
// used for indexing, for queries and for checking hits, so the three agree.
type tokenizer struct {
	term []byte
	long bool
	emit func(term []byte)
}

func (t *tokenizer) byte(c byte) {
	if !wordByte[c] {
		t.flush()
		return
	}
	if c >= 'A' && c <= 'Z' {
		c += 'a' - 'A'
	}
	if len(t.term) >= maxTermLen {
		t.long = true
		return
	}
	t.term = append(t.term, c)
}

func (t *tokenizer) rune(r rune) {
	if r < utf8.RuneSelf {
		t.byte(byte(r))
		return
	}
	if !unicode.IsLetter(r) && !unicode.IsNumber(r) {
		t.flush()
		return
	}
	r = unicode.ToLower(r)
	if len(t.term)+utf8.RuneLen(r) > maxTermLen {
		t.long = true
		return
	}
	t.term = utf8.AppendRune(t.term, r)
}

func (t *tokenizer) flush() {
	if len(t.term) > 0 && !t.long {
		t.emit(t.term)
	}
	t.term, t.long = t.term[:0], false
}

// text tokenizes plain UTF-8 text.
func (t *tokenizer) text(s []byte) {
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			t.byte(c)
			i++
			continue
		}
		r, n := utf8.DecodeRune(s[i:])
		t.rune(r)
		i += n
	}
	t.flush()
}

// jsonString tokenizes the contents of a JSON string as written (between
// its quotes), resolving escapes on the way: every escape but \u stands for
// a character that separates terms.
func (t *tokenizer) jsonString(s []byte) {
	for i := 0; i < len(s); {
		c := s[i]
		// Fast path: a run of ASCII letters and digits, lowered in bulk.
		// Almost all of a transcript's text goes this way.
		if l := lowerWord[c]; l != 0 {
			j := i
			for j < len(s) && lowerWord[s[j]] != 0 {
				j++
			}
			if t.long || len(t.term)+j-i > maxTermLen {
				t.long = true
			} else {
				for _, c := range s[i:j] {
					t.term = append(t.term, lowerWord[c])
				}
			}
			i = j
			continue
		}
		if c < utf8.RuneSelf && c != '\\' {
			t.flush()
			i++
			continue
		}
		switch {
		case c == '\\':
			if i+1 < len(s) && s[i+1] == 'u' {
				r, ok := hex4(s, i+2)
				i += 6
				if !ok {
					t.flush()
					continue
				}
				if utf16.IsSurrogate(r) && i+6 <= len(s) && s[i] == '\\' && s[i+1] == 'u' {
					if r2, ok := hex4(s, i+2); ok {
						r = utf16.DecodeRune(r, r2)
						i += 6
					}
				}
				t.rune(r)
				continue
			}
			t.flush()
			i += 2
		case c < utf8.RuneSelf:
			t.byte(c)
			i++
		default:
			r, n := utf8.DecodeRune(s[i:])
			t.rune(r)
			i += n
		}
	}
	t.flush()
}

func hex4(s []byte, i int) (rune, bool) {
	if i+4 > len(s) {
		return 0, false
	}
	var r rune
	for _, c := range s[i : i+4] {
		switch {
		case '0' <= c && c <= '9':
			r = r<<4 | rune(c-'0')
		case 'a' <= c && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case 'A' <= c && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}

// eachString calls fn with the raw contents (escapes as written) of every
// string value in the JSON text data, in order, leaving out object keys:
// the schema's field names would otherwise match every event. It does not
// validate data; malformed JSON yields whatever strings it holds.
func eachString(data []byte, fn func(s []byte)) {
	for i := 0; i < len(data); i++ {
		if data[i] != '"' {
			continue
		}
		start := i + 1
		j := start
		for j < len(data) && data[j] != '"' {
			if data[j] == '\\' {
				j++
			}
			j++
		}
		if j > len(data) {
			j = len(data)
		}
		s := data[start:j]
		i = j
		k := j + 1
		for k < len(data) && (data[k] == ' ' || data[k] == '\t' || data[k] == '\n' || data[k] == '\r') {
			k++
		}
		if k < len(data) && data[k] == ':' {
			continue
		}
		fn(s)
	}
}

// searchable calls fn with the string values of an event's payload that
// search looks at: all of them, except that an agent step's step.completed
// gives only its error, since its result's output repeats the reply the
// step's last message.assistant already holds.
func searchable(typ, payload []byte, fn func(s []byte)) {
	if string(typ) == string(transcript.StepCompleted) {
		if v, ok, _ := rawjson.Field(payload, "kind"); ok && string(v) == `"agent"` {
			if e, ok, _ := rawjson.Field(payload, "error"); ok && len(e) >= 2 && e[0] == '"' {
				fn(e[1 : len(e)-1])
			}
			return
		}
	}
	eachString(payload, fn)
}

// Terms returns the distinct terms of s in order of first appearance, as
// the index sees them.
func Terms(s string) []string {
	var out []string
	seen := map[string]bool{}
	tk := tokenizer{emit: func(b []byte) {
		if !seen[string(b)] {
			seen[string(b)] = true
			out = append(out, string(b))
		}
	}}
	tk.text([]byte(s))
	return out
}
