#!/usr/bin/env bash
# Instructions executed per workload and command, counted by callgrind: unlike seconds, the count
# does not move with the load of a shared machine, so a change can be judged in one run.
#
#   scripts/bench/instructions.sh [BASE_BINARY]
#
# Counts the release build (static, as shipped) on each shape of scripts/bench/workloads.sh at
# BENCH_FRAMES frames (default 20000; start-up, about 40 million instructions, is included), and
# BASE_BINARY beside it when given (a build of an earlier commit). Writes bench/instructions.md.
set -euo pipefail
cd "$(dirname "$0")/../.."
FRAMES=${BENCH_FRAMES:-20000}
WORK=${BENCH_WORK:-/tmp/blesniff-instructions}
BASE=${1:-}
command -v valgrind >/dev/null || { echo "valgrind is needed (apt-get install valgrind)" >&2; exit 2; }
mkdir -p "$WORK"
swift build -c release --static-swift-stdlib >/dev/null
BIN=$(swift build -c release --static-swift-stdlib --show-bin-path)/blesniff

scripts/bench/make_workload_set.sh "$WORK" "$FRAMES"

# Hash tables seeded alike in every run, so that they probe alike.
export SWIFT_DETERMINISTIC_HASHING=1
millions() { # millions BINARY ARGS...: instructions of one run, in millions
  valgrind --tool=callgrind --callgrind-out-file=/dev/null "$@" 2>&1 >/dev/null |
    awk '/Collected/ {printf "%.0f", $4 / 1e6}'
}

{
  echo "# Instructions by workload"
  echo
  echo "$(date -u +%Y-%m-%d); $(swift --version 2>&1 | head -1); callgrind, $FRAMES frames per workload,"
  echo "millions of instructions per run, start-up included; static release build."
  echo
  if [ -n "$BASE" ]; then
    echo "| workload | command | base | now | change |"
    echo "|---|---|---|---|---|"
  else
    echo "| workload | command | now |"
    echo "|---|---|---|"
  fi
} > "$WORK/table.md"

for s in notify notify-gatt adv throughput requests mix sniffer; do
  F=$WORK/$s.btsnoop; [ -f "$F" ] || F=$WORK/$s.pcap
  [ -f "$F" ] || { echo "no $s capture: skipped" >&2; continue; }
  for cmd in "read" "read -v" "read --format json" "read --quiet" "audit --fail-on never"; do
    # shellcheck disable=SC2086
    now=$(millions "$BIN" $cmd "$F")
    if [ -n "$BASE" ]; then
      # shellcheck disable=SC2086
      base=$(millions "$BASE" $cmd "$F")
      change=$(echo "($now - $base) * 100 / $base" | bc -l | xargs printf '%+.0f%%')
      echo "| $s | \`$cmd\` | $base | $now | $change |" >> "$WORK/table.md"
    else
      echo "| $s | \`$cmd\` | $now |" >> "$WORK/table.md"
    fi
  done
done
mkdir -p bench
cp "$WORK/table.md" bench/instructions.md
cat bench/instructions.md
