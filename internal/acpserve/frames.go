package acpserve

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// maxFrameBytes is the longest frame the server reads, the SDK's own
// limit. A longer line is answered with an error and skipped; the SDK
// alone would close the connection on it.
const maxFrameBytes = 10 << 20

// filterFrames copies the editor's frames from in to the SDK's pipe, one
// line each. The SDK logs and drops a line that is not JSON, leaving a
// client waiting for an answer that never comes; here such a line, or one
// over maxFrameBytes, is answered with a JSON-RPC error on out and the
// connection goes on. Each valid frame is shown to seen first, in the
// order of the stream, and forwarded only if seen says so (nil forwards
// every frame). It returns at the end of in or when the pipe is closed,
// closing the pipe so the SDK sees the editor go.
func filterFrames(in io.Reader, pipe *io.PipeWriter, out io.Writer, seen func(frame []byte) (forward bool)) error {
	br := bufio.NewReaderSize(in, 64<<10)
	var line []byte
	tooLong := false
	for {
		frag, err := br.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(frag) > maxFrameBytes+1 {
				tooLong, line = true, nil
			} else {
				line = append(line, frag...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if tooLong {
			writeError(out, -32700, fmt.Sprintf("parse error: a frame of more than %d bytes was skipped", maxFrameBytes))
		} else if t := bytes.TrimSpace(line); len(t) > 0 {
			switch {
			case !json.Valid(t):
				writeError(out, -32700, "parse error: the frame is not JSON")
			case seen != nil && !seen(t):
			default:
				if _, werr := pipe.Write(append(t, '\n')); werr != nil {
					return werr
				}
			}
		}
		line, tooLong = line[:0], false
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = nil
			}
			pipe.CloseWithError(err)
			return err
		}
	}
}

// writeError writes a JSON-RPC error response without an id, the answer to
// a frame whose id could not be read.
func writeError(out io.Writer, code int, msg string) {
	b, _ := json.Marshal(map[string]any{
		"jsonrpc": "2.0",
		"id":      nil,
		"error":   map[string]any{"code": code, "message": msg},
	})
	out.Write(append(b, '\n'))
}
