#!/bin/sh
# What a Go user does: install comm into a temporary prefix, start a new
# module outside the source tree that requires libcomm.org/comm with a
# `replace` to this checkout (whose SWIG layer is committed: no SWIG runs),
# build it offline (GOPROXY=off) against the installation's comm.pc, and run
# it on 2 ranks with the installed commrun.
# It has a build cache of its own: Go's cache does not tell apart builds of
# the cgo package that took their flags from different comm.pc files, so a
# shared one would hand the build tree's link flags to this test, or this
# test's to the build tree.
#   run.sh BUILD_DIR MODULE_DIR WORK LIBDIR_IN_PREFIX BINDIR_IN_PREFIX GO
set -eu
build=$1 module=$2 work=$3 libdir=$4 bindir=$5 go=$6
here=$(cd "$(dirname "$0")" && pwd)
unset LD_LIBRARY_PATH CGO_LDFLAGS CGO_CFLAGS
rm -rf "$work"
mkdir -p "$work/hello" "$work/tmp"
cmake --install "$build" --prefix "$work/prefix" >/dev/null
prefix="$work/prefix"
cp "$here/go.mod" "$here/main.go" "$work/hello/"
cd "$work/hello"
export GOPROXY=off GOFLAGS=-mod=mod GOWORK=off GOCACHE="$work/gocache" GOPATH="$work/gopath" GOTMPDIR="$work/tmp"
export PKG_CONFIG_PATH="$prefix/$libdir/pkgconfig"
"$go" mod edit -replace "libcomm.org/comm=$module"
"$go" build -o hello .
# An installed comm.pc gives no RUNPATH: the program finds libcomm as a
# user's would, through LD_LIBRARY_PATH.
loaded=$(LD_LIBRARY_PATH="$prefix/$libdir" ldd ./hello | awk '$1 ~ /^libcomm\.so/ {print $3}')
case "$(realpath "$loaded")" in
  "$(realpath "$prefix/$libdir")"/*) ;;
  *) echo "FAILED: hello loads libcomm from '$loaded', not from $prefix/$libdir"; exit 1 ;;
esac
LD_LIBRARY_PATH="$prefix/$libdir" "$prefix/$bindir/commrun" -n 2 --timeout 300 ./hello >out.txt 2>&1 ||
  { cat out.txt; echo "FAILED: the 2-rank program exited $?"; exit 1; }
cat out.txt
for rank in 0 1; do
  grep -q "rank $rank of 2: .* as the reference" out.txt || { echo "FAILED: rank $rank reported no correct all_reduce"; exit 1; }
done
echo "a module outside the tree, replace => $module, built against $prefix: 2-rank all_reduce as the reference"
