#!/usr/bin/env bash
# Installs what the tests need and runs them. CI runs exactly this.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
swift build --build-tests
swift test --skip-build 2>&1 | tee /tmp/blesniff-test.log
