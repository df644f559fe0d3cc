#!/bin/sh
# fake-agent.sh stands in for an agent CLI (claude, codex, gemini, copilot)
# in tests: point options.command or REEL_<PROVIDER>_BIN at it.
#
# It replays a recorded stdout stream and ignores what it was asked:
#   REEL_FAKE_AGENT_REPLAY  file to copy to stdout (required)
#   REEL_FAKE_AGENT_ARGS    file to write the received arguments to, one per
#                           line (optional; stdin is appended after a line
#                           "--stdin--" when it is not a terminal)
#   REEL_FAKE_AGENT_DELAY   seconds to sleep between lines (optional;
#                           without it the file is copied at once)
#   REEL_FAKE_AGENT_STDERR  text to print on stderr (optional)
#   REEL_FAKE_AGENT_EXIT    exit status (optional, default 0)
set -u
if [ -z "${REEL_FAKE_AGENT_REPLAY:-}" ]; then
	echo "fake-agent: REEL_FAKE_AGENT_REPLAY is not set" >&2
	exit 97
fi
if [ -n "${REEL_FAKE_AGENT_ARGS:-}" ]; then
	: >"$REEL_FAKE_AGENT_ARGS"
	for a in "$@"; do
		printf '%s\n' "$a" >>"$REEL_FAKE_AGENT_ARGS"
	done
	if [ ! -t 0 ]; then
		echo "--stdin--" >>"$REEL_FAKE_AGENT_ARGS"
		cat >>"$REEL_FAKE_AGENT_ARGS"
	fi
fi
if [ -n "${REEL_FAKE_AGENT_DELAY:-}" ]; then
	while IFS= read -r line || [ -n "$line" ]; do
		printf '%s\n' "$line"
		sleep "$REEL_FAKE_AGENT_DELAY"
	done <"$REEL_FAKE_AGENT_REPLAY"
else
	cat "$REEL_FAKE_AGENT_REPLAY" || exit 98
fi
if [ -n "${REEL_FAKE_AGENT_STDERR:-}" ]; then
	printf '%s\n' "$REEL_FAKE_AGENT_STDERR" >&2
fi
exit "${REEL_FAKE_AGENT_EXIT:-0}"
