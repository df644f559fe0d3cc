package normalize

import "strings"

// providerFacts are what a recording says about its content, read
// independently of the parsers: the assistant texts, the number of
// thinking blocks, the tool ids whose invocation failed, and whether the
// run failed.
type providerFacts struct {
	texts    []string
	thinking int // -1: the format does not say
	failed   map[string]bool
	runError bool
}

func serverResultFailed(b map[string]any) bool {
	if b["is_error"] == true {
		return true
	}
	c := obj(b["content"])
	return strings.HasSuffix(s(c["type"]), "_error") || s(c["error_code"]) != "" || n(c["return_code"]) != 0
}

func readFacts(f Format, vals []map[string]any) providerFacts {
	pf := providerFacts{thinking: -1, failed: map[string]bool{}}
	switch f {
	case ClaudeStreamJSON, ClaudeSessionLog:
		pf.thinking = 0
		for _, v := range vals {
			if v["isSidechain"] == true {
				continue
			}
			switch s(v["type"]) {
			case "assistant":
				for _, b := range arr(obj(v, "message")["content"]) {
					bm := obj(b)
					switch typ := s(bm["type"]); {
					case typ == "text" && s(bm["text"]) != "":
						pf.texts = append(pf.texts, s(bm["text"]))
					case typ == "thinking" || typ == "redacted_thinking":
						pf.thinking++
					case strings.HasSuffix(typ, "_tool_result") && serverResultFailed(bm):
						pf.failed[s(bm["tool_use_id"])] = true
					}
				}
			case "user":
				for _, b := range arr(obj(v, "message")["content"]) {
					if bm := obj(b); s(bm["type"]) == "tool_result" && bm["is_error"] == true {
						pf.failed[s(bm["tool_use_id"])] = true
					}
				}
			case "result":
				pf.runError = pf.runError || v["is_error"] == true || strings.HasPrefix(s(v["subtype"]), "error")
			}
		}
	case CodexExecJSON:
		pf.thinking = 0
		for _, v := range vals {
			switch s(v["type"]) {
			case "item.completed":
				it := obj(v, "item")
				typ := s(it["type"])
				if typ == "" {
					typ = s(it["item_type"])
				}
				switch typ {
				case "agent_message", "assistant_message":
					pf.texts = append(pf.texts, s(it["text"]))
				case "reasoning", "plan":
					pf.thinking++
				case "command_execution", "file_change", "mcp_tool_call", "web_search", "collab_tool_call":
					code, _ := it["exit_code"].(float64)
					if code != 0 || s(it["status"]) == "failed" || it["error"] != nil {
						pf.failed[s(it["id"])] = true
					}
				}
			case "turn.failed", "error":
				pf.runError = true
			case "":
				if m := obj(v, "msg"); s(m["type"]) == "agent_reasoning" {
					pf.thinking++ // the older {id, msg} form
				}
			}
		}
	case CodexRollout:
		items := false
		for _, v := range vals {
			if s(v["type"]) == "response_item" {
				items = true
			}
		}
		if items {
			pf.thinking = 0
		}
		for _, v := range vals {
			p := obj(v, "payload")
			if s(v["type"]) != "response_item" {
				continue
			}
			switch s(p["type"]) {
			case "message":
				if s(p["role"]) == "assistant" {
					for _, c := range arr(p["content"]) {
						if t := s(obj(c)["text"]); t != "" {
							pf.texts = append(pf.texts, t)
						}
					}
				}
			case "reasoning":
				pf.thinking++
			}
		}
	case GeminiStreamJSON:
		for _, v := range vals {
			switch s(v["type"]) {
			case "tool_result":
				if st := s(v["status"]); st != "" && st != "success" {
					pf.failed[s(v["tool_id"])] = true
				}
			case "result":
				if st := s(v["status"]); st != "" && st != "success" {
					pf.runError = true
				}
			case "error":
				if s(v["severity"]) != "warning" {
					pf.runError = true
				}
			}
		}
	case GeminiSession:
		for _, v := range vals {
			if s(v["type"]) == "gemini" && s(v["content"]) != "" {
				pf.texts = append(pf.texts, s(v["content"]))
			}
			for _, tc := range arr(v["toolCalls"]) {
				if st := s(obj(tc)["status"]); st != "" && st != "success" {
					pf.failed[s(obj(tc)["id"])] = true
				}
			}
		}
	case AnthropicSSE:
		for _, v := range vals {
			if b := obj(v, "content_block"); strings.HasSuffix(s(b["type"]), "_tool_result") && serverResultFailed(b) {
				pf.failed[s(b["tool_use_id"])] = true
			}
			if s(v["type"]) == "error" {
				pf.runError = true
			}
		}
	}
	return pf
}
