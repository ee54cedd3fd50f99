#!/usr/bin/env bash
# Packs what scripts/gpu-check.sh runs, built here, for a GPU machine that
# lacks comm's build dependencies (libfabric, hwloc, fmt, cmocka, SWIG...):
# the build tree's programs, libcomm, the CTest files and the Python
# binding's generated wrapper (its extension is compiled there, for that
# machine's Python), and the shared libraries they need beyond the C and
# C++ runtimes. `COMM_GPU_PACK=PACK scripts/gpu-check.sh` runs from it.
#
#   scripts/gpu-pack.sh [BUILD] [PACK]
#     BUILD  a build with CUDA and gpu-check's targets (default: build-gpu)
#     PACK   where the pack goes (default: gpu-pack in the checkout)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="$(cd "${1:-$root/build-gpu}" && pwd)"
pack="${2:-$root/gpu-pack}"
rm -rf "$pack"
mkdir -p "$pack/build" "$pack/lib"

# The build tree keeps its absolute paths (CTest files, rpaths): gpu-check
# puts the pack back at the same path, through a link where the checkout
# lies elsewhere on the GPU machine.
printf '%s\n%s\n' "$root" "$build" >"$pack/paths"
git -C "$root" describe --always --dirty >"$pack/commit" 2>/dev/null || true
cd "$build"
{
  find . -name CTestTestfile.cmake
  find . -maxdepth 1 -name 'DartConfiguration.tcl'
  find src -maxdepth 1 -name 'libcomm.so*'
  find tools bench tests -type f -perm -u+x ! -path '*/CMakeFiles/*' ! -name '*.sh'
  find bindings/python/package bindings/python/wrap -type f ! -name '*.so' ! -name '*.pyc'
  find include -type f
} | sort -u | while read -r file; do
  mkdir -p "$pack/build/$(dirname "$file")"
  cp -a "$file" "$pack/build/$file"
done
find "$pack/build" -type f -perm -u+x -exec strip --strip-debug {} + 2>/dev/null || true
find "$pack/build/src" -name 'libcomm.so*' -type f -exec strip --strip-debug {} +

# Libraries: what the programs and libcomm (and the libfabric it loads)
# need, except glibc's and the compiler runtimes, which the GPU machine has.
system='^(linux-vdso|ld-linux|libc|libm|libdl|libpthread|librt|libstdc\+\+|libgcc_s)\.'
libfabric=$(ldconfig -p | awk '/libfabric\.so\.1 .*x86-64/ {print $NF; exit}')
find "$pack/build" -type f -perm -u+x | xargs ldd 2>/dev/null |
  awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}' | sort -u |
  while read -r name path; do
    [[ $name =~ $system ]] || [[ $path == "$build"/* ]] || cp -L "$path" "$pack/lib/$name"
  done
if [ -n "$libfabric" ]; then
  cp -L "$libfabric" "$pack/lib/libfabric.so.1"
  ldd "$libfabric" | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}' | while read -r name path; do
    [[ $name =~ $system ]] || cp -L "$path" "$pack/lib/$name"
  done
fi
echo "gpu-pack: $(du -sh "$pack" | cut -f1) in $pack ($(ls "$pack/lib" | wc -l) libraries)"
