#!/bin/sh
# Writes package capi's SWIG layer, comm_swig.go and comm_swig_wrap.c, from
# comm_go.i (and bindings/comm.i, include/comm.h) into OUT_DIR. The layer is
# committed beside this script, so that `go build` of the module needs no
# SWIG; CMake's target go_capi runs this script into this folder after
# comm.h changes, and the test go.capi_current regenerates it elsewhere and
# fails when the committed copy differs. SWIG runs here, on relative names,
# so the output names no machine's paths.
#   generate.sh SWIG VERSION_INCLUDE_DIR OUT_DIR
# VERSION_INCLUDE_DIR holds comm_version.h (a CMake build's include/).
set -eu
swig=$1 version_include=$2 out=$3
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../../.." && pwd)
mkdir -p "$out"
out=$(cd "$out" && pwd)
version_include=$(cd "$version_include" && pwd)
cd "$here"
# SWIG deletes its -o file when it fails: it only ever points into OUT_DIR.
"$swig" -go -cgo -intgosize 64 -package capi -DSWIGWORDSIZE64 \
  -I"$root/include" -I"$version_include" -I"$root/bindings" \
  -outdir "$out" -o "$out/comm_swig_wrap.c" comm_go.i
