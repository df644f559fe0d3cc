#!/bin/sh
# A stand-in for the claude, gemini and codex CLIs that the AWF
# differential test (cmd/reel/awf_diff_test.go) puts first on PATH for
# both AWF and reel. It answers one turn in the CLI's real output shape
# (claude stream-json, gemini stream-json, codex exec --json), without
# the network, and deterministically:
#
#   - the reply names the provider, the turn of the session, a digest of
#     the prompt and the prompt's first line, so that a difference in what
#     the tools send shows in the state's output;
#   - a new session's id is derived from the prompt; a resumed session
#     keeps the id it was given and counts its turns on;
#   - a prompt whose first line holds FAIL-ALWAYS fails (exit 1, the
#     CLI's error shape); FAIL-ONCE fails the first time that prompt is
#     sent; REPLY-JSON gets a JSON document in a fenced block as the
#     reply, SLEEP a reply 3 seconds late.
#
# Each call appends to $FAKE_AGENT_DIR/agents-PROVIDER.log what it was
# asked, normalized across the tools' argv conventions (the session it
# resumes, the model, the system prompt, the prompt), which the test
# compares, and its raw argv to agents-argv.log, which it does not: the
# tools spell the same request differently (docs/awf-compat.md).
set -eu
provider=$1
shift
dir=${FAKE_AGENT_DIR:?FAKE_AGENT_DIR is not set}
{
	printf '%s' "$provider"
	for a in "$@"; do printf ' [%s]' "$a"; done
	echo
} >>"$dir/agents-argv.log"

resume= model= system= prompt= have_prompt=
case $provider in
claude)
	# claude -p is --print (a switch); the prompt is the positional
	# argument, or stdin without one.
	while [ $# -gt 0 ]; do
		case $1 in
		-p | --print | --verbose | --dangerously-skip-permissions) ;;
		--output-format | --allowedTools | --max-turns) shift ;;
		--model) model=$2; shift ;;
		-r | --resume) resume=$2; shift ;;
		--system-prompt | --append-system-prompt) system=$2; shift ;;
		--) shift; prompt=$1; have_prompt=1 ;;
		-*) echo "claude: unknown option $1" >&2; exit 2 ;;
		*) prompt=$1; have_prompt=1 ;;
		esac
		shift
	done
	;;
gemini)
	while [ $# -gt 0 ]; do
		case $1 in
		--output-format) shift ;;
		--output-format=* | --approval-mode=*) ;;
		--model) model=$2; shift ;;
		--resume) resume=$2; shift ;;
		--resume=*) resume=${1#--resume=} ;;
		-p | --prompt) prompt=$2; have_prompt=1; shift ;;
		--prompt=*) prompt=${1#--prompt=}; have_prompt=1 ;;
		*) echo "gemini: unknown argument $1" >&2; exit 2 ;;
		esac
		shift
	done
	;;
codex)
	[ "${1:-}" = exec ] || { echo "codex: want exec" >&2; exit 2; }
	shift
	while [ $# -gt 0 ]; do
		case $1 in
		--json | --skip-git-repo-check | --dangerously-bypass-approvals-and-sandbox) ;;
		--model) model=$2; shift ;;
		resume) resume=$2; shift ;;
		--) shift; prompt=$1; have_prompt=1 ;;
		-*) echo "codex: unknown option $1" >&2; exit 2 ;;
		*) prompt=$1; have_prompt=1 ;;
		esac
		shift
	done
	[ "$prompt" = - ] && have_prompt=
	;;
*)
	echo "fakeagent: unknown provider $provider" >&2
	exit 2
	;;
esac
if [ -z "$have_prompt" ]; then
	prompt=$(cat)
fi


digest=$(printf '%s' "$prompt" | cksum | cut -d' ' -f1)
if [ -n "$resume" ]; then
	session=$resume
else
	session=$provider-$digest
fi
mkdir -p "$dir/.fakeagent"
turns=$dir/.fakeagent/$session
n=$(($(cat "$turns" 2>/dev/null || echo 0) + 1))
echo "$n" >"$turns"

{
	echo "== $provider call"
	printf 'resume: %s\n' "${resume:--}"
	printf 'model: %s\n' "${model:--}"
	printf 'system: %s\n' "${system:--}"
	echo "prompt:"
	printf '%s\n' "$prompt"
} >>"$dir/agents-$provider.log"

# Only the prompt's first line counts, so that a later step quoting this
# one's reply (or a system prompt put ahead of it) does not fail too.
first=$(printf '%s\n' "$prompt" | head -n 1)
fail=
case $first in
*FAIL-ALWAYS*) fail=1 ;;
*FAIL-ONCE*)
	if [ ! -e "$dir/.fakeagent/failed-$digest" ]; then
		: >"$dir/.fakeagent/failed-$digest"
		fail=1
	fi
	;;
esac

reply="$provider turn $n (digest $digest): $first"

# JSON string escaping for the reply: backslash, quote, tab.
json() {
	printf '%s' "$1" | sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/	/\\t/g'
}
r=$(json "$reply")
case $first in
*REPLY-JSON*)
	# a JSON document in a fenced block, as models answer when asked
	r='```json\n{\"turn\": '"$n"', \"digest\": \"'"$digest"'\"}\n```'
	reply=$r
	;;
esac
case $first in
*SLEEP*) sleep 3 ;;
esac
# line writes one line of output as is (dash's echo would read the
# backslashes of JSON escapes).
line() { printf '%s\n' "$1"; }
in=$(( ${#prompt} / 4 + 1 ))
out=$(( ${#reply} / 4 + 1 ))

case $provider in
claude)
	line '{"type":"system","subtype":"init","cwd":"'"$(json "$PWD")"'","session_id":"'"$session"'","tools":["Bash","Read"],"mcp_servers":[],"model":"claude-haiku-4-5-20251001","permissionMode":"default","apiKeySource":"none","claude_code_version":"2.1.285","output_style":"default"}'
	if [ -n "$fail" ]; then
		line '{"type":"result","subtype":"error_during_execution","is_error":true,"duration_ms":12,"duration_api_ms":0,"num_turns":0,"session_id":"'"$session"'","total_cost_usd":0,"usage":{"input_tokens":0,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":0},"permission_denials":[]}'
		echo "claude: the fake was told to fail" >&2
		exit 1
	fi
	line '{"type":"assistant","message":{"model":"claude-haiku-4-5-20251001","id":"msg_fake'"$n"'","type":"message","role":"assistant","content":[{"type":"text","text":"'"$r"'"}],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":'"$in"',"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":'"$out"',"service_tier":"standard"}},"parent_tool_use_id":null,"session_id":"'"$session"'"}'
	line '{"type":"result","subtype":"success","is_error":false,"duration_ms":20,"duration_api_ms":15,"num_turns":1,"result":"'"$r"'","stop_reason":"end_turn","session_id":"'"$session"'","total_cost_usd":0.0001,"usage":{"input_tokens":'"$in"',"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":'"$out"',"service_tier":"standard"},"permission_denials":[]}'
	;;
gemini)
	line '{"type":"init","session_id":"'"$session"'","model":"'"${model:-gemini-2.5-pro}"'","timestamp":"2026-01-15T10:00:00Z"}'
	if [ -n "$fail" ]; then
		line '{"type":"error","severity":"error","message":"the fake was told to fail","timestamp":"2026-01-15T10:00:02Z"}'
		line '{"type":"result","status":"error","error":{"type":"Error","message":"the fake was told to fail"},"stats":{"total_tokens":0,"input_tokens":0,"output_tokens":0},"timestamp":"2026-01-15T10:00:02Z"}'
		exit 1
	fi
	line '{"type":"message","role":"assistant","content":"'"$r"'","timestamp":"2026-01-15T10:00:05Z"}'
	line '{"type":"result","status":"success","stats":{"total_tokens":'$((in + out))',"input_tokens":'"$in"',"output_tokens":'"$out"',"duration_ms":20,"tool_calls":0},"timestamp":"2026-01-15T10:00:06Z"}'
	;;
codex)
	line '{"type":"thread.started","thread_id":"'"$session"'"}'
	line '{"type":"turn.started"}'
	if [ -n "$fail" ]; then
		line '{"type":"error","message":"the fake was told to fail"}'
		line '{"type":"turn.failed","error":{"message":"the fake was told to fail"}}'
		exit 1
	fi
	line '{"type":"item.completed","item":{"id":"item_0","type":"agent_message","text":"'"$r"'"}}'
	line '{"type":"turn.completed","usage":{"input_tokens":'"$in"',"cached_input_tokens":0,"output_tokens":'"$out"'}}'
	;;
esac
