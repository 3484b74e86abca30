#!/usr/bin/env bash
# Builds and runs the libFuzzer targets in fuzz/.
#
#   scripts/dev/fuzz.sh TARGET SECONDS     one target (capture hci l2cap att ad ll pipeline)
#   scripts/dev/fuzz.sh all SECONDS        every target, SECONDS each
#   scripts/dev/fuzz.sh build [TARGET]     build only
#
# Each module (Wire, Decoders, Capture, Report) is compiled once into a static library with coverage
# and AddressSanitizer (rebuilt when its sources change); each target links its harness against
# them. The corpus grows in fuzz/out/corpus/TARGET (git-ignored), seeded from Tests/Captures by
# fuzz/seeds.py. A crash, leak or timeout stops the run, copies the input to
# Tests/Captures/malformed/fuzz-TARGET-HASH and exits non-zero. Clean runs add their seconds
# to fuzz/RUNS.md.
set -euo pipefail

cd "$(dirname "$0")/../.."
ROOT=$PWD
OUT=$ROOT/fuzz/out
BIN=$OUT/bin
TARGETS=(capture hci l2cap att ad ll pipeline)
SWIFTC=${SWIFTC:-swiftc}
FLAGS=(-parse-as-library -O -wmo -sanitize=fuzzer,address -g -suppress-warnings)
# ld.gold prints one warning per ASan helper symbol; lld does not.
LINKER=()
if command -v ld.lld >/dev/null 2>&1; then LINKER=(-use-ld=lld); fi

mkdir -p "$BIN"

# Module name, its dependencies (other modules), extra flags.
module_deps() {
    case $1 in
        Wire) echo "" ;;
        Decoders) echo "Wire" ;;
        Capture) echo "Wire" ;;
        Report) echo "Wire Decoders" ;;
    esac
}

target_modules() {
    case $1 in
        capture) echo "Wire Capture" ;;
        ll) echo "Wire Decoders" ;;
        # A frame's summary line is Report's (`Decoded.summary`).
        hci|l2cap|att|ad) echo "Wire Decoders Report" ;;
        pipeline) echo "Wire Decoders Capture Report" ;;
        *) echo "unknown target: $1" >&2; exit 64 ;;
    esac
}

# Search paths of the system-library module maps (CPcap, CBluetooth, CZlib, CYaml).
c_modules() {
    for d in Sources/C*/; do if [[ -f $d/module.modulemap ]]; then printf -- '-I %s ' "${d%/}"; fi; done
}

# True when $1 is missing or older than any file under the given paths.
stale() {
    local out=$1; shift
    [[ ! -e $out ]] && return 0
    [[ -n $(find "$@" -newer "$out" -type f -print -quit) ]]
}

build_module() {
    local m=$1 deps=()
    for d in $(module_deps "$m"); do build_module "$d"; deps+=("$BIN/lib$d.a"); done
    local lib=$BIN/lib$m.a
    # Rebuilt when a module it imports was: its code holds that module's layouts (a case added
    # to an enum of Decoders changes what Report's compiled code reads).
    if stale "$lib" "Sources/$m" "$0" "${deps[@]}"; then
        echo "fuzz: building $m" >&2
        local extra=()
        [[ $m == Capture || $m == Report ]] && extra=($(c_modules))
        "$SWIFTC" "${FLAGS[@]}" "${extra[@]}" -I "$BIN" -module-name "$m" -emit-module \
            -emit-module-path "$BIN/$m.swiftmodule" -emit-library -static -o "$lib" $(find "Sources/$m" -name '*.swift' | sort)
    fi
}

build_target() {
    local t=$1 exe=$BIN/fuzz-$1
    local mods; mods=$(target_modules "$t")
    local libs=() deps=(fuzz/Harness.swift "fuzz/$t.swift")
    for m in $mods; do
        build_module "$m"
        deps+=("$BIN/lib$m.a")
    done
    # Link order: dependents before their dependencies.
    for m in Report Capture Decoders Wire; do [[ " $mods " == *" $m "* ]] && libs+=("-l$m"); done
    [[ " $mods " == *" Capture "* ]] && libs+=($(c_modules) -lpcap -lz)
    # Report reads audit configuration through libyaml.
    [[ " $mods " == *" Report "* ]] && libs+=($(c_modules) -lyaml)
    if stale "$exe" "${deps[@]}"; then
        echo "fuzz: linking fuzz-$t" >&2
        "$SWIFTC" "${FLAGS[@]}" "${LINKER[@]}" -I "$BIN" -L "$BIN" -module-name "Fuzz_$t" \
            fuzz/Harness.swift "fuzz/$t.swift" "${libs[@]}" -o "$exe"
    fi
}

seed() {
    local t=$1
    if [[ ! -d $OUT/corpus/$t ]] || [[ -z $(ls -A "$OUT/corpus/$t") ]]; then
        python3 fuzz/seeds.py --out "$OUT/corpus" "$t" >&2
    fi
}

max_len() {
    case $1 in
        capture|pipeline) echo 65536 ;;
        l2cap|att|ll) echo 8192 ;;
        *) echo 2048 ;;
    esac
}

# Adds SECONDS to the clean-run total of TARGET in fuzz/RUNS.md, or notes a finding.
log_run() {
    local t=$1 secs=$2 finding=$3
    python3 - "$ROOT/fuzz/RUNS.md" "$t" "$secs" "$finding" <<'EOF'
import sys, re, datetime
path, target, secs, finding = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
head = ["# Fuzzing log", "",
        "Total seconds each target has run without a finding (crash, leak, timeout) since its last",
        "fix, updated by `scripts/dev/fuzz.sh`. Findings are listed below the table.", "",
        "| target | clean seconds | runs |", "|---|---:|---:|"]
rows, notes = {}, []
try:
    lines = open(path).read().splitlines()
except FileNotFoundError:
    lines = []
section = None
for l in lines:
    m = re.match(r"\| (\w+) \| (\d+) \| (\d+) \|", l)
    if m:
        rows[m[1]] = [int(m[2]), int(m[3])]
    elif l.startswith("- "):
        notes.append(l)
r = rows.setdefault(target, [0, 0])
if finding:
    notes.append(f"- {datetime.date.today()} {target}: {finding} after {secs} s (clean total was {r[0]} s)")
    r[0] = 0
else:
    r[0] += secs
r[1] += 1
out = head + [f"| {k} | {v[0]} | {v[1]} |" for k, v in sorted(rows.items())]
out += ["", "## Findings", ""] + notes
open(path, "w").write("\n".join(out) + "\n")
EOF
}

run_target() {
    local t=$1 secs=$2
    build_target "$t"
    seed "$t"
    mkdir -p "$OUT/crashes/$t" "$OUT/logs"
    local dict=()
    [[ -f fuzz/$t.dict ]] && dict=(-dict="fuzz/$t.dict")
    local log=$OUT/logs/$t.log
    echo "fuzz: running $t for ${secs}s (log $log)" >&2
    local start=$SECONDS rc=0
    # Swift's own crash backtracer fights ASan's handlers: leave crashes to ASan.
    SWIFT_BACKTRACE=enable=no LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$ROOT/fuzz/lsan.supp} ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1} \
    "$BIN/fuzz-$t" "$OUT/corpus/$t" "${dict[@]}" -max_len="$(max_len "$t")" -timeout=5 -rss_limit_mb=2048 \
        -max_total_time="$secs" -print_final_stats=1 -artifact_prefix="$OUT/crashes/$t/" >"$log" 2>&1 || rc=$?
    local took=$((SECONDS - start))
    if [[ $rc -ne 0 ]]; then
        local art; art=$(ls -t "$OUT/crashes/$t"/* 2>/dev/null | head -1 || true)
        local kind="exit $rc"
        grep -q "ERROR: libFuzzer: timeout" "$log" && kind=timeout
        grep -q "ERROR: LeakSanitizer" "$log" && kind=leak
        grep -q "ERROR: AddressSanitizer" "$log" && kind="ASan: $(grep -m1 -o 'AddressSanitizer: [a-z-]*' "$log" | cut -d' ' -f2)"
        grep -q "Fatal error\|deadly signal" "$log" && [[ $kind == "exit $rc" ]] && kind=crash
        grep -q "Swift runtime failure\|Fatal error:" "$log" &&
            kind="Swift: $(grep -m1 -o -E '(Swift runtime failure|Fatal error): [^*]*' "$log" | sed 's/ *$//')"
        if [[ -n $art ]]; then
            local hash; hash=$(sha1sum "$art" | cut -c1-12)
            mkdir -p Tests/Captures/malformed
            cp "$art" "Tests/Captures/malformed/fuzz-$t-$hash"
            echo "fuzz: $t: $kind; input saved as Tests/Captures/malformed/fuzz-$t-$hash" >&2
            kind="$kind, input fuzz-$t-$hash"
        fi
        grep -m8 -E "Fatal error|runtime failure|ERROR:|SUMMARY|#[0-9]+ .* in " "$log" >&2 || true
        log_run "$t" "$took" "$kind"
        return 1
    fi
    grep -E "^stat::number_of_executed_units|cov: .*ft:" "$log" | tail -2 >&2 || true
    log_run "$t" "$took" ""
}

[[ $# -ge 1 ]] || { sed -n '2,12p' "$0"; exit 64; }
case $1 in
    build)
        for t in ${2:-${TARGETS[@]}}; do build_target "$t"; done ;;
    all)
        status=0
        for t in "${TARGETS[@]}"; do run_target "$t" "${2:-60}" || status=1; done
        exit $status ;;
    *)
        run_target "$1" "${2:-60}" ;;
esac
