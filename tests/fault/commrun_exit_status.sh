# A rank exiting 3 makes commrun exit 3 naming it, after stopping the ranks
# that would otherwise sleep forever.
. "$(dirname "$0")/lib.sh"

run_commrun -n 3 sh -c '
  echo $$ >"'"$WORK"'/pid.$COMM_RANK"
  if [ "$COMM_RANK" = 1 ]; then sleep 0.2; exit 3; fi
  exec sleep 1000'
expect_rc 3
expect_match "$WORK/err" '^commrun: rank 1 \(pid [0-9]+ on [^)]+\) exited with status 3$'
expect_line "$WORK/err" "commrun: rank 1 (pid $(cat "$WORK/pid.1") on $(hostname)) exited with status 3"
expect_dead "$WORK/pid.0" "$WORK/pid.2"
# The default grace is 3 s, then SIGTERM ends the sleepers.
expect_faster 15
