#!/usr/bin/env bash
# mcp-inspector.sh installs the official MCP Inspector, whose CLI mode the
# tests point at `reel mcp-serve` (cmd/reel, TestMCPInspector), at the
# version pinned in scripts/mcp-inspector/package-lock.json, with npm, into
# a cache outside the repository. A cache that already holds that lock is
# reused as it is. It prints the install prefix on stdout: the tests find
# the inspector at $REEL_MCP_INSPECTOR/node_modules/.bin/mcp-inspector and
# skip when REEL_MCP_INSPECTOR is unset.
#
#   scripts/mcp-inspector.sh                        install (or reuse), print the prefix
#   REEL_MCP_INSPECTOR_CACHE=DIR scripts/mcp-inspector.sh
set -euo pipefail

cd "$(dirname "$0")/.."
src=scripts/mcp-inspector
cache=${REEL_MCP_INSPECTOR_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/reel-ci/mcp-inspector}
want=$(sha256sum "$src/package-lock.json" | cut -d' ' -f1)

if [ -f "$cache/.installed-lock" ] && [ "$(cat "$cache/.installed-lock")" = "$want" ] &&
	[ -x "$cache/node_modules/.bin/mcp-inspector" ]; then
	echo "$cache"
	exit 0
fi
command -v npm >/dev/null || { echo "mcp-inspector: npm not found" >&2; exit 2; }
mkdir -p "$cache"
rm -f "$cache/.installed-lock"
cp "$src/package.json" "$src/package-lock.json" "$cache/"
npm ci --prefix "$cache" --no-audit --no-fund --loglevel=error >&2
[ -x "$cache/node_modules/.bin/mcp-inspector" ] || { echo "mcp-inspector: not installed" >&2; exit 1; }
echo "$want" >"$cache/.installed-lock"
echo "$cache"
