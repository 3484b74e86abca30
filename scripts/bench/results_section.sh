#!/usr/bin/env bash
# Puts a benchmark table into bench/results.md as the section HEADING, replacing the section of that
# name an earlier run left there. FILE is the table as its script writes it (a title line, then the
# rest); its headings go one level down. INTRO is the section's first line.
#
#   scripts/bench/results_section.sh HEADING INTRO FILE
set -euo pipefail
cd "$(dirname "$0")/../.."
heading=$1 intro=$2 file=$3
[ -f bench/results.md ] || exit 0
tmp=$(mktemp)
# Without the old section and the blank lines it leaves at the end.
awk -v h="## $heading" '$0 == h { skip = 1; next } skip && /^## / { skip = 0 } !skip' bench/results.md |
  awk '/^$/ { blank++; next } { while (blank > 0) { print ""; blank-- } print }' > "$tmp"
{ echo; echo "## $heading"; echo; echo "$intro"; echo; sed -e '1,/^$/d' -e 's/^#/##/' "$file"; } >> "$tmp"
mv "$tmp" bench/results.md
