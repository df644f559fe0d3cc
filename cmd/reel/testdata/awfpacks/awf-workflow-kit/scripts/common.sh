#!/usr/bin/env bash
# Functions the pack's scripts share.
root() { git rev-parse --show-toplevel 2>/dev/null || echo "$PWD"; }
slug() { echo "$1" | tr 'A-Z' 'a-z' | tr -cs 'a-z0-9' '-' | sed 's/^-//; s/-$//'; }
