// Package realcli holds the end-to-end tests of reel with the published
// agent CLIs (claude, codex, gemini, copilot, opencode) against the
// scripted model server of internal/modeltest. They live apart from
// cmd/reel's own tests so that their minutes of CLI start-up have a test
// binary, and a timeout, of their own. The CLIs come from
// $REEL_AGENT_CLIS (scripts/agent-clis.sh); without it the tests skip.
package realcli
