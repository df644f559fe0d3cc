package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// --input values whose names say secret are masked with --mask-secrets,
// whatever their shape: in the display, the transcript and the audit
// trail.
func TestRunMasksSecretNamedInputs(t *testing.T) {
	dir := t.TempDir()
	wf := filepath.Join(dir, "in.yaml")
	writeFile(t, wf, `name: in
inputs:
  - {name: db_password, default: "none"}
  - {name: region, default: "none"}
states:
  initial: s
  s:
    type: step
    command: 'echo "connecting with {{.inputs.db_password}} in {{.inputs.region}}"'
    on_success: d
  d: {type: terminal}
`, 0o644)
	const secret = "correct-horse-battery"
	storage := filepath.Join(dir, "st")
	res := runBinary(t, dir, "run", wf, "--storage", storage, "--mask-secrets", "--input", "db_password="+secret, "--input", "region=eu-west-1")
	if res.code != 0 {
		t.Fatalf("exit %d\n%s", res.code, res.stderr)
	}
	written := res.stdout + res.stderr
	filepath.Walk(storage, func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			b, _ := os.ReadFile(p)
			written += string(b)
		}
		return nil
	})
	if strings.Contains(written, secret) {
		t.Fatalf("the input's value was written:\n%s", written)
	}
	if !strings.Contains(res.stdout, "eu-west-1") {
		t.Fatalf("an input that is not secret was masked:\n%s", res.stdout)
	}
}
