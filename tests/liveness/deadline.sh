#!/bin/sh
# Failures are reported within their deadline: at 2 ranks a survivor's
# all_reduce fails in under 1.5 s when its peer dies (kill -9), for a small
# message and for a large one whose sends the dead peer never takes; when
# the peer hangs, it fails at COMM_TIMEOUT, not later (1.5 s of slack for a
# busy machine). Correctness bounds, not speed: a fixed wait after a
# failure, as there once was one of 2 s, breaks them.
# The transport comes from the environment (COMM_PROVIDER, COMM_SHM).
# usage: deadline.sh COMMRUN PROGRAM
set -u
commrun="$1" program="$2"
export COMM_TIMEOUT=3
fail() { echo "FAILED: $1"; exit 1; }

# run MODE COUNT LOW HIGH: the survivor fails after LOW..HIGH seconds.
run() {
  output=$("$commrun" -n 2 --grace 20 "$program" "$1" "$2" 2>&1)
  echo "$output"
  seconds=$(echo "$output" | sed -n 's/^\[0\] survivor .* after \([0-9.]*\) s .*/\1/p')
  [ -n "$seconds" ] || fail "$1 $2: the survivor did not report"
  awk -v s="$seconds" -v low="$3" -v high="$4" 'BEGIN { exit !(s >= low && s < high) }' ||
    fail "$1 $2: the survivor failed after $seconds s, expected $3 to $4 s"
}

run dead 1 0 1.5
run dead 131072 0 1.5
run hung 131072 "$COMM_TIMEOUT" $((COMM_TIMEOUT + 1)).5
echo "passed"
