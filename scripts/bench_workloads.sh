#!/usr/bin/env bash
# Speed on several traffic shapes, against tshark and btmon on the same files in the same run.
#
#   scripts/bench_workloads.sh [SHAPE...]     (default: notify notify-gatt adv throughput mix sniffer)
#
# BENCH_FRAMES frames per shape (default 200000), BENCH_RUNS runs of blesniff (default 3) and
# BENCH_PEER_RUNS of tshark and btmon (default 1), medians, alternating. Shapes come from
# scripts/make_workloads.py, the mix from scripts/make_bench_capture.py, the sniffer shape repeats a
# real nRF Sniffer capture from ../shared/captures when it is there. Writes bench/workloads.md.
set -euo pipefail
cd "$(dirname "$0")/.."
FRAMES=${BENCH_FRAMES:-200000} RUNS=${BENCH_RUNS:-3} PEER_RUNS=${BENCH_PEER_RUNS:-1}
WORK=${BENCH_WORK:-/tmp/blesniff-workloads}
SHAPES=("$@"); [ ${#SHAPES[@]} -gt 0 ] || SHAPES=(notify notify-gatt adv throughput mix sniffer)
mkdir -p "$WORK"
command -v tshark >/dev/null || scripts/setup.sh tshark
command -v btmon >/dev/null || scripts/setup.sh bluez || true
swift build -c release --static-swift-stdlib >/dev/null
BIN=$(swift build -c release --static-swift-stdlib --show-bin-path)/blesniff

scripts/make_workload_set.sh "$WORK" "$FRAMES"

seconds() { local s e; s=$(date +%s.%N); "$@" >/dev/null 2>&1 || true; e=$(date +%s.%N); echo "$e - $s" | bc -l | xargs printf '%.3f'; }
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
peak_rss_mib() { /usr/bin/time -v "$@" 2>&1 >/dev/null | awk -F: '/Maximum resident/ {printf "%.1f", $2/1024}'; }
# time CMD...: median of RUNS runs.
timed() { local n=$1; shift; for _ in $(seq "$n"); do seconds "$@"; echo; done | median; }
fps() { echo "$FRAMES / $1" | bc -l | xargs printf "%.0f"; }
ratio() { [ -n "$2" ] && echo "$2 / $1" | bc -l | xargs printf '%.1f×' || echo "–"; }

{
  echo "# Speed by workload"
  echo
  echo "$(date -u +%Y-%m-%d), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg) at the start; $(swift --version 2>&1 | head -1)"
  echo "$(tshark -v 2>/dev/null | head -1); btmon $(dpkg-query -W -f='${Version}' bluez 2>/dev/null || echo 'not installed')"
  echo "$FRAMES frames per workload; blesniff median of $RUNS runs, peers of $PEER_RUNS; static release build."
  echo
  echo "| workload | command | blesniff s | frames/s | peer | peer s | ratio | peak RSS MiB |"
  echo "|---|---|---|---|---|---|---|---|"
} > "$WORK/table.md"

for s in "${SHAPES[@]}"; do
  P=$WORK/$s.pcap; S=$WORK/$s.btsnoop
  [ "$s" = mix ] && S=$WORK/mix.btmon.btsnoop
  [ -f "$P" ] || { echo "no $P: skipped" >&2; continue; }
  [ -f "$S" ] || S=""
  row() { # row LABEL "blesniff cmd" PEERLABEL "peer cmd"
    local a b rss
    a=$(timed "$RUNS" bash -c "$2")
    b=""; [ -n "$4" ] && b=$(timed "$PEER_RUNS" bash -c "$4")
    rss=$(peak_rss_mib bash -c "exec $2")
    echo "| $s | $1 | $a | $(fps "$a") | ${3:-–} | ${b:-–} | $(ratio "$a" "$b") | $rss |" >> "$WORK/table.md"
  }
  row '`read`' "$BIN read $P" '`tshark -r`' "tshark -r $P"
  if [ -n "$S" ] && command -v btmon >/dev/null && btmon -r "$S" >/dev/null 2>&1; then
    row '`read -v`' "$BIN read -v $S" '`btmon -r`' "btmon -r $S"
  else
    row '`read -v`' "$BIN read -v $P" '`tshark -V`' "tshark -r $P -V"
  fi
  row '`read --format json`' "$BIN read --format json $P" '`tshark -T json`' "tshark -r $P -T json"
  row '`read --quiet`' "$BIN read --quiet $P" "" ""
  row '`audit`' "$BIN audit --fail-on never $P" '`read --quiet`' "$BIN read --quiet $P"
done
mkdir -p bench
cp "$WORK/table.md" bench/workloads.md
cat bench/workloads.md
