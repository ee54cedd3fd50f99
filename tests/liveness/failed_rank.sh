#!/bin/sh
# kill -9 of the last of 4 ranks while the others all_reduce: every survivor
# fails with COMM_ERR_REMOTE naming the killed rank with its pid and host,
# also a survivor that learned of it second-hand (a peer that failed because
# of it closed its connection, or told it), and comm_failed_rank gives its
# world rank. Once for 8 bytes and once for 1 MiB (messages between every
# pair of survivors). The transport comes from the environment.
# usage: failed_rank.sh COMMRUN PROGRAM
set -u
commrun="$1" program="$2"
export COMM_TIMEOUT=30
fail() { echo "FAILED: $1"; exit 1; }
for count in 1 131072; do
  output=$("$commrun" -n 4 --grace 20 "$program" dead "$count" 2>&1)
  echo "$output"
  pid=$(echo "$output" | sed -n 's/^commrun: rank 3 (pid \([0-9]*\) on .*killed by signal 9.*/\1/p')
  [ -n "$pid" ] || fail "$count: commrun did not name rank 3 and signal 9"
  for r in 0 1 2; do
    line=$(echo "$output" | grep "^\[$r\] survivor ") || fail "$count: rank $r did not report"
    echo "$line" | grep -q "^\[$r\] survivor remote failure .*(failed rank 3): .*rank 3 (pid $pid on " ||
      fail "$count: rank $r did not name rank 3 (pid $pid), or comm_failed_rank did not give 3"
  done
done
echo "passed"
