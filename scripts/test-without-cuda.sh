#!/usr/bin/env bash
# The machine most users have: comm built without CUDA (the README's test
# command runs this after the main suite). Where the main build has CUDA
# (nvcc was found), a second build with COMM_WITH_CUDA=OFF into
# build-nocuda/ (or $COMM_NOCUDA_BUILD_DIR) runs the API and binding tests,
# which ask the build what it has and expect a build without CUDA to say
# so: a test that assumes CUDA fails here. Where the main build has no CUDA,
# its suite was that configuration already, and this says so and stops.
# Extra arguments go to ctest instead of the selection.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
main="${COMM_BUILD_DIR:-$root/build}"
build="${COMM_NOCUDA_BUILD_DIR:-$root/build-nocuda}"
if [ -f "$main/CMakeCache.txt" ] && ! grep -q '^COMM_WITH_CUDA:BOOL=ON$' "$main/CMakeCache.txt"; then
  echo "test-without-cuda: the main build ($main) has no CUDA, so its suite tested that configuration"
  exit 0
fi
"$root/scripts/install-deps.sh"
cmake -S "$root" -B "$build" -DPython3_EXECUTABLE=/usr/bin/python3 -DCOMM_WITH_CUDA=OFF -DCOMM_WITH_BENCHMARKS=OFF
cmake --build "$build" -j "$(nproc)"
# Left out: python.pip_install, which builds without CUDA in the main suite too.
if [ $# -gt 0 ]; then
  ctest --test-dir "$build" --output-on-failure -j "$(nproc)" --timeout 600 "$@"
else
  ctest --test-dir "$build" --output-on-failure -j "$(nproc)" --timeout 600 \
    -R '^(api|python|java|go|consumers)\.' -E '^python\.pip_install$'
fi
