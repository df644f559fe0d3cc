package secrets

import (
	"bytes"
	"encoding/json"
	"slices"
	"sort"
	"strings"

	"github.com/reelhq/reel/transcript"
)

// Masked replaces every secret the Masker finds.
const Masked = "[MASKED]"

// Masker replaces secrets in text and in transcript events:
//
//   - the values of environment variables (and workflow inputs) whose names
//     say secret (secretName: *PASSWORD*, *SECRET*, *TOKEN*, *API_KEY*,
//     names whose last word is KEY, …);
//   - credentials recognisable by their shape, the checklist being
//     gitleaks' default rules (shapes.go, anchors.go): private key blocks,
//     cloud keys, payment keys, version-control tokens, chat tokens and
//     webhooks, LLM provider keys, JWTs and their base64, and the other
//     vendors' prefixed tokens;
//   - passwords in URLs (postgres://user:PASSWORD@host), Authorization and
//     Bearer credentials, and command-line passwords (curl -u, mysql -p,
//     docker login -p, --password VALUE);
//   - values assigned to names that say secret, in the forms of
//     configuration files, code and data (assign.go): NAME=value, YAML,
//     JSON, INI, make, PHP, Go, XML, setProperty("NAME", "value"), a
//     Kubernetes Secret's data.
//
// It leaves placeholders (xxxx, EXAMPLE, YOUR_TOKEN_HERE), references
// ($VAR, ${{ secrets.X }}, {{ .Values.x }}), the names of secrets
// (secretKeyRef: api-key) and code (token = lexer.Next()).
//
// A Masker is safe for concurrent use. NewMasker(nil) masks shapes and
// assignments only; a nil *Masker masks nothing.
type Masker struct {
	values   []string // longest first, so a value containing another wins
	replacer *strings.Replacer
}

// NewMasker builds a masker from an environment in os.Environ form. Values
// shorter than 6 bytes are ignored: masking "1" or "true" everywhere would
// destroy the record without protecting anything.
func NewMasker(environ []string) *Masker {
	return newMasker(nil, environ)
}

// newMasker returns a masker of values and of the values of environ's
// secret-named variables.
func newMasker(values, environ []string) *Masker {
	seen := map[string]bool{}
	for _, v := range values {
		seen[v] = true
	}
	for _, kv := range environ {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || len(value) < 6 || !secretName(name) || seen[value] {
			continue
		}
		seen[value] = true
		values = append(values, value)
	}
	sort.SliceStable(values, func(i, j int) bool { return len(values[i]) > len(values[j]) })
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

// WithLinesOf returns a masker that masks what m masks and also, each on
// its own, the lines of the multi-line values in environ that m masks
// whole (a PEM key in DEPLOY_KEY), under the rules of NewMasker (a
// secret-named variable, lines of 6 bytes or more). Output shown a line
// at a time, or an error quoting one line, gives such a secret away a
// line at a time, where m, which matches whole values, would not find
// it. It returns m when environ holds no such value, and nil when m is
// nil.
func (m *Masker) WithLinesOf(environ []string) *Masker {
	if m == nil {
		return nil
	}
	var lines []string
	for _, kv := range environ {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || !strings.Contains(value, "\n") || m.MaskString(value) == value {
			continue
		}
		for l := range strings.SplitSeq(value, "\n") {
			lines = append(lines, name+"="+strings.TrimRight(l, "\r"))
		}
	}
	wider := newMasker(slices.Clone(m.values), lines)
	if len(wider.values) == len(m.values) {
		return m
	}
	return wider
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
			if s, ok := val.(string); ok && secretName(k) && maskableFor(k, s) {
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
