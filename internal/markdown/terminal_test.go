package markdown

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
	"github.com/yuin/goldmark"
)

var update = flag.Bool("update", false, "rewrite golden files")

// TestTermGolden renders a sample holding every construct at three
// layouts; the golden files keep the escapes as the terminal gets them
// (cat one to see it).
func TestTermGolden(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("testdata", "terminal.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		opts TermOptions
	}{
		{"terminal-80.golden", TermOptions{Width: 80}},
		{"terminal-36.golden", TermOptions{Width: 36}},
		{"terminal-30-nocolor.golden", TermOptions{Width: 30, NoColor: true}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := NewTerm(c.opts).Render(string(src)) + "\n"
			checkTerm(t, got, c.opts.Width)
			path := filepath.Join("testdata", c.name)
			if *update {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to write it)", err)
			}
			if got != string(want) {
				t.Errorf("%s differs (go test -run TestTermGolden -update rewrites it); got:\n%s", path, got)
			}
		})
	}
}

// plain renders src without colour and drops the attributes, to assert
// on the layout.
func plain(src string, width int) string {
	return ansi.Strip(NewTerm(TermOptions{Width: width, NoColor: true}).Render(src))
}

func TestTermConstructs(t *testing.T) {
	for _, c := range []struct {
		name, src string
		width     int
		want      string
	}{
		{"heading shows its level", "### Three", 40, "### Three"},
		{"soft break is a line break", "one\ntwo", 40, "one\ntwo"},
		{"paragraphs wrap at spaces", "aaa bbb ccc ddd eee fff", 11, "aaa bbb ccc\nddd eee fff"},
		{"a long word is broken", "abcdefghijklmnop", 10, "abcdefghij\nklmnop"},
		{"inline code keeps its backticks without colour", "run `ls -l` now", 40, "run `ls -l` now"},
		{"link: text then URL once", "[docs](https://e.x/d)", 40, "docs (https://e.x/d)"},
		{"link URL as written, escapes resolved", `[q](https://e.x/?a=1&amp;b=\(2\))`, 40, "q (https://e.x/?a=1&b=(2))"},
		{"link whose text is its URL", "[https://e.x](https://e.x) <https://e.y>", 40, "https://e.x https://e.y"},
		{"image named, not fetched", "![chart](https://e.x/c.png)", 40, "image: chart (https://e.x/c.png)"},
		{"escapes and references", `\*a\* &amp; &#x41; &copy; \&amp;`, 40, "*a* & A © &amp;"},
		{"nested bullets", "- a\n  - b\n    - c\n      - d", 40, "• a\n  ◦ b\n    ▪ c\n      • d"},
		{"numbers right-aligned from the start", "9. nine\n10. ten\n11. eleven\n", 40, " 9. nine\n10. ten\n11. eleven"},
		{"item text wraps under itself", "- aaa bbb ccc", 9, "• aaa bbb\n  ccc"},
		{"loose list", "- a\n\n- b", 40, "• a\n\n• b"},
		{"tasks", "- [x] done\n- [ ] open", 40, "• [x] done\n• [ ] open"},
		{"quote with a bar", "> a\n>\n> > b", 40, "│ a\n│\n│ │ b"},
		{"fenced code indented, tabs expanded", "```sh\n\tls\n```", 40, "        ls"},
		{"code broken only past the width", "```\nabcdefghijkl mn\n```", 12, "    abcdefgh\n    ijkl mn"},
		{"rule across the width", "---", 12, strings.Repeat("─", 12)},
		{"table aligned", "| a | bb |\n|--:|:-:|\n| ccc | d |", 40, "  a │ bb\n────┼───\nccc │ d"},
		{"table cells wrap when too wide", "| h | note |\n|---|---|\n| x | one two three four |", 14, "h │ note\n──┼───────────\nx │ one two\n  │ three four"},
		{"table row by row when far too wide", "| a | b | c | d |\n|---|---|---|---|\n| 1 | 2 | 3 | 4 |", 12, "a: 1\nb: 2\nc: 3\nd: 4"},
		{"details folded to its summary", "<details><summary>Thinking</summary>\n\nline one\nline two\n\nthree\n\n</details>\n\nafter", 40, "▸ Thinking (3 lines folded)\n\nafter"},
		{"details closed in its own block", "<DETAILS>\n<summary>Log</summary>\na\nb\n</details>\n\nafter", 40, "▸ Log (3 lines folded)\n\nafter"},
		{"nested details", "<details><summary>out</summary>\n\n<details><summary>in</summary>\n\nx\n\n</details>\n\ny\n\n</details>\n\nafter", 40, "▸ out (4 lines folded)\n\nafter"},
		{"unclosed details folds to the end", "<details>\n\nhidden", 40, "▸ details (1 line folded)"},
		{"raw HTML as written", "<div>x</div>\n\nan <b>inline</b> tag", 40, "<div>x</div>\n\nan <b>inline</b> tag"},
		{"wide characters count two cells", "漢字漢字漢字", 10, "漢字漢字漢\n字"},
		{"narrower than the minimum", "aaaaaaaaaaaa", 3, "aaaaaaaaaa\naa"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := plain(c.src, c.width); got != c.want {
				t.Errorf("got\n%s\nwant\n%s", got, c.want)
			}
		})
	}
}

// TestTermStyles checks what each construct looks like in colour and
// that NoColor keeps attributes but no colour.
func TestTermStyles(t *testing.T) {
	src := "# T\n\n*i* **b** ~~s~~ `c` [l](https://e.x)\n\n```\ncode\n```"
	got := NewTerm(TermOptions{Width: 40}).Render(src)
	for _, want := range []string{
		"\x1b[1;36m# T\x1b[0m", "\x1b[3mi\x1b[0m", "\x1b[1mb\x1b[0m", "\x1b[9ms\x1b[0m", "\x1b[33mc\x1b[0m",
		"\x1b[4;34ml\x1b[0m\x1b[90m (https://e.x)\x1b[0m", "    \x1b[33mcode\x1b[0m",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in %q", want, got)
		}
	}
	nc := NewTerm(TermOptions{Width: 40, NoColor: true}).Render(src)
	for _, m := range sgrSeq.FindAllStringSubmatch(nc, -1) {
		for _, p := range strings.Split(m[1], ";") {
			if p != "" && p != "0" && p != "1" && p != "3" && p != "4" && p != "9" {
				t.Errorf("NoColor output sets SGR %s: %q", p, nc)
			}
		}
	}
	if !strings.Contains(nc, "\x1b[1m# T\x1b[0m") || !strings.Contains(nc, "`c`") {
		t.Errorf("NoColor lost the heading's bold or the code's backticks: %q", nc)
	}
}

// A style cut by a line break is closed at the line's end and opened
// again on the next, so a pane showing any one line shows it right.
func TestTermLinesStandAlone(t *testing.T) {
	got := NewTerm(TermOptions{Width: 12}).Render("**one two three four** *five six seven*")
	want := "\x1b[1mone two\x1b[0m\n\x1b[1mthree four\x1b[0m\n\x1b[3mfive six\x1b[0m\n\x1b[3mseven\x1b[0m"
	if got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
}

// Hostile text from a transcript never reaches the terminal as an escape:
// OSC 52 (clipboard), OSC 0 (title), OSC 8 (links), CSI (screen, cursor,
// colours), BEL, C1 controls, in every construct and spelled as character
// references (issue 24 point 8).
func TestTermHostile(t *testing.T) {
	const osc52 = "\x1b]52;c;cm0gLXJmIH4=\x07"
	bad := []string{osc52, "\x1b]0;owned\x1b\\", "\x1b]8;;https://evil.example\x1b\\", "\x1b[2J\x1b[H", "\x1b[31m", "\x07", "\u009b31m", "\x9b", "\x1bc", "\x1bP1$r\x1b\\", "\x00", "\x7f", "\r"}
	var cases []string
	for _, b := range bad {
		cases = append(cases,
			"# head "+b, "text "+b+" after", "*em "+b+"*", "`code "+b+"`", "```\ncode "+b+" block\n```", "    indented "+b,
			"[link "+b+"](https://e.x)", "[l](https://e.x/"+b+")", "<https://e.x/"+b+">", "![alt "+b+"](https://e.x/i.png)",
			"- item "+b, "> quote "+b, "| h "+b+" |\n|---|\n| c "+b+" |", "<details><summary>s "+b+"</summary>\n\nx\n\n</details>",
			"<div>"+b+"</div>", "a <span>"+b+"</span>", "[x]: https://e.x/"+b+"\n\n[ref][x]",
		)
	}
	cases = append(cases,
		"&#27;]52;c;cm0gLXJmIH4=&#7; &#x1b;[2J &#155;31m &#7;", "`&#27;[31m`", "[&#27;]8;;x&#27;\\](https://e.x)",
		"```\n&#27;]52;c;eA==&#7;\n```", "&#0; &#x0;", "\xff\xfe invalid \xc3",
	)
	for _, c := range cases {
		for _, noColor := range []bool{false, true} {
			got := NewTerm(TermOptions{Width: 40, NoColor: noColor}).Render(c)
			checkTerm(t, got, 40)
			if strings.Contains(got, "cm0gLXJmIH4=") || strings.Contains(got, "owned") || strings.Contains(got, "evil.example") {
				t.Errorf("%q: an escape sequence's payload shows: %q", c, got)
			}
		}
	}
}

var sgrSeq = regexp.MustCompile(`\x1b\[([0-9;]*)m`)

// checkTerm checks what any output must hold: valid UTF-8, no escape but
// the renderer's SGR, no control character but newline, every line within
// the width (MinTermWidth at least) and closing the styles it opens.
func checkTerm(t *testing.T, out string, width int) {
	t.Helper()
	width = max(width, MinTermWidth)
	if !utf8.ValidString(out) {
		t.Errorf("invalid UTF-8: %q", out)
	}
	rest := sgrSeq.ReplaceAllString(out, "")
	for _, r := range rest {
		if r < 0x20 && r != '\n' || r == 0x7f || r >= 0x80 && r < 0xa0 {
			t.Errorf("control character %U outside the renderer's SGR: %q", r, out)
			break
		}
	}
	for i, l := range strings.Split(out, "\n") {
		if w := ansi.StringWidth(l); w > width {
			t.Errorf("line %d is %d cells wide, over %d: %q", i+1, w, width, l)
		}
		if seqs := sgrSeq.FindAllString(l, -1); len(seqs) > 0 && seqs[len(seqs)-1] != sgrReset {
			t.Errorf("line %d leaves a style open: %q", i+1, l)
		}
	}
}

// FuzzTerm: any text at any width renders without panicking, and the
// output holds what checkTerm asks.
func FuzzTerm(f *testing.F) {
	sample, err := os.ReadFile(filepath.Join("testdata", "terminal.md"))
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range bytes.Split(sample, []byte("\n\n")) {
		f.Add(string(s), uint8(30), false)
	}
	f.Add(string(sample), uint8(80), false)
	f.Add(string(sample), uint8(12), true)
	f.Add("| a | b | c |\n|---|:-:|--:|\n| 漢字 | `x` | [l](u) |", uint8(9), false)
	f.Add("> - > - > - ```\n\tx\n```", uint8(0), false)
	f.Add("\x1b]52;c;eA==\x07 &#27;[2J", uint8(40), true)
	f.Fuzz(func(t *testing.T, src string, width uint8, noColor bool) {
		out := NewTerm(TermOptions{Width: int(width), NoColor: noColor}).Render(src)
		checkTerm(t, out, int(width))
	})
}

// largeMarkdown is n bytes or so of what textview writes for a run: turn
// markers, replies with inline markup, lists, code and tables.
func largeMarkdown(n int) (string, int) {
	var b strings.Builder
	turns := 0
	for ; b.Len() < n; turns++ {
		fmt.Fprintf(&b, "**turn %d/9**\n\n**assistant**\n\nSome *reply* text with `code` and a [link](https://e.x/%d).\n\n- a\n- b\n\n```\nline\n```\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n", turns, turns)
	}
	return b.String(), turns
}

// TestTermLarge renders a run's worth of Markdown whole: the conversation
// tab renders a run again as it grows.
func TestTermLarge(t *testing.T) {
	src, turns := largeMarkdown(512 << 10)
	out := NewTerm(TermOptions{Width: 100}).Render(src)
	if got := strings.Count(out, "turn "); got != turns {
		t.Errorf("%d turn markers out of %d", got, turns)
	}
}

// BenchmarkTerm lays 1 MB of a run's Markdown out for an 100-cell pane,
// beside goldmark's own HTML renderer on the same text (parsing is the
// same; the ratio is what the layout costs above writing HTML).
func BenchmarkTerm(b *testing.B) {
	src, _ := largeMarkdown(1 << 20)
	term := NewTerm(TermOptions{Width: 100})
	html := goldmark.New(goldmark.WithExtensions(Extensions()...))
	b.SetBytes(int64(len(src)))
	var ours, base time.Duration
	for b.Loop() {
		t0 := time.Now()
		_ = term.Render(src)
		t1 := time.Now()
		var buf bytes.Buffer
		if err := html.Convert([]byte(src), &buf); err != nil {
			b.Fatal(err)
		}
		ours += t1.Sub(t0)
		base += time.Since(t1)
	}
	b.ReportMetric(float64(base)/float64(ours), "x-vs-goldmark-html")
}
