#!/bin/sh
# Runs a 4-rank job through commrun and checks its end: OKS ranks printed a
# line ending in ": ok", commrun exited STATUS, and when that is 137 it named
# rank 3's death by SIGKILL (the programs here kill their last rank).
# usage: expect_survivors.sh COMMRUN OKS STATUS [COMMRUN OPTION...] -- PROGRAM [ARG...]
set -u
commrun="$1" oks="$2" expected_status="$3"
shift 3
out=$(mktemp)
trap 'rm -f "$out"' EXIT
"$commrun" -n 4 --timeout 120 "$@" >"$out" 2>&1
status=$?
cat "$out"
[ "$status" = "$expected_status" ] || { echo "FAIL: commrun exited $status, expected $expected_status"; exit 1; }
said=$(grep -c ": ok$" "$out")
[ "$said" = "$oks" ] || { echo "FAIL: $said ranks said ok, expected $oks"; exit 1; }
if [ "$expected_status" = 137 ]; then
  grep -q "commrun: rank 3 (pid [0-9]* on .*) was killed by signal 9" "$out" \
    || { echo "FAIL: commrun did not name rank 3's death"; exit 1; }
fi
echo "$said ranks ok, commrun exited $status"
