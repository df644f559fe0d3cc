package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	"gopkg.in/yaml.v3"
	"pgregory.net/rapid"
)

// The OpenAPI document against the server, with neither trusted: the
// document is checked against the OpenAPI 3.1 meta-schema, then requests
// generated from the document's own schemas (valid ones, and ones bent
// out of shape) go to a real server, and every response is checked
// against the document by an independent validator (pb33f's
// libopenapi-validator, which reads 3.1). This stands in for schemathesis,
// which lives on PyPI, out of reach here and in CI (docs/api.md).

func fetchDoc(t testing.TB, a *apiServer, path string) []byte {
	t.Helper()
	resp, err := http.Get(a.url + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %s", path, resp.Status)
	}
	return b
}

func TestOpenAPIDocument(t *testing.T) {
	a := startAPI(t, map[string]string{"hello": apiHello}, Options{AllowRuns: true})
	js := fetchDoc(t, a, "/openapi.json")
	doc, err := libopenapi.NewDocument(js)
	if err != nil {
		t.Fatal(err)
	}
	if v := doc.GetVersion(); !strings.HasPrefix(v, "3.1") {
		t.Fatalf("OpenAPI %s, want 3.1", v)
	}
	val, errs := validator.NewValidator(doc)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if ok, verrs := val.ValidateDocument(); !ok {
		for _, e := range verrs {
			t.Errorf("document: %s: %s", e.Message, e.Reason)
		}
	}
	// The YAML form is the same document.
	var fromYAML, fromJSON any
	if err := yaml.Unmarshal(fetchDoc(t, a, "/openapi.yaml"), &fromYAML); err != nil {
		t.Fatal(err)
	}
	json.Unmarshal(js, &fromJSON)
	yj, _ := json.Marshal(fromYAML)
	jj, _ := json.Marshal(fromJSON)
	if !bytes.Equal(yj, jj) {
		t.Errorf("/openapi.yaml and /openapi.json differ")
	}
	// Every AWF route is in it.
	var d struct {
		Paths map[string]map[string]any `json:"paths"`
	}
	json.Unmarshal(js, &d)
	for _, r := range []string{"GET /api/workflows", "GET /api/workflows/{scope}/{name}", "POST /api/workflows/{scope}/{name}/validate",
		"POST /api/workflows/{scope}/{name}/run", "GET /api/executions", "GET /api/executions/{id}", "DELETE /api/executions/{id}",
		"POST /api/executions/{id}/resume", "GET /api/executions/{id}/events", "GET /api/history", "GET /api/history/stats"} {
		m, p, _ := strings.Cut(r, " ")
		if _, ok := d.Paths[p][strings.ToLower(m)]; !ok {
			t.Errorf("%s is not in the document", r)
		}
	}
}

// docGen draws values from the document's JSON schemas.
type docGen struct {
	doc    map[string]any
	ids    []string // run ids of the storage, and some that are not
	words  []string // workflow, scope and input names, and noise
	inputs []string
}

func (g *docGen) resolve(s map[string]any) map[string]any {
	for i := 0; i < 8; i++ {
		ref, ok := s["$ref"].(string)
		if !ok {
			return s
		}
		name := strings.TrimPrefix(ref, "#/components/schemas/")
		s, _ = g.doc["components"].(map[string]any)["schemas"].(map[string]any)[name].(map[string]any)
	}
	return s
}

func schemaType(s map[string]any) string {
	switch t := s["type"].(type) {
	case string:
		return t
	case []any:
		for _, x := range t {
			if x != "null" {
				return x.(string)
			}
		}
	}
	if _, ok := s["properties"]; ok {
		return "object"
	}
	return ""
}

// anyValue is any JSON value.
func (g *docGen) anyValue(t *rapid.T, label string) any {
	switch rapid.IntRange(0, 5).Draw(t, label+".kind") {
	case 0:
		return rapid.SampledFrom(g.words).Draw(t, label+".word")
	case 1:
		return float64(rapid.IntRange(-5, 100).Draw(t, label+".int"))
	case 2:
		return rapid.Bool().Draw(t, label+".bool")
	case 3:
		return []any{rapid.SampledFrom(g.words).Draw(t, label+".item")}
	case 4:
		return nil
	}
	return rapid.String().Draw(t, label+".string")
}

// value draws a value of schema s; bent, it may break the schema (a
// wrong type, a value off the enum) to exercise the errors.
func (g *docGen) value(t *rapid.T, s map[string]any, label string, depth int) any {
	s = g.resolve(s)
	if s == nil || depth > 4 {
		return g.anyValue(t, label)
	}
	if rapid.IntRange(0, 19).Draw(t, label+".bend") == 0 {
		return g.anyValue(t, label)
	}
	if enum, ok := s["enum"].([]any); ok && len(enum) > 0 {
		return rapid.SampledFrom(enum).Draw(t, label+".enum")
	}
	switch schemaType(s) {
	case "object":
		out := map[string]any{}
		props, _ := s["properties"].(map[string]any)
		req, _ := s["required"].([]any)
		for _, name := range sortedKeys(props) {
			if name == "$schema" {
				continue
			}
			if !slices.Contains(req, any(name)) && !rapid.Bool().Draw(t, label+"."+name+".present") {
				continue
			}
			if name == "inputs" || name == "input_overrides" {
				out[name] = g.inputsValue(t, label+"."+name)
				continue
			}
			p, _ := props[name].(map[string]any)
			out[name] = g.value(t, p, label+"."+name, depth+1)
		}
		return out
	case "array":
		items, _ := s["items"].(map[string]any)
		n := rapid.IntRange(0, 3).Draw(t, label+".len")
		out := make([]any, n)
		for i := range out {
			out[i] = g.value(t, items, fmt.Sprintf("%s[%d]", label, i), depth+1)
		}
		return out
	case "integer":
		lo, hi := -10, 2000
		if m, ok := s["minimum"].(float64); ok {
			lo = int(m)
		}
		if m, ok := s["maximum"].(float64); ok {
			hi = int(m)
		}
		return float64(rapid.IntRange(lo, hi).Draw(t, label+".int"))
	case "number":
		return rapid.Float64Range(-1e6, 1e6).Draw(t, label+".num")
	case "boolean":
		return rapid.Bool().Draw(t, label+".bool")
	case "string":
		if s["format"] == "date-time" {
			d := time.Duration(rapid.IntRange(-72, 72).Draw(t, label+".hours")) * time.Hour
			return time.Now().Add(d).UTC().Format(time.RFC3339)
		}
		return rapid.SampledFrom(g.words).Draw(t, label+".word")
	}
	return g.anyValue(t, label)
}

// inputsValue draws a workflow's inputs: declared names mostly, with
// values of any JSON type.
func (g *docGen) inputsValue(t *rapid.T, label string) map[string]any {
	out := map[string]any{}
	n := rapid.IntRange(0, 4).Draw(t, label+".n")
	for i := 0; i < n; i++ {
		k := rapid.SampledFrom(g.inputs).Draw(t, fmt.Sprintf("%s.key%d", label, i))
		out[k] = g.anyValue(t, label+"."+k)
	}
	return out
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

type docOp struct {
	method, path string
	op           map[string]any
}

func TestOpenAPIConformance(t *testing.T) {
	a := startAPI(t, map[string]string{"hello": apiHello, "flaky": apiFlaky, "broken": apiBroken}, Options{AllowRuns: true})
	// Runs of every kind for the generated requests to find.
	done := a.run("hello", map[string]any{"who": "x"})
	failed := a.run("flaky", map[string]any{})
	a.wait(done)
	a.wait(failed)

	js := fetchDoc(t, a, "/openapi.json")
	doc, err := libopenapi.NewDocument(js)
	if err != nil {
		t.Fatal(err)
	}
	val, errs := validator.NewValidator(doc)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	g := &docGen{ids: []string{done, failed, "0b8a5a56-2f4e-4b8e-9a55-1c4f5a0d3e21", "nope", "%2e%2e%2fetc"},
		words:  []string{"hello", "flaky", "broken", "absent", "local", "global", "env", "nopack", "who", "count", "tone", "warm", "dry", "", " ", "é", "a/b", "current", "second"},
		inputs: []string{"who", "count", "tone", "other"}}
	json.Unmarshal(js, &g.doc)
	var ops []docOp
	paths, _ := g.doc["paths"].(map[string]any)
	for _, p := range sortedKeys(paths) {
		item := paths[p].(map[string]any)
		for _, m := range sortedKeys(item) {
			ops = append(ops, docOp{strings.ToUpper(m), p, item[m].(map[string]any)})
		}
	}
	seen := map[string]map[int]bool{}
	rapid.Check(t, func(rt *rapid.T) {
		o := rapid.SampledFrom(ops).Draw(rt, "op")
		path := o.path
		q := url.Values{}
		hdr := http.Header{}
		params, _ := o.op["parameters"].([]any)
		for _, pv := range params {
			p := pv.(map[string]any)
			name, in := p["name"].(string), p["in"].(string)
			s, _ := p["schema"].(map[string]any)
			switch in {
			case "path":
				var v string
				switch name {
				case "id":
					v = rapid.SampledFrom(g.ids).Draw(rt, "id")
				case "scope":
					v = rapid.SampledFrom([]string{"local", "local", "global", "nopack"}).Draw(rt, "scope")
				default:
					v = rapid.SampledFrom(g.words).Draw(rt, name)
				}
				if v == "" {
					v = "x"
				}
				path = strings.ReplaceAll(path, "{"+name+"}", url.PathEscape(v))
			case "query":
				if rapid.Bool().Draw(rt, name+".present") {
					q.Set(name, fmt.Sprint(g.value(rt, s, name, 0)))
				}
			case "header":
				if rapid.Bool().Draw(rt, name+".present") {
					hdr.Set(name, fmt.Sprint(rapid.IntRange(0, 12).Draw(rt, name)))
				}
			}
		}
		var body io.Reader
		if rb, ok := o.op["requestBody"].(map[string]any); ok && rapid.IntRange(0, 9).Draw(rt, "body.present") > 0 {
			s := rb["content"].(map[string]any)["application/json"].(map[string]any)["schema"].(map[string]any)
			b, _ := json.Marshal(g.value(rt, s, "body", 0))
			body = bytes.NewReader(b)
			hdr.Set("Content-Type", "application/json")
		}
		u := a.url + path
		if len(q) > 0 {
			u += "?" + q.Encode()
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, o.method, u, body)
		req.Header = hdr
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			rt.Fatalf("%s %s: %v", o.method, u, err)
		}
		defer resp.Body.Close()
		if seen[o.method+" "+o.path] == nil {
			seen[o.method+" "+o.path] = map[int]bool{}
		}
		seen[o.method+" "+o.path][resp.StatusCode] = true
		if resp.StatusCode >= 500 {
			b, _ := io.ReadAll(resp.Body)
			rt.Fatalf("%s %s: %s\n%s", o.method, u, resp.Status, b)
		}
		if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
			// A stream of a run that ended ends; its frames are
			// checked by the API suite.
			io.Copy(io.Discard, resp.Body)
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body = io.NopCloser(bytes.NewReader(b))
		// The validator matches the response to the request's route.
		vreq, _ := http.NewRequest(o.method, u, nil)
		if ok, verrs := val.ValidateHttpResponse(vreq, resp); !ok {
			var msgs []string
			mismatch := false
			for _, e := range verrs {
				msgs = append(msgs, e.Message+": "+e.Reason)
				if len(e.SchemaValidationErrors) == 0 {
					mismatch = true
				}
				for _, se := range e.SchemaValidationErrors {
					msgs = append(msgs, "  "+se.FieldPath+" ("+se.KeywordLocation+"): "+se.Reason)
					// A workflow's definition is AWF's domain structs as
					// encoding/json writes them: an unset pointer or map is
					// null where the generated document says object, in
					// AWF's document and answers alike (docs/api.md).
					if !(o.path == "/api/workflows/{scope}/{name}" && strings.Contains(se.Reason, "got null, want object")) {
						mismatch = true
					}
				}
			}
			if !mismatch {
				return
			}
			rt.Fatalf("%s %s: %s does not match the document:\n%s\n%s", o.method, u, resp.Status, strings.Join(msgs, "\n"), b)
		}
	})
	for _, o := range ops {
		t.Logf("%s %s: statuses %v", o.method, o.path, sortedInts(seen[o.method+" "+o.path]))
	}
}

func sortedInts(m map[int]bool) []int {
	var out []int
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
