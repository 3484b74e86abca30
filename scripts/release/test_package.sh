#!/usr/bin/env bash
# Builds the Debian package (scripts/release/package_deb.sh) and checks it as a user gets it: the
# IntegrationTests PackageTests unpack it into a scratch root and run `blesniff --version`, a
# manual page through `man -l` and the bash completion. CI runs this (scripts/test.sh, CI=true).
# Usage: scripts/release/test_package.sh [DEB]   (default: build one)
set -euo pipefail
cd "$(dirname "$0")/../.."
scripts/setup.sh dpkg-dev man-db bsdextrautils
deb=${1:-$(scripts/release/package_deb.sh)}
deb=$(readlink -f "$deb")
swift build --build-tests >/dev/null
BLESNIFF_DEB=$deb swift test --skip-build --filter 'IntegrationTests.PackageTests'
