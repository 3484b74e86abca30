#!/usr/bin/env bash
# Where each command's time goes, per frame, on each workload shape: callgrind's instruction counts
# split into the stages every frame passes through, and the functions that cost most on their own.
#
#   scripts/bench/profile.sh        (BENCH_FRAMES frames per shape, default 20000)
#
# Stages (instructions per frame, start-up left out):
#   records  reading the capture into records (CaptureReader.next)
#   dissect  decoding every layer and following connection, L2CAP and GATT state (Dissector.dissect)
#   print    writing the frame out (FramePrinter.print); zero for --quiet
#   rest     the frame loop itself and freeing each frame's decode
# Writes bench/profile.md and its section of bench/results.md. Needs valgrind.
set -euo pipefail
cd "$(dirname "$0")/../.."
FRAMES=${BENCH_FRAMES:-20000}
WORK=${BENCH_WORK:-/tmp/blesniff-instructions}
TOP=${BENCH_TOP:-8}
command -v valgrind >/dev/null || { echo "valgrind is needed (apt-get install valgrind)" >&2; exit 2; }
swift build -c release --static-swift-stdlib >/dev/null
BIN=$(swift build -c release --static-swift-stdlib --show-bin-path)/blesniff
DEMANGLE=$(command -v swift-demangle || echo "$(dirname "$(readlink -f "$(command -v swift)")")/swift-demangle")
scripts/bench/make_workload_set.sh "$WORK" "$FRAMES"
export SWIFT_DETERMINISTIC_HASHING=1
OUT=$WORK/profile.md
# Functions that run at start-up only (argument parsing, the runtime's conformance and type lookups,
# the dynamic linker): left out of the per-frame lists.
STARTUP='conformsToProtocol|ArgumentParser|getTypeByMangled|dynamicCast|tryCast|Demangle|do_lookup|_dl_|strcmp'

# inclusive PROFILE SYMBOL: instructions spent in SYMBOL and what it calls
inclusive() {
  callgrind_annotate --inclusive=yes --threshold=100 "$1" 2>/dev/null |
    awk -v s="$2" 'index($0, s) { gsub(",", "", $1); if ($1 + 0 > best) best = $1 + 0 } END { print best + 0 }'
}
total() { callgrind_annotate "$1" 2>/dev/null | awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1; exit }'; }
frames() { "$BIN" read --quiet "$1" | awk '{ print $1 }'; }

{
  echo "# Profile by workload"
  echo
  echo "$(date -u +%Y-%m-%d); $(swift --version 2>&1 | head -1); callgrind, $FRAMES frames per shape;"
  echo "instructions per frame, start-up (argument parsing, tables) left out. Made by \`scripts/bench/profile.sh\`."
  echo
  echo "| workload | command | records | dissect | print | rest | per frame |"
  echo "|---|---|---|---|---|---|---|"
} > "$OUT"
TOPS=$WORK/profile-top.md
: > "$TOPS"

for s in notify notify-gatt adv throughput requests mix sniffer; do
  F=$WORK/$s.btsnoop; [ -f "$F" ] || F=$WORK/$s.pcap
  [ -f "$F" ] || { echo "no $s capture: skipped" >&2; continue; }
  n=$(frames "$F")
  for cmd in "read --quiet" "read" "read -v" "read --format json"; do
    P=$WORK/profile.$s.out
    # shellcheck disable=SC2086
    valgrind --tool=callgrind --callgrind-out-file="$P" "$BIN" $cmd "$F" >/dev/null 2>&1
    loop=$(inclusive "$P" 'CaptureInputV13forEachPacket')
    rec=$(inclusive "$P" 'Capture0A6ReaderC4next4Wire6RecordV')
    dis=$(inclusive "$P" 'Decoders9DissectorC7dissectyAA7DecodedV')
    prn=$(inclusive "$P" 'Report12FramePrinterC5printyy8Decoders7DecodedVF')
    awk -v s="$s" -v c="$cmd" -v n="$n" -v l="$loop" -v r="$rec" -v d="$dis" -v p="$prn" 'BEGIN {
      printf "| %s | `%s` | %d | %d | %d | %d | %d |\n", s, c, r / n, d / n, p / n, (l - r - d - p) / n, l / n }' >> "$OUT"
    if [ "$cmd" = "read" ] || [ "$cmd" = "read --quiet" ]; then
      {
        echo
        echo "### $s, \`$cmd\`: the $TOP functions that cost most on their own (instructions per frame, start-up left out)"
        echo
        callgrind_annotate "$P" 2>/dev/null | awk -v top="$TOP" -v startup="$STARTUP" '/file:function/ { go = 1; next } go && NF > 2 && $0 !~ startup && shown++ < top' |
          while read -r count _ rest; do
            sym=${rest#*:}; sym=${sym%% \[*}
            name=$(echo "$sym" | "$DEMANGLE" --simplified 2>/dev/null | cut -c1-110)
            printf -- '- %d: `%s`\n' "$(( ${count//,/} / n ))" "$name"
          done
      } >> "$TOPS"
    fi
    rm -f "$P"
  done
done
{ echo; echo "## What costs most on its own"; cat "$TOPS"; } >> "$OUT"
mkdir -p bench
cp "$OUT" bench/profile.md
# bench/results.md shows the same profile in its own section, replaced each run.
scripts/bench/results_section.sh "Profile by workload" "From \`scripts/bench/profile.sh\` (also in \`bench/profile.md\`)." bench/profile.md
cat "$OUT"
