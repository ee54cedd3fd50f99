#!/bin/sh
# The hang report: the last of 3 ranks skips an all_reduce to wait for a
# message nobody sends; with COMM_DEBUG_DIR every rank writes its flight
# record when it times out, and comm-info --hang-report names that rank as
# the one the others wait for. The transport comes from the environment.
# usage: hang_report.sh COMMRUN PROGRAM COMM_INFO
set -u
commrun="$1" program="$2" info="$3"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAILED: $1"; exit 1; }
COMM_TIMEOUT=2 COMM_DEBUG_DIR="$dir" "$commrun" -n 3 --grace 20 "$program" skip 1 2>&1 ||
  fail "a rank's call did not fail as it should"
ls "$dir"
[ "$(ls "$dir" | grep -c '^flight\.world\.rank[012]\.json$')" -eq 3 ] || fail "not every rank wrote its flight record"
report=$("$info" --hang-report "$dir") || fail "comm-info --hang-report failed"
echo "$report"
echo "$report" | grep -q "rank 2 has not started collective #1" || fail "the report does not say rank 2 is behind"
echo "$report" | grep -qE "^  => the others wait for rank 2 \(world rank 2, pid [0-9]+ on " ||
  fail "the report does not name rank 2"
echo "passed"
