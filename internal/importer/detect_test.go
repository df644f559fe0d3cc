package importer

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/reelhq/reel/internal/testfixtures"
)

func TestInteropDetect(t *testing.T) {
	fs := testfixtures.Dir(t, "flowstudio-run")
	al := testfixtures.Dir(t, "agentlog")
	renamed := filepath.Join(t.TempDir(), "trace.jsonl")
	data, _ := os.ReadFile(filepath.Join(al, "demo-baseline.agentlog"))
	os.WriteFile(renamed, data, 0o644)
	cases := map[string]string{
		filepath.Join(fs, "stepwise-build-claude"):        "flowstudio",
		filepath.Join(fs, "stepwise-claude-receipts-old"): "flowstudio",
		filepath.Join(al, "wrong-ids-baseline.agentlog"):  "agentlog",
		renamed: "agentlog",
		filepath.Join(fs, "stepwise-build-claude", "events.jsonl"): "",
		t.TempDir():                           "",
		filepath.Join(t.TempDir(), "missing"): "",
	}
	for path, want := range cases {
		if got := detectInterop(path); got != want {
			t.Errorf("detectInterop(%s) = %q, want %q", path, got, want)
		}
	}
}
