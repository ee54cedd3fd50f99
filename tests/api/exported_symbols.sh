#!/bin/sh
# libcomm exports exactly the functions comm.h declares, each under the
# version node of the release that added it, and nothing else, under SONAME
# libcomm.so.0.
# usage: exported_symbols.sh LIBCOMM COMM_H COMM_MAP
set -eu
lib="$1" header="$2" map="$3"

# Each function of the map with its version node.
nodes=$(awk '/^COMM_[0-9.]* *\{/ {node = $1} /^ *comm_[a-z0-9_]*; *$/ {sub(/;.*/, "", $1); print $1, node}' "$map")
[ -n "$nodes" ] || { echo "found no function in $map"; exit 1; }

declared=$(sed -n 's/^COMM_API[^(]*[ *]\(comm_[a-z0-9_]*\)(.*/\1/p' "$header" | sort)
exported=$(nm -D --defined-only "$lib" | awk '$2 != "A" {print $3}' | sort)
[ -n "$declared" ] || { echo "found no COMM_API function in $header"; exit 1; }

status=0
for f in $declared; do
  node=$(echo "$nodes" | awk -v f="$f" '$1 == f {print $2}')
  [ -n "$node" ] || { echo "$f is declared in comm.h but not in $map"; status=1; continue; }
  echo "$exported" | grep -qx "$f@@$node" || { echo "$f is not exported as $f@@$node"; status=1; }
done
for symbol in $exported; do
  echo "$declared" | grep -qx "${symbol%%@*}" || { echo "exported but not declared in comm.h: $symbol"; status=1; }
done
readelf -d "$lib" | grep -q 'SONAME.*\[libcomm\.so\.0\]' || { echo "SONAME is not libcomm.so.0"; status=1; }
[ "$status" = 0 ] && echo "$(echo "$declared" | wc -l) functions of comm.h exported, nothing else"
exit "$status"
