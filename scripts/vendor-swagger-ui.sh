#!/bin/sh
# Refresh the Swagger UI files /docs embeds (internal/awfapi/docs) from the
# npm package swagger-ui-dist: scripts/vendor-swagger-ui.sh 5.35.0
set -eu
version=${1:?usage: $0 VERSION}
dir=$(cd "$(dirname "$0")/../internal/awfapi/docs" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack --silent "swagger-ui-dist@$version" >/dev/null && tar xzf swagger-ui-dist-*.tgz)
for f in swagger-ui-bundle.js swagger-ui.css LICENSE NOTICE swagger-ui-bundle.js.LICENSE.txt; do
	cp "$tmp/package/$f" "$dir/$f"
done
sed -i "s/swagger-ui-dist\` [0-9.]*/swagger-ui-dist\` $version/" "$dir/README.md"
echo "swagger-ui-dist $version in $dir"
