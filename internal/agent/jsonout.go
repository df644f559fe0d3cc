package agent

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
)

// ExtractJSON returns the JSON value in an agent's final reply: the whole
// reply when it is JSON, else the first fenced code block (```json or
// plain ```) that holds JSON, else the outermost {...} or [...] span that
// parses. The value is returned compacted. A reply without JSON gives an
// error matching ErrNotJSON that quotes the start of the reply.
func ExtractJSON(reply string) (json.RawMessage, error) {
	text := strings.TrimSpace(reply)
	if text == "" {
		return nil, fmt.Errorf("%w: the reply is empty", ErrNotJSON)
	}
	if js, ok := compactJSON(text); ok {
		return js, nil
	}
	for _, block := range fencedBlocks(text) {
		if js, ok := compactJSON(block); ok {
			return js, nil
		}
	}
	for _, pair := range [][2]byte{{'{', '}'}, {'[', ']'}} {
		i, j := strings.IndexByte(text, pair[0]), strings.LastIndexByte(text, pair[1])
		if i >= 0 && j > i {
			if js, ok := compactJSON(text[i : j+1]); ok {
				return js, nil
			}
		}
	}
	return nil, fmt.Errorf("%w: %s", ErrNotJSON, quoteStart(text, 120))
}

func compactJSON(s string) (json.RawMessage, bool) {
	s = strings.TrimSpace(s)
	if s == "" || !json.Valid([]byte(s)) {
		return nil, false
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, []byte(s)); err != nil {
		return nil, false
	}
	return json.RawMessage(buf.Bytes()), true
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
