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
	ID, Role, Name, CallID, Status, Server, Tool, Query, Prompt, Phase string
	Type                                                               string `raw:"type,item_type"`

	Text, Message, Command, Arguments, Input, Output, AggregatedOutput, Stdout []byte
	ExitCode, Result, Error, Changes, Success, LastAgentMessage                []byte
	Info, Invocation, Action, Results, Items, AgentsStates, ReceiverThreadIDs  []byte
	Content, Summary                                                           []byte
	// InputTokens is set when the token counts are members of the object
	// itself (the older exec envelope's token_count), not of its info.
	InputTokens []byte
}

var codexObjectFields = rawjson.NewBinder[codexObject]()

// parseCodexObject reads the object at the start of v and returns the
// offset just past it.
func parseCodexObject(v []byte) (codexObject, int, error) {
	var o codexObject
	end, err := codexObjectFields.Bind(v, &o)
	return o, end, err
}
