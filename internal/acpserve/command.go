package acpserve

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	sdk "github.com/coder/acp-go-sdk"
)

// maxPromptBytes bounds the text of one prompt, as AWF does (1 MiB), so an
// editor that sends a runaway prompt gets an answer instead of a
// tokenizer walking megabytes.
const maxPromptBytes = 1 << 20

// command is a parsed slash command: /NAME followed by inputs.
type command struct {
	// Name is the workflow reference as reel run takes it (PACK/WORKFLOW
	// for a pack's workflow, which the editor's menu shows as
	// PACK:WORKFLOW because a second slash would break it).
	Name   string
	Inputs map[string]string
	// Interactive and Breakpoints are reel's additions (AWF ignores
	// flags it does not know): pause before every step, or before these
	// states only, and ask the editor's permission to go on.
	Interactive bool
	Breakpoints []string
	// Ignored are the tokens that were neither an input nor a flag,
	// which AWF drops silently; reel says which.
	Ignored []string
}

// errNotCommand is a prompt that does not begin with a slash command.
var errNotCommand = errors.New("a prompt starts a workflow with a slash command: /WORKFLOW key=value …")

// parseCommand reads a slash command with AWF's syntax: the prompt is split
// shell-style (quotes group and are stripped; an unterminated quote runs
// to the end), the first token is /NAME, and the rest give inputs as
// key=value, --input=key=value or --input key=value (the value may hold
// '='; the last of a repeated key wins, as in AWF). Other --flags and
// tokens without '=' are ignored. Values are literal: @prompts/ is not
// resolved, since an editor sends what the user typed.
func parseCommand(text string) (*command, error) {
	if len(text) > maxPromptBytes {
		return nil, fmt.Errorf("the prompt is %d bytes, over the %d-byte limit", len(text), maxPromptBytes)
	}
	tokens := tokenize(text)
	if len(tokens) == 0 || !strings.HasPrefix(tokens[0], "/") {
		return nil, errNotCommand
	}
	name := strings.TrimPrefix(tokens[0], "/")
	if name == "" {
		return nil, errors.New("empty slash command: type / and a workflow's name")
	}
	c := &command{Name: commandRef(name), Inputs: map[string]string{}}
	rest := tokens[1:]
	for i := 0; i < len(rest); i++ {
		tok := rest[i]
		var pair string
		switch {
		case tok == "--input" || tok == "-i":
			if i+1 >= len(rest) {
				continue
			}
			i++
			pair = rest[i]
		case strings.HasPrefix(tok, "--input="):
			pair = strings.TrimPrefix(tok, "--input=")
		case tok == "--interactive":
			c.Interactive = true
			continue
		case tok == "--breakpoint" || tok == "-b":
			if i+1 < len(rest) {
				i++
				c.Breakpoints = append(c.Breakpoints, splitList(rest[i])...)
			}
			continue
		case strings.HasPrefix(tok, "--breakpoint="):
			c.Breakpoints = append(c.Breakpoints, splitList(strings.TrimPrefix(tok, "--breakpoint="))...)
			continue
		case strings.HasPrefix(tok, "--"):
			c.Ignored = append(c.Ignored, tok)
			continue
		case strings.Contains(tok, "="):
			pair = tok
		default:
			c.Ignored = append(c.Ignored, tok)
			continue
		}
		k, v, ok := strings.Cut(pair, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			hint := ""
			if pair == "=" {
				hint = ", without blanks around ="
			}
			return nil, fmt.Errorf("input %q: want key=value%s", pair, hint)
		}
		c.Inputs[k] = strings.TrimSpace(v)
	}
	if len(c.Breakpoints) > 0 {
		c.Interactive = true
	}
	return c, nil
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// commandName is the slash command of a workflow reference: a pack's
// PACK/WORKFLOW is advertised as PACK:WORKFLOW, as AWF does.
func commandName(ref string) string { return strings.Replace(ref, "/", ":", 1) }

// commandRef undoes commandName; a typed PACK/WORKFLOW works as well.
func commandRef(name string) string { return strings.Replace(name, ":", "/", 1) }

// tokenize splits text on blanks, keeping quoted spans (single or double
// quotes, which are dropped) within their token.
func tokenize(text string) []string {
	var (
		tokens []string
		cur    strings.Builder
		in     bool
		quote  rune
	)
	for _, r := range text {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote, in = r, true
		case r == ' ' || r == '\t' || r == '\n' || r == '\r':
			if in {
				tokens = append(tokens, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteRune(r)
			in = true
		}
	}
	if in {
		tokens = append(tokens, cur.String())
	}
	return tokens
}

// promptText flattens a prompt's content blocks into the text a slash
// command or a conversation reply is read from. A resource link (an
// editor's @-mention of a file) becomes the file's path, glued to the text
// around it so that `file=@main.go` gives file=/abs/main.go. Blocks the
// server does not accept (it advertises neither images, audio nor
// embedded context) are an error naming them.
func promptText(blocks []sdk.ContentBlock) (string, error) {
	var b strings.Builder
	prevText := false
	for _, bl := range blocks {
		switch {
		case bl.Text != nil:
			if prevText {
				b.WriteByte('\n')
			}
			b.WriteString(bl.Text.Text)
			prevText = true
		case bl.ResourceLink != nil:
			b.WriteString(linkPath(bl.ResourceLink.Uri))
			prevText = false
		case bl.Resource != nil:
			if r := bl.Resource.Resource.TextResourceContents; r != nil {
				b.WriteString(linkPath(r.Uri))
				prevText = false
				continue
			}
			return "", errors.New("embedded binary resources are not supported: mention the file instead")
		case bl.Image != nil:
			return "", errors.New("images are not supported: reel's workflows take text inputs")
		case bl.Audio != nil:
			return "", errors.New("audio is not supported: reel's workflows take text inputs")
		}
	}
	return b.String(), nil
}

// linkPath is the local path of a file: URI, else the URI itself.
func linkPath(uri string) string {
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "file" {
		return uri
	}
	return u.Path
}
