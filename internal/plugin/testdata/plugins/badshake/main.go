// Command badshake is a test plugin that speaks another protocol version
// than AWF's handshake.
package main

import (
	"github.com/reelhq/reel/internal/plugin/testdata/plugins/kit"
)

func main() {
	hs := kit.Handshake
	hs.ProtocolVersion = 2
	kit.ServeWith(&kit.Plugin{Name: "badshake"}, hs)
}
