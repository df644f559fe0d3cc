package runs

import (
	"fmt"
	"strconv"

	"github.com/reelhq/reel/internal/rawjson"
	"github.com/reelhq/reel/transcript"
)

// DecodeAgentResult reads the fields of an agent step's result that the
// readers add up (output, provider, model, usage, cost, duration, turns,
// session id) straight from the raw JSON, leaving Skipped unset. It is the
// hot part of rebuilding a tree or adding up stats, where encoding/json
// would cost more than the rest of the line.
func DecodeAgentResult(raw []byte, ar *transcript.AgentResult) error {
	*ar = transcript.AgentResult{}
	var bad error
	err := rawjson.Each(raw, func(k, v []byte) bool {
		switch string(k) {
		case "output":
			bad = str2(v, &ar.Output, "output")
		case "provider":
			bad = str2(v, &ar.Provider, "provider")
		case "model":
			bad = str2(v, &ar.Model, "model")
		case "session_id":
			bad = str2(v, &ar.SessionID, "session_id")
		case "duration_ms":
			bad = int2(v, &ar.DurationMS, "duration_ms")
		case "turns":
			var n int64
			bad = int2(v, &n, "turns")
			ar.Turns = int(n)
		case "cost_usd":
			if string(v) == "null" {
				return true
			}
			f, err := strconv.ParseFloat(string(v), 64)
			if err != nil {
				bad = fmt.Errorf("cost_usd %.20s is not a number", v)
				return false
			}
			ar.CostUSD = &f
		case "usage":
			bad = decodeUsage(v, &ar.Usage)
		}
		return bad == nil
	})
	if err != nil {
		return fmt.Errorf("agent result: %w", err)
	}
	if bad != nil {
		return fmt.Errorf("agent result: %w", bad)
	}
	return nil
}

func decodeUsage(raw []byte, u *transcript.Usage) error {
	if string(raw) == "null" {
		return nil
	}
	var bad error
	err := rawjson.Each(raw, func(k, v []byte) bool {
		var dst *int64
		switch string(k) {
		case "input_tokens":
			dst = &u.InputTokens
		case "output_tokens":
			dst = &u.OutputTokens
		case "cache_read_tokens":
			dst = &u.CacheReadTokens
		case "cache_write_tokens":
			dst = &u.CacheWriteTokens
		case "cache_write_1h_tokens":
			dst = &u.CacheWrite1hTokens
		case "reasoning_tokens":
			dst = &u.ReasoningTokens
		case "total_tokens":
			dst = &u.TotalTokens
		default:
			return true
		}
		bad = int2(v, dst, "usage."+string(k))
		return bad == nil
	})
	if err != nil {
		return fmt.Errorf("usage: %w", err)
	}
	return bad
}

func str2(v []byte, dst *string, name string) error {
	if string(v) == "null" {
		return nil
	}
	s, ok := rawjson.String(v)
	if !ok {
		return fmt.Errorf("%s is not a string", name)
	}
	*dst = s
	return nil
}

func int2(v []byte, dst *int64, name string) error {
	if string(v) == "null" {
		return nil
	}
	n, err := strconv.ParseInt(string(v), 10, 64)
	if err != nil {
		return fmt.Errorf("%s %.20s is not an integer", name, v)
	}
	*dst = n
	return nil
}
