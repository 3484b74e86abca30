#!/usr/bin/env bash
# Live capture against a real Linux Bluetooth stack: boots Debian's kernel in QEMU (no KVM
# needed) with Bumble controllers behind /dev/vhci and a Bumble peripheral, drives a full BLE
# session with BlueZ's tools, and checks blesniff's live files against btmon's (see
# scripts/dev/vm_live/check.py for the list of checks).
# Usage: scripts/dev/live_vm_test.sh [BLESNIFF_BINARY]   (default .build/debug/blesniff, built if missing)
# Exit: 0 passed, or skipped with a message where no VM can boot; 1 a check failed.
set -euo pipefail
cd "$(dirname "$0")/../.."
HERE=$PWD/scripts/dev/vm_live
BIN=${1:-.build/debug/blesniff}
[ -x "$BIN" ] || swift build --product blesniff
export WORK=${WORK:-$(mktemp -d /tmp/blesniff-vm.XXXXXX)}
export VM_TIMEOUT=${VM_TIMEOUT:-270}   # CI budget: 5 minutes end to end
PY=$(command -v python3)
if ! "$PY" -c 'import bumble' 2>/dev/null; then
  echo "live VM test skipped: Bumble is not installed for $PY (pip install bumble)" >&2; exit 0
fi
export BUMBLE_PYTHON=$PY
start=$(date +%s)
set +e
"$HERE/run.sh" "$BIN" "$HERE/guest.sh"; rc=$?
set -e
if [ $rc = 77 ]; then echo "live VM test skipped: no VM could be booted here (reason above)" >&2; exit 0; fi
echo "VM finished in $(( $(date +%s) - start )) s (guest script rc=$rc); results in $WORK/out"
[ -d "$WORK/out" ] || { echo "FAIL: the guest recorded nothing (see $WORK/console.log)"; exit 1; }
"$PY" "$HERE/check.py" "$WORK/out" "$BIN"
