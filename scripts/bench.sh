#!/usr/bin/env bash
# Benchmark: blesniff against tshark and btmon on the same large capture, alternating runs.
# Usage: scripts/bench.sh            (BENCH_FRAMES=2000000 BENCH_RUNS=5 by default)
# Writes bench/results.md.
set -euo pipefail
cd "$(dirname "$0")/.."
FRAMES=${BENCH_FRAMES:-2000000}
RUNS=${BENCH_RUNS:-5}
WORK=bench/work
mkdir -p "$WORK"
scripts/setup.sh tshark bluez time python3
swift build -c release >/dev/null
BIN=$(swift build -c release --show-bin-path)/blesniff

SNOOP=$WORK/bench.btsnoop PCAP=$WORK/bench.pcap
if [ ! -s "$SNOOP" ] || [ "$(cat $WORK/frames 2>/dev/null)" != "$FRAMES" ]; then
  python3 scripts/make_bench_capture.py --frames "$FRAMES" --btsnoop "$SNOOP" --pcap "$PCAP" Tests/Captures/*.btsnoop
  echo "$FRAMES" > $WORK/frames
fi

# seconds(cmd...): wall time of one run, output to /dev/null.
seconds() { local s e; s=$(date +%s.%N); "$@" >/dev/null 2>&1 || true; e=$(date +%s.%N); echo "$e - $s" | bc -l; }
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
peak_rss_mib() { /usr/bin/time -v "$@" 2>&1 >/dev/null | awk -F: '/Maximum resident/ {printf "%.1f", $2/1024}'; }

declare -A RESULT
# compare NAME "A cmd" "B cmd": alternate A B A B, RUNS times each.
compare() {
  local name=$1 a=$2 b=$3 ta=() tb=()
  for _ in $(seq "$RUNS"); do
    ta+=("$(seconds bash -c "$a")")
    [ -n "$b" ] && tb+=("$(seconds bash -c "$b")")
  done
  RESULT[$name.a]=$(printf '%s\n' "${ta[@]}" | median)
  [ -n "$b" ] && RESULT[$name.b]=$(printf '%s\n' "${tb[@]}" | median) || RESULT[$name.b]=""
}

compare summary "$BIN read $PCAP" "tshark -r $PCAP"
compare verbose "$BIN read -v $SNOOP" "btmon -r $SNOOP"
compare json "$BIN read --format json $PCAP" "tshark -r $PCAP -T json"
compare audit "$BIN audit --fail-on never $PCAP" ""
compare noout "$BIN read --quiet $PCAP" ""
rm -rf $WORK/dir && mkdir -p $WORK/dir && for i in 1 2 3 4 5 6 7 8; do ln -f "$PCAP" $WORK/dir/c$i.pcap; done
compare dir_all "$BIN audit --fail-on never $WORK/dir" "$BIN audit --fail-on never --jobs 1 $WORK/dir"

RSS_READ=$(peak_rss_mib "$BIN" read "$PCAP")
RSS_AUDIT=$(peak_rss_mib "$BIN" audit --fail-on never "$PCAP")
fps() { echo "$FRAMES / $1" | bc -l | xargs printf '%.0f'; }
ratio() { [ -n "$2" ] && echo "$2 / $1" | bc -l | xargs printf '%.1f×' || echo "–"; }

{
  echo "# Benchmark results"
  echo
  echo "$(date -u +%Y-%m-%d), $(nproc) cores, $(uname -m), $(swift --version 2>&1 | head -1)"
  echo "$(tshark -v | head -1); btmon $(dpkg-query -W -f='${Version}' bluez)"
  echo "Capture: $FRAMES frames (btsnoop H4 $(du -h $SNOOP | cut -f1), pcap DLT 201 $(du -h $PCAP | cut -f1)); median of $RUNS runs, alternating."
  echo
  echo "| test | blesniff s | frames/s | peer | peer s | peer frames/s | ratio |"
  echo "|---|---|---|---|---|---|---|"
  row() { echo "| $1 | ${RESULT[$2.a]} | $(fps ${RESULT[$2.a]}) | $3 | ${RESULT[$2.b]:-–} | $([ -n "${RESULT[$2.b]}" ] && fps ${RESULT[$2.b]} || echo –) | $(ratio ${RESULT[$2.a]} "${RESULT[$2.b]}") |"; }
  row "read (summary) vs tshark" summary "tshark -r"
  row "read -v vs btmon -r" verbose "btmon -r"
  row "read --format json vs tshark -T json" json "tshark -T json"
  row "audit" audit ""
  row "decode without output" noout ""
  row "audit dir of 8, all cores vs --jobs 1" dir_all "--jobs 1"
  echo
  echo "Peak RSS: read $RSS_READ MiB, audit $RSS_AUDIT MiB."
} | tee bench/results.md
