package main

import (
	"encoding/json"
	"io"
)

// writeJSON prints v as the indented JSON document of a --json output.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
