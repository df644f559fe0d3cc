package normalize

import (
	"bytes"
	"fmt"
	"unicode/utf8"
	"unsafe"

	"github.com/reelhq/reel/internal/rawjson"
)

// codexToolOutput reads a function_call_output. Shell calls hand back a JSON
// string {output, metadata: {exit_code, duration_seconds}}: it becomes
// {output, exit_code}, the shape of a command_execution result. Other
// outputs are kept as the text the model saw. scratch is reused between
// calls for the decoded outer text.
func codexToolOutput(v []byte, scratch *[]byte) (any, string) {
	if len(v) < 2 || v[0] != '"' {
		return raw(v), ""
	}
	if out, meta, ok := shellOutputRaw(v[1 : len(v)-1]); ok {
		return shellResult(out, field(meta, "exit_code"))
	}
	*scratch = rawjson.AppendUnescaped((*scratch)[:0], v[1:len(v)-1])
	b := *scratch
	inner, meta, ok := shellOutput(b)
	if !ok {
		return string(b), ""
	}
	return shellResult(rawjson.Str(inner), field(meta, "exit_code"))
}

func shellResult(output string, exitCode []byte) (any, string) {
	code := rawjson.Int(exitCode)
	res := map[string]any{"output": output, "exit_code": code}
	if code != 0 {
		return res, fmt.Sprintf("exit code %d", code)
	}
	return res, ""
}

// shellOutputRaw is the fast path of codexToolOutput: it reads the shell
// output straight out of the string literal's body b, decoding the two
// levels of escaping (JSON text inside a JSON string) in one pass. It
// reports ok = false for anything but the exact shape Codex writes, and the
// caller then decodes the ordinary way.
func shellOutputRaw(b []byte) (output string, meta []byte, ok bool) {
	const head, sep = `{\"output\":\"`, `\",\"metadata\":`
	if !bytes.HasPrefix(b, []byte(head)) {
		return "", nil, false
	}
	i := bytes.LastIndex(b, []byte(sep))
	if i < len(head) {
		return "", nil, false
	}
	tail := b[i+len(sep):]
	if bytes.IndexByte(tail, '\\') < 0 || len(tail) > 256 {
		return "", nil, false
	}
	m := rawjson.AppendUnescaped(make([]byte, 0, len(tail)), tail)
	end, err := skipValue(m, 0)
	if err != nil || string(bytes.TrimSpace(m[end:])) != "}" {
		return "", nil, false
	}
	body := b[len(head):i]
	if !utf8.Valid(body) {
		return "", nil, false
	}
	out := make([]byte, 0, len(body))
	for len(body) > 0 {
		k := bytes.IndexByte(body, '\\')
		if k < 0 {
			k = len(body)
		}
		out = append(out, body[:k]...)
		body = body[k:]
		if len(body) == 0 {
			break
		}
		// Level one escapes only a backslash or a quote; a quote here
		// would end the inner string, so only \\ may start an escape.
		if len(body) < 3 || body[1] != '\\' {
			return "", nil, false
		}
		if c := body[2]; c == '\\' {
			// \\\" is an inner quote, \\\\ an inner backslash.
			if len(body) < 4 || (body[3] != '"' && body[3] != '\\') {
				return "", nil, false
			}
			out = append(out, body[3])
			body = body[4:]
			continue
		}
		e, ok := rawjson.Unescape(body[2])
		if !ok || e == '"' {
			return "", nil, false // \\u and anything unusual: the slow path
		}
		out = append(out, e)
		body = body[3:]
	}
	return unsafe.String(unsafe.SliceData(out), len(out)), m[:end], true
}

// shellOutput splits {"output":"…","metadata":{…}} into the output string
// literal and the metadata object. Codex writes exactly this shape, so the
// metadata is found from the end instead of scanning the output again;
// anything else goes through the general scanner.
func shellOutput(b []byte) (inner, meta []byte, ok bool) {
	const head, sep = `{"output":"`, `","metadata":`
	if bytes.HasPrefix(b, []byte(head)) && bytes.HasSuffix(b, []byte("}")) {
		if i := bytes.LastIndex(b, []byte(sep)); i >= len(head)-1 {
			k := i - 1
			for k >= 0 && b[k] == '\\' {
				k--
			}
			if (i-1-k)%2 == 0 { // the quote at i is not escaped
				m := b[i+len(sep):]
				if end, err := skipValue(m, 0); err == nil && len(bytes.TrimSpace(m[end:])) == 1 {
					return b[len(head)-1 : i+1], m[:end], true
				}
			}
		}
	}
	other := false
	err := eachField(b, func(k, val []byte) {
		switch string(k) {
		case "output":
			inner = val
		case "metadata":
			meta = val
		default:
			other = true
		}
	})
	if err != nil || other || inner == nil || meta == nil || inner[0] != '"' {
		return nil, nil, false
	}
	return inner, meta, true
}
