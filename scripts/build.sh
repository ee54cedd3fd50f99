#!/usr/bin/env bash
# Configure and build comm into build/ (or $COMM_BUILD_DIR).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${COMM_BUILD_DIR:-$root/build}"
"$root/scripts/install-deps.sh"
args=(-DPython3_EXECUTABLE=/usr/bin/python3)
if [ -x /usr/local/cuda/bin/nvcc ] && ! command -v nvcc >/dev/null; then
  args+=(-DCMAKE_CUDA_COMPILER=/usr/local/cuda/bin/nvcc)
fi
cmake -S "$root" -B "$build" "${args[@]}"
cmake --build "$build" -j "$(nproc)"
