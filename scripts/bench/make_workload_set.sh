#!/usr/bin/env bash
# The benchmark's traffic shapes at one size, made once per size into a directory:
#
#   scripts/bench/make_workload_set.sh DIR FRAMES
#
# notify, notify-gatt, adv, throughput and requests from scripts/bench/make_workloads.py; the mix from
# scripts/bench/make_capture.py (and a variant without what btmon 5.66 crashes on); the sniffer
# shape repeats a real nRF Sniffer capture from ../shared/captures when it is there.
set -euo pipefail
cd "$(dirname "$0")/../.."
WORK=$1 FRAMES=$2
mkdir -p "$WORK"
# Made again when the size or a generator changed.
stamp="$FRAMES $(cat scripts/bench/make_workloads.py scripts/bench/make_capture.py scripts/bench/repeat_capture.py | cksum)"
[ "$(cat "$WORK/frames" 2>/dev/null)" != "$stamp" ] || exit 0
rm -f "$WORK"/*.pcap "$WORK"/*.btsnoop
python3 scripts/bench/make_workloads.py --frames "$FRAMES" --out "$WORK" >/dev/null
python3 scripts/bench/make_capture.py --frames "$FRAMES" --btsnoop "$WORK/mix.btsnoop" --pcap "$WORK/mix.pcap" \
  --btmon-safe "$WORK/mix.btmon.btsnoop" Tests/Captures/*.btsnoop >/dev/null 2>&1 || true
SNIFF=../shared/captures/tesible__mouse.pcapng
[ -f "$SNIFF" ] && python3 scripts/bench/repeat_capture.py --frames "$FRAMES" "$SNIFF" "$WORK/sniffer.pcap" >/dev/null
echo "$stamp" > "$WORK/frames"
