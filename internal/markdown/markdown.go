// Package markdown renders the Markdown of a transcript (an agent's
// replies, its thinking, the prompts) as HTML that is safe to put in a
// page (Renderer) and as text laid out for a terminal pane (Term), and
// names the one dialect reel reads it in, so that every view (the run
// page, the HTML replay, the TUI) agrees on what a reply says.
//
// What it decides: the dialect is CommonMark with GitHub's tables,
// strikethrough, task lists and autolinks, and a newline inside a paragraph
// is a line break (agents and people write prompts line by line). A
// transcript is untrusted input, so nothing in it may reach the page as
// markup or make the page fetch anything: raw HTML is left out by goldmark
// (it renders no raw HTML unless told to), an image is shown as a link
// naming it, never loaded, and the result goes through a bluemonday
// allow-list of the elements goldmark writes, links limited to http, https
// and mailto, as a second wall should a goldmark extension ever let
// something through.
package markdown

import (
	"bytes"
	"html/template"
	"regexp"

	"github.com/microcosm-cc/bluemonday"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/renderer/html"
	"github.com/yuin/goldmark/util"
)

// Extensions are the goldmark extensions of reel's Markdown dialect. A
// renderer of the same text for another medium (the terminal) parses with
// these, so a table or a task list is one in every view.
func Extensions() []goldmark.Extender {
	return []goldmark.Extender{extension.GFM}
}

// HardWraps says a newline inside a paragraph is a line break, as in
// GitHub comments: prompts and replies are written line by line.
const HardWraps = true

// MaxSource bounds the text rendered as Markdown; past it the text is shown
// as it is (escaped), since a reply that long is a dump, not prose, and
// parsing it would cost the page its speed.
const MaxSource = 256 << 10

// Renderer turns Markdown into sanitized HTML. It is safe for concurrent
// use.
type Renderer struct {
	md     goldmark.Markdown
	policy *bluemonday.Policy
}

// New makes a Renderer.
func New() *Renderer {
	opts := []renderer.Option{
		// goldmark already leaves raw HTML out without html.WithUnsafe;
		// links with a dangerous scheme get an empty href.
		html.WithXHTML(),
		renderer.WithNodeRenderers(util.Prioritized(imageAsLink{}, 100)),
	}
	if HardWraps {
		opts = append(opts, html.WithHardWraps())
	}
	md := goldmark.New(
		goldmark.WithExtensions(Extensions()...),
		goldmark.WithRendererOptions(opts...),
	)
	return &Renderer{md: md, policy: policy()}
}

// HTML renders src. Text over MaxSource, or that fails to render, is
// returned escaped in a <pre>.
func (r *Renderer) HTML(src string) template.HTML {
	if len(src) > MaxSource {
		return template.HTML("<pre>" + template.HTMLEscapeString(src) + "</pre>")
	}
	var buf bytes.Buffer
	if err := r.md.Convert([]byte(src), &buf); err != nil {
		return template.HTML("<pre>" + template.HTMLEscapeString(src) + "</pre>")
	}
	return template.HTML(r.policy.SanitizeBytes(buf.Bytes()))
}

// policy allows what goldmark's GFM output holds and nothing else.
func policy() *bluemonday.Policy {
	p := bluemonday.NewPolicy()
	p.AllowElements("p", "br", "hr", "h1", "h2", "h3", "h4", "h5", "h6", "blockquote", "pre", "code",
		"em", "strong", "del", "ul", "ol", "li", "table", "thead", "tbody", "tr", "th", "td")
	p.AllowAttrs("start").Matching(regexp.MustCompile(`^[0-9]{1,9}$`)).OnElements("ol")
	p.AllowAttrs("align").Matching(regexp.MustCompile(`^(left|right|center)$`)).OnElements("th", "td")
	p.AllowAttrs("class").Matching(regexp.MustCompile(`^language-[\w.+#-]{1,40}$`)).OnElements("code")
	// task list items
	p.AllowAttrs("type").Matching(regexp.MustCompile(`^checkbox$`)).OnElements("input")
	p.AllowAttrs("checked", "disabled").Matching(regexp.MustCompile(`^(|checked|disabled)$`)).OnElements("input")
	p.AllowAttrs("href").OnElements("a")
	p.AllowURLSchemes("http", "https", "mailto")
	p.RequireParseableURLs(true)
	p.RequireNoFollowOnLinks(true)
	p.RequireNoReferrerOnLinks(true)
	p.AddTargetBlankToFullyQualifiedLinks(true)
	p.AllowAttrs("class").Matching(regexp.MustCompile(`^md-image$`)).OnElements("a")
	return p
}

// imageAsLink renders ![alt](url) as a link naming the image: a page that
// loaded it would fetch from wherever the transcript says.
type imageAsLink struct{}

func (imageAsLink) RegisterFuncs(reg renderer.NodeRendererFuncRegisterer) {
	reg.Register(ast.KindImage, func(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		n := node.(*ast.Image)
		alt := altText(n, source)
		_, _ = w.WriteString(`<a class="md-image" href="`)
		if !html.IsDangerousURL(n.Destination) {
			_, _ = w.Write(util.EscapeHTML(util.URLEscape(n.Destination, true)))
		}
		_, _ = w.WriteString(`">image: `)
		if len(alt) == 0 {
			alt = n.Destination
		}
		_, _ = w.Write(util.EscapeHTML(alt))
		_, _ = w.WriteString(`</a>`)
		return ast.WalkSkipChildren, nil
	})
}

// altText is an image's description as written, its inline markup left
// out.
func altText(n ast.Node, source []byte) []byte {
	var b bytes.Buffer
	_ = ast.Walk(n, func(c ast.Node, entering bool) (ast.WalkStatus, error) {
		if entering {
			switch t := c.(type) {
			case *ast.Text:
				b.Write(t.Segment.Value(source))
			case *ast.String:
				b.Write(t.Value)
			}
		}
		return ast.WalkContinue, nil
	})
	return b.Bytes()
}
