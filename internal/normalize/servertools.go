package normalize

import (
	"fmt"
	"strings"
	"time"

	"github.com/reelhq/reel/internal/rawjson"
	"github.com/reelhq/reel/transcript"
)

// Server tools are tools the provider runs itself (Anthropic's web search,
// web fetch, code execution, bash and text-editor code execution, tool
// search, MCP connector calls): the call is a server_tool_use (or
// mcp_tool_use) block and its result a block of type <name>_tool_result
// naming it in tool_use_id, both inside the assistant's message. Result
// blocks are recognised by that shape rather than by a list of names, so
// the server tools Anthropic adds later pair with their calls too.

// isServerToolResult reports whether a content block of type typ carrying
// toolUseID is a server tool's result.
func isServerToolResult(typ, toolUseID string) bool {
	return toolUseID != "" && strings.HasSuffix(typ, "_tool_result")
}

// serverToolResult records a server tool's result block: a tool_result
// block in the message being assembled and the invocation's tool.result.
func (s *state) serverToolResult(toolUseID string, content []byte, isErr bool, ts time.Time) {
	out := raw(content)
	s.add(transcript.ContentBlock{Type: transcript.BlockToolResult, ToolID: toolUseID, ToolContent: out}, ts)
	s.result(toolUseID, "", out, serverToolError(content, isErr), ts)
}

// serverToolError is the error a server tool's result content reports, or
// "": an error object ({"type": "…_error", "error_code": …}), a command
// that exited non-zero (code execution's return_code), or is_error.
func serverToolError(content []byte, isErr bool) string {
	if len(content) > 0 && content[0] == '{' {
		typ := rawjson.Str(field(content, "type"))
		code := rawjson.Str(field(content, "error_code"))
		if strings.HasSuffix(typ, "_error") || code != "" {
			if code == "" {
				code = typ
			}
			return code
		}
		if rc := rawjson.Int(field(content, "return_code")); rc != 0 {
			return fmt.Sprintf("exit code %d", rc)
		}
	}
	if isErr {
		return toolErrorText(content)
	}
	return ""
}
