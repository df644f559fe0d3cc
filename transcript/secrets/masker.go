package secrets

import (
	"github.com/reelhq/reel/transcript"

	"bytes"
	"encoding/json"
	"sort"
	"strings"
)

// Masked replaces every secret the Masker finds.
const Masked = "[MASKED]"

// Masker replaces secrets in events before they are written:
//
//   - the values of environment variables (and workflow inputs) whose names
//     say secret: *PASSWORD*, *PASSWD*, *SECRET*, *TOKEN*, *CREDENTIAL*,
//     *APIKEY*, *API_KEY*, *PRIVATE_KEY*, *ACCESS_KEY*, and names whose
//     last word is KEY, PAT, PASS, PWD or PW (secretName);
//   - credentials recognisable by their shape, the checklist being
//     gitleaks' default rules: private key blocks, cloud keys (AWS, Google
//     Cloud and Gemini, Azure AD, Alibaba), payment keys (Stripe, Square …),
//     VCS tokens (GitHub, GitLab, Bitbucket), chat tokens and webhooks
//     (Slack, Discord, Teams, Telegram), LLM provider keys (OpenAI,
//     Anthropic, OpenRouter, Groq, xAI, Hugging Face, Perplexity …), JWTs,
//     and many more (mask_rules.go lists them);
//   - passwords in URLs (postgres://user:PASSWORD@host), Bearer and other
//     Authorization credentials, curl -u user:PASSWORD;
//   - values assigned to secret-looking names in text and data: an
//     NAME=value line, "api_key": "…" in JSON, a secret-named key of a
//     tool input or result.
//
// Masking is opt-in; a Recorder applies it when Options.Masker is set.
type Masker struct {
	values   []string // longest first, so a value containing another wins
	replacer *strings.Replacer
}

// NewMasker builds a masker from an environment in os.Environ form. Values
// shorter than 6 bytes are ignored: masking "1" or "true" everywhere would
// destroy the record without protecting anything.
func NewMasker(environ []string) *Masker {
	seen := map[string]bool{}
	var values []string
	for _, kv := range environ {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || len(value) < 6 || !secretName(name) || seen[value] {
			continue
		}
		seen[value] = true
		values = append(values, value)
	}
	sort.Slice(values, func(i, j int) bool { return len(values[i]) > len(values[j]) })
	m := &Masker{values: values}
	if len(values) > 0 {
		pairs := make([]string, 0, 2*len(values))
		for _, v := range values {
			pairs = append(pairs, v, Masked)
		}
		m.replacer = strings.NewReplacer(pairs...)
	}
	return m
}

// MaskString returns s with every secret replaced.
func (m *Masker) MaskString(s string) string {
	if m == nil || s == "" {
		return s
	}
	if m.replacer != nil {
		s = m.replacer.Replace(s)
	}
	return maskShapes(s)
}

// MaskEvent masks every string of e's payload in place. Payload structs are
// copied first, so the caller's values are not modified.
func (m *Masker) MaskEvent(e *transcript.ExchangeEvent) {
	if m == nil {
		return
	}
	switch p := e.Payload.(type) {
	case *transcript.StepPayload:
		if p == nil {
			return
		}
		c := *p
		c.Name = m.MaskString(c.Name)
		c.Command = m.MaskString(c.Command)
		c.Error = m.MaskString(c.Error)
		c.Input = m.maskValue(c.Input)
		c.Result = m.maskValue(c.Result)
		e.Payload = &c
	case *transcript.MessagePayload:
		if p == nil {
			return
		}
		c := *p
		c.Blocks = m.maskBlocks(p.Blocks)
		e.Payload = &c
	case *transcript.ToolPayload:
		if p == nil {
			return
		}
		c := *p
		c.Input = m.maskValue(c.Input)
		c.Output = m.maskValue(c.Output)
		c.Error = m.MaskString(c.Error)
		e.Payload = &c
	case []transcript.ContentBlock:
		e.Payload = m.maskBlocks(p)
	case json.RawMessage:
		e.Payload = m.maskValue(p)
	}
}

// maskBlocks masks a message's blocks. The chunks of a run of stream
// blocks are the deltas of one streamed reply and are masked together
// (maskChunks): a secret split across two deltas is masked in both.
func (m *Masker) maskBlocks(in []transcript.ContentBlock) []transcript.ContentBlock {
	out := make([]transcript.ContentBlock, len(in))
	for i, b := range in {
		b.Text = m.MaskString(b.Text)
		b.Thinking = m.MaskString(b.Thinking)
		b.Command = m.MaskString(b.Command)
		b.ToolInput = m.maskValue(b.ToolInput)
		b.ToolContent = m.maskValue(b.ToolContent)
		out[i] = b
	}
	for i := 0; i < len(out); {
		j := i
		var chunks []string
		for ; j < len(out) && out[j].Type == transcript.BlockStream; j++ {
			chunks = append(chunks, out[j].Chunk)
		}
		if j == i {
			out[i].Chunk = m.MaskString(out[i].Chunk)
			i++
			continue
		}
		for k, c := range m.maskChunks(chunks) {
			out[i+k].Chunk = c
		}
		i = j
	}
	return out
}

// maskValue masks a free-form value. Go values and raw JSON are both walked
// as decoded JSON, so a secret is found however it was escaped and the
// replacement can never break the JSON around it.
func (m *Masker) maskValue(v any) any {
	switch x := v.(type) {
	case nil:
		return nil
	case string:
		return m.MaskString(x)
	case json.RawMessage:
		dec := json.NewDecoder(bytes.NewReader(x))
		dec.UseNumber()
		var decoded any
		if err := dec.Decode(&decoded); err != nil {
			return x
		}
		return m.walk(decoded)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	return m.maskValue(json.RawMessage(b))
}

func (m *Masker) walk(v any) any {
	switch x := v.(type) {
	case string:
		return m.MaskString(x)
	case []any:
		for i := range x {
			x[i] = m.walk(x[i])
		}
		return x
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, val := range x {
			if s, ok := val.(string); ok && secretName(k) && maskableValue(s) {
				// {"api_key": "…"}: the key says what the value is.
				out[m.MaskString(k)] = Masked
				continue
			}
			out[m.MaskString(k)] = m.walk(val)
		}
		return out
	}
	return v
}
