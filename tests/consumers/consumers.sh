#!/bin/sh
# Install comm into a fresh prefix, then build and run programs against the
# installed copy only: pkg-config, dlopen and find_package(comm).
# usage: consumers.sh BUILD_DIR SOURCE_DIR WORK_DIR
set -eu
build="$1" source="$2" work="$3"
rm -rf "$work"
prefix="$work/prefix"
cmake --install "$build" --prefix "$prefix" >/dev/null
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
echo "pkg-config: $(pkg-config --cflags --libs comm)"
cc -std=c99 -Wall -Werror -o "$work/use_pkgconfig" "$source/use_pkgconfig.c" $(pkg-config --cflags --libs comm) \
  -Wl,-rpath,"$(pkg-config --variable=libdir comm)"
"$work/use_pkgconfig"
# comm.pc's private fields suffice to link the engine statically (its archive
# stands in for an installed libcomm.a); fmt, libcrypto and hwloc are linked
# as shared libraries, since their own static dependencies need not be here.
# libfabric is not among them: comm loads it when a job needs it.
requires_private=$(pkg-config --print-requires-private comm | awk '{print $1}')
echo "$requires_private" | grep -qx libfabric && { echo "comm.pc requires libfabric, which libcomm loads itself"; exit 1; }
libs_private=$(sed -n 's/^Libs\.private: //p' "$prefix/lib/pkgconfig/comm.pc")
cc -std=c99 -Wall -Werror -o "$work/use_static" "$source/use_pkgconfig.c" $(pkg-config --cflags comm) \
  "$build/src/libcomm_internal.a" $(pkg-config --libs $requires_private) $libs_private
"$work/use_static"
cc -std=c99 -Wall -Werror -o "$work/use_dlopen" "$source/use_dlopen.c" -ldl
LD_LIBRARY_PATH="$prefix/lib" "$work/use_dlopen"
cmake -S "$source/cmake_project" -B "$work/cmake" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$work/cmake" >/dev/null
LD_LIBRARY_PATH="$prefix/lib" "$work/cmake/use_find_package"
test -x "$prefix/bin/commrun" || { echo "commrun was not installed"; exit 1; }
test -f "$prefix/include/comm.h" || { echo "comm.h was not installed"; exit 1; }
test -f "$prefix/include/comm_version.h" || { echo "comm_version.h was not installed"; exit 1; }
echo "consumers passed"
