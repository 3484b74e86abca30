#!/usr/bin/env bash
# Builds the release binary the way it ships: the Swift runtime linked in statically, and the git
# commit it is built from recorded for `blesniff --version`. Prints the binary's path.
# Usage: scripts/release/build.sh [extra swift build arguments]
set -euo pipefail
cd "$(dirname "$0")/../.."
commit=unknown
if git rev-parse --git-dir >/dev/null 2>&1; then
  commit=$(git rev-parse --short=12 HEAD)
  git diff --quiet HEAD -- Package.swift Sources 2>/dev/null || commit="$commit-modified"
fi
flags=(-c release --static-swift-stdlib -Xcc "-DBLESNIFF_COMMIT=\"$commit\"" "$@")
swift build "${flags[@]}" >&2
echo "$(swift build "${flags[@]}" --show-bin-path)/blesniff"
