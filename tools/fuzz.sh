#!/usr/bin/env bash
# Run invex's fuzz targets for a fixed time each:
#
#   tools/fuzz.sh TARGET SECONDS [libFuzzer args]   one target
#   tools/fuzz.sh all SECONDS                       every target, one after the other
#   tools/fuzz.sh list                              the targets
#
# Targets live in engine/fuzz/fuzz_targets (the XML parser, the XPath compiler) and
# server/fuzz/fuzz_targets (CSV, XLSX, PDF extractors, the multipart reader, the UBL
# identifier scan). Needs cargo-fuzz (`cargo install cargo-fuzz --locked`); cargo-fuzz
# passes nightly-only flags (-Cpasses=sancov-module, -Zsanitizer), which a stable
# toolchain accepts with RUSTC_BOOTSTRAP=1, set here. SANITIZER=address (default: none)
# builds with AddressSanitizer: slower, but it also finds memory errors in C code.
#
# The committed seeds (*/fuzz/seeds/TARGET) are copied into a scratch corpus
# (${FUZZ_WORK:-/tmp/invex-fuzz}/corpus/TARGET) that grows as the fuzzer finds new
# coverage and is not committed; crashes, timeouts and out-of-memory inputs go to
# .../artifacts/TARGET. Every run is bounded in memory (-rss_limit_mb), input size
# (-max_len) and time per input (-timeout). Results and figures: FUZZING.md.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
work=${FUZZ_WORK:-/tmp/invex-fuzz}

crate_of() {
    for crate in engine server; do
        if [ -f "$root/$crate/fuzz/fuzz_targets/$1.rs" ]; then
            echo "$root/$crate/fuzz"
            return
        fi
    done
    echo "no fuzz target '$1' (tools/fuzz.sh list)" >&2
    exit 2
}

targets() {
    for crate in engine server; do
        for f in "$root/$crate/fuzz/fuzz_targets"/*.rs; do
            [ -e "$f" ] && basename "$f" .rs
        done
    done
}

# The longest input worth trying per target: documents and uploads up to 1 MiB, XPath
# expressions up to 16 KiB.
max_len() {
    case "$1" in
        xpath) echo 16384 ;;
        *) echo 1048576 ;;
    esac
}

run() {
    local target=$1 seconds=$2
    shift 2
    local dir corpus artifacts
    dir=$(crate_of "$target")
    corpus=$work/corpus/$target
    artifacts=$work/artifacts/$target
    mkdir -p "$corpus" "$artifacts"
    cp -n "$dir/seeds/$target"/* "$corpus"/ 2>/dev/null || true
    (
        cd "$dir"
        RUSTC_BOOTSTRAP=1 cargo fuzz run "$target" --sanitizer "${SANITIZER:-none}" "$corpus" -- \
            -max_total_time="$seconds" \
            -rss_limit_mb="${RSS_LIMIT_MB:-2048}" \
            -max_len="${MAX_LEN:-$(max_len "$target")}" \
            -timeout="${TIMEOUT:-30}" \
            -print_final_stats=1 \
            -artifact_prefix="$artifacts/" \
            "$@"
    )
}

case "${1:-}" in
    list) targets ;;
    all)
        seconds=${2:?usage: tools/fuzz.sh all SECONDS}
        for t in $(targets); do
            run "$t" "$seconds"
        done
        ;;
    "") sed -n '2,20p' "$0"; exit 2 ;;
    *) run "$1" "${2:?usage: tools/fuzz.sh TARGET SECONDS}" "${@:3}" ;;
esac
