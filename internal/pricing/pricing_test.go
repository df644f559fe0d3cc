package pricing

import (
	"math"
	"regexp"
	"strings"
	"testing"

	"github.com/reelhq/reel/transcript"
)

func TestDefaultTable(t *testing.T) {
	tab := Default()
	if tab.Date == "" || len(tab.Sources) != 3 {
		t.Fatalf("table without date or sources: %q %v", tab.Date, tab.Sources)
	}
	providers := map[string]int{}
	for _, p := range tab.Models {
		providers[p.Provider]++
		if p.Input <= 0 || p.Output <= 0 {
			t.Errorf("%s: input %v output %v", p.Model, p.Input, p.Output)
		}
		if p.Output < p.Input {
			t.Errorf("%s: output cheaper than input", p.Model)
		}
		if p.CacheRead != nil && *p.CacheRead > p.Input {
			t.Errorf("%s: cache reads dearer than input", p.Model)
		}
	}
	for _, want := range []string{"anthropic", "openai", "google"} {
		if providers[want] < 5 {
			t.Errorf("%d %s models", providers[want], want)
		}
	}
}

func TestLookupNames(t *testing.T) {
	tab := Default()
	for in, want := range map[string]string{
		"claude-haiku-4-5-20251001":                    "claude-haiku-4-5",
		"claude-sonnet-4-5-20250929":                   "claude-sonnet-4-5",
		"claude-opus-4-0":                              "claude-opus-4",
		"anthropic/claude-3-5-haiku-latest":            "claude-3-5-haiku",
		"us.anthropic.claude-3-7-sonnet-20250219-v1:0": "claude-3-7-sonnet",
		"gpt-5-2025-08-07":                             "gpt-5",
		"GPT-4.1-mini":                                 "gpt-4.1-mini",
		"models/gemini-2.5-pro":                        "gemini-2.5-pro",
		"gemini-2.5-flash-lite":                        "gemini-2.5-flash-lite",
	} {
		p, ok := tab.Lookup(in)
		if !ok || p.Model != want {
			t.Errorf("Lookup(%q) = %q, %v; want %q", in, p.Model, ok, want)
		}
	}
	for _, unknown := range []string{"", "gpt-5.6-luna", "claude-opus-4-7", "<synthetic>", "claude", "gemini-2.5"} {
		if p, ok := tab.Lookup(unknown); ok {
			t.Errorf("Lookup(%q) = %q: a model the table does not list must stay unpriced", unknown, p.Model)
		}
	}
}

// The cost Claude Code reported for a haiku-4-5 turn whose cache writes
// went to the one-hour cache (claude_autocompact_2.1.285.jsonl, result 1):
// the table reproduces it to the last digit.
func TestPriceMatchesReportedClaudeCost(t *testing.T) {
	u := transcript.Usage{InputTokens: 18 + 29690 + 34984, CacheReadTokens: 34984, CacheWriteTokens: 29690, CacheWrite1hTokens: 29690,
		OutputTokens: 234, ReasoningTokens: 114}
	u.TotalTokens = u.InputTokens + u.OutputTokens
	got, ok := Default().Price("claude-haiku-4-5-20251001", u)
	if !ok || math.Abs(got-0.0640664) > 1e-9 {
		t.Errorf("Price = %.10f, %v; Claude Code reported 0.0640664", got, ok)
	}
	// The same tokens written to the 5-minute cache cost less.
	u.CacheWrite1hTokens = 0
	if five, _ := Default().Price("claude-haiku-4-5", u); five >= got {
		t.Errorf("5-minute writes %.6f not cheaper than 1-hour ones %.6f", five, got)
	}
}

func TestPriceOpenAICachedInput(t *testing.T) {
	// Codex: input_tokens include the cached ones, output the reasoning.
	u := transcript.Usage{InputTokens: 40489, CacheReadTokens: 27904, OutputTokens: 178, ReasoningTokens: 52}
	got, ok := Default().Price("gpt-5-codex", u)
	want := (float64(40489-27904)*1.25 + 27904*0.125 + 178*10) / 1e6
	if !ok || math.Abs(got-want) > 1e-12 {
		t.Errorf("Price = %v, want %v", got, want)
	}
}

func TestStep(t *testing.T) {
	tab := Default()
	reported, zero := 0.5, 0.0
	for _, c := range []struct {
		name string
		ar   transcript.AgentResult
		want Total
		show string
	}{
		{"reported wins", transcript.AgentResult{Model: "gpt-5", CostUSD: &reported, Usage: transcript.Usage{InputTokens: 1e6}}, Total{USD: 0.5, Known: true}, "$0.5000"},
		{"computed", transcript.AgentResult{Model: "gpt-5", Usage: transcript.Usage{InputTokens: 1e6, OutputTokens: 1e6}}, Total{USD: 11.25, Computed: 11.25, Known: true}, "$11.2500"},
		{"unknown model", transcript.AgentResult{Model: "gpt-5.6-luna", Usage: transcript.Usage{InputTokens: 10}}, Total{Unpriced: 1}, "—"},
		{"no model", transcript.AgentResult{Usage: transcript.Usage{OutputTokens: 1}}, Total{Unpriced: 1}, "—"},
		{"nothing used", transcript.AgentResult{Model: "who-knows"}, Total{}, "—"},
		{"nothing used, reported zero", transcript.AgentResult{Model: "claude-haiku-4-5", CostUSD: &zero}, Total{}, "—"},
		{"used, reported zero", transcript.AgentResult{Model: "local", CostUSD: &zero, Usage: transcript.Usage{InputTokens: 5}}, Total{Known: true}, "$0.0000"},
	} {
		got := tab.Step(&c.ar)
		if math.Abs(got.USD-c.want.USD) > 1e-9 || math.Abs(got.Computed-c.want.Computed) > 1e-9 || got.Known != c.want.Known || got.Unpriced != c.want.Unpriced {
			t.Errorf("%s: Step = %+v, want %+v", c.name, got, c.want)
		}
		if s := got.String(); s != c.show {
			t.Errorf("%s: shown as %q, want %q", c.name, s, c.show)
		}
	}
}

func TestRunTotal(t *testing.T) {
	one, zero := 1.0, 0.0
	priced := Total{USD: 0.25, Computed: 0.25, Known: true}
	for _, c := range []struct {
		name     string
		recorded *float64
		steps    Total
		show     string
	}{
		{"no account, steps", nil, priced, "$0.2500"},
		{"recorded reported plus priced", &one, Total{USD: 1.25, Computed: 0.25, Known: true}, "$1.2500"},
		{"recorded total covers the steps' reported part", &one, Total{USD: 0.75, Computed: 0.25, Known: true}, "$1.2500"},
		{"recorded zero, nothing known", &zero, Total{}, "—"},
		{"recorded zero, steps priced", &zero, priced, "$0.2500"},
		{"unpriced", nil, Total{Unpriced: 2}, "—"},
		{"partly priced", &one, Total{Unpriced: 1}, "$1.0000+"},
	} {
		if got := RunTotal(c.recorded, c.steps).String(); got != c.show {
			t.Errorf("%s: %q, want %q", c.name, got, c.show)
		}
	}
	if p := (Total{}).USDPtr(); p != nil {
		t.Errorf("unknown total has cost_usd %v", *p)
	}
	if got := Of(nil, 3).String(); got != "—" {
		t.Errorf("Of(nil, 3) = %q", got)
	}
}

func TestWithOverrides(t *testing.T) {
	over, err := Parse([]byte(`
date: 2026-11-01
models:
  - {model: gpt-5, provider: openai, input: 1, output: 8}
  - {model: gpt-5.6-luna, aliases: [luna], provider: openai, input: 2, output: 16, cache_read: 0.2}
`), "test")
	if err != nil {
		t.Fatal(err)
	}
	tab := Default().With(over)
	if tab.Date != "2026-11-01" {
		t.Errorf("date %q", tab.Date)
	}
	if p, _ := tab.Lookup("gpt-5-2025-08-07"); p.Input != 1 {
		t.Errorf("override not applied: %+v", p)
	}
	if p, ok := tab.Lookup("LUNA"); !ok || p.Model != "gpt-5.6-luna" {
		t.Errorf("alias of a new model: %+v %v", p, ok)
	}
	if _, ok := tab.Lookup("claude-haiku-4-5"); !ok {
		t.Error("base entries lost")
	}
	if p, _ := Default().Lookup("gpt-5"); p.Input != 1.25 {
		t.Error("With modified the default table")
	}
}

func TestParseErrors(t *testing.T) {
	for in, want := range map[string]string{
		"models: [{input: 1}]":                                     "no model",
		"models: [{model: a, input: -1}]":                          "non-negative",
		"models: [{model: a}, {model: b, aliases: [A]}]":           "listed twice",
		"models: {model: a}":                                       "cannot unmarshal",
		"models: [{model: a, input: 1, output: 2, cache_read: x}]": "cannot unmarshal",
	} {
		if _, err := Parse([]byte(in), "cfg"); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q) = %v, want an error with %q", in, err, want)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add(pricesYAML)
	f.Add([]byte("models: [{model: m, input: 1e308, output: 1e308}]"))
	f.Fuzz(func(t *testing.T, b []byte) {
		tab, err := Parse(b, "fuzz")
		if err != nil {
			return
		}
		for _, p := range tab.Models {
			usd, ok := tab.Price(p.Model, transcript.Usage{InputTokens: 5, CacheReadTokens: 9, OutputTokens: 3})
			if !ok || usd < 0 || math.IsNaN(usd) {
				t.Fatalf("%s: %v %v", p.Model, usd, ok)
			}
		}
	})
}

// canonicalRE is canonical as regular expressions say it, the reference
// the byte-cutting version must agree with.
func canonicalRE(model string) string {
	m := strings.ToLower(strings.TrimSpace(model))
	if i := strings.LastIndexByte(m, '/'); i >= 0 {
		m = m[i+1:]
	}
	for _, p := range []string{"us.anthropic.", "eu.anthropic.", "apac.anthropic.", "anthropic."} {
		m = strings.TrimPrefix(m, p)
	}
	m = regexp.MustCompile(`(?:-v\d+(?::\d+)?|:\d+)$`).ReplaceAllString(m, "")
	return regexp.MustCompile(`(?:-|@)(?:\d{8}|\d{4}-\d{2}-\d{2})$`).ReplaceAllString(m, "")
}

func TestCanonicalMatchesItsDefinition(t *testing.T) {
	for _, in := range []string{
		"claude-sonnet-4-5-20250929", "Claude-Sonnet-4-5@20250929", "us.anthropic.claude-opus-4-1-20250805-v1:0", "anthropic.claude-3-haiku-20240307-v1",
		"gpt-4o-2024-08-06", "models/gemini-2.5-pro", "x:1:2", ":5", "5", "v1:0", "-v1", "a-v", "a-v:", "a-2025-1-01", "a-1234567", "a@12345678",
		"gpt-4.1", "  GPT-5.1-Codex ", "a-v1:0-20250101", "a-20250101-v1:0", "ÄBC-20250101",
	} {
		if got, want := canonical(in), canonicalRE(in); got != want {
			t.Errorf("canonical(%q) = %q, want %q", in, got, want)
		}
	}
}

func FuzzCanonical(f *testing.F) {
	for _, s := range []string{"claude-sonnet-4-5-20250929", "us.anthropic.claude-opus-4-1-20250805-v1:0", "gpt-4o-2024-08-06", "x:1:2", "a@2025-01-01"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		if got, want := canonical(in), canonicalRE(in); got != want {
			t.Errorf("canonical(%q) = %q, want %q", in, got, want)
		}
	})
}
