#!/bin/sh
# Record AWF's outcomes for the differential test (cmd/reel/testdata/awf/).
#
#   scripts/awf-record.sh /path/to/awf [CASES]
#
# CASES is a go test -run pattern under TestAWFDifferential, such as
# 'conversation-' or 'agent-simple$'; without it every case is recorded.
# The AWF binary is built from github.com/awf-project/cli at the commit the
# corpus in ../shared/awf comes from (9971294): go build -o awf ./cmd/awf.
# Each case runs in a throwaway project with HOME and the XDG directories
# isolated; nothing leaves the machine (the http fixtures talk to a local
# server the test starts, the agent fixtures to the fake CLIs in
# cmd/reel/testdata/awfagents, the pack cases install the packs of
# cmd/reel/testdata/awfpacks from a stand-in GitHub the test serves on
# loopback, through GITHUB_API_URL). Golden files are overwritten, never
# deleted: remove the one of a case you drop. Review the diff before
# committing it (git diff --stat: only the cases you meant should change).
set -eu
if [ $# -lt 1 ] || [ $# -gt 2 ]; then
	echo "usage: $0 /path/to/awf [CASES]" >&2
	exit 2
fi
awf=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
run='^TestAWFDifferential$'
if [ $# -eq 2 ]; then
	run="$run/$2"
fi
cd "$(dirname "$0")/.."
exec go test ./cmd/reel -run "$run" -count=1 -record -awf "$awf"
