package agentlog

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reelhq/reel/internal/testfixtures"
	"github.com/reelhq/reel/internal/transcripttest"
	"github.com/reelhq/reel/transcript"
)

func TestNormativeVector(t *testing.T) {
	id, err := ContentID([]byte(`{"hello":"world"}`))
	if err != nil {
		t.Fatal(err)
	}
	const want = "sha256:93a23971a914e5eacbf0a8d25154cda309c3c1c72fbb9914d47c60f3cb681588"
	if id != want {
		t.Fatalf("id = %s, want %s", id, want)
	}
	// Whitespace and key order do not change the id.
	id2, err := ContentID([]byte(" { \"hello\" :\n \"world\" } "))
	if err != nil || id2 != want {
		t.Fatalf("id of spaced form = %s, %v", id2, err)
	}
}

func TestCanonical(t *testing.T) {
	cases := []struct{ in, want string }{
		{`{"b":2,"a":1}`, `{"a":1,"b":2}`},
		{`{"b":{"z":1,"y":2},"a":[3,1]}`, `{"a":[3,1],"b":{"y":2,"z":1}}`},
		{`1.0`, `1`},
		{`1.00`, `1`},
		{`-0`, `0`},
		{`-0.0`, `0`},
		{`1.5`, `1.5`},
		{`0.1`, `0.1`},
		{`1e20`, `100000000000000000000`},
		{`1e-7`, `0.0000001`},
		{`18446744073709551615`, `18446744073709551615`},
		{`-9223372036854775808`, `-9223372036854775808`},
		{`"a\"b\\c"`, `"a\"b\\c"`},
		{`"\n\t\r\b\f"`, `"\n\t\r\b\f"`},
		{`"\u0001\u001f"`, `"\u0001\u001f"`},
		{`"\u00e9"`, "\"\u00e9\""},
		{`"e\u0301"`, "\"\u00e9\""},
		{`"\u2028/<>&"`, "\"\u2028/<>&\""},
		{`[true,false,null]`, `[true,false,null]`},
		{`{"é":1,"a":2}`, `{"a":2,"é":1}`},
	}
	for _, c := range cases {
		got, err := Canonical([]byte(c.in))
		if err != nil {
			t.Errorf("Canonical(%s): %v", c.in, err)
			continue
		}
		if string(got) != c.want {
			t.Errorf("Canonical(%s) = %s, want %s", c.in, got, c.want)
		}
	}
	for _, bad := range []string{``, `{`, `1 2`, `1e999`, `{"a":}`} {
		if _, err := Canonical([]byte(bad)); err == nil {
			t.Errorf("Canonical(%q) accepted invalid input", bad)
		}
	}
}

// TestCanonicalIdempotent: canonical bytes are a fixed point.
func TestCanonicalIdempotent(t *testing.T) {
	for _, in := range []string{`{"z":[1.25,{"b":"\u0007x","a":null}],"y":-0.5e3}`, `"x\u0000y"`, `[1e300, 2.5e-300]`} {
		once, err := Canonical([]byte(in))
		if err != nil {
			t.Fatal(err)
		}
		twice, err := Canonical(once)
		if err != nil || !bytes.Equal(once, twice) {
			t.Fatalf("not idempotent: %s → %s (%v)", once, twice, err)
		}
	}
}

func fixture(t *testing.T, name string) string {
	return filepath.Join(testfixtures.Dir(t, "agentlog"), name)
}

// TestFixtureIDs recomputes every id of the valid Shadow fixtures from the
// raw lines, independently of the Reader.
func TestFixtureIDs(t *testing.T) {
	for _, name := range []string{"demo-baseline.agentlog", "demo-candidate.agentlog"} {
		data, err := os.ReadFile(fixture(t, name))
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for i, line := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
			var env struct {
				ID      string          `json:"id"`
				Payload json.RawMessage `json:"payload"`
			}
			if err := json.Unmarshal(line, &env); err != nil {
				t.Fatalf("%s:%d: %v", name, i+1, err)
			}
			got, err := ContentID(env.Payload)
			if err != nil {
				t.Fatal(err)
			}
			if got != env.ID {
				t.Errorf("%s:%d: recomputed %s, file says %s", name, i+1, got, env.ID)
			}
			n++
		}
		if n != 9 {
			t.Errorf("%s: %d records, want 9", name, n)
		}
	}
}

func TestReadFixtures(t *testing.T) {
	for _, name := range []string{"demo-baseline.agentlog", "demo-candidate.agentlog"} {
		recs, err := ReadFile(fixture(t, name), ReadOptions{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(recs) != 9 || recs[0].Kind != KindMetadata || recs[0].Parent != "" {
			t.Fatalf("%s: %d records, first %+v", name, len(recs), recs[0])
		}
		// Writing the records back reproduces the ids, and reading that
		// output verifies again.
		var buf bytes.Buffer
		if err := Encode(&buf, recs); err != nil {
			t.Fatal(err)
		}
		back, err := ReadAll(&buf, ReadOptions{})
		if err != nil {
			t.Fatalf("%s re-read: %v", name, err)
		}
		for i := range back {
			if back[i].ID != recs[i].ID || back[i].Parent != recs[i].Parent {
				t.Fatalf("%s: record %d changed on rewrite", name, i+1)
			}
		}
	}
}

func TestWrongIDs(t *testing.T) {
	path := fixture(t, "wrong-ids-baseline.agentlog")
	_, err := ReadFile(path, ReadOptions{})
	var re *RecordError
	if !errors.Is(err, ErrIDMismatch) || !errors.As(err, &re) {
		t.Fatalf("err = %v, want an id mismatch RecordError", err)
	}
	const first = "sha256:b1000000000000000000000000000000000000000000000000000000000000a1"
	if re.Line != 1 || re.ID != first || re.Kind != KindMetadata || !strings.Contains(err.Error(), first) {
		t.Fatalf("error does not name the record: %v", err)
	}
	recs, err := ReadFile(path, ReadOptions{AcceptIDMismatch: true})
	if err != nil || len(recs) != 3 {
		t.Fatalf("with AcceptIDMismatch: %d records, %v", len(recs), err)
	}
	res, err := ToTranscript(recs, "")
	if err != nil {
		t.Fatal(err)
	}
	transcripttest.CheckValid(t, res.Events)
}

func TestImportDemo(t *testing.T) {
	recs, err := ReadFile(fixture(t, "demo-baseline.agentlog"), ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := ToTranscript(recs, "")
	if err != nil {
		t.Fatal(err)
	}
	transcripttest.CheckValid(t, res.Events)
	var users, assts, calls, results int
	var usage transcript.Usage
	for _, e := range res.Events {
		switch e.Type {
		case transcript.MessageUser:
			users++
		case transcript.MessageAssistant:
			assts++
		case transcript.ToolCall:
			calls++
			if tp := e.Tool(); tp.CallID != "toolu_01" || tp.Name != "search_files" {
				t.Errorf("tool call %+v", tp)
			}
		case transcript.ToolResult:
			results++
			if s := string(e.Tool().Output.(json.RawMessage)); !strings.Contains(s, `lib.rs\n`) {
				t.Errorf("tool output %s", s)
			}
		case transcript.StepCompleted:
			var ar transcript.AgentResult
			if err := transcript.DecodeResult(e.Step().Result, &ar); err != nil {
				t.Fatal(err)
			}
			usage.Add(ar.Usage)
			if ar.Model != "claude-opus-4-7" || ar.Turns != 3 || ar.DurationMS != 98+12+115+84 {
				t.Errorf("agent result %+v", ar)
			}
		}
	}
	if users != 3 || assts != 3 || calls != 1 || results != 1 {
		t.Errorf("users %d assistants %d calls %d results %d", users, assts, calls, results)
	}
	if usage.InputTokens != 510 || usage.OutputTokens != 72 || usage.TotalTokens != 582 {
		t.Errorf("usage %+v", usage)
	}
	if p := res.Events[0].Step(); p.Name != "demo" {
		t.Errorf("run name %q", p.Name)
	}
}
