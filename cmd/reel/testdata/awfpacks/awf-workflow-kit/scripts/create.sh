#!/usr/bin/env bash
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
desc="$*"
[ -n "$desc" ] || { echo "usage: create.sh DESCRIPTION" >&2; exit 1; }
cd "$(root)"
dir="specs/$(slug "$desc")"
mkdir -p "$dir"
tmpl=".awf/templates/kit/spec-template.md"
if [ -f "$tmpl" ]; then sed "s/{{FEATURE}}/$desc/" "$tmpl" > "$dir/spec.md"; else : > "$dir/spec.md"; fi
echo "FEATURE_DIR=$dir"
echo "SPEC_FILE=$dir/spec.md"
