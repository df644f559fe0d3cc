package secrets

import "strings"

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
