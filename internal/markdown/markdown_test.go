package markdown

import (
	"fmt"
	"html/template"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"
)

func TestRendersTheDialect(t *testing.T) {
	r := New()
	got := string(r.HTML("## Summary\n\n**bold** and `code`\nnext line\n\n| a | b |\n|---|--:|\n| 1 | 2 |\n\n- [x] done\n- [ ] todo\n\n~~gone~~ https://example.com\n\n```go\nfmt.Println(\"<hi>\")\n```\n"))
	for _, want := range []string{
		"<h2>Summary</h2>", "<strong>bold</strong>", "<code>code</code>", "<br", "<table>", `<td align="right">2</td>`,
		`<input checked="" disabled="" type="checkbox"`, "<del>gone</del>",
		`<a href="https://example.com" rel="nofollow noreferrer noopener" target="_blank">https://example.com</a>`,
		`<code class="language-go">fmt.Println(&#34;&lt;hi&gt;&#34;)`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in\n%s", want, got)
		}
	}
}

// Hostile content renders as text: no element, attribute or URL scheme
// outside the allow-list, and no image is loaded.
func TestHostileContentIsText(t *testing.T) {
	r := New()
	cases := []string{
		`<script>alert(1)</script>`,
		`<img src=x onerror=alert(1)>`,
		`<a href="javascript:alert(1)">x</a>`,
		`[click](javascript:alert(1))`,
		`[click](JaVaScRiPt:alert(1))`,
		`[click](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)`,
		`<javascript:alert(1)>`,
		`![pic](https://evil.example/beacon.png)`,
		`![pic](javascript:alert(1))`,
		"[x](https://a.example \"t\" onmouseover=alert(1))",
		`<iframe src="https://evil.example"></iframe>`,
		`<svg onload=alert(1)>`,
		"```\n</code></pre><script>alert(1)</script>\n```",
		`<style>body{display:none}</style>`,
		"[x]: javascript:alert(1)\n\n[y][x]",
		"| <script>alert(1)</script> |\n|---|\n| <img src=x> |",
	}
	for _, c := range cases {
		if err := safe(string(r.HTML(c))); err != nil {
			t.Errorf("%q: %v", c, err)
		}
	}
	if got := string(r.HTML(`![pic](https://evil.example/beacon.png)`)); !strings.Contains(got, `class="md-image"`) || !strings.Contains(got, "image: pic") {
		t.Errorf("an image is not shown as a link naming it: %s", got)
	}
	if got := string(r.HTML(`<script>alert(1)</script> and <b>x</b>`)); strings.Contains(got, "alert") && !strings.Contains(got, "&lt;") {
		t.Errorf("raw HTML reached the output: %s", got)
	}
}

// safe parses out as a browser would and checks every element and
// attribute against what the package allows.
func safe(out string) error {
	elems := map[string]bool{"p": true, "br": true, "hr": true, "h1": true, "h2": true, "h3": true, "h4": true, "h5": true, "h6": true,
		"blockquote": true, "pre": true, "code": true, "em": true, "strong": true, "del": true, "ul": true, "ol": true, "li": true,
		"table": true, "thead": true, "tbody": true, "tr": true, "th": true, "td": true, "input": true, "a": true}
	z := html.NewTokenizer(strings.NewReader(out))
	for {
		switch z.Next() {
		case html.ErrorToken:
			return nil
		case html.StartTagToken, html.SelfClosingTagToken:
			tok := z.Token()
			if !elems[tok.Data] {
				return fmt.Errorf("element <%s> in %q", tok.Data, out)
			}
			for _, a := range tok.Attr {
				switch a.Key {
				case "href":
					// what the browser would follow: the scheme of the URL as
					// it parses it, control characters and spaces removed
					v := strings.Map(func(r rune) rune {
						if r <= ' ' {
							return -1
						}
						return r
					}, strings.ToLower(a.Val))
					if i := strings.IndexByte(v, ':'); v != "" && i >= 0 && !strings.ContainsAny(v[:i], "/?#") {
						if s := v[:i]; s != "http" && s != "https" && s != "mailto" {
							return fmt.Errorf("href %q in %q", a.Val, out)
						}
					}
				case "rel", "target", "class", "start", "align", "type", "checked", "disabled":
				default:
					return fmt.Errorf("attribute %s in %q", a.Key, out)
				}
			}
		}
	}
}

func TestLongTextIsEscapedNotParsed(t *testing.T) {
	src := strings.Repeat("# <b>x</b>\n", MaxSource/8)
	got := string(New().HTML(src))
	if !strings.HasPrefix(got, "<pre>") || strings.Contains(got, "<h1>") || strings.Contains(got, "<b>") {
		t.Fatalf("long text: %.200s", got)
	}
}

func FuzzHTML(f *testing.F) {
	for _, s := range []string{"# a", "[x](javascript:1)", "<script>", "![i](http://x)", "| a |\n|-|\n| <b> |"} {
		f.Add(s)
	}
	r := New()
	f.Fuzz(func(t *testing.T, s string) {
		if err := safe(string(r.HTML(s))); err != nil {
			t.Fatal(err)
		}
	})
}

// BenchmarkHTML renders a reply of Markdown beside the baseline the page
// used before, escaping the text as it is, and reports reel's time as a
// multiple of the baseline's.
func BenchmarkHTML(b *testing.B) {
	src := strings.Repeat("## Summary\n\nThe **change** moves `x` to [y](https://example.com).\n\n- one\n- two\n\n```go\nfunc f() {}\n```\n", 20)
	r := New()
	b.SetBytes(int64(len(src)))
	var reel, std time.Duration
	for b.Loop() {
		t0 := time.Now()
		r.HTML(src)
		t1 := time.Now()
		_ = template.HTMLEscapeString(src)
		reel += t1.Sub(t0)
		std += time.Since(t1)
	}
	b.ReportMetric(float64(reel)/float64(std), "x-of-escape")
}
