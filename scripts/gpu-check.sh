#!/usr/bin/env bash
# The checks of comm's CUDA path that need a GPU, in one go, for a machine
# lent with one (docs/cuda.md): build with CUDA, run the CUDA tests at 1, 2
# and 4 ranks sharing the device(s), the Python CUDA tests where CuPy or
# PyTorch is importable, comm-bench on device memory (and on host memory
# beside it), the device yardsticks (comm-cuda-bench) and NCCL's
# all_reduce_perf where nccl-tests is installed. Everything goes to one
# results folder; summary.txt is the page to read first. Each step has a
# deadline, so the whole run stays under 8 minutes; a step that fails is
# reported and the others still run.
#
#   scripts/gpu-check.sh [RESULTS_DIR]
#     RESULTS_DIR     default: gpu-results-YYYYmmdd-HHMMSS in the checkout
#     COMM_GPU_BUILD  build folder (default: build-gpu in the checkout)
#     JOBS            build parallelism (default: nproc)
#     PYTHON          the Python to build the binding for (default: python3)
#     COMM_GPU_PACK   run what scripts/gpu-pack.sh packed on another machine
#                     instead of building here (for a GPU machine without
#                     comm's build dependencies); the Python extension is
#                     then compiled here from the packed SWIG wrapper
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
results="${1:-$root/gpu-results-$(date -u +%Y%m%d-%H%M%S)}"
build="${COMM_GPU_BUILD:-$root/build-gpu}"
jobs="${JOBS:-$(nproc)}"
mkdir -p "$results"
summary="$results/summary.txt"
: >"$summary"
started=$(date +%s)
failures=0

say() { echo "$*" | tee -a "$summary"; }

# step NAME SECONDS COMMAND...: runs COMMAND into NAME.log with a deadline
# and notes its status (77 is a skip) in the summary.
step() {
  local name=$1 limit=$2
  shift 2
  local t0=$(date +%s)
  timeout --kill-after=10 "$limit" "$@" >"$results/$name.log" 2>&1
  local rc=$?
  local verdict=ok
  case $rc in
    0) ;;
    77) verdict=skipped ;;
    124 | 137) verdict="TIMED OUT after ${limit}s"; failures=$((failures + 1)) ;;
    *) verdict="FAILED (exit $rc)"; failures=$((failures + 1)) ;;
  esac
  say "$(printf '%-28s %-22s %4ss  %s' "$name" "$verdict" "$(($(date +%s) - t0))" "$name.log")"
  return $rc
}

say "comm gpu-check: $(git -C "$root" rev-parse --short HEAD 2>/dev/null || cat "${COMM_GPU_PACK:-/nonexistent}/commit" 2>/dev/null || echo '?') on $(hostname), $(date -u)"
{ nvidia-smi || echo "nvidia-smi: not found"; } >"$results/nvidia-smi.txt" 2>&1
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>/dev/null | sed 's/^/gpu: /' | tee -a "$summary"
export PATH="$PATH:/usr/local/cuda/bin"

python="${PYTHON:-$(command -v python3)}"
python_targets=()
if [ -n "${COMM_GPU_PACK:-}" ]; then
  pack="$(cd "$COMM_GPU_PACK" && pwd)"
  { read -r packed_root; read -r build; } <"$pack/paths"
  # The pack's paths are absolute: where this checkout lies elsewhere, a
  # link puts it where they point.
  if [ "$(cd "$packed_root" 2>/dev/null && pwd -P)" != "$(pwd -P)" ]; then
    [ -e "$packed_root" ] && { say "$packed_root exists and is not this checkout: cannot place the pack"; exit 1; }
    mkdir -p "$(dirname "$packed_root")" && ln -s "$root" "$packed_root"
  fi
  mkdir -p "$build" && cp -a "$pack/build/." "$build/"
  export LD_LIBRARY_PATH="$pack/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  say "prebuilt: $pack ($(ls "$pack/lib" | wc -l) libraries) at $build"
  python_include=$("$python" -c 'import sysconfig; print(sysconfig.get_paths()["include"])' 2>/dev/null)
  if [ -f "$python_include/Python.h" ] && [ -f "$build/bindings/python/wrap/comm_swigPYTHON_wrap.c" ]; then
    step python-extension 120 cc -O2 -fPIC -shared -I"$root/include" -I"$build/include" -I"$python_include" \
      -o "$build/bindings/python/package/libcomm/_comm_swig$("$python" -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')" \
      "$build/bindings/python/wrap/comm_swigPYTHON_wrap.c" -Wl,-rpath,"$build/src" "$build/src/libcomm.so" &&
      python_targets=(packed)
  else
    say "python-extension             skipped                  (no Python.h for $python)"
  fi
else
  # Build only what the checks run: a whole build would eat the budget.
  step configure 120 cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DPython3_EXECUTABLE="$python" -DCOMM_WITH_CUDA=ON || { say "configure failed: see configure.log"; exit 1; }
  grep -E "CUDA device memory|Python binding" "$results/configure.log" | sed 's/^-- /  /' | tee -a "$summary"
  if grep -q "Python binding: building" "$results/configure.log"; then python_targets=(libcomm_python); fi
  step build 240 cmake --build "$build" -j "$jobs" --target comm commrun comm-info comm-bench comm-cuda-bench \
    cuda_collectives_test cuda_kernels_test tensor_memory_test "${python_targets[@]}" ||
    step build_core 120 cmake --build "$build" -j "$jobs" --target comm commrun comm-info comm-bench comm-cuda-bench \
      cuda_collectives_test cuda_kernels_test tensor_memory_test
fi
ldd "$build/src/libcomm.so" >"$results/ldd-libcomm.txt" 2>&1
step comm-info 20 "$build/tools/comm-info/comm-info"
grep "CUDA device memory" "$results/comm-info.log" | sed 's/^/  /' | tee -a "$summary"
if grep -q "devices visible: 0" "$results/comm-info.log"; then
  say "NO GPU VISIBLE: the CUDA tests below skip, and the device benchmarks are not run"
  gpu=0
else
  gpu=1
fi

# The CUDA suite: kernels and IPC, then the API at 1, 2 and 4 ranks over
# shm and tcp (ranks share the GPUs round-robin).
step ctest-cuda 180 ctest --test-dir "$build" -R '^(cuda\.|api\.tensor_memory$)' --output-on-failure \
  --output-junit "$results/ctest-cuda.xml"
grep -E "tests passed|\*\*\*" "$results/ctest-cuda.log" | sed 's/^/  /' | tee -a "$summary"
# CTest counts a skipped test as passing; here a skip on a GPU machine is a failure.
if [ "$gpu" = 1 ] && grep -q "Skipped" "$results/ctest-cuda.log"; then
  say "ctest-cuda: tests SKIPPED although a GPU is visible"
  failures=$((failures + 1))
fi

# The same at 2 ranks with the shared-GPU path off (COMM_CUDA_IPC=0): the
# large all_reduce calls then stage through host memory in parts.
step ctest-cuda-staged 90 env COMM_CUDA_IPC=0 ctest --test-dir "$build" -R '^cuda\.collectives\.shm\.n2$' \
  --output-on-failure
grep -E "tests passed|\*\*\*" "$results/ctest-cuda-staged.log" | sed 's/^/  /' | tee -a "$summary"

# Python: CUDA arrays where CuPy or PyTorch (with CUDA) is importable.
if [ ${#python_targets[@]} -gt 0 ] && [ -f "$root/bindings/python/tests/test_cuda.py" ]; then
  step pytest-cuda 90 env PYTHONPATH="$build/bindings/python/package" PYTHONDONTWRITEBYTECODE=1 \
    "$build/tools/commrun/commrun" -n 2 "$python" -m pytest -q "$root/bindings/python/tests/test_cuda.py"
else
  say "pytest-cuda                  skipped                  (no Python binding built, or no Python CUDA tests)"
fi

# Benchmarks: device memory at 1, 2 and 4 ranks, host memory beside it.
commrun="$build/tools/commrun/commrun"
bench="$build/tools/comm-bench/comm-bench"
sizes=8,1K,64K,1M,16M,64M
step bench-all_reduce-host-n2 60 "$commrun" -n 2 "$bench" all_reduce --sizes $sizes -n 20 \
  --json "$results/all_reduce-host-n2.json"
if [ "$gpu" = 1 ]; then
  step cuda-bench 60 "$build/bench/comm-cuda-bench" $((64 << 20)) 20
  for n in 1 2 4; do
    step "bench-all_reduce-cuda-n$n" 60 "$commrun" -n "$n" "$bench" all_reduce --sizes $sizes -n 20 \
      --memory cuda --json "$results/all_reduce-cuda-n$n.json"
  done
  # Ranks sharing one GPU: its processes' contexts time-slice the device
  # unless an MPS server merges them (docs/cuda.md), so the shared-GPU
  # figures are taken both ways where MPS can be started.
  export CUDA_MPS_PIPE_DIRECTORY="$results/mps" CUDA_MPS_LOG_DIRECTORY="$results/mps"
  mkdir -p "$CUDA_MPS_PIPE_DIRECTORY"
  if command -v nvidia-cuda-mps-control >/dev/null 2>&1 && nvidia-cuda-mps-control -d; then
    for n in 2 4; do
      step "bench-all_reduce-cuda-n$n-mps" 60 "$commrun" -n "$n" "$bench" all_reduce --sizes $sizes -n 20 \
        --memory cuda --json "$results/all_reduce-cuda-n$n-mps.json"
    done
    echo quit | nvidia-cuda-mps-control
  else
    say "bench-all_reduce-cuda-n*-mps skipped                  (no MPS control daemon could be started)"
  fi
  unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
  step bench-all_reduce-cuda-async-n2 60 "$commrun" -n 2 "$bench" all_reduce --sizes $sizes -n 20 --async \
    --memory cuda
  # Stream-ordered calls stage through host memory, in parts from 8 MiB
  # (algo/device/staged_segments.h), as do reduce and broadcast, and every call
  # with COMM_CUDA_IPC=0: their 64 MiB rows against the host-memory
  # all_reduce above show what the copies add.
  step bench-all_reduce-cuda-staged-n2 60 env COMM_CUDA_IPC=0 "$commrun" -n 2 "$bench" all_reduce --sizes $sizes \
    -n 20 --memory cuda --json "$results/all_reduce-cuda-staged-n2.json"
  step bench-all_reduce-cuda-stream-n2 60 "$commrun" -n 2 "$bench" all_reduce --sizes $sizes -n 20 --memory cuda \
    --stream --json "$results/all_reduce-cuda-stream-n2.json"
  step bench-reduce-cuda-n2 45 "$commrun" -n 2 "$bench" reduce --sizes $sizes -n 10 --memory cuda
  step bench-broadcast-cuda-n2 45 "$commrun" -n 2 "$bench" broadcast --sizes $sizes -n 10 --memory cuda
  step bench-all_gather-cuda-n2 45 "$commrun" -n 2 "$bench" all_gather --sizes $sizes -n 10 --memory cuda
  step bench-reduce_scatter-cuda-n2 45 "$commrun" -n 2 "$bench" reduce_scatter --sizes $sizes -n 10 --memory cuda
fi
if [ "$gpu" = 1 ] && "$python" -c 'import torch, sys; sys.exit(not torch.cuda.is_available())' 2>/dev/null; then
  step nccl-torch-n1 90 "$python" "$root/bench/compare/nccl_torch.py"
fi
if command -v all_reduce_perf >/dev/null 2>&1; then
  step nccl-all_reduce_perf 60 all_reduce_perf -b 8 -e 64M -f 8 -g 1
else
  say "nccl-all_reduce_perf         skipped                  (nccl-tests' all_reduce_perf is not on PATH)"
fi

# The figures the issue asks about, side by side.
{
  echo
  echo "device yardsticks (comm-cuda-bench, 64 MiB):"
  grep -E "^(memcpy|add_kernel|comm_combine|ratio)" "$results/cuda-bench.log" 2>/dev/null | sed 's/^/  /'
  for f in all_reduce-cuda-n1 all_reduce-cuda-n2 all_reduce-cuda-n2-mps all_reduce-cuda-staged-n2 all_reduce-cuda-stream-n2 \
    all_reduce-host-n2; do
    echo "$f (8 B and 64 MiB rows, out-of-place time us):"
    grep -E '^\[0\] +(8|67108864) ' "$results/bench-$f.log" 2>/dev/null | sed 's/^/  /'
  done
  grep -E '^ +(8|67108864) ' "$results/nccl-torch-n1.log" 2>/dev/null | sed 's/^/  nccl-torch-n1 /'
} | tee -a "$summary"

say ""
say "$failures step(s) failed; $(($(date +%s) - started)) s in all; results in $results"
[ "$failures" -eq 0 ]
