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
. scripts/npm-cache.sh
npm_cache_install mcp-inspector scripts/mcp-inspector \
	"${REEL_MCP_INSPECTOR_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/reel-ci/mcp-inspector}" \
	ci mcp-inspector
