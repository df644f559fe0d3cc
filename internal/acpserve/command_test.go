package acpserve

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	sdk "github.com/coder/acp-go-sdk"
)

// AWF's input syntax, and reel's flags beside it.
func TestParseCommand(t *testing.T) {
	cases := []struct {
		in   string
		want command
	}{
		{"/review file=main.go review-type=security", command{Name: "review", Inputs: map[string]string{"file": "main.go", "review-type": "security"}}},
		{"/review --input=file=main.go --input file=b.go", command{Name: "review", Inputs: map[string]string{"file": "b.go"}}},
		{`/say msg="hello world" other='a b'`, command{Name: "say", Inputs: map[string]string{"msg": "hello world", "other": "a b"}}},
		{"/fetch url=https://x?a=1&b=2", command{Name: "fetch", Inputs: map[string]string{"url": "https://x?a=1&b=2"}}},
		{"  /kit:review  x 1", command{Name: "kit/review", Inputs: map[string]string{}, Ignored: []string{"x", "1"}}},
		{"/kit/review x=", command{Name: "kit/review", Inputs: map[string]string{"x": ""}}},
		{"/w main.go --verbose k=v --input", command{Name: "w", Inputs: map[string]string{"k": "v"}, Ignored: []string{"main.go", "--verbose"}}},
		{"/w --breakpoint ship,deploy -b x", command{Name: "w", Inputs: map[string]string{}, Interactive: true, Breakpoints: []string{"ship", "deploy", "x"}}},
		{"/w --interactive --breakpoint=a", command{Name: "w", Inputs: map[string]string{}, Interactive: true, Breakpoints: []string{"a"}}},
		{"/w\nk=v\tj=\"multi\nline\"", command{Name: "w", Inputs: map[string]string{"k": "v", "j": "multi\nline"}}},
		{`/w k="unterminated value`, command{Name: "w", Inputs: map[string]string{"k": "unterminated value"}}},
	}
	for _, c := range cases {
		got, err := parseCommand(c.in)
		if err != nil {
			t.Errorf("%q: %v", c.in, err)
			continue
		}
		if !reflect.DeepEqual(*got, c.want) {
			t.Errorf("%q:\n got %+v\nwant %+v", c.in, *got, c.want)
		}
	}
	for in, want := range map[string]string{
		"hello":    "slash command",
		"":         "slash command",
		"/":        "empty slash command",
		"/w =v":    `input "=v": want key=value`,
		"/w x = 1": `input "=": want key=value, without blanks around =`,
		"/w " + strings.Repeat("x", maxPromptBytes): "over the",
	} {
		_, err := parseCommand(in)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%.40q: error %v, want %q", in, err, want)
		}
	}
	if _, err := parseCommand("no command"); !errors.Is(err, errNotCommand) {
		t.Errorf("error %v", err)
	}
}

func TestCommandNames(t *testing.T) {
	for ref, name := range map[string]string{"review": "review", "kit/review": "kit:review"} {
		if got := commandName(ref); got != name {
			t.Errorf("commandName(%q) = %q", ref, got)
		}
		if got := commandRef(name); got != ref {
			t.Errorf("commandRef(%q) = %q", name, got)
		}
	}
}

// An editor's @-mention is a resource link glued to the text around it;
// what the server does not take is refused with a reason.
func TestPromptText(t *testing.T) {
	got, err := promptText([]sdk.ContentBlock{
		sdk.TextBlock("/review file="),
		sdk.ResourceLinkBlock("main.go", "file:///src/my%20app/main.go"),
		sdk.TextBlock(" type=security"),
		sdk.TextBlock("second block"),
		sdk.ResourceLinkBlock("spec", "https://example.com/spec"),
	})
	if want := "/review file=/src/my app/main.go type=security\nsecond blockhttps://example.com/spec"; err != nil || got != want {
		t.Errorf("got %q, %v\nwant %q", got, err, want)
	}
	for _, b := range []sdk.ContentBlock{sdk.ImageBlock("AAAA", "image/png"), sdk.AudioBlock("AAAA", "audio/wav")} {
		if _, err := promptText([]sdk.ContentBlock{b}); err == nil || !strings.Contains(err.Error(), "not supported") {
			t.Errorf("%+v: %v", b, err)
		}
	}
}

// The tokenizer and the parser take any text: they never panic, and what
// they accept has a workflow name and keyed inputs.
func FuzzParseCommand(f *testing.F) {
	for _, s := range []string{"/review file=main.go", `/a "b=c d" --input x=y`, "/w --breakpoint a,b", "/'", "/\x00=\xff", "hello", "/w --input"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := parseCommand(s)
		if err != nil {
			return
		}
		if c.Name == "" {
			t.Fatalf("%q: empty name", s)
		}
		for k := range c.Inputs {
			if k == "" || strings.TrimSpace(k) != k {
				t.Fatalf("%q: input key %q", s, k)
			}
		}
		if len(c.Breakpoints) > 0 && !c.Interactive {
			t.Fatalf("%q: breakpoints without interactive", s)
		}
		if utf8.ValidString(s) {
			for _, tok := range tokenize(s) {
				if !utf8.ValidString(tok) {
					t.Fatalf("%q: token %q is not UTF-8", s, tok)
				}
			}
		}
	})
}
