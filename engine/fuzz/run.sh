#!/usr/bin/env bash
# Run one engine fuzz target for a fixed time: engine/fuzz/run.sh TARGET SECONDS [libFuzzer args]
#
#   TARGET   xml | xpath (any file name in fuzz_targets/)
#   SECONDS  how long to fuzz (libFuzzer -max_total_time)
#
# The same conventions as server/fuzz/run.sh (whose script this one runs, from here):
# RUSTC_BOOTSTRAP=1 for cargo-fuzz's nightly flags on a stable toolchain, committed seeds
# copied into a scratch corpus under ${FUZZ_WORK:-/tmp/invex-fuzz}, bounded memory, input
# size and time per input.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
FUZZ_DIR="$here" exec "$here/../../server/fuzz/run.sh" "$@"
