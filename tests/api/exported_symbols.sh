#!/bin/sh
# libcomm exports comm_* functions and nothing else, under SONAME libcomm.so.0.
set -eu
lib="$1"
symbols=$(nm -D --defined-only "$lib" | awk '$2 != "A" {sub(/@.*/, "", $3); print $3}')
echo "$symbols" | grep -qx comm_init || { echo "comm_init is not exported"; exit 1; }
others=$(echo "$symbols" | grep -v '^comm_' || true)
[ -z "$others" ] || { echo "exported besides comm_*:"; echo "$others"; exit 1; }
readelf -d "$lib" | grep -q 'SONAME.*\[libcomm\.so\.0\]' || { echo "SONAME is not libcomm.so.0"; exit 1; }
echo "$(echo "$symbols" | wc -l) symbols, all comm_*"
