package engine

import (
	"os"
	"strings"
	"testing"

	"github.com/reelhq/reel/transcript/secrets"
)

// A private key printed by a step, from no environment variable, is
// masked in the display line by line (its body lines give nothing away
// alone) and in the transcript as one value.
func TestPrivateKeyInOutputIsMasked(t *testing.T) {
	h := newHarness(t)
	h.e.Masker = secrets.NewMasker(nil)
	body := "MIIEpAIBAAKCAQEA3Tz2mr7SZiAMfQyuvBjM9Oi7Ad1qsqaqW7nyyxhNAn6r"
	rep := h.succeed(`
name: k
states:
  initial: s
  s:
    type: step
    command: 'printf -- "-----BEGIN RSA PRIVATE KEY-----\n`+body+`\n`+body+`\n-----END RSA PRIVATE KEY-----\ndone\n"'
    on_success: d
  d: {type: terminal}
`, nil)
	display := h.display.String()
	if strings.Contains(display, body) || !strings.Contains(display, "-----END RSA PRIVATE KEY-----") || !strings.Contains(display, "done") {
		t.Fatalf("display:\n%s", display)
	}
	data, _ := os.ReadFile(rep.TranscriptPath)
	if strings.Contains(string(data), body) {
		t.Fatal("key body in the transcript")
	}
}
