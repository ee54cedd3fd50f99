#!/bin/sh
# kill -9 of one rank: every survivor fails naming it, and commrun exits 137
# naming the dead rank and its signal. The whole job must end well within
# its waits' deadline (COMM_TIMEOUT) plus a minute for starting and stopping
# ranks on a busy machine: a survivor that hung would hold it much longer.
# The transport comes from the environment (COMM_PROVIDER, COMM_SHM).
# usage: peer_death.sh COMMRUN PROGRAM RANKS
set -u
commrun="$1" program="$2" ranks="$3"
export COMM_TIMEOUT=10
start=$(date +%s)
output=$("$commrun" -n "$ranks" --grace 20 "$program" 2>&1)
status=$?
elapsed=$(( $(date +%s) - start ))
echo "$output"
echo "commrun exit status $status after ${elapsed} s"
victim=$((ranks - 1))
fail() { echo "FAILED: $1"; exit 1; }
[ "$status" -eq 137 ] || fail "commrun should exit 137 (SIGKILL), got $status"
echo "$output" | grep -q "commrun: rank $victim .*signal 9" || fail "commrun did not name rank $victim and signal 9"
survivors=$(echo "$output" | grep -c "survivor ok")
[ "$survivors" -eq $((ranks - 1)) ] || fail "$survivors of $((ranks - 1)) survivors named the dead rank"
[ "$elapsed" -le 70 ] || fail "took ${elapsed} s, more than COMM_TIMEOUT + 60"
echo "passed"
