#!/usr/bin/env bash
# bench-read.sh times reel's transcript readers on generated data, in one run:
#   1. reel events FILE --type tool.result --field payload.name
#      against jq -r 'select(.type=="tool.result") | .payload.name'
#      on a transcript of at least 100 MB (target: 15x faster than jq);
#   2. reel stats over 1000 transcripts totalling at least 500 MB (target < 2 s);
#   3. reel tree of a 100k-event run with 200 child files (target < 1 s).
# Data is generated from ../shared/bench/mix.jsonl (override with MIX=...)
# into a temporary directory (override with WORK=..., kept when set).
set -euo pipefail

cd "$(dirname "$0")/.."
MIX=${MIX:-../shared/bench/mix.jsonl}
[ -f "$MIX" ] || { echo "bench-read: event mix $MIX not found" >&2; exit 2; }
command -v jq >/dev/null || { echo "bench-read: jq not found (apt-get install -y jq)" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "bench-read: /usr/bin/time not found (apt-get install -y time)" >&2; exit 2; }
command -v bc >/dev/null || { echo "bench-read: bc not found (apt-get install -y bc)" >&2; exit 2; }
echo "load average before the run: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"

if [ -n "${WORK:-}" ]; then
	mkdir -p "$WORK"
else
	WORK=$(mktemp -d)
	trap 'rm -rf "$WORK"' EXIT
fi

go build -o "$WORK/reel" ./cmd/reel
go build -o "$WORK/benchgen" ./scripts/benchgen
REEL=$WORK/reel

# best_of N CMD... runs CMD N times and prints "WALL CPU" in seconds for the
# run with the lowest wall time (CPU = user + system). On a loaded machine
# wall time includes waiting for a core; CPU time does not.
best_of() {
	local n=$1 best="" cpu="" w c
	shift
	for _ in $(seq "$n"); do
		/usr/bin/time -o "$WORK/time.out" -f '%e %U %S' "$@" >/dev/null 2>&1
		read -r w c < <(awk '{print $1, $2 + $3}' "$WORK/time.out")
		if [ -z "$best" ] || [ "$(echo "$w < $best" | bc -l)" = 1 ]; then best=$w cpu=$c; fi
	done
	echo "$best $cpu"
}

echo "== generating data in $WORK"
[ -f "$WORK/big.jsonl" ] || "$WORK/benchgen" -mix "$MIX" -file "$WORK/big.jsonl" -mb 100
[ -d "$WORK/many/transcripts" ] || "$WORK/benchgen" -mix "$MIX" -dir "$WORK/many/transcripts" -runs 1000 -mb 500
[ -d "$WORK/tree/transcripts" ] || "$WORK/benchgen" -mix "$MIX" -dir "$WORK/tree/transcripts" -tree 100000 -children 200
big_mb=$(( $(stat -c %s "$WORK/big.jsonl") / 1048576 ))
many_mb=$(( $(du -sb "$WORK/many/transcripts" | cut -f1) / 1048576 ))
many_n=$(ls "$WORK/many/transcripts" | wc -l)
tree_root=$(ls -S "$WORK/tree/transcripts" | sed -n 1p)
tree_events=$(wc -l < "$WORK/tree/transcripts/$tree_root")
tree_children=$(( $(ls "$WORK/tree/transcripts" | wc -l) - 1 ))
echo "big transcript: ${big_mb} MB, $(wc -l < "$WORK/big.jsonl") events"
echo "stats set: $many_n transcripts, ${many_mb} MB"
echo "tree: root $tree_events events, $tree_children child files"
cat "$WORK"/many/transcripts/* >/dev/null # warm the page cache for every contender alike

echo "== 1. events --type tool.result --field payload.name vs jq"
"$REEL" events "$WORK/big.jsonl" --type tool.result --field payload.name > "$WORK/reel.out"
jq -r 'select(.type=="tool.result") | .payload.name' "$WORK/big.jsonl" > "$WORK/jq.out"
if cmp -s "$WORK/reel.out" "$WORK/jq.out"; then
	echo "outputs identical ($(wc -l < "$WORK/reel.out") lines)"
else
	echo "bench-read: reel and jq outputs differ" >&2
	exit 1
fi
read -r t_reel c_reel < <(best_of 3 "$REEL" events "$WORK/big.jsonl" --type tool.result --field payload.name)
read -r t_jq c_jq < <(best_of 1 jq -r 'select(.type=="tool.result") | .payload.name' "$WORK/big.jsonl")
ratio=$(echo "$t_jq / $t_reel" | bc -l)
printf 'reel events: %ss wall (%ss CPU)  jq: %ss wall (%ss CPU)  speed-up: %.1fx wall, %.1fx CPU (target >= 15x)  reel: %.0f MB/s\n' \
	"$t_reel" "$c_reel" "$t_jq" "$c_jq" "$ratio" "$(echo "$c_jq / $c_reel" | bc -l)" "$(echo "$big_mb / $t_reel" | bc -l)"

echo "== 2. stats over $many_n transcripts (${many_mb} MB)"
read -r t_stats c_stats < <(best_of 3 "$REEL" stats --all --storage "$WORK/many")
printf 'reel stats --all: %ss wall, %ss CPU on %s cores (target < 2s)\n' "$t_stats" "$c_stats" "$(nproc)"

echo "== 3. tree of a $tree_events-event run with $tree_children child files"
read -r t_tree c_tree < <(best_of 3 "$REEL" tree "$WORK/tree/transcripts/$tree_root")
printf 'reel tree: %ss wall, %ss CPU (target < 1s)\n' "$t_tree" "$c_tree"

fail=0
[ "$(echo "$ratio >= 15" | bc -l)" = 1 ] || { echo "FAIL: events speed-up below 15x"; fail=1; }
[ "$(echo "$t_stats < 2" | bc -l)" = 1 ] || { echo "FAIL: stats took 2s or more"; fail=1; }
[ "$(echo "$t_tree < 1" | bc -l)" = 1 ] || { echo "FAIL: tree took 1s or more"; fail=1; }
[ "$fail" = 0 ] && echo "all targets met"
exit "$fail"
