#!/usr/bin/env bash
# compare.sh - comm against Open MPI, MPICH and Gloo on this machine, side by
# side, at 2 ranks, over shared memory and over tcp on loopback.
#
#   bench/compare/compare.sh                       everything (about 10-15 min on 2 idle cores)
#   bench/compare/compare.sh --collectives all_reduce --sizes 8,1M --rounds 3
#   bench/compare/compare.sh --transports shm --systems comm,ompi
#   bench/compare/compare.sh --comm-env COMM_ALGO=all_reduce:ring
#   bench/compare/compare.sh --comm-variant direct:COMM_SHM=1 --transports shm
#
# It installs what is missing (openmpi-bin libopenmpi-dev mpich libmpich-dev
# libgloo-dev gnuplot-nox; apt-get update only then; needs root), builds
# commrun and comm-bench in the comm build directory (--build-dir DIR, or
# $COMM_BUILD_DIR, default build/; configured with bindings and CUDA off when
# it has no CMakeCache.txt yet; --no-build uses it as it is), builds our own
# MPI program twice (mpicc.openmpi, mpicc.mpich) and our Gloo program into
# DIR/compare/bin, then runs compare.py, which alternates the systems round by
# round and prints medians and ratios. Everything else it is given goes to
# compare.py (compare.sh --help lists it). Results: DIR/compare/<date-time>/;
# --from-results DIR/compare/<date-time>/results.json prints a run's tables again.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
# The command as given, for the report.
export COMPARE_COMMAND="bench/compare/compare.sh${*:+ $*}"
build_dir="${COMM_BUILD_DIR:-$repo/build}"
build_comm=1
forwarded=()
while [ $# -gt 0 ]; do
  case "$1" in
    --build-dir) build_dir="$2"; shift 2 ;;
    --build-dir=*) build_dir="${1#*=}"; shift ;;
    --no-build) build_comm=0; shift ;;
    -h|--help)
      sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
      echo; echo "compare.py options:"
      exec /usr/bin/python3 "$here/compare.py" --help ;;
    *) forwarded+=("$1"); shift ;;
  esac
done
build_dir="$(mkdir -p "$build_dir" && cd "$build_dir" && pwd)"
run_python() {
  exec /usr/bin/python3 "$here/compare.py" --comm-build="$build_dir" --bin="$build_dir/compare/bin" \
    --outdir="$build_dir/compare" "${forwarded[@]}"
}
# Re-printing an earlier run's tables measures nothing: no install, build or lock.
case " ${forwarded[*]-} " in *" --from-results"*) run_python ;; esac

# ------------------------------------------------------------------ packages
packages="openmpi-bin libopenmpi-dev mpich libmpich-dev libgloo-dev gnuplot-nox"
missing=""
for p in $packages; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
  if [ "$(id -u)" != 0 ]; then
    echo "compare.sh: missing packages:$missing (install them as root, or run compare.sh as root)" >&2
    exit 1
  fi
  echo "# installing:$missing"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi

# ------------------------------------------------------------------ comm
if [ "$build_comm" = 1 ]; then
  if [ ! -f "$build_dir/CMakeCache.txt" ]; then
    echo "# configuring comm in $build_dir"
    cmake -S "$repo" -B "$build_dir" -DPython3_EXECUTABLE=/usr/bin/python3 -DCOMM_WITH_BINDINGS=OFF \
      >"$build_dir/compare-configure.log" 2>&1 ||
      { echo "compare.sh: cmake configure failed, see $build_dir/compare-configure.log" >&2; exit 1; }
  fi
  echo "# building commrun and comm-bench in $build_dir"
  cmake --build "$build_dir" --target commrun comm-bench -j2 >"$build_dir/compare-build.log" 2>&1 ||
    { echo "compare.sh: build failed, see $build_dir/compare-build.log" >&2; exit 1; }
fi
for tool in tools/commrun/commrun tools/comm-bench/comm-bench; do
  [ -x "$build_dir/$tool" ] || { echo "compare.sh: $build_dir/$tool is missing (build it, or drop --no-build)" >&2; exit 1; }
done

# ------------------------------------------------------------------ our MPI and Gloo programs
bin="$build_dir/compare/bin"
mkdir -p "$bin"
built_from() { # output sources...: true when output is missing or older than a source
  local out=$1; shift
  [ -x "$out" ] || return 0
  for src in "$@"; do [ "$src" -nt "$out" ] && return 0; done
  return 1
}
for mpi in openmpi mpich; do
  if built_from "$bin/mpi_collectives.$mpi" "$here/mpi_collectives.c" "$here/bench_common.h"; then
    echo "# building mpi_collectives.$mpi"
    "/usr/bin/mpicc.$mpi" -O2 -std=gnu11 -Wall -Wextra "$here/mpi_collectives.c" -o "$bin/mpi_collectives.$mpi"
  fi
done
if built_from "$bin/gloo_collectives" "$here/gloo_collectives.cc" "$here/bench_common.h"; then
  echo "# building gloo_collectives"
  g++ -O2 -std=c++20 -Wall -Wextra "$here/gloo_collectives.cc" -lgloo -pthread -o "$bin/gloo_collectives"
fi

# ------------------------------------------------------------------ run
# Two runs at once would distort each other's numbers (and everyone's).
exec 9>/tmp/comm-compare.lock
flock -n 9 || { echo "compare.sh: another compare.sh run is in progress" >&2; exit 1; }
run_python
