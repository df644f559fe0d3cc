package rawjson

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/reelhq/reel/internal/benchratio"
)

const benchLine = `{"seq":2,"run_id":"550e8400-e29b-41d4-a716-446655440000","type":"message.assistant","path":"analyze","iteration":0,"timestamp":"2026-06-08T08:14:42.123000Z","payload":{"role":"assistant","blocks":[{"type":"text","fidelity":"agent_emitted","text":"Found 2 issues in main.go: the loop at line 12 never terminates and err is shadowed."},{"type":"tool_use","fidelity":"agent_emitted","tool_name":"Read","tool_id":"toolu_01","tool_input":{"path":"main.go"}}]}}`

// BenchmarkLookup finds a nested field and, in the same loop, gets it the
// standard-library way (decoding the line with encoding/json).
func BenchmarkLookup(b *testing.B) {
	line := []byte(benchLine)
	path := strings.Split("payload.blocks.1.tool_name", ".")
	var fast, std time.Duration
	b.SetBytes(int64(len(line)))
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		if v, ok, _ := Lookup(line, path); !ok || len(v) != 6 {
			b.Fatal("not found")
		}
		t1 := time.Now()
		var ev struct {
			Payload struct {
				Blocks []struct {
					ToolName string `json:"tool_name"`
				} `json:"blocks"`
			} `json:"payload"`
		}
		if err := json.Unmarshal(line, &ev); err != nil || ev.Payload.Blocks[1].ToolName != "Read" {
			b.Fatal(err)
		}
		fast += t1.Sub(t0)
		std += time.Since(t1)
	}
	b.ReportMetric(float64(std)/float64(fast), "x-vs-stdlib")
}

func BenchmarkFieldType(b *testing.B) {
	line := []byte(benchLine)
	b.SetBytes(int64(len(line)))
	for i := 0; i < b.N; i++ {
		if _, ok, _ := Field(line, "type"); !ok {
			b.Fatal("no type")
		}
	}
}

// benchObject is a Claude Code session-log line: the kind of object the
// normalizers bind most, with a large member no reader wants.
var benchObject = `{"parentUuid":"d1b6","isSidechain":false,"userType":"external","cwd":"/work/app","sessionId":"5a2e0c1c-3a4b-4f0e-9d7c-2b1f0c9e8a11","version":"2.1.3","gitBranch":"main","type":"assistant","message":{"id":"msg_01","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"Found 2 issues in main.go."}],"usage":{"input_tokens":12,"output_tokens":40}},"requestId":"req_01","uuid":"a7c3","timestamp":"2026-06-08T08:14:42.123Z","toolUseResult":{"stdout":"` + strings.Repeat(`line of output\n`, 40) + `"}}`

// BenchmarkBind binds the members a normalizer reads of a session-log line
// and, in the same loop, has encoding/json decode the same members into the
// same struct (its keys match these names ignoring case, as Binder's do).
func BenchmarkBind(b *testing.B) {
	type line struct {
		Type, SessionID, UUID, CWD string
		Message                    json.RawMessage
		Timestamp                  time.Time
		IsSidechain                bool
	}
	fields := NewBinder[line]()
	data := []byte(benchObject)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	benchratio.Run(b, func() {
		var l line
		if _, err := fields.Bind(data, &l); err != nil || l.Type != "assistant" || l.SessionID == "" {
			b.Fatal(err)
		}
	}, func() {
		var l line
		if err := json.Unmarshal(data, &l); err != nil || l.Type != "assistant" || l.SessionID == "" {
			b.Fatal(err)
		}
	})
}
