#!/bin/sh
# Record what AWF does with its four example plugins, for TestAWFPlugins
# (cmd/reel/testdata/awfplugins/).
#
#   REEL_AWF_PLUGINS=DIR scripts/awf-record-plugins.sh /path/to/awf [CASES]
#
# DIR holds AWF's example plugins in AWF's layout
# (DIR/awf-plugin-echo/{awf-plugin-echo,plugin.yaml}, and so for database,
# event-logger and security-validator), each built from
# examples/plugins/awf-plugin-NAME of github.com/awf-project/cli at the
# commit reel follows (9971294) with go build; the AWF binary from the same
# commit (go build ./cmd/awf). CASES is a go test -run pattern under
# TestAWFPlugins. Each case runs in a throwaway project with HOME and the
# XDG directories isolated. Review the diff before committing it.
set -eu
if [ $# -lt 1 ] || [ $# -gt 2 ]; then
	echo "usage: REEL_AWF_PLUGINS=DIR $0 /path/to/awf [CASES]" >&2
	exit 2
fi
: "${REEL_AWF_PLUGINS:?set REEL_AWF_PLUGINS to the directory of AWF's example plugins}"
awf=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
run='^TestAWFPlugins$'
if [ $# -eq 2 ]; then
	run="$run/$2"
fi
cd "$(dirname "$0")/.."
exec go test ./cmd/reel -run "$run" -count=1 -record -awf "$awf"
