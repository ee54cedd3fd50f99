#!/bin/sh
# Install the project under WORK/prefix, build this program against the
# installed Go module only (go.mod's replace rewritten to point there, comm.pc
# from the installation), run it on 2 ranks.
#   run.sh CMAKE BUILD_DIR WORK MODULE_DIR_IN_PREFIX LIBDIR_IN_PREFIX GO COMMRUN GOCACHE
set -eu
cmake=$1 build=$2 work=$3 module_dir=$4 libdir=$5 go=$6 commrun=$7 gocache=$8
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work"
mkdir -p "$work/hello" "$work/tmp"
"$cmake" --install "$build" --prefix "$work/prefix" >/dev/null
cp "$here/go.mod" "$here/main.go" "$work/hello/"
cd "$work/hello"
export GOPROXY=off GOFLAGS= GOWORK=off GOCACHE="$gocache" GOPATH="$work/gopath" GOTMPDIR="$work/tmp"
export PKG_CONFIG_PATH="$work/prefix/$libdir/pkgconfig"
# An installed comm.pc gives no RUNPATH; the program gets one here.
export CGO_LDFLAGS="-Wl,-rpath,$work/prefix/$libdir"
"$go" mod edit -replace "libcomm.org/comm=$work/prefix/$module_dir"
"$go" build -o hello .
"$commrun" -n 2 --timeout 120 ./hello
