#!/usr/bin/env bash
set -eu
file="$1"
if [ -s "$file" ]; then echo "CHECK=ok $(wc -l < "$file") lines"; else echo "CHECK=empty"; fi
