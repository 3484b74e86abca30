#!/usr/bin/env bash
# Regenerates Sources/Report/generated/FieldTable.swift: every field the decoders write for the
# committed captures and the shared real ones (when present), with its types.
# Usage: scripts/dev/generate_field_table.sh [BIN]
set -euo pipefail
cd "$(dirname "$0")/../.."
BIN=${1:-.build/debug/blesniff}
files=(Tests/Captures/*.btsnoop Tests/Captures/*.pcap Tests/Captures/*.pcapng)
[ -d ../shared/captures ] && for f in ../shared/captures/*; do case $f in *.md|*.tsv) ;; *) files+=("$f");; esac; done
args=()
for f in "${files[@]}"; do args+=(--scan "$f"); done
"$BIN" fields "${args[@]}" 2>/dev/null > Sources/Report/generated/FieldTable.swift.new
mv Sources/Report/generated/FieldTable.swift.new Sources/Report/generated/FieldTable.swift
