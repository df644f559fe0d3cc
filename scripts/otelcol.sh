#!/usr/bin/env bash
# otelcol.sh builds the OpenTelemetry Collector that reel's end-to-end
# OTLP test runs against, as ../shared/otel/README.md describes: the
# collector builder v0.120.0 from the Go module proxy and
# ../shared/otel/builder.yaml (an OTLP receiver and the debug exporter).
#
# The binary goes into a cache directory outside the repository and is
# reused when it is already there; the script prints its path on stdout.
#
#   scripts/otelcol.sh                 build (or reuse) and print the path
#   REEL_OTELCOL_CACHE=DIR scripts/otelcol.sh
#
# The test finds the binary at $REEL_OTELCOL, else at the path this script
# prints (same default cache directory), and skips when neither exists.
set -euo pipefail

cd "$(dirname "$0")/.."
version=v0.120.0
shared=${REEL_SHARED:-../shared}
config="$shared/otel/builder.yaml"
cache=${REEL_OTELCOL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/reel/otelcol-$version}
bin="$cache/otelcol-dist/otelcol-reel"

if [ -x "$bin" ]; then
	echo "$bin"
	exit 0
fi
[ -f "$config" ] || { echo "otelcol: $config not found (../shared beside the checkout, or set REEL_SHARED)" >&2; exit 2; }
command -v go >/dev/null || { echo "otelcol: go toolchain not found" >&2; exit 2; }
config=$(cd "$(dirname "$config")" && pwd)/$(basename "$config")

mkdir -p "$cache"
# The builder installs into a private GOBIN so no other tool is touched.
GOBIN="$cache/bin" go install "go.opentelemetry.io/collector/cmd/builder@$version" >&2
# builder writes output_path (./otelcol-dist) relative to its working
# directory: build inside the cache.
work=$(mktemp -d "$cache/build.XXXXXX")
trap 'rm -rf "$work"' EXIT
(cd "$work" && "$cache/bin/builder" --config "$config" >&2)
mkdir -p "$cache/otelcol-dist"
mv "$work/otelcol-dist/otelcol-reel" "$bin.tmp"
mv "$bin.tmp" "$bin"
echo "$bin"
