package workflow

import (
	"encoding/json"
	"strings"
	"testing"
)

// FuzzTemplate: any text parses or gives an error, never a panic; a
// parsed template renders or fails cleanly against real data, its
// references can be listed, and the dot-less spelling of a reference
// renders as the dotted one does.
func FuzzTemplate(f *testing.F) {
	for _, s := range []string{
		"plain text", "{{.inputs.name}}", "{{inputs.name}}", "{{range .states.build.JSON.files}}{{.}} {{inputs.name}}{{end}}",
		"{{with .loop.Item}}{{.k}}{{end}}", "{{index .states \"build\" \"Output\"}}", "{{inputs \"x\"}}", "{{ json .loop.Item | escape }}",
		"{{join (split .states.build.Output \",\") \"|\"}}", "{{define \"x\"}}{{inputs.name}}{{end}}{{template \"x\" .}}",
		"{{if loop.First}}{{(inputs).name}}{{else}}{{$.env.HOME}}{{end}}", "{{$x := inputs.name}}{{$x}}", "{{.}}", "{{",
	} {
		f.Add(s)
	}
	data := sampleData()
	f.Fuzz(func(t *testing.T, src string) {
		tm, err := parseTemplate(nil, src, Pos{Line: 1, Col: 1})
		if err != nil {
			return
		}
		_ = tm.refs()
		out, err := tm.Execute(data)
		if err == nil && !strings.Contains(src, "{{") && out != src {
			t.Fatalf("literal %q rendered as %q", src, out)
		}
		// every dotted namespace reference has a dot-less twin
		for _, ns := range Namespaces {
			if !strings.Contains(src, "{{."+ns+".") {
				continue
			}
			twin, perr := parseTemplate(nil, strings.ReplaceAll(src, "{{."+ns+".", "{{"+ns+"."), Pos{})
			if perr != nil {
				t.Fatalf("dot-less twin of %q does not parse: %v", src, perr)
			}
			if out2, err2 := twin.Execute(data); (err == nil) != (err2 == nil) || err == nil && out2 != out {
				t.Fatalf("%q renders %q, %v; its dot-less twin %q, %v", src, out, err, out2, err2)
			}
		}
	})
}

// FuzzArithmetic: any text gives a number or an error, never a panic.
func FuzzArithmetic(f *testing.F) {
	for _, s := range []string{"2 * 3", "(1 + 2) % 2", "7 / 2", "1 / 0", "2 ** 3", "9999999999 * 9999999999", "((((", "-1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		_, _ = Arithmetic(s)
	})
}

// FuzzParseList: a JSON array comes back as itself; anything else is
// comma-separated values or an error, never a panic.
func FuzzParseList(f *testing.F) {
	for _, s := range []string{`["a", 1, {"k": null}]`, "a, b ,c", "", "[", "[1,", "x,,y", `"quoted"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParseList(s)
		var want []any
		if json.Unmarshal([]byte(strings.TrimSpace(s)), &want) == nil && strings.TrimSpace(s) != "" {
			a, _ := json.Marshal(want)
			b, _ := json.Marshal(got)
			if err != nil || string(a) != string(b) {
				t.Fatalf("%q = %s, %v; want %s", s, b, err, a)
			}
		}
	})
}
