#!/usr/bin/env bash
# Record the ABI of a release of libcomm: build the library of git REF
# (default HEAD) with debug information in a scratch folder and write
# abi/libcomm-VERSION.abi, VERSION being that REF's project(VERSION).
# The file holds what comm.h declares (functions, their version nodes, the
# types they use, down to every enumerator) and no machine paths, so it can
# be committed; tests/api/abi_check.sh compares each build with the latest.
# usage: scripts/abi-baseline.sh [REF]     (docs/abi.md: the release steps)
set -euo pipefail
ref="${1:-HEAD}"
root="$(cd "$(dirname "$0")/.." && pwd)"
command -v abidw >/dev/null || { echo "abi-baseline: needs abidw (apt-get install abigail-tools)" >&2; exit 1; }

scratch="$(mktemp -d /tmp/comm-abi-XXXXXX)"
trap 'rm -rf "$scratch"' EXIT
git -C "$root" archive --format=tar "$ref" | tar -x -C "$scratch"
version=$(sed -n 's/^project(comm VERSION \([0-9.]*\).*/\1/p' "$scratch/CMakeLists.txt")
[ -n "$version" ] || { echo "abi-baseline: no project(comm VERSION ...) in $ref's CMakeLists.txt" >&2; exit 1; }

# Only the library: a build type with debug information, nothing optional.
cmake -S "$scratch" -B "$scratch/build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCOMM_WITH_CUDA=OFF \
  -DCOMM_WITH_BINDINGS=OFF -DCOMM_WITH_BENCHMARKS=OFF -DBUILD_TESTING=OFF >"$scratch/configure.log" \
  || { cat "$scratch/configure.log" >&2; exit 1; }
cmake --build "$scratch/build" --target comm -j "$(nproc)" >"$scratch/build.log" \
  || { tail -40 "$scratch/build.log" >&2; exit 1; }

out="$root/abi/libcomm-$version.abi"
mkdir -p "$root/abi"
"$root/tests/api/abi_dump.sh" "$scratch/build/src/libcomm.so.$version" "$scratch/include" "$scratch/build/include" "$out"
echo "abi-baseline: $ref (libcomm $version) -> ${out#"$root"/}"
