# --replace N: a rank that fails is replaced by a process that joins the job
# in its place (same rank, program, arguments and environment, plus
# COMM_JOIN=1 and COMM_LAUNCH_SLOT = world size + the job's replacements
# before it); commrun exits 0 when every launch slot's last process exits 0,
# its last line still naming the failure. --replace implies --keep-going, a
# rank killed by --timeout is not replaced, and N must be a positive number.
. "$(dirname "$0")/lib.sh"

run_commrun -n 3 --replace 2 --log-dir "$WORK/logs" sh -c '
  echo $$ >"'"$WORK"'/pid.${COMM_LAUNCH_SLOT:-$COMM_RANK}"
  if [ -n "${COMM_JOIN:-}" ]; then
    echo "joined slot $COMM_LAUNCH_SLOT rank $COMM_RANK of $COMM_WORLD_SIZE local $COMM_LOCAL_RANK join $COMM_JOIN args $1"
    exit 0
  fi
  if [ "$COMM_RANK" = 1 ]; then exit 3; fi
  "$0" await-key commrun/keep_going && "$0" await-key commrun/rank_failed/1 && "$0" await-key commrun/replacements
  ' "$PROBE" arg
expect_rc 0
host=$(hostname)
failure="rank 1 (pid $(cat "$WORK/pid.1") on $host) exited with status 3"
expect_line "$WORK/out" "[3] joined slot 3 rank 1 of 3 local 1 join 1 args arg"
expect_line "$WORK/logs/rank.3.log" "joined slot 3 rank 1 of 3 local 1 join 1 args arg"
for rank in 0 2; do
  expect_line "$WORK/out" "[$rank] commrun/keep_going = 1"
  expect_line "$WORK/out" "[$rank] commrun/rank_failed/1 = $failure"
  expect_line "$WORK/out" "[$rank] commrun/replacements = 1"
done
expect_line "$WORK/err" "commrun: $failure; replacement 1 of 2 starts as launch slot 3 (--replace)"
last=$(tail -n 1 "$WORK/err")
[ "$last" = "commrun: $failure; all replaced (--replace 2), and every launch slot's last process exited cleanly" ] \
  || fail "the last line does not name the replaced failure: $last"
[ "$(cat "$WORK/pid.3")" != "$(cat "$WORK/pid.1")" ] || fail "the replacement has the failed process's pid"

# commrun ending stops ranks; it does not replace them.
run_commrun -n 2 --replace 2 --timeout 0.5 sleep 30
expect_rc 124
grep -q 'starts as launch slot' "$WORK/err" && fail "a rank stopped by --timeout was replaced"
expect_match "$WORK/err" '^commrun: timed out after 0.5 s; stopped every rank'
expect_faster 10

for bad in 0 -1 two 1.5; do
  run_commrun -n 1 --replace "$bad" true
  expect_rc 2
  expect_line "$WORK/err" "--replace: '$bad' is not a positive whole number (the most failed ranks this commrun replaces)"
done
run_commrun -n 1 --replace true
expect_rc 2
