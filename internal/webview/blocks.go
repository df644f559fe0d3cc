package webview

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html/template"
	"sort"
	"strings"
)

// Block is one piece of an event's body as the page shows it.
type Block struct {
	// Kind selects the rendering: text, pre, thinking, system, json, kv,
	// diff, image, note, error.
	Kind  string
	Label string
	Text  string
	// Fold folds the block behind its label (thinking, tool inputs and
	// outputs); Open unfolds it at first.
	Fold bool
	Open bool
	// Lines is a diff's lines, KV a laid-out object's members, Parts the
	// parts of a content array.
	Lines []DiffLine
	KV    []KV
	Parts []Block
	Img   template.URL
}

// KV is one member of a laid-out JSON object.
type KV struct {
	Key   string
	Value Block
}

// maxInlineImage bounds the base64 images drawn inline; larger ones are
// shown as a note with their size.
const maxInlineImage = 4 << 20

// value lays out a free-form JSON value (a tool input or output): a string
// as text, an object as a key/value list, a content array (Claude's text
// and image parts) part by part, anything else as indented JSON. Base64
// images become images or size notes, never raw text.
func value(raw json.RawMessage, depth int) Block {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return Block{Kind: "note", Text: "(none)"}
	}
	switch raw[0] {
	case '"':
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return textBlock(s)
		}
	case '[':
		var parts []json.RawMessage
		if json.Unmarshal(raw, &parts) == nil && depth < 4 && isContentArray(parts) {
			b := Block{Kind: "parts"}
			for _, p := range parts {
				b.Parts = append(b.Parts, contentPart(p, depth+1))
			}
			return b
		}
	case '{':
		if img, ok := image(raw); ok {
			return img
		}
		var m map[string]json.RawMessage
		if json.Unmarshal(raw, &m) == nil && depth < 3 {
			b := Block{Kind: "kv"}
			keys := make([]string, 0, len(m))
			for k := range m {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				b.KV = append(b.KV, KV{Key: k, Value: value(m[k], depth+1)})
			}
			return b
		}
	}
	var out bytes.Buffer
	if json.Indent(&out, raw, "", "  ") != nil {
		return Block{Kind: "pre", Text: string(raw)}
	}
	return Block{Kind: "json", Text: out.String()}
}

// textBlock shows a string: preformatted, unless it is a blob of base64.
func textBlock(s string) Block {
	if looksBase64(s) {
		return Block{Kind: "note", Text: fmt.Sprintf("base64 data, %s", size(base64.StdEncoding.DecodedLen(len(s))))}
	}
	return Block{Kind: "pre", Text: s}
}

// looksBase64 reports whether s is a long run of base64 and nothing else.
func looksBase64(s string) bool {
	if len(s) < 512 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '+' || c == '/' || c == '=' || c == '\n' || c == '\r') {
			return false
		}
	}
	return true
}

func isContentArray(parts []json.RawMessage) bool {
	if len(parts) == 0 {
		return false
	}
	for _, p := range parts {
		var probe struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(p, &probe) != nil || probe.Type == "" {
			return false
		}
	}
	return true
}

func contentPart(p json.RawMessage, depth int) Block {
	var part struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	_ = json.Unmarshal(p, &part)
	switch part.Type {
	case "text":
		return textBlock(part.Text)
	case "image":
		if img, ok := image(p); ok {
			return img
		}
	}
	return value(p, depth)
}

// image recognizes an image part, {"type":"image","source":{"type":
// "base64","media_type":…,"data":…}}, and draws it inline when it is a
// known image type of reasonable size.
func image(raw json.RawMessage) (Block, bool) {
	var part struct {
		Type   string `json:"type"`
		Source struct {
			Type      string `json:"type"`
			MediaType string `json:"media_type"`
			Data      string `json:"data"`
		} `json:"source"`
	}
	if json.Unmarshal(raw, &part) != nil || part.Type != "image" || part.Source.Type != "base64" {
		return Block{}, false
	}
	n := base64.StdEncoding.DecodedLen(len(part.Source.Data))
	note := fmt.Sprintf("%s image, %s", part.Source.MediaType, size(n))
	switch part.Source.MediaType {
	case "image/png", "image/jpeg", "image/gif", "image/webp":
		if _, err := base64.StdEncoding.DecodeString(part.Source.Data); err == nil && n <= maxInlineImage {
			return Block{Kind: "image", Label: note, Img: template.URL("data:" + part.Source.MediaType + ";base64," + part.Source.Data)}, true
		}
	}
	return Block{Kind: "note", Text: note}, true
}

func size(n int) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

// proseTool reports whether a tool's text output is an agent's reply
// (Claude Code's Task and Agent tools return the subagent's report),
// to be read as the replies are, rendered from Markdown.
func proseTool(name string) bool { return name == "Task" || name == "Agent" }

// asMarkdown renders a laid-out output's texts as Markdown.
func asMarkdown(b Block) Block {
	switch b.Kind {
	case "pre":
		b.Kind = "text"
	case "parts":
		parts := make([]Block, len(b.Parts))
		for i, p := range b.Parts {
			parts[i] = asMarkdown(p)
		}
		b.Parts = parts
	}
	return b
}

// toolInput lays out a tool's input; file edits and writes are shown as
// diffs.
func toolInput(name string, raw json.RawMessage) Block {
	var in struct {
		FilePath  string `json:"file_path"`
		Path      string `json:"path"`
		OldString string `json:"old_string"`
		NewString string `json:"new_string"`
		Old       string `json:"old"`
		New       string `json:"new"`
		Content   string `json:"content"`
		Plan      string `json:"plan"`
		Edits     []struct {
			OldString string `json:"old_string"`
			NewString string `json:"new_string"`
		} `json:"edits"`
	}
	if json.Unmarshal(raw, &in) == nil {
		file := in.FilePath
		if file == "" {
			file = in.Path
		}
		lower := strings.ToLower(name)
		switch {
		case (lower == "edit" || lower == "str_replace" || strings.HasSuffix(lower, "edit")) && (in.OldString != "" || in.NewString != "" || in.Old != "" || in.New != ""):
			oldS, newS := in.OldString, in.NewString
			if oldS == "" && newS == "" {
				oldS, newS = in.Old, in.New
			}
			return Block{Kind: "diff", Label: file, Lines: Diff(oldS, newS)}
		case lower == "multiedit" && len(in.Edits) > 0:
			var lines []DiffLine
			for i, e := range in.Edits {
				if i > 0 {
					lines = append(lines, DiffLine{Op: '@', Text: "⋯"})
				}
				lines = append(lines, Diff(e.OldString, e.NewString)...)
			}
			return Block{Kind: "diff", Label: file, Lines: lines}
		case lower == "exitplanmode" && in.Plan != "":
			// the plan the agent asks the user to approve: prose, in Markdown
			return Block{Kind: "text", Text: in.Plan}
		case lower == "write" && in.Content != "":
			return Block{Kind: "diff", Label: file + " (new content)", Lines: Diff("", in.Content)}
		}
	}
	return value(raw, 0)
}
