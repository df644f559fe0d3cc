package termtext

import (
	"strings"
	"testing"
)

// vitest's failure banner as Claude Code recorded it in a Bash result.
const vitest = "\x1b[31m⎯⎯⎯⎯ Failed Tests 1 ⎯⎯⎯⎯\x1b[39m\n\n\x1b[1m\x1b[41m FAIL \x1b[49m\x1b[22m src/a.test.ts\r\n"

func TestStrip(t *testing.T) {
	for in, want := range map[string]string{
		vitest:                                  "⎯⎯⎯⎯ Failed Tests 1 ⎯⎯⎯⎯\n\n FAIL  src/a.test.ts\n",
		"plain\ttext\n":                         "plain\ttext\n",
		"a\x1b]0;pwned title\x07b":              "ab",
		"a\x1b]52;c;cGFzdGU=\x07b":              "ab", // clipboard write
		"x\x1b[2J\x1b[Hy":                       "xy", // clear screen, home
		"bell\x07 nul\x00 del\x7f":              "bell\uFFFD nul\uFFFD del\uFFFD",
		"progress 10%\rprogress 100%":           "progress 10%\nprogress 100%",
		"\x1bP+q544e\x1b\\dcs \x1b_apc\x1b\\ok": "dcs ok",
	} {
		got := Strip(in)
		if got != want {
			t.Errorf("Strip(%q) = %q, want %q", in, got, want)
		}
		if HasControls(got) {
			t.Errorf("Strip(%q) left controls: %q", in, got)
		}
	}
}

func TestHTML(t *testing.T) {
	r := NewRenderer()
	got := string(r.HTML(vitest + "<script>alert(1)</script>"))
	for _, want := range []string{`<span class="term-fg31">⎯⎯⎯⎯ Failed Tests 1 ⎯⎯⎯⎯</span>`, `term-bg41`, "&lt;script&gt;"} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in %s", want, got)
		}
	}
	if strings.Contains(got, "\x1b") || strings.Contains(got, "[31m") {
		t.Errorf("escapes left in %q", got)
	}
	// a hyperlink to javascript: and an inline image that would be fetched
	hostile := "\x1b]8;;javascript:alert(1)\x1b\\click\x1b]8;;\x1b\\ \x1b]1337;File=name=eA==;inline=1:aGVsbG8=\x07 \x1b]1339;url=https://evil.example/x.png;content=x\x07"
	got = string(r.HTML(hostile))
	for _, bad := range []string{"javascript", "<img", "src="} {
		if strings.Contains(got, bad) {
			t.Errorf("%q in %s", bad, got)
		}
	}
	if got := string(r.HTML("a < b & c")); got != "a &lt; b &amp; c" {
		t.Errorf("plain text: %q", got)
	}
}

func FuzzStrip(f *testing.F) {
	for _, s := range []string{vitest, "\x1b]0;t\x07", "\x9b31m", "a\rb"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got := Strip(s); HasControls(got) {
			t.Fatalf("Strip(%q) = %q", s, got)
		}
	})
}
