#!/usr/bin/env bash
# The console in a real browser: tests/browser/console.test.mjs (node:test) drives Debian's
# Chromium with playwright-core through the console's flows against the real `invex serve`
# (sandbox mode, embedded SQLite in a temporary directory, a port the system chooses): the
# first administrator's one-time link, sign-in, invitations and roles, the rule catalogue,
# Slovak and English, CSRF refusals, sign-out and sign-out-everywhere, the keyboard; axe-core
# checks every page visited (no serious or critical violation). Screenshots of the pages go
# to tests/browser/screenshots/.
#
#   tools/scripts/browser_e2e.sh path/to/invex
#
# Chromium comes from Debian (apt-get install chromium) when /usr/bin/chromium is missing;
# the run fails if it cannot be had, it never skips. The npm packages are pinned in
# tests/browser/package-lock.json and installed with npm ci.
set -euo pipefail

bin=$(realpath "${1:?usage: tools/scripts/browser_e2e.sh path/to/invex}")
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
[ -x "$bin" ] || { echo "browser-e2e: $bin is not an executable" >&2; exit 1; }

chromium=${CHROMIUM:-/usr/bin/chromium}
if [ ! -x "$chromium" ]; then
    echo "browser-e2e: installing Debian's chromium" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq chromium > /dev/null
fi
if ! "$chromium" --version > /dev/null 2>&1; then
    echo "browser-e2e: no working Chromium at $chromium (apt-get install chromium failed?)" >&2
    exit 1
fi
for tool in node npm; do
    command -v $tool > /dev/null || { echo "browser-e2e: $tool is missing" >&2; exit 1; }
done

cd "$root/tests/browser"
npm ci --no-audit --no-fund --loglevel=error

# The tests start the server themselves (they read the first-admin link it prints); its
# data lives here, and it writes its pid here so that it ends with this script whatever
# happens to the test process.
dir=$(mktemp -d)
cleanup() {
    if [ -s "$dir/server.pid" ]; then kill "$(cat "$dir/server.pid")" 2>/dev/null || true; fi
    rm -rf "$dir"
}
trap cleanup EXIT

INVEX_BIN="$bin" INVEX_E2E_DIR="$dir" CHROMIUM="$chromium" \
    node --test --test-reporter=spec console.test.mjs

# `INVEX_DOCS_SCREENSHOTS=1`: the screenshots docs/console.md shows are refreshed from this
# run (English; the Slovak ones stay in tests/browser/screenshots/).
if [ "${INVEX_DOCS_SCREENSHOTS:-}" = 1 ]; then
    mkdir -p "$root/docs/console"
    for page in sign-in home people validate-results review-detail invoice webhook rules rule sso-settings-saved review-pdf; do
        cp "$root/tests/browser/screenshots/$page.en.png" "$root/docs/console/$page.png"
    done
    echo "browser-e2e: docs/console/*.png refreshed"
fi
