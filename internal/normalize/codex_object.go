package normalize

import (
	"github.com/reelhq/reel/internal/rawjson"
)

// codexObject is the fields reel reads from Codex's objects: `codex exec`
// items, the event payloads of rollouts and of the older exec envelope, and
// rollout response items. They share one vocabulary, so one reader serves
// all three. Values that only some kinds use stay raw until a handler asks
// for them: a rollout with response items never decodes its events' texts.
type codexObject struct {
	id, typ, role, name, callID, status, server, tool, query, prompt, phase string

	text, message, command, arguments, input, output, aggregated, stdout []byte
	exitCode, result, errv, changes, success, lastMsg                    []byte
	info, invocation, action, results, items, agents, receivers          []byte
	content, summary                                                     []byte
	// flatUsage: the token counts are members of the object itself (the
	// older exec envelope's token_count), not of its info.
	flatUsage bool
}

// parseCodexObject reads the object at the start of v and returns the
// offset just past it.
func parseCodexObject(v []byte) (codexObject, int, error) {
	var o codexObject
	end, err := eachFieldEnd(v, func(k, val []byte) {
		switch string(k) {
		case "id":
			o.id = rawjson.Str(val)
		case "type", "item_type":
			o.typ = rawjson.Str(val)
		case "role":
			o.role = rawjson.Str(val)
		case "name":
			o.name = rawjson.Str(val)
		case "call_id":
			o.callID = rawjson.Str(val)
		case "status":
			o.status = rawjson.Str(val)
		case "server":
			o.server = rawjson.Str(val)
		case "tool":
			o.tool = rawjson.Str(val)
		case "query":
			o.query = rawjson.Str(val)
		case "prompt":
			o.prompt = rawjson.Str(val)
		case "phase":
			o.phase = rawjson.Str(val)
		case "text":
			o.text = val
		case "message":
			o.message = val
		case "command":
			o.command = val
		case "arguments":
			o.arguments = val
		case "input":
			o.input = val
		case "output":
			o.output = val
		case "aggregated_output":
			o.aggregated = val
		case "stdout":
			o.stdout = val
		case "exit_code":
			o.exitCode = val
		case "result":
			o.result = val
		case "error":
			o.errv = val
		case "changes":
			o.changes = val
		case "success":
			o.success = val
		case "last_agent_message":
			o.lastMsg = val
		case "info":
			o.info = val
		case "invocation":
			o.invocation = val
		case "action":
			o.action = val
		case "results":
			o.results = val
		case "items":
			o.items = val
		case "agents_states":
			o.agents = val
		case "receiver_thread_ids":
			o.receivers = val
		case "content":
			o.content = val
		case "summary":
			o.summary = val
		case "input_tokens":
			o.flatUsage = true
		}
	})
	return o, end, err
}
