# A rank killed by SIGKILL makes commrun exit 137 naming rank and signal;
# ranks that even ignore SIGTERM are then killed after the grace period.
. "$(dirname "$0")/lib.sh"

run_commrun -n 4 --grace 0.5 sh -c '
  echo $$ >"'"$WORK"'/pid.$COMM_RANK"
  if [ "$COMM_RANK" = 2 ]; then sleep 0.2; kill -KILL $$; fi
  trap "" TERM
  exec sleep 1000'
expect_rc 137
expect_line "$WORK/err" "commrun: rank 2 (pid $(cat "$WORK/pid.2") on $(hostname)) was killed by signal 9 (Killed)"
expect_dead "$WORK/pid.0" "$WORK/pid.1" "$WORK/pid.3"
expect_faster 15
