#!/usr/bin/env bash
# Fuzz the decoders of what peers and strangers send (tests/fuzz: the store's
# request decoder, comm's tcp wire header, the handshake) with libFuzzer,
# AddressSanitizer and UndefinedBehaviorSanitizer: builds them with clang
# into build-fuzz/ (or $COMM_FUZZ_BUILD_DIR) and runs each for SECONDS
# (default 60), starting from the committed seed corpus. A crash leaves its
# input in build-fuzz/tests/fuzz/<target>-crash-*; copy it into
# tests/fuzz/corpus/<target>/ with the fix so every build replays it.
#   scripts/fuzz.sh [SECONDS]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${COMM_FUZZ_BUILD_DIR:-$root/build-fuzz}"
seconds="${1:-60}"
command -v clang++ >/dev/null || { echo "fuzz.sh: clang++ (with libFuzzer) is needed" >&2; exit 1; }
cmake -S "$root" -B "$build" -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCOMM_FUZZ=ON -DCOMM_SANITIZE=ON -DCOMM_WITH_BINDINGS=OFF -DCOMM_FUZZ_SECONDS="$seconds"
cmake --build "$build" -j "$(nproc)" --target store_request_fuzz tcp_header_fuzz handshake_fuzz
ctest --test-dir "$build" --output-on-failure -R '^fuzz\.'
