// Package pricing decides what an agent step cost: the provider's own
// figure when it reported one, else the step's tokens priced from a table
// of the public models of Anthropic, OpenAI and Google (prices.yaml,
// embedded, with its date and sources), which a project overrides or
// extends in its configuration. A step whose model the table does not know
// has no cost rather than a cost of zero: readers show "—", never "$0".
//
// Table.Step is the one function readers call for a step, RunTotal the one
// they call for a run and Total.String the one way they show a cost (reel
// runs, tree, status, stats, diff, replay, the run index, the web view and
// the exported spans), so that a run shows the same figure everywhere and
// the tokens and the cost of a step always come from the same source: the
// step's usage and either its reported cost or the price of that usage.
package pricing

import (
	_ "embed"
	"fmt"
	"math"
	"strings"
	"sync"

	"github.com/reelhq/reel/transcript"
	"gopkg.in/yaml.v3"
)

//go:embed prices.yaml
var pricesYAML []byte

// Price is one model's price in US dollars per million tokens.
type Price struct {
	Model    string   `yaml:"model" json:"model"`
	Aliases  []string `yaml:"aliases,omitempty" json:"aliases,omitempty"`
	Provider string   `yaml:"provider,omitempty" json:"provider,omitempty"`
	// Input is the price of uncached input, Output of output (reasoning
	// included). CacheRead, CacheWrite (a 5-minute cache write) and
	// CacheWrite1h (a one-hour one) default to Input when absent.
	Input        float64  `yaml:"input" json:"input"`
	Output       float64  `yaml:"output" json:"output"`
	CacheRead    *float64 `yaml:"cache_read,omitempty" json:"cache_read,omitempty"`
	CacheWrite   *float64 `yaml:"cache_write,omitempty" json:"cache_write,omitempty"`
	CacheWrite1h *float64 `yaml:"cache_write_1h,omitempty" json:"cache_write_1h,omitempty"`
}

// Table is a set of prices by model.
type Table struct {
	// Date is when the prices were read from their sources.
	Date string `yaml:"date" json:"date"`
	// Sources name where the prices come from, by provider.
	Sources map[string]string `yaml:"sources,omitempty" json:"sources,omitempty"`
	Models  []Price           `yaml:"models" json:"models"`

	byName map[string]int
}

var defaultTable = sync.OnceValues(func() (*Table, error) { return Parse(pricesYAML, "prices.yaml") })

// Default returns the table reel ships. The caller must not modify it.
func Default() *Table {
	t, err := defaultTable()
	if err != nil {
		// prices.yaml is embedded and tested: failing to parse it is a
		// build defect, not a runtime condition.
		panic(fmt.Sprintf("pricing: embedded table: %v", err))
	}
	return t
}

// Parse reads a price table in prices.yaml's format; name labels errors.
// Every entry needs a model and non-negative prices; a model or alias
// listed twice is an error.
func Parse(b []byte, name string) (*Table, error) {
	var t Table
	if err := yaml.Unmarshal(b, &t); err != nil {
		return nil, fmt.Errorf("price table %s: %w", name, err)
	}
	if err := t.index(); err != nil {
		return nil, fmt.Errorf("price table %s: %w", name, err)
	}
	return &t, nil
}

// FromEntries builds a table of prices given one by one (a configuration's
// inline entries).
func FromEntries(models []Price) (*Table, error) {
	t := &Table{Models: models}
	if err := t.index(); err != nil {
		return nil, err
	}
	return t, nil
}

func (t *Table) index() error {
	t.byName = make(map[string]int, len(t.Models))
	for i, p := range t.Models {
		if strings.TrimSpace(p.Model) == "" {
			return fmt.Errorf("entry %d has no model", i+1)
		}
		for _, v := range []*float64{&p.Input, &p.Output, p.CacheRead, p.CacheWrite, p.CacheWrite1h} {
			if v != nil && (*v < 0 || math.IsNaN(*v) || math.IsInf(*v, 0)) {
				return fmt.Errorf("model %s: prices must be non-negative numbers", p.Model)
			}
		}
		for _, n := range append([]string{p.Model}, p.Aliases...) {
			k := canonical(n)
			if _, dup := t.byName[k]; dup {
				return fmt.Errorf("model %s is listed twice", n)
			}
			t.byName[k] = i
		}
	}
	return nil
}

// With returns a table holding t's prices with those of over added, an
// entry of over replacing t's entry for the same model (by name or alias).
// The date and sources are over's when it has them. t is not modified.
func (t *Table) With(over *Table) *Table {
	if over == nil || len(over.Models) == 0 {
		return t
	}
	out := &Table{Date: t.Date, Sources: t.Sources}
	if over.Date != "" {
		out.Date = over.Date
	}
	if len(over.Sources) > 0 {
		out.Sources = over.Sources
	}
	replaced := map[int]bool{}
	for _, p := range over.Models {
		for _, n := range append([]string{p.Model}, p.Aliases...) {
			if i, ok := t.byName[canonical(n)]; ok {
				replaced[i] = true
			}
		}
	}
	for i, p := range t.Models {
		if !replaced[i] {
			out.Models = append(out.Models, p)
		}
	}
	out.Models = append(out.Models, over.Models...)
	// Names resolve in order, so an override also takes a name that only
	// an alias of another base entry had.
	out.byName = make(map[string]int, len(out.Models))
	for i, p := range out.Models {
		for _, n := range append([]string{p.Model}, p.Aliases...) {
			out.byName[canonical(n)] = i
		}
	}
	return out
}

// canonical reduces a model id to the form the table is keyed by: lower
// case, without a provider prefix ("anthropic/", "models/",
// "anthropic.", "us.anthropic."), a release-date suffix ("-20251001",
// "-2025-08-07", Vertex's "@20250929") or a Bedrock version tag ("-v1:0").
// It is the one place model ids are matched (every reader prices through
// Table.Cost), and it runs for every priced step, so it cuts bytes rather
// than running regular expressions.
func canonical(model string) string {
	m := strings.TrimSpace(model)
	if hasUpper(m) {
		m = strings.ToLower(m)
	}
	if i := strings.LastIndexByte(m, '/'); i >= 0 {
		m = m[i+1:]
	}
	for _, p := range []string{"us.anthropic.", "eu.anthropic.", "apac.anthropic.", "anthropic."} {
		m = strings.TrimPrefix(m, p)
	}
	m = trimVersionTag(m)
	return trimDate(m)
}

func hasUpper(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; 'A' <= c && c <= 'Z' || c >= 0x80 {
			return true
		}
	}
	return false
}

// trimVersionTag takes off a trailing "-v<digits>", "-v<digits>:<digits>"
// or ":<digits>".
func trimVersionTag(m string) string {
	end := len(m)
	i := end
	for i > 0 && isDigit(m[i-1]) {
		i--
	}
	if i == end || i == 0 {
		return m
	}
	if m[i-1] == ':' {
		// ":<digits>", alone or after "-v<digits>"
		j := i - 1
		k := j
		for k > 0 && isDigit(m[k-1]) {
			k--
		}
		if k < j && k >= 2 && m[k-1] == 'v' && m[k-2] == '-' {
			return m[:k-2]
		}
		return m[:j]
	}
	if i >= 2 && m[i-1] == 'v' && m[i-2] == '-' {
		return m[:i-2]
	}
	return m
}

// trimDate takes off a trailing "-YYYYMMDD", "-YYYY-MM-DD" or "@" followed
// by either.
func trimDate(m string) string {
	digits := func(s string) bool {
		for i := 0; i < len(s); i++ {
			if !isDigit(s[i]) {
				return false
			}
		}
		return true
	}
	n := len(m)
	if n >= 9 && (m[n-9] == '-' || m[n-9] == '@') && digits(m[n-8:]) {
		return m[:n-9]
	}
	if n >= 11 && (m[n-11] == '-' || m[n-11] == '@') && digits(m[n-10:n-6]) && m[n-6] == '-' && digits(m[n-5:n-3]) && m[n-3] == '-' && digits(m[n-2:]) {
		return m[:n-11]
	}
	return m
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// Lookup returns the price of model.
func (t *Table) Lookup(model string) (Price, bool) {
	if t == nil || model == "" {
		return Price{}, false
	}
	i, ok := t.byName[canonical(model)]
	if !ok {
		return Price{}, false
	}
	return t.Models[i], true
}

// Price returns what usage u of model costs, in US dollars; ok is false
// when the table has no price for model (and u is not empty).
func (t *Table) Price(model string, u transcript.Usage) (usd float64, ok bool) {
	if u == (transcript.Usage{}) {
		return 0, true
	}
	p, ok := t.Lookup(model)
	if !ok {
		return 0, false
	}
	or := func(v *float64) float64 {
		if v == nil {
			return p.Input
		}
		return *v
	}
	write1h := min(u.CacheWrite1hTokens, u.CacheWriteTokens)
	write5m := u.CacheWriteTokens - write1h
	uncached := max(u.InputTokens-u.CacheReadTokens-u.CacheWriteTokens, 0)
	usd = float64(uncached)*p.Input +
		float64(u.CacheReadTokens)*or(p.CacheRead) +
		float64(write5m)*or(p.CacheWrite) +
		float64(write1h)*or(p.CacheWrite1h) +
		float64(u.OutputTokens)*p.Output
	return usd / 1e6, true
}
