#!/usr/bin/env bash
# Heap allocations per frame in steady state, for each workload shape and command: counted by
# scripts/bench/malloc_count.c (LD_PRELOAD) at two sizes of each shape, so start-up cancels out.
# Allocation counts are deterministic, so a committed ceiling can fail CI on a regression.
#
#   scripts/bench/allocations.sh [--check] [BINARY]
#
# BINARY: the release build to count (default: scripts/release/build.sh builds it). Writes
# bench/allocations.md; --check instead compares with the ceilings in bench/allocations.tsv and
# exits 1 when a command allocates more per frame than its ceiling (or a shape/command has none).
set -euo pipefail
cd "$(dirname "$0")/../.."
check=""
if [ "${1:-}" = --check ]; then check=1; shift; fi
BIN=${1:-$(scripts/release/build.sh)}
WORK=${BENCH_WORK:-/tmp/blesniff-allocations}
SMALL=2000 LARGE=12000
mkdir -p "$WORK"
cc=$(command -v cc || command -v clang) || { echo "scripts/bench/allocations.sh: needs a C compiler (cc or clang)" >&2; exit 2; }
"$cc" -shared -fPIC -O2 -o "$WORK/malloc_count.so" scripts/bench/malloc_count.c
scripts/bench/make_workload_set.sh "$WORK/small" "$SMALL"
scripts/bench/make_workload_set.sh "$WORK/large" "$LARGE"
export SWIFT_DETERMINISTIC_HASHING=1

count() { # count FILE ARGS...: allocations of one run
  local file=$1; shift
  MALLOC_COUNT_OUT="$WORK/count" LD_PRELOAD="$WORK/malloc_count.so" "$BIN" "$@" "$file" >/dev/null 2>&1 || true
  cat "$WORK/count"
}

rows=()
for s in notify notify-gatt adv throughput requests mix sniffer; do
  for cmd in "read --quiet" "read" "read -v" "read --format json" "audit --fail-on never"; do
    f1=$WORK/small/$s.btsnoop f2=$WORK/large/$s.btsnoop
    [ -f "$f1" ] || { f1=$WORK/small/$s.pcap f2=$WORK/large/$s.pcap; }
    # shellcheck disable=SC2086
    a1=$(count "$f1" $cmd)
    # shellcheck disable=SC2086
    a2=$(count "$f2" $cmd)
    per=$(awk -v a="$a1" -v b="$a2" -v n="$((LARGE - SMALL))" 'BEGIN { printf "%.2f", (b - a) / n }')
    rows+=("$s	$cmd	$per")
  done
done

if [ -n "$check" ]; then
  failed=0
  for r in "${rows[@]}"; do
    IFS=$'\t' read -r s cmd per <<< "$r"
    ceiling=$(awk -F'\t' -v s="$s" -v c="$cmd" '$1 == s && $2 == c { print $3 }' bench/allocations.tsv)
    if [ -z "$ceiling" ]; then
      echo "allocations: $s \`$cmd\`: no ceiling in bench/allocations.tsv ($per a frame)" >&2; failed=1
    elif awk -v p="$per" -v c="$ceiling" 'BEGIN { exit !(p > c) }'; then
      echo "allocations: $s \`$cmd\`: $per a frame, over its ceiling $ceiling" >&2; failed=1
    else
      echo "allocations: $s \`$cmd\`: $per a frame (ceiling $ceiling)"
    fi
  done
  exit "$failed"
fi

{
  echo "# Heap allocations per frame"
  echo
  echo "$(date -u +%Y-%m-%d); $(swift --version 2>&1 | head -1); static release build; allocations"
  echo "(malloc, calloc, realloc that moves, aligned) counted by scripts/bench/malloc_count.c, per frame between"
  echo "runs of $SMALL and $LARGE frames of each shape (start-up cancels out). CI fails when a command"
  echo "allocates more than its ceiling in bench/allocations.tsv (scripts/bench/allocations.sh --check)."
  echo
  echo "| workload | command | allocations a frame |"
  echo "|---|---|---|"
  for r in "${rows[@]}"; do
    IFS=$'\t' read -r s cmd per <<< "$r"
    echo "| $s | \`$cmd\` | $per |"
  done
} > bench/allocations.md
cat bench/allocations.md
