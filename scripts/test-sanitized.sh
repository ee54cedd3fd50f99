#!/usr/bin/env bash
# The sanitizer and fuzz checks (the README's test command runs them after
# the main suite): builds the library, tools, C tests and the fuzz targets
# with clang, AddressSanitizer, UndefinedBehaviorSanitizer and libFuzzer's
# coverage (COMM_SANITIZE, COMM_FUZZ; no bindings, CUDA or benchmarks) into
# build-sanitize/ (or $COMM_SANITIZE_BUILD_DIR), then runs the C tests that
# fit CI's budget and fuzzes each decoder of what peers and strangers send
# for COMM_FUZZ_SECONDS (default 30) from its committed seed corpus.
# The tests: unit, API, fault, liveness and trust tests, the multi-process
# tests at 2 and 3 ranks over shm and comm's tcp, every fuzz corpus and
# fuzz run. Left out: the transport tests that move gigabytes per case and
# the 65,600-split test (each many times slower under ASan, and the code
# they reach is reached by the others), and trust.crash_is_a_signal, whose
# rank stores through a null pointer on purpose (UBSan reports that instead
# of the SIGSEGV the test expects).
# clang, not gcc: its UBSan also checks enum loads (-fsanitize=enum), and
# libFuzzer comes with it. A fuzz run that crashes leaves its input in
# build-sanitize/tests/fuzz/<target>-crash-*; put it in
# tests/fuzz/corpus/<target>/ with the fix so every build replays it.
# Extra arguments go to ctest instead of the selection (e.g. -R '^fuzz\.').
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${COMM_SANITIZE_BUILD_DIR:-$root/build-sanitize}"
"$root/scripts/install-deps.sh"
# -O1 with line tables: what sanitizer reports need, at a fraction of the
# compile time of -O2 -g.
flags="-O1 -gline-tables-only"
cmake -S "$root" -B "$build" -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_C_FLAGS_RELWITHDEBINFO=$flags" "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=$flags" \
  -DCOMM_SANITIZE=ON -DCOMM_FUZZ=ON -DCOMM_FUZZ_SECONDS="${COMM_FUZZ_SECONDS:-30}" \
  -DCOMM_WITH_BINDINGS=OFF -DCOMM_WITH_CUDA=OFF -DCOMM_WITH_BENCHMARKS=OFF -DPython3_EXECUTABLE=/usr/bin/python3
cmake --build "$build" -j "$(nproc)"
# Leaks are reported too; a test whose process leaks fails. halt_on_error
# makes the first report end the process with a failing status.
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:halt_on_error=1:abort_on_error=0}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
selection='^(unit|api|fuzz|fault|liveness|trust)\.|^mp\.[a-z_]+_test\.(shm|tcp)\.n[23]$'
excluded='^unit\.(ofi|shm)_transport_test\.|^unit\.transport_conformance\.over_2GiB\.|^trust\.(ids_recycled|crash_is_a_signal)$|^api\.(consumers|exported_symbols)'
if [ $# -gt 0 ]; then
  ctest --test-dir "$build" --output-on-failure -j "$(nproc)" --timeout 600 "$@"
else
  ctest --test-dir "$build" --output-on-failure -j "$(nproc)" --timeout 600 -R "$selection" -E "$excluded"
fi
