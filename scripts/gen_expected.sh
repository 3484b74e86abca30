#!/bin/sh
# Write tshark's decode of every test capture to Tests/Captures/expected/, so the
# tests can compare blesniff's decode with tshark's frame by frame.
#   <capture>.tsv          selected fields, one row per frame (committed and shared captures)
#   <capture>.summary.tsv  frame number, protocol and info columns (committed captures only)
#   <capture>.filters.tsv  for each tshark filter in filter-pairs.tsv, the frames it selects
#                          ("1-5,9"), so FilterTests needs no tshark (committed and shared captures)
#   <capture>.error        tshark's complaint, when it could not read the whole file
#   TSHARK_VERSION         the tshark that produced them
# Re-runnable: outputs are overwritten.
# Usage: scripts/gen_expected.sh [filters]   (filters: only the filter selections)
set -eu

root=$(cd "$(dirname "$0")/.." && pwd)
own="$root/Tests/Captures"
shared="$root/../shared/captures"
out="$own/expected"
mkdir -p "$out"

# The field names are checked against tshark 4.0 (`tshark -G fields`). It puts 128-bit UUIDs
# that are not in its tables in btcommon.eir_ad.entry.custom_uuid_128, not uuid_128, so both
# are listed.
fields="frame.number frame.len hci_h4.type hci_h4.direction bthci_cmd.opcode bthci_evt.code
bthci_evt.le_meta_subevent bthci_evt.opcode bthci_acl.chandle bthci_acl.pb_flag btl2cap.cid
btl2cap.length btatt.opcode btatt.handle btatt.uuid16 btatt.uuid128 btsmp.opcode
btle.advertising_header.pdu_type btle.data_header.llid btle.control_opcode
btcommon.eir_ad.entry.type btcommon.eir_ad.entry.uuid_16 btcommon.eir_ad.entry.uuid_128
btcommon.eir_ad.entry.custom_uuid_128
btcommon.eir_ad.entry.device_name btcommon.eir_ad.entry.company_id bthci_evt.bd_addr
bthci_evt.rssi _ws.malformed btle.retransmit btle.crc.incorrect"

field_args=""
for f in $fields; do field_args="$field_args -e $f"; done

# Name resolution off: output must not depend on the machine's address/OUI tables. Old Ubertooth
# captures put bare LE link-layer packets in PPI as DLT_USER0 (147): tshark decodes those as btle
# only when told so.
TSHARK="tshark -n"
USER_DLT='uat:user_dlts:"User 0 (DLT=147)","btle","0","","0",""'
LC_ALL=C
export LC_ALL

tshark -v 2>/dev/null | head -1 > "$out/TSHARK_VERSION"

# The frames each tshark filter of filter-pairs.tsv selects in a capture, as ranges, two tshark
# processes at a time (start-up is most of the time on small captures).
select_frames() { # capture
    cap=$1
    name=$(basename "$cap")
    grep -v '^#' "$own/filter-pairs.tsv" | cut -f2 | awk '!seen[$0]++' |
        while IFS= read -r filter; do printf '%s\0' "$filter"; done |
        CAP=$cap USER_DLT=$USER_DLT xargs -0 -P 2 -I '{}' sh -c '
            frames=$(tshark -n -o "$USER_DLT" -r "$CAP" -Y "$1" -T fields -e frame.number 2>/dev/null |
                awk "NF { if (\$1 == last + 1 && start) { last = \$1; next }
                          if (start) out = out (out ? \",\" : \"\") (start == last ? start : start \"-\" last)
                          start = last = \$1 }
                     END { if (start) out = out (out ? \",\" : \"\") (start == last ? start : start \"-\" last); print out }")
            printf "%s\t%s\n" "$1" "$frames"' _ '{}' | LC_ALL=C sort > "$out/$name.filters.tsv"
}

decode() { # capture, with_summary
    cap=$1
    name=$(basename "$cap")
    err=$(mktemp)
    # shellcheck disable=SC2086
    if ! $TSHARK -o "$USER_DLT" -r "$cap" -T fields -E header=y -E separator=/t -E occurrence=a \
            -E aggregator=, $field_args > "$out/$name.tsv" 2> "$err"; then
        grep -v '^Running as user' "$err" > "$out/$name.error" || true
        echo "warning: tshark could not fully read $name (see expected/$name.error)" >&2
    else
        rm -f "$out/$name.error"
    fi
    if [ "$2" = yes ]; then
        $TSHARK -o "$USER_DLT" -r "$cap" -T fields -e frame.number -e _ws.col.Protocol -e _ws.col.Info \
            > "$out/$name.summary.tsv" 2> /dev/null || true
    fi
    rm -f "$err"
}

only_filters=${1:-}
for cap in "$own"/*.btsnoop "$own"/*.pcap "$own"/*.pcapng; do
    [ -f "$cap" ] || continue
    [ "$only_filters" = filters ] || decode "$cap" yes
    select_frames "$cap"
done

if [ -d "$shared" ]; then
    for cap in "$shared"/*; do
        case $(basename "$cap") in MANIFEST.tsv|README.md) continue ;; esac
        [ -f "$cap" ] || continue
        [ "$only_filters" = filters ] || decode "$cap" no
        select_frames "$cap"
    done
else
    echo "note: $shared not found; shared captures skipped" >&2
fi
