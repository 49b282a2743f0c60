#!/usr/bin/env bash
# Runs every Go fuzz target in the module for a while each and prints the
# execs. Usage: scripts/fuzz.sh [DURATION]   (default 30s per target)
set -euo pipefail
cd "$(dirname "$0")/.."
dur=${1:-30s}
for pkg in $(go list ./...); do
  for target in $(go test -list '^Fuzz' "$pkg" 2>/dev/null | grep '^Fuzz' || true); do
    echo "== $pkg $target ($dur)"
    go test -run='^$' -fuzz="^${target}\$" -fuzztime="$dur" "$pkg" 2>&1 | tail -n 3
  done
done
