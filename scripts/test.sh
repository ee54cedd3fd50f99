#!/usr/bin/env bash
# Build comm and run every test (the README's test command; CI runs it):
# the main build's whole suite, then the API and binding tests of a build
# without CUDA where the main one has it (scripts/test-without-cuda.sh),
# then the sanitizer and fuzz checks, a build with clang
# (scripts/test-sanitized.sh).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${COMM_BUILD_DIR:-$root/build}"
"$root/scripts/build.sh"
ctest --test-dir "$build" --output-on-failure -j "$(nproc)" --timeout 600
"$root/scripts/test-without-cuda.sh"
"$root/scripts/test-sanitized.sh"
