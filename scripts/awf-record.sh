#!/bin/sh
# Re-record AWF's outcomes for the differential test (cmd/reel/testdata/awf/).
#
#   scripts/awf-record.sh /path/to/awf
#
# The AWF binary is built from github.com/awf-project/cli at the commit the
# corpus in ../shared/awf comes from (9971294): go build -o awf ./cmd/awf.
# Each case runs in a throwaway project with HOME and the XDG directories
# isolated; nothing leaves the machine (the http fixtures talk to a local
# server the test starts). Review the diff before committing it.
set -eu
if [ $# -ne 1 ]; then
	echo "usage: $0 /path/to/awf" >&2
	exit 2
fi
awf=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
cd "$(dirname "$0")/.."
rm -rf cmd/reel/testdata/awf
exec go test ./cmd/reel -run '^TestAWFDifferential$' -count=1 -record -awf "$awf"
