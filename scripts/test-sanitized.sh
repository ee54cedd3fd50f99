#!/usr/bin/env bash
# Build the library, tools and C tests with AddressSanitizer and
# UndefinedBehaviorSanitizer (COMM_SANITIZE=ON) into build-sanitize/ (or
# $COMM_SANITIZE_BUILD_DIR) and run the C tests that fit CI's budget: the
# unit, API, fault, liveness and trust tests and the multi-process tests at
# 2 and 3 ranks over shm and comm's tcp. Left out: the transport tests that
# move gigabytes per case, and the 65,600-split test (each many times
# slower under ASan, and the code they reach is reached by the others), and
# trust.crash_is_a_signal, whose rank stores through a null pointer on
# purpose (UBSan reports that instead of the SIGSEGV the test expects).
# Extra arguments go to ctest (e.g. -R 'unit\.store').
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${COMM_SANITIZE_BUILD_DIR:-$root/build-sanitize}"
"$root/scripts/install-deps.sh"
cmake -S "$root" -B "$build" -DPython3_EXECUTABLE=/usr/bin/python3 -DCOMM_SANITIZE=ON -DCOMM_WITH_BINDINGS=OFF \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build "$build" -j "$(nproc)"
# Leaks are reported too; a test whose process leaks fails. halt_on_error
# makes the first report end the process with a failing status.
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:halt_on_error=1:abort_on_error=0}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
selection='^(unit|api|fuzz|fault|liveness|trust)\.|^mp\.[a-z_]+_test\.(shm|tcp)\.n[23]$'
excluded='^unit\.(ofi|shm)_transport_test\.|^trust\.(ids_recycled|crash_is_a_signal)$|^api\.(consumers|exported_symbols)'
if [ $# -gt 0 ]; then
  ctest --test-dir "$build" --output-on-failure -j "$(nproc)" --timeout 600 "$@"
else
  ctest --test-dir "$build" --output-on-failure -j "$(nproc)" --timeout 600 -R "$selection" -E "$excluded"
fi
