#!/usr/bin/env bash
# Every algorithm of every collective, as comm-info lists them from the
# selection tables, is run forced through COMM_ALGO by a multi-process test
# of tests/multiproc/CMakeLists.txt; the node board is the exception, since
# every shm test takes it by default.
# usage: forced_algorithms_cover.sh COMM_INFO MULTIPROC_CMAKELISTS
set -euo pipefail
info="$1" lists="$2"
missing=0 checked=0
while read -r collective algorithms; do
  for algorithm in ${algorithms//,/ }; do
    [ "$algorithm" = board ] && continue
    checked=$((checked + 1))
    if ! grep -qE "[\",=]${collective}:${algorithm}\b" "$lists"; then
      echo "FAILED: ${collective}:${algorithm} is run forced by no multi-process test"
      missing=$((missing + 1))
    fi
  done
done < <("$info" | sed -n '/^Algorithms per collective:/,/^$/p' | tail -n +2 | sed '/^$/d')
[ "$checked" -gt 0 ] || { echo "FAILED: comm-info listed no algorithms"; exit 1; }
[ "$missing" -eq 0 ] || exit 1
echo "passed: $checked algorithms are each run forced"
