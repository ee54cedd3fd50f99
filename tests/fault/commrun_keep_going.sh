# --keep-going: ranks that fail are told at once, the others run on to
# their end instead of being stopped, and the last line names every failure
# in order, with the first one's exit code.
. "$(dirname "$0")/lib.sh"

run_commrun -n 4 --keep-going --grace 0.1 sh -c '
  echo $$ >"'"$WORK"'/pid.$COMM_RANK"
  case $COMM_RANK in
    2) sleep 0.2; kill -KILL $$ ;;
    3) sleep 0.6; exit 3 ;;
  esac
  sleep 1.5
  touch "'"$WORK"'/survived.$COMM_RANK"'
expect_rc 137
host=$(hostname)
expect_line "$WORK/err" "commrun: rank 2 (pid $(cat "$WORK/pid.2") on $host) was killed by signal 9 (Killed); the others go on (--keep-going)"
expect_line "$WORK/err" "commrun: rank 3 (pid $(cat "$WORK/pid.3") on $host) exited with status 3; the others go on (--keep-going)"
last=$(tail -n 1 "$WORK/err")
[ "$last" = "commrun: rank 2 (pid $(cat "$WORK/pid.2") on $host) was killed by signal 9 (Killed); then rank 3 (pid $(cat "$WORK/pid.3") on $host) exited with status 3" ] \
  || fail "the last line does not name both failures in order: $last"
[ -f "$WORK/survived.0" ] && [ -f "$WORK/survived.1" ] || fail "ranks 0 and 1 were stopped instead of running to their end"
