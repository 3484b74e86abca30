#!/usr/bin/env bash
# The shipped binary's size and start-up time, next to btmon's: writes bench/binary.md.
# Start-up is `blesniff --version` (parses the command line, prints, exits): the median of RUNS runs.
# Usage: scripts/bench/binary.sh [BINARY]   (default: the release build scripts/release/build.sh makes)
set -euo pipefail
cd "$(dirname "$0")/../.."
RUNS=${RUNS:-200}
BIN=${1:-$(scripts/release/build.sh)}
stripped=$(mktemp)
trap 'rm -f "$stripped"' EXIT
strip -o "$stripped" "$BIN"
mb() { awk -v b="$1" 'BEGIN { printf "%.1f", b / 1000000 }'; }
size_of() { stat -c %s "$1"; }
# Wall time of a command in milliseconds: perf's mean over RUNS runs where perf works, else the
# median of RUNS runs timed from the shell (which adds the shell's own fork and exec).
startup_ms() {
  if command -v perf >/dev/null && perf stat -r 1 true >/dev/null 2>&1; then
    perf stat -r "$RUNS" "$@" 2>&1 >/dev/null | awk '/seconds time elapsed/ { printf "%.2f", $1 * 1000 }'
    return
  fi
  local t=() i s e
  for ((i = 0; i < RUNS; i++)); do
    s=$(date +%s%N); "$@" >/dev/null 2>&1 || true; e=$(date +%s%N)
    t+=($(( (e - s) / 1000 )))
  done
  printf '%s\n' "${t[@]}" | sort -n | awk '{ a[NR] = $1 } END { printf "%.2f", a[int((NR + 1) / 2)] / 1000 }'
}
icu=$(nm "$BIN" 2>/dev/null | grep -cE 'FoundationICU|icudt|_ZN6icu_|ucol_open|udat_open' || true)
libs=$(objdump -p "$BIN" | awk '/NEEDED/ { print $2 }' | paste -sd, - | sed 's/,/, /g')
{
  echo "# The binary"
  echo
  echo "$(date +%F), $(nproc) cores, $(uname -m), load $(cut -d' ' -f1-3 /proc/loadavg) at the start; $(swift --version 2>/dev/null | head -1)"
  echo "blesniff $("$BIN" --version), built by scripts/release/build.sh (release, Swift runtime linked statically)."
  if command -v perf >/dev/null && perf stat -r 1 true >/dev/null 2>&1; then
    echo "Start-up: mean wall time of $RUNS runs of \`--version\` (perf stat), output to /dev/null."
  else
    echo "Start-up: median wall time of $RUNS runs of \`--version\` timed from the shell, output to /dev/null."
  fi
  echo
  echo "| binary | size MB | stripped MB | start-up ms |"
  echo "|---|---|---|---|"
  echo "| blesniff | $(mb "$(size_of "$BIN")") | $(mb "$(size_of "$stripped")") | $(startup_ms "$BIN" --version) |"
  if command -v btmon >/dev/null; then
    bt=$(command -v btmon)
    echo "| btmon $(btmon --version 2>/dev/null | head -1) | $(mb "$(size_of "$bt")") | (as installed) | $(startup_ms "$bt" --version) |"
  fi
  echo "| /bin/true (process start-up floor) | – | – | $(startup_ms /bin/true) |"
  echo
  echo "ICU symbols in the binary: $icu. Shared libraries it needs: $libs."
} > bench/binary.md
cat bench/binary.md
