package secrets

import (
	"github.com/reelhq/reel/transcript"

	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestMaskPiecesCarriesMaskingBack(t *testing.T) {
	m := NewMasker([]string{"SHOP_API_KEY=shop-secret-value-123"})
	for _, c := range []struct {
		in, want []string
	}{
		{[]string{"key sk-ant-api03-", "Xq7vT2mN9pL4kR8sW1yZ6bC3 ok"}, []string{"key " + Masked, " ok"}},
		{[]string{"pass shop-secr", "et-value-123", " done"}, []string{"pass " + Masked, "", " done"}},
		{[]string{"sk-", "ant-", "api03-", "Xq7vT2mN9pL4kR8sW1yZ6bC3", "\n"}, []string{Masked, "", "", "", "\n"}},
		{[]string{"plain ", "", "text"}, []string{"plain ", "", "text"}},
		{[]string{"", "x ghp_abcdefghijklmnopqrstuvwxyz0123456789"}, []string{"", "x " + Masked}},
		// a value inside a shape: one [MASKED], as MaskString gives
		{[]string{"SHOP_TOKEN=shop-se", "cret-value-123 next"}, []string{"SHOP_TOKEN=" + Masked, " next"}},
	} {
		got := m.MaskPieces(c.in)
		if !slices.Equal(got, c.want) {
			t.Errorf("MaskPieces(%q) = %q, want %q", c.in, got, c.want)
		}
		if joined, whole := strings.Join(got, ""), m.MaskString(strings.Join(c.in, "")); joined != whole {
			t.Errorf("MaskPieces(%q) joins to %q, MaskString gives %q", c.in, joined, whole)
		}
	}
	var nilMasker *Masker
	if got := nilMasker.MaskPieces([]string{"sk-ant-api03-", "x"}); !slices.Equal(got, []string{"sk-ant-api03-", "x"}) {
		t.Errorf("nil masker changed the pieces: %q", got)
	}
}

// pieceSecrets are the secrets of the property tests: an environment
// value and credential shapes of several rules.
var pieceSecrets = []string{"zq8-env-secret-value-4711", "ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5",
	"sk-ant-api03-oHBvRPOIvGrv5iFlbCBFNOgmBjMtpsiaOclRz3Aw", "AKIAK3VRJNVGFYGWWQC5", "postgres://u:iH7YFjS1on43XkMtECqO@h", "Bearer 7X41zTPDP4k8FFuf0EwixIIq",
	"DB_PASSWORD=hunter2hunter2", "x_token: JoKyrbmEYYmdhQj38AruHr4i", `setProperty("X_TOKEN", "wRxpVHSbKdA9u4uQgwLg6G3oT1og")`}

// pieceMarkers are byte sequences of pieceSecrets that masking the whole
// text removes whenever it masks their secret.
var pieceMarkers = []string{"4711", "3zA5", "RPOIvGrv", "JNVGFYGW", "FjS1on43", "zTPDP4k8", "hunter2", "rbmEYYmd", "VHSbKdA9"}

// For random splits of a text holding secrets into pieces, MaskPieces
// keeps the count and the order of the pieces, joins to what MaskString
// gives the whole text, and no piece shows a byte sequence the whole
// text's masking removes.
func TestMaskPiecesRandomSplits(t *testing.T) {
	m := NewMasker([]string{"REEL_TEST_API_KEY=zq8-env-secret-value-4711", "OTHER_SECRET=zq8-env"})
	plain := []string{"plain", "x", ",", "progress=42%", "é", "\n", "[MASKED]", "MASKED]"}
	seps := []string{" ", "", "\n", ","}
	rng := rand.New(rand.NewSource(7))
	for iter := range 2000 {
		var in strings.Builder
		for n := 1 + rng.Intn(12); n > 0; n-- {
			if rng.Intn(3) == 0 {
				in.WriteString(pieceSecrets[rng.Intn(len(pieceSecrets))])
			} else {
				in.WriteString(plain[rng.Intn(len(plain))])
			}
			in.WriteString(seps[rng.Intn(len(seps))])
		}
		text := in.String()
		pieces := randomSplit(rng, text)
		checkPieces(t, m, pieces)
		if t.Failed() {
			t.Fatalf("iteration %d", iter)
		}
	}
}

// randomSplit cuts s into pieces of 0 to 20 bytes, as a provider streams
// text.
func randomSplit(rng *rand.Rand, s string) []string {
	var pieces []string
	for s != "" {
		n := min(len(s), rng.Intn(21))
		pieces = append(pieces, s[:n])
		s = s[n:]
	}
	return pieces
}

// checkPieces checks MaskPieces' guarantees on pieces.
func checkPieces(t *testing.T, m *Masker, pieces []string) {
	t.Helper()
	whole := strings.Join(pieces, "")
	want := m.MaskString(whole)
	got := m.MaskPieces(pieces)
	if len(got) != len(pieces) {
		t.Fatalf("%d pieces became %d", len(pieces), len(got))
	}
	if joined := strings.Join(got, ""); joined != want {
		t.Fatalf("pieces %q\nmask to %q\njoined %q\nMaskString %q", pieces, got, joined, want)
	}
	for _, marker := range pieceMarkers {
		if strings.Contains(want, marker) {
			continue
		}
		for i, p := range got {
			if strings.Contains(p, marker) {
				t.Fatalf("piece %d %q shows %q, which masking the whole text removes (pieces %q)", i, p, marker, pieces)
			}
		}
	}
	// Every byte a piece keeps of its own is one the whole text keeps,
	// in the piece it came in: strip the [MASKED]s MaskPieces put in and
	// what is left is a subsequence of the original piece.
	for i, p := range got {
		rest := pieces[i]
		for seg := range strings.SplitSeq(p, Masked) {
			k := strings.Index(rest, seg)
			// A shape that takes in the start of a masked value leaves
			// the end of its "[MASKED]", as MaskString does.
			for n := len(Masked) - 1; k < 0 && n > 0; n-- {
				if strings.HasPrefix(seg, Masked[len(Masked)-n:]) {
					seg = seg[n:]
					k = strings.Index(rest, seg)
				}
			}
			if k < 0 {
				t.Fatalf("piece %d %q: %q is not from the original %q", i, p, seg, pieces[i])
			}
			if k >= 0 {
				rest = rest[k+len(seg):]
			}
		}
	}
}

// The stream blocks of a message are the deltas of one reply, in the
// provider's JSON: MaskEvent masks a secret two text deltas split (here in
// a real Anthropic Messages stream), keeps every other chunk byte for
// byte, and the text deltas still assemble the reply masked as a whole.
func TestMaskEventStreamBlocks(t *testing.T) {
	path := "/work/shared/fixtures/anthropic-sse/anthropic-clear-thinking.1.chunks.txt"
	data, err := os.ReadFile(path)
	if err != nil {
		t.Skipf("shared fixture %s absent: %v", path, err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	type delta struct {
		Index int `json:"index"`
		Delta struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"delta"`
	}
	var text []int // lines holding text deltas
	for i, l := range lines {
		var d delta
		if err := json.Unmarshal([]byte(l), &d); err != nil {
			t.Fatal(err)
		}
		if d.Delta.Type == "text_delta" {
			text = append(text, i)
		}
	}
	if len(text) < 2 {
		t.Fatalf("%s has %d text deltas, want 2 or more", path, len(text))
	}
	// The key ends the first text delta and goes on in the second; the
	// thinking deltas (index 0) are a text of their own.
	a, b := text[0], text[1]
	lines[a] = strings.Replace(lines[a], `"text":"`, `"text":"key sk-ant-api03-`, 1)
	lines[b] = strings.Replace(lines[b], `"text":"`, `"text":"Xq7vT2mN9pL4kR8sW1yZ6bC3dF5gH0jKq\u0020`, 1)
	blocks := make([]transcript.ContentBlock, len(lines))
	for i, l := range lines {
		blocks[i] = transcript.ContentBlock{Type: transcript.BlockStream, Fidelity: transcript.FidelityAgentEmitted, Chunk: l}
	}
	ev := transcript.ExchangeEvent{Type: transcript.MessageAssistant, Payload: &transcript.MessagePayload{Role: "assistant", Blocks: blocks}}
	m := NewMasker(nil)
	m.MaskEvent(&ev)
	got := ev.Payload.(*transcript.MessagePayload).Blocks
	if len(got) != len(lines) {
		t.Fatalf("%d blocks became %d", len(lines), len(got))
	}
	var assembled, masked strings.Builder
	for i, blk := range got {
		var d delta
		if err := json.Unmarshal([]byte(blk.Chunk), &d); err != nil {
			t.Fatalf("chunk %d is not JSON any more: %v\n%s", i, err, blk.Chunk)
		}
		var orig delta
		_ = json.Unmarshal([]byte(lines[i]), &orig)
		assembled.WriteString(orig.Delta.Text)
		masked.WriteString(d.Delta.Text)
		if i != a && i != b && blk.Chunk != lines[i] {
			t.Errorf("chunk %d changed:\n%s\nwas\n%s", i, blk.Chunk, lines[i])
		}
		if strings.Contains(blk.Chunk, "Xq7vT2mN") || strings.Contains(blk.Chunk, "sk-ant") {
			t.Errorf("chunk %d shows the key: %s", i, blk.Chunk)
		}
	}
	if want := m.MaskString(assembled.String()); masked.String() != want {
		t.Errorf("the text deltas assemble %q, the reply masked whole is %q", masked.String(), want)
	}
	if blocks[a].Chunk != lines[a] {
		t.Error("MaskEvent modified the caller's blocks")
	}
}

// Strings at different places of the chunks are different texts: a tool
// call's arguments (by the "index" of its object) are not joined to the
// content, nor to another call's.
func TestMaskChunksSeparatesPlaces(t *testing.T) {
	m := NewMasker(nil)
	chunks := []string{
		`{"choices":[{"delta":{"content":"sk-ant-api03-"},"index":0}]}`,
		`{"choices":[{"delta":{"tool_calls":[{"function":{"arguments":"{\"k\":\"sk-ant-"},"index":0}]},"index":0}]}`,
		`{"choices":[{"delta":{"tool_calls":[{"function":{"arguments":"api03-"},"index":1}]},"index":0}]}`,
		`{"choices":[{"delta":{"tool_calls":[{"function":{"arguments":"Xq7vT2mN9pL4kR8sW1yZ6bC3dF5gH0jKq\"}"},"index":0}]},"index":0}]}`,
		`{"choices":[{"delta":{"content":"Xq7vT2mN9pL4kR8sW1yZ6bC3dF5gH0jKq"},"index":0}]}`,
		`not json sk-ant-api03-`, `Xq7vT2mN9pL4kR8sW1yZ6bC3dF5gH0jKq`,
		`{"api_key":"abcdefgh12","password":"abcdefgh","token":"abcdefgh","Authorization":"x"}`,
	}
	got := m.maskChunks(chunks)
	want := []string{
		`{"choices":[{"delta":{"content":"[MASKED]"},"index":0}]}`,
		`{"choices":[{"delta":{"tool_calls":[{"function":{"arguments":"{\"k\":\"[MASKED]"},"index":0}]},"index":0}]}`,
		`{"choices":[{"delta":{"tool_calls":[{"function":{"arguments":"api03-"},"index":1}]},"index":0}]}`,
		`{"choices":[{"delta":{"tool_calls":[{"function":{"arguments":"\"}"},"index":0}]},"index":0}]}`,
		`{"choices":[{"delta":{"content":""},"index":0}]}`,
		`not json [MASKED]`, ``,
		// A token is 10 bytes at least (maskableFor), a password may be
		// shorter.
		`{"api_key":"[MASKED]","password":"[MASKED]","token":"abcdefgh","Authorization":"x"}`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("maskChunks:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// FuzzMaskPieces: however a text is split, MaskPieces keeps the pieces'
// count, joins to MaskString of the whole, and shows nothing the whole
// text's masking removes.
func FuzzMaskPieces(f *testing.F) {
	for _, s := range pieceSecrets {
		f.Add("key "+s+" end", uint64(0x0123456789abcdef))
	}
	f.Add("pass zq8-env-secret-value-4711 zq8-env", uint64(7))
	m := NewMasker([]string{"REEL_TEST_API_KEY=zq8-env-secret-value-4711", "OTHER_SECRET=zq8-env"})
	f.Fuzz(func(t *testing.T, s string, cuts uint64) {
		rng := rand.New(rand.NewSource(int64(cuts)))
		checkPieces(t, m, randomSplit(rng, s))
	})
}

// FuzzMaskChunks: chunks of any bytes, JSON or not, mask to as many
// chunks, and JSON chunks stay JSON.
func FuzzMaskChunks(f *testing.F) {
	f.Add(`{"delta":{"text":"key sk-ant-api03-"},"index":1}`, `{"delta":{"text":"Xq7vT2mN9pL4kR8sW1yZ6bC3dF5gH0jKq"},"index":1}`)
	f.Add(`{"password":"hunter2hunter2"}`, `"zq8-env-secret-value-4711"`)
	f.Add(`[1,"a",{"b":null}]`, `plain`)
	m := NewMasker([]string{"REEL_TEST_API_KEY=zq8-env-secret-value-4711"})
	f.Fuzz(func(t *testing.T, a, b string) {
		got := m.maskChunks([]string{a, b})
		if len(got) != 2 {
			t.Fatalf("2 chunks became %d", len(got))
		}
		for i, in := range []string{a, b} {
			if json.Valid([]byte(in)) && !json.Valid([]byte(got[i])) {
				t.Fatalf("chunk %q masked to invalid JSON %q", in, got[i])
			}
			if strings.Contains(got[i], "zq8-env-secret-value-4711") {
				t.Fatalf("environment secret left: %q", got[i])
			}
		}
	})
}

// BenchmarkMaskPieces masks build output streamed in deltas of 3 to 20
// bytes (a secret every 50 lines) beside the plain standard-library way
// to mask a stream without leaking across deltas: join the deltas and run
// the regular expressions of stdlibMasker over the text, which gives no
// masked deltas back.
func BenchmarkMaskPieces(b *testing.B) {
	var text strings.Builder
	for i := 0; i < 1000; i++ {
		if i%50 == 0 {
			text.WriteString("connecting with token ghp_abcdefghijklmnopqrstuvwxyz0123456789\n")
			continue
		}
		fmt.Fprintf(&text, "[%05d] compiled ./pkg/module%d/file.go ok in 0.%03ds\n", i, i%97, i%1000)
	}
	rng := rand.New(rand.NewSource(1))
	var pieces []string
	for s := text.String(); s != ""; {
		n := min(len(s), 3+rng.Intn(18))
		pieces = append(pieces, s[:n])
		s = s[n:]
	}
	m := NewMasker([]string{"REEL_BENCH_TOKEN=not-in-the-output-123"})
	b.SetBytes(int64(text.Len()))
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		m.MaskPieces(pieces)
	}
	dur := time.Since(start)
	b.StopTimer()
	sm := newStdlibMasker()
	baseStart := time.Now()
	for i := 0; i < b.N; i++ {
		sm.mask(strings.Join(pieces, ""))
	}
	base := time.Since(baseStart)
	b.ReportMetric(float64(base)/float64(dur), "x-vs-stdlib")
}

// BenchmarkMaskStreamBlocks masks a message of stream blocks, OpenAI
// chunks of 3 to 20 bytes of build output, with MaskEvent, beside the
// plain standard-library way: decode each chunk with encoding/json, join
// the content deltas, run stdlibMasker's regular expressions over them and
// encode each chunk again.
func BenchmarkMaskStreamBlocks(b *testing.B) {
	var text strings.Builder
	for i := 0; i < 300; i++ {
		if i%50 == 0 {
			text.WriteString("connecting with token ghp_abcdefghijklmnopqrstuvwxyz0123456789\n")
			continue
		}
		fmt.Fprintf(&text, "[%05d] compiled ./pkg/module%d/file.go ok in 0.%03ds\n", i, i%97, i%1000)
	}
	rng := rand.New(rand.NewSource(1))
	var blocks []transcript.ContentBlock
	size := 0
	for s := text.String(); s != ""; {
		n := min(len(s), 3+rng.Intn(18))
		c, _ := json.Marshal(map[string]any{"id": "chatcmpl-D8Z5oo6uDh67AD85p73ksdT1KxhE0", "object": "chat.completion.chunk",
			"choices": []any{map[string]any{"index": 0, "delta": map[string]any{"content": s[:n]}, "finish_reason": nil}}})
		blocks = append(blocks, transcript.ContentBlock{Type: transcript.BlockStream, Fidelity: transcript.FidelityAgentEmitted, Chunk: string(c)})
		size += len(c)
		s = s[n:]
	}
	m := NewMasker([]string{"REEL_BENCH_TOKEN=not-in-the-output-123"})
	b.SetBytes(int64(size))
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		ev := transcript.ExchangeEvent{Type: transcript.MessageAssistant, Payload: &transcript.MessagePayload{Role: "assistant", Blocks: blocks}}
		m.MaskEvent(&ev)
	}
	dur := time.Since(start)
	b.StopTimer()
	sm := newStdlibMasker()
	baseStart := time.Now()
	for i := 0; i < b.N; i++ {
		var joined strings.Builder
		decoded := make([]map[string]any, len(blocks))
		for k, blk := range blocks {
			if err := json.Unmarshal([]byte(blk.Chunk), &decoded[k]); err != nil {
				b.Fatal(err)
			}
			d := decoded[k]["choices"].([]any)[0].(map[string]any)["delta"].(map[string]any)
			joined.WriteString(d["content"].(string))
		}
		sm.mask(joined.String())
		for _, d := range decoded {
			if _, err := json.Marshal(d); err != nil {
				b.Fatal(err)
			}
		}
	}
	base := time.Since(baseStart)
	b.ReportMetric(float64(base)/float64(dur), "x-vs-stdlib")
}
