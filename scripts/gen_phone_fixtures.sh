#!/bin/sh
# Phone-format fixtures in Tests/Captures/phone/ and tshark's reading of them in
# Tests/Captures/phone/expected/, so the tests check blesniff's writers against an independent
# reader without needing tshark:
#   bug report text and zips        scripts/make_bugreport.py (from gatt_session.btsnoop)
#   gatt_session.<format>.<ext>     `blesniff convert` of gatt_session.btsnoop to every format
#   gatt_session.from_be_pklg.btsnoop, bugreport_v2.btsnoop   converted back / from btsnooz
#   expected/<file>.tsv             tshark -T fields: time, frame.len, frame.cap_len, direction
#                                   (hci_h4.direction, hci_mon.opcode, packetlogger.type),
#                                   frame bytes as tshark -x shows them (pseudo-headers removed)
# Re-runnable: outputs are overwritten. Usage: scripts/gen_phone_fixtures.sh
set -eu

root=$(cd "$(dirname "$0")/.." && pwd)
dir="$root/Tests/Captures/phone"
out="$dir/expected"
src="$root/Tests/Captures/gatt_session.btsnoop"
mkdir -p "$out"
LC_ALL=C
export LC_ALL

python3 "$root/scripts/make_bugreport.py" "$src" "$dir"
(cd "$root" && swift build --product blesniff >/dev/null)
b="$root/.build/debug/blesniff"

"$b" convert "$src" "$dir/gatt_session.pcap201.pcap"
"$b" convert "$src" "$dir/gatt_session.pcap254.pcap" --to pcap254
"$b" convert "$src" "$dir/gatt_session.pcapng"
"$b" convert "$src" "$dir/gatt_session.btsnoop2001.btsnoop" --to btsnoop2001
"$b" convert "$src" "$dir/gatt_session.be.pklg"
"$b" convert "$src" "$dir/gatt_session.le.pklg" --byte-order little
"$b" convert "$dir/gatt_session.be.pklg" "$dir/gatt_session.from_be_pklg.btsnoop"
"$b" convert "$dir/bugreport_v2.txt" "$dir/bugreport_v2.btsnoop"

tshark -v 2>/dev/null | head -1 > "$out/TSHARK_VERSION"
for f in "$src" "$dir"/*.pcap "$dir"/*.pcapng "$dir"/*.btsnoop "$dir"/*.pklg; do
    name=$(basename "$f")
    # One line per frame: the fields, then the bytes of tshark -x joined into one hex string.
    tshark -n -r "$f" -T fields -e frame.time_epoch -e frame.len -e frame.cap_len \
        -e hci_h4.direction -e hci_mon.opcode -e packetlogger.type 2>/dev/null > "$out/$name.fields"
    tshark -n -r "$f" -x 2>/dev/null | python3 -c '
import re, sys
# Only the frame'"'"'s own bytes: a "Frame (N bytes):" title starts them, any other title
# (reassembled or decrypted data) starts bytes that are not in the file.
frames, cur, skip = [], [], False
for line in sys.stdin:
    line = line.rstrip("\n")
    if not line.strip():
        if cur: frames.append("".join(cur))
        cur, skip = [], False
    elif not re.match(r"[0-9a-f]{4}  ", line):
        skip = not line.startswith("Frame (")
    elif not skip:
        cur.append("".join(line[6:54].split()))
if cur: frames.append("".join(cur))
print("\n".join(frames))' > "$out/$name.hex"
    paste "$out/$name.fields" "$out/$name.hex" > "$out/$name.tsv"
    rm "$out/$name.fields" "$out/$name.hex"
done
echo "wrote $(ls "$out" | wc -l) files to $out"
