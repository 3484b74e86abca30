#!/usr/bin/env bash
# Speed on several traffic shapes, against tshark and btmon on the same files in the same run.
#
#   scripts/bench/workloads.sh [SHAPE...]     (default: notify notify-gatt adv throughput requests mix sniffer)
#
# BENCH_FRAMES frames per shape (default 200000), BENCH_RUNS runs of blesniff (default 3) and
# BENCH_PEER_RUNS of tshark and btmon (default 1), medians, alternating; peak memory at
# BENCH_RSS_FRAMES (default 2000000; 0 skips it). Shapes come from
# scripts/bench/make_workloads.py, the mix from scripts/bench/make_capture.py, the sniffer shape repeats a
# real nRF Sniffer capture from ../shared/captures when it is there. Writes bench/workloads.md and
# its section of bench/results.md.
set -euo pipefail
cd "$(dirname "$0")/../.."
FRAMES=${BENCH_FRAMES:-200000} RUNS=${BENCH_RUNS:-3} PEER_RUNS=${BENCH_PEER_RUNS:-1}
WORK=${BENCH_WORK:-/tmp/blesniff-workloads}
SHAPES=("$@"); [ ${#SHAPES[@]} -gt 0 ] || SHAPES=(notify notify-gatt adv throughput requests mix sniffer)
mkdir -p "$WORK"
command -v tshark >/dev/null || scripts/setup.sh tshark
command -v btmon >/dev/null || scripts/setup.sh bluez || true
swift build -c release --static-swift-stdlib >/dev/null
BIN=$(swift build -c release --static-swift-stdlib --show-bin-path)/blesniff

scripts/bench/make_workload_set.sh "$WORK" "$FRAMES"

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
  echo "| workload | command | blesniff s | frames/s | peer | peer s | peer s ÷ blesniff s | peak RSS MiB |"
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
# Each target of the speed goals against what this run measured, and the floor under it: every
# output command decodes as `read --quiet` does, so even with free output its time is at least that,
# and its ratio to the peer at most peer / `read --quiet`.
awk -F' *\\| *' -v frames="$FRAMES" '
  $3 == "`read --quiet`" { quiet[$2] = $4 }
  { row[NR] = $0; shape[NR] = $2; cmd[NR] = $3; ours[NR] = $4; peer[NR] = $6; peers[NR] = $7 }
  END {
    print ""
    print "## Targets and the floor"
    print ""
    print "The floor is `read --quiet`: decoding every layer with no output, which each command also does."
    print "A ratio cannot pass peer ÷ floor until decoding itself gets faster."
    print ""
    print "| workload | target | now | with free output (peer ÷ floor) | met |"
    print "|---|---|---|---|---|"
    for (i = 1; i <= NR; i++) {
      q = quiet[shape[i]]; if (q == "" || ours[i] == "" || ours[i] + 0 == 0) continue
      t = ""; f = 0
      if (cmd[i] == "`read`" && peer[i] == "`tshark -r`") { t = "`read` ≥ 30× `tshark -r`"; f = 30 }
      if (cmd[i] == "`read -v`" && peer[i] == "`btmon -r`") { t = "`read -v` ≥ 3× `btmon -r`"; f = 3 }
      if (cmd[i] == "`read --format json`") { t = "JSON ≥ 30× `tshark -T json`"; f = 30 }
      if (t != "" && peers[i] + 0 > 0) {
        now = peers[i] / ours[i]; cap = peers[i] / q
        printf "| %s | %s | %.1f× | %.1f× | %s |\n", shape[i], t, now, cap, (now >= f ? "yes" : "no")
      }
      if (cmd[i] == "`read`") {
        r = frames / ours[i]; c = frames / q
        printf "| %s | `read` ≥ 3 M frames/s | %.2f M | %.2f M | %s |\n", shape[i], r / 1e6, c / 1e6, (r >= 3e6 ? "yes" : "no")
      }
      if (cmd[i] == "`audit`") {
        printf "| %s | `audit` ≤ 1.3× `read --quiet` | %.2f× | – | %s |\n", shape[i], ours[i] / q, (ours[i] / q <= 1.3 ? "yes" : "no")
      }
      if (cmd[i] == "`read --quiet`") {
        r = frames / ours[i]
        printf "| %s | `read --quiet` ≥ 8 M frames/s | %.2f M | – | %s |\n", shape[i], r / 1e6, (r >= 8e6 ? "yes" : "no")
      }
    }
  }' "$WORK/table.md" > "$WORK/floor.md"
cat "$WORK/floor.md" >> "$WORK/table.md"

# Peak memory on captures ten times larger (BENCH_RSS_FRAMES, default 2,000,000; 0 skips it): what a
# command keeps must stay bounded however long the capture.
RSS_FRAMES=${BENCH_RSS_FRAMES:-2000000}
if [ "$RSS_FRAMES" -gt 0 ]; then
  scripts/bench/make_workload_set.sh "$WORK/rss" "$RSS_FRAMES"
  {
    echo
    echo "## Peak memory at $RSS_FRAMES frames"
    echo
    echo "The target: under 64 MiB for every command on every shape."
    echo
    echo "| workload | \`read\` | \`read -v\` | \`read --format json\` | \`audit\` |"
    echo "|---|---|---|---|---|"
    for s in "${SHAPES[@]}"; do
      P=$WORK/rss/$s.pcap
      [ -f "$P" ] || continue
      printf '| %s | %s MiB | %s MiB | %s MiB | %s MiB |\n' "$s" \
        "$(peak_rss_mib "$BIN" read "$P")" "$(peak_rss_mib "$BIN" read -v "$P")" \
        "$(peak_rss_mib "$BIN" read --format json "$P")" "$(peak_rss_mib "$BIN" audit --fail-on never "$P")"
    done
  } >> "$WORK/table.md"
fi
mkdir -p bench
cp "$WORK/table.md" bench/workloads.md
# bench/results.md shows the same tables in its section on workload shapes, replaced each run.
scripts/bench/results_section.sh "Workload shapes" \
  "From \`scripts/bench/workloads.sh\` (also in \`bench/workloads.md\`); per-frame profiles in \`bench/profile.md\`." bench/workloads.md
cat bench/workloads.md
