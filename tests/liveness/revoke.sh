#!/bin/sh
# Runs the revoke program (revoke.c) on 4 ranks in MODE and checks the
# job's end: every rank says "ok"; in mode dies the revoking rank (the last)
# is killed instead, commrun says so and the 3 others say "ok".
# usage: revoke.sh COMMRUN REVOKE MODE
set -u
commrun="$1" program="$2" mode="$3"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
"$commrun" -n 4 --timeout 120 "$program" "$mode" >"$out" 2>&1
status=$?
cat "$out"
survivors=4 expected_status=0
if [ "$mode" = dies ]; then survivors=3 expected_status=137; fi
[ "$status" = "$expected_status" ] || { echo "FAIL: commrun exited $status, expected $expected_status"; exit 1; }
oks=$(grep -c ": ok$" "$out")
[ "$oks" = "$survivors" ] || { echo "FAIL: $oks ranks said ok, expected $survivors"; exit 1; }
if [ "$mode" = dies ]; then
  grep -q "commrun: rank 3 (pid [0-9]* on .*) was killed by signal 9" "$out" || { echo "FAIL: commrun did not name rank 3's death"; exit 1; }
fi
echo "revoke $mode: $survivors ranks saw it"
