#!/usr/bin/env bash
# Run one fuzz target for a fixed time: server/fuzz/run.sh TARGET SECONDS [libFuzzer args]
#
#   TARGET   csv | xlsx | pdf (any file name in fuzz_targets/)
#   SECONDS  how long to fuzz (libFuzzer -max_total_time)
#
# Needs cargo-fuzz (`cargo install cargo-fuzz --locked`). cargo-fuzz passes nightly-only
# flags (-Zsanitizer, -Cpasses=sancov-module); on a stable toolchain RUSTC_BOOTSTRAP=1
# lets rustc accept them, which this script sets. SANITIZER=address (default: none) builds
# with AddressSanitizer, slower but it also finds memory errors in C dependencies.
#
# The committed seeds (seeds/TARGET) are copied into a scratch corpus
# (${FUZZ_WORK:-/tmp/invex-fuzz/server}/corpus/TARGET) that grows as the fuzzer finds new
# coverage and is not committed; crashes go to .../artifacts/TARGET. Every run is bounded
# in memory (-rss_limit_mb), input size (-max_len) and time per input (-timeout).
set -euo pipefail

target=${1:?usage: run.sh TARGET SECONDS [libFuzzer args]}
seconds=${2:?usage: run.sh TARGET SECONDS [libFuzzer args]}
shift 2

here=$(cd "$(dirname "$0")" && pwd)
work=${FUZZ_WORK:-/tmp/invex-fuzz/server}
corpus=$work/corpus/$target
artifacts=$work/artifacts/$target
mkdir -p "$corpus" "$artifacts"
cp -n "$here/seeds/$target"/* "$corpus"/ 2>/dev/null || true

export RUSTC_BOOTSTRAP=1
cd "$here"
cargo fuzz run "$target" --sanitizer "${SANITIZER:-none}" "$corpus" -- \
    -max_total_time="$seconds" \
    -rss_limit_mb="${RSS_LIMIT_MB:-2048}" \
    -max_len="${MAX_LEN:-1048576}" \
    -timeout="${TIMEOUT:-30}" \
    -print_final_stats=1 \
    -artifact_prefix="$artifacts/" \
    "$@"
