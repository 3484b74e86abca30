#!/usr/bin/env bash
# Hashes what `read`, `read -v`, `read --format json` and `audit` print for every committed capture,
# so an optimization can be shown to change nothing: run it before and after and compare.
# Usage: scripts/dev/check_outputs.sh [BIN] > hashes.txt   (BIN defaults to the release build)
set -uo pipefail
cd "$(dirname "$0")/../.."
BIN=${1:-$(swift build -c release --show-bin-path)/blesniff}
# The real captures in ../shared/captures too, when present: they reach paths the synthetic ones do not.
shared=()
[ -d ../shared/captures ] && for f in ../shared/captures/*; do case $f in *.md|*.tsv) ;; *) shared+=("$f");; esac; done
for f in Tests/Captures/*.btsnoop Tests/Captures/*.pcap Tests/Captures/*.pcapng "${shared[@]}"; do
  for args in "read" "read -v" "read --format json" "read --quiet" "audit --fail-on never" "audit --fail-on never --format json"; do
    # shellcheck disable=SC2086
    h=$("$BIN" $args "$f" 2>&1 | sed "s#$(pwd)/##g" | sha256sum | cut -c1-16)
    printf '%s  %-40s %s\n' "$h" "$(basename "$f")" "$args"
  done
done
