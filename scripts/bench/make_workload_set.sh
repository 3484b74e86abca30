#!/usr/bin/env bash
# The benchmark's traffic shapes at one size, made once per size into a directory:
#
#   scripts/bench/make_workload_set.sh DIR FRAMES
#
# notify, notify-gatt, adv and throughput from scripts/bench/make_workloads.py; the mix from
# scripts/bench/make_capture.py (and a variant without what btmon 5.66 crashes on); the sniffer
# shape repeats a real nRF Sniffer capture from ../shared/captures when it is there.
set -euo pipefail
cd "$(dirname "$0")/../.."
WORK=$1 FRAMES=$2
mkdir -p "$WORK"
[ "$(cat "$WORK/frames" 2>/dev/null)" != "$FRAMES" ] || exit 0
rm -f "$WORK"/*.pcap "$WORK"/*.btsnoop
python3 scripts/bench/make_workloads.py --frames "$FRAMES" --out "$WORK" >/dev/null
python3 scripts/bench/make_capture.py --frames "$FRAMES" --btsnoop "$WORK/mix.btsnoop" --pcap "$WORK/mix.pcap" \
  --btmon-safe "$WORK/mix.btmon.btsnoop" Tests/Captures/*.btsnoop >/dev/null 2>&1 || true
SNIFF=../shared/captures/tesible__mouse.pcapng
[ -f "$SNIFF" ] && python3 scripts/bench/repeat_capture.py --frames "$FRAMES" "$SNIFF" "$WORK/sniffer.pcap" >/dev/null
echo "$FRAMES" > "$WORK/frames"
