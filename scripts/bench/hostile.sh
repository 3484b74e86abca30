#!/usr/bin/env bash
# Peak memory of every command on a flood of advertising reports, each from a new random address
# (scripts/fixtures/make_hostile.py). Every command should stay under 128 MiB.
# Usage: scripts/bench/hostile.sh [BIN]   (HOSTILE_FLOOD=2000000 reports by default)
# Prints a markdown table; bench/results.md keeps the last run's.
set -euo pipefail
cd "$(dirname "$0")/../.."
BIN=${1:-$(swift build -c release --show-bin-path)/blesniff}
N=${HOSTILE_FLOOD:-2000000}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
python3 scripts/fixtures/make_hostile.py "$WORK" --flood "$N" >/dev/null
F=$WORK/flood.btsnoop
echo "| Command ($N random-address advertising reports, $(du -m "$F" | cut -f1) MB) | Peak RSS (MiB) | Time (s) |"
echo "|---|---:|---:|"
for args in "read" "read -v" "read --format json" "devices" "devices --format json" "gatt" "audit --fail-on never" \
            "report -o $WORK/report.html"; do
  # shellcheck disable=SC2086
  /usr/bin/time -v "$BIN" $args "$F" >/dev/null 2>"$WORK/time" || true
  kb=$(awk -F: '/Maximum resident set size/ {gsub(/ /, "", $2); print $2}' "$WORK/time")
  wall=$(awk '/Elapsed \(wall clock\)/ {print $NF}' "$WORK/time")
  printf '| `%s` | %d | %s |\n' "${args%% -o *}" $((kb / 1024)) "$wall"
done
