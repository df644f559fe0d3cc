package agent

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"
)

// ExtractJSON returns the JSON value in an agent's final reply: the whole
// reply when it is JSON, else the first fenced code block (```json or
// plain ```) that holds JSON, else the outermost {...} or [...] span that
// parses. The value is returned as the model wrote it (spacing, key order
// and escapes kept; only the text around it is cut), as AWF keeps it, so
// that .states.X.Output shows what the model said. A reply without JSON
// gives an error matching ErrNotJSON that quotes the start of the reply.
func ExtractJSON(reply string) (json.RawMessage, error) {
	text := strings.TrimSpace(reply)
	if text == "" {
		return nil, fmt.Errorf("%w: the reply is empty", ErrNotJSON)
	}
	if js, ok := validJSON(text); ok {
		return js, nil
	}
	for _, block := range fencedBlocks(text) {
		if js, ok := validJSON(block); ok {
			return js, nil
		}
	}
	for _, pair := range [][2]byte{{'{', '}'}, {'[', ']'}} {
		i, j := strings.IndexByte(text, pair[0]), strings.LastIndexByte(text, pair[1])
		if i >= 0 && j > i {
			if js, ok := validJSON(text[i : j+1]); ok {
				return js, nil
			}
		}
	}
	return nil, fmt.Errorf("%w: %s", ErrNotJSON, quoteStart(text, 120))
}

// validJSON returns s without its surrounding white space when that is
// one JSON value.
func validJSON(s string) (json.RawMessage, bool) {
	s = strings.TrimSpace(s)
	if s == "" || !json.Valid([]byte(s)) {
		return nil, false
	}
	return json.RawMessage(s), true
}

// A reply that opens with a code fence, and the fence that closes it.
var (
	openingFence = regexp.MustCompile("(?s)^\\s*```[a-zA-Z0-9]*\r?\n(.*?)\r?\n```")
	wholeFence   = regexp.MustCompile("(?s)^\\s*```[a-zA-Z0-9]*\r?\n(.*)\r?\n```\\s*$")
)

// StripFence returns the body of the code fence a reply opens with (the
// one the reply ends with when the body holds fences of its own), or the
// reply unchanged when it does not open with one: output_format text, as
// AWF reads it (pkg/output StripCodeFences), so that "```bash\nls\n```"
// gives "ls". Text after the first fence is dropped, as in AWF.
func StripFence(reply string) string {
	m := openingFence.FindStringSubmatch(reply)
	if m == nil {
		return reply
	}
	if strings.Contains(m[1], "```") {
		if w := wholeFence.FindStringSubmatch(reply); w != nil {
			return w[1]
		}
	}
	return m[1]
}

// fencedBlocks returns the bodies of the Markdown code fences in text, in
// order. A fence opens with ``` (or more backticks) and an optional info
// string, and closes with a line of at least as many backticks.
func fencedBlocks(text string) []string {
	var blocks []string
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		open := strings.TrimSpace(lines[i])
		n := len(open) - len(strings.TrimLeft(open, "`"))
		if n < 3 {
			continue
		}
		var body []string
		closed := false
		for j := i + 1; j < len(lines); j++ {
			l := strings.TrimSpace(lines[j])
			if len(l) >= n && strings.Trim(l, "`") == "" {
				i, closed = j, true
				break
			}
			body = append(body, lines[j])
		}
		if !closed {
			// An unclosed fence (a reply cut short) still yields its body.
			i = len(lines)
		}
		blocks = append(blocks, strings.Join(body, "\n"))
	}
	return blocks
}

func quoteStart(s string, max int) string {
	if len(s) <= max {
		return fmt.Sprintf("%q", s)
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%q… (%d bytes)", s[:cut], len(s))
}
