#!/bin/sh
# NOT an agent: this script stands in for the `vibe`, `opencode` and
# `claude` CLIs in the workflows of this directory, so they run with no agent
# CLI, no API key and no network. reel runs it exactly as it would run the
# real CLI (same arguments, own process group, stdout parsed live).
#
# Which CLI it plays follows from the command line reel builds:
#   vibe --prompt=…, opencode run …: replays recordings/vibe.jsonl or
#                  recordings/opencode.jsonl (hand-written in the CLIs' real
#                  output shapes).
#   claude:        prints a short stream-json session whose reply depends on
#                  the prompt, so conversations and stop conditions have
#                  something to react to.
dir=$(dirname "$0")
[ -t 0 ] || cat >/dev/null # opencode gets its prompt on stdin
case "$1" in
--prompt*) exec cat "$dir/recordings/vibe.jsonl" ;;
run) exec cat "$dir/recordings/opencode.jsonl" ;;
esac
prompt= resumed= prev=
for a in "$@"; do
	[ "$prev" = "--resume" ] && resumed=$a
	prev=$a
	prompt=$a
done
case "$prompt" in
*"Your last answer"*) reply="APPROVED: the fix is safe." ;;
*BANANA42*) reply="stored" ;;
*"What was the word"*) if [ -n "$resumed" ]; then reply="The word was BANANA42."; else reply="I was never told."; fi ;;
*) reply="Needs work: handle the error from os.Open." ;;
esac
printf '{"type":"system","subtype":"init","session_id":"demo-session","model":"claude-sonnet-4-5"}\n'
printf '{"type":"assistant","session_id":"demo-session","message":{"id":"msg_%s","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"%s"}],"usage":{"input_tokens":40,"output_tokens":9}}}\n' "$$" "$reply"
printf '{"type":"result","subtype":"success","is_error":false,"num_turns":1,"result":"%s","session_id":"demo-session","total_cost_usd":0.0004,"usage":{"input_tokens":40,"output_tokens":9}}\n' "$reply"
