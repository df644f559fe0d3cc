#!/usr/bin/env bash
# agent-clis.sh installs the published agent CLIs that reel's tests drive
# against a scripted model server (internal/modeltest): claude, codex,
# gemini, copilot and opencode at the versions pinned in
# scripts/agent-clis/package-lock.json, with npm, into a cache outside
# the repository. A cache that already holds that lock is reused as it is.
# It prints the install prefix on stdout: the tests find the CLIs at
# $REEL_AGENT_CLIS/node_modules/.bin and skip when REEL_AGENT_CLIS is unset.
#
#   scripts/agent-clis.sh                       install (or reuse), print the prefix
#   REEL_AGENT_CLIS_CACHE=DIR scripts/agent-clis.sh
#
# To move to newer releases: edit the versions in
# scripts/agent-clis/package.json, run `npm install --package-lock-only`
# there, and run the tests (go test ./cmd/reel/realcli).
set -euo pipefail

cd "$(dirname "$0")/.."
. scripts/npm-cache.sh
# Not npm ci: opencode-ai names optional platform packages that the
# registry does not serve (opencode-darwin-arm64@1.18.33 answers 404), so
# the lock cannot list them and npm ci refuses it as out of sync. npm
# install with the lock beside it installs exactly the locked versions
# and, with --no-save, leaves the lock as it is.
npm_cache_install agent-clis scripts/agent-clis \
	"${REEL_AGENT_CLIS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/reel-ci/agent-clis}" \
	install claude codex gemini copilot opencode
