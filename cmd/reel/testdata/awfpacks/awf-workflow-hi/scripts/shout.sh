#!/usr/bin/env bash
set -eu
echo "{{.states.read.Output}}" | tr 'a-z' 'A-Z'
