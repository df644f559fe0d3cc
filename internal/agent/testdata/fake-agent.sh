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
#
# Multi-turn conversations run the CLI once per turn. With
# REEL_FAKE_AGENT_STATE (a directory) set, the script counts its
# invocations there, and invocation N (N >= 2):
#   replays REEL_FAKE_AGENT_REPLAY_N when set (else REEL_FAKE_AGENT_REPLAY);
#   writes its arguments to "$REEL_FAKE_AGENT_ARGS.N";
#   insists on REEL_FAKE_AGENT_EXPECT_N, a run of consecutive arguments
#   joined by newlines (such as "--resume<LF>SESSION"): without it in its
#   argv it prints why on stderr and exits 96, as a CLI that cannot find
#   the session would.
set -u
n=1
if [ -n "${REEL_FAKE_AGENT_STATE:-}" ]; then
	if [ -f "$REEL_FAKE_AGENT_STATE/count" ]; then
		n=$(($(cat "$REEL_FAKE_AGENT_STATE/count") + 1))
	fi
	echo "$n" >"$REEL_FAKE_AGENT_STATE/count"
fi
replay=${REEL_FAKE_AGENT_REPLAY:-}
argsfile=${REEL_FAKE_AGENT_ARGS:-}
expect=
if [ "$n" -gt 1 ]; then
	eval "replay=\${REEL_FAKE_AGENT_REPLAY_$n:-\$replay}"
	eval "expect=\${REEL_FAKE_AGENT_EXPECT_$n:-}"
	if [ -n "$argsfile" ]; then
		argsfile="$argsfile.$n"
	fi
fi
if [ -z "$replay" ]; then
	echo "fake-agent: REEL_FAKE_AGENT_REPLAY is not set" >&2
	exit 97
fi
if [ -n "$argsfile" ]; then
	: >"$argsfile"
	for a in "$@"; do
		printf '%s\n' "$a" >>"$argsfile"
	done
	if [ ! -t 0 ]; then
		echo "--stdin--" >>"$argsfile"
		cat >>"$argsfile"
	fi
fi
if [ -n "$expect" ]; then
	joined=$(printf '\n%s' "$@")
	case "$joined
" in
	*"
$expect
"*) ;;
	*)
		echo "fake-agent: invocation $n: expected arguments \"$expect\" not in argv:$joined" >&2
		exit 96
		;;
	esac
fi
if [ -n "${REEL_FAKE_AGENT_DELAY:-}" ]; then
	while IFS= read -r line || [ -n "$line" ]; do
		printf '%s\n' "$line"
		sleep "$REEL_FAKE_AGENT_DELAY"
	done <"$replay"
else
	cat "$replay" || exit 98
fi
if [ -n "${REEL_FAKE_AGENT_STDERR:-}" ]; then
	printf '%s\n' "$REEL_FAKE_AGENT_STDERR" >&2
fi
exit "${REEL_FAKE_AGENT_EXIT:-0}"
