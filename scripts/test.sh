#!/usr/bin/env bash
# Build comm and run every test (the README's test command; CI runs it):
# the main build's whole suite, then the sanitizer and fuzz checks, a second
# build with clang (scripts/test-sanitized.sh).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${COMM_BUILD_DIR:-$root/build}"
"$root/scripts/build.sh"
ctest --test-dir "$build" --output-on-failure -j "$(nproc)" --timeout 600
"$root/scripts/test-sanitized.sh"
