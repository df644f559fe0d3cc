#!/bin/sh
# NOT Claude: this script stands in for the `claude` CLI in demo.yaml. It
# ignores its arguments and prints a recorded Claude Code session in the
# `claude -p PROMPT --output-format stream-json --verbose` format, so the
# demo runs without an agent CLI, an API key or network access.
exec cat "$(dirname "$0")/recordings/claude-review.jsonl"
