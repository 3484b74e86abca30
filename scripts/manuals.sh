#!/usr/bin/env bash
# Writes blesniff's manual pages into DIR, one per command (blesniff.1, blesniff.read.1, …),
# generated from the command definitions by swift-argument-parser's generate-manual (the tool
# behind `swift package plugin generate-manual`, built here with the release build's settings so
# the release build is not redone).
# Usage: scripts/manuals.sh BINARY DIR
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$1 out=$2
mkdir -p "$out"
tool="$(dirname "$(scripts/build.sh --product generate-manual)")/generate-manual"
date=$(git log -1 --format=%cs 2>/dev/null || date +%F)
"$tool" "$bin" --multi-page --date "$date" --output-directory "$out"
