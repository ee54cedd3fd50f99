# --replace N replaces a replacement that fails in turn, until N have
# started; a failure after that is not replaced: commrun exits with the first
# failure's status, and its last line names every failure in order. Each
# process's end is in the store under its launch slot.
. "$(dirname "$0")/lib.sh"

run_commrun -n 2 --replace 2 sh -c '
  slot=${COMM_LAUNCH_SLOT:-$COMM_RANK}
  echo $$ >"'"$WORK"'/pid.$slot"
  if [ "$COMM_RANK" = 1 ]; then
    case $slot in
      1) exit 3 ;;
      2) exit 4 ;;
      *) kill -KILL $$ ;;
    esac
  fi
  "$0" await-key commrun/rank_failed/2 && "$0" await-key commrun/rank_failed/3
  ' "$PROBE"
expect_rc 3
host=$(hostname)
first="rank 1 (pid $(cat "$WORK/pid.1") on $host) exited with status 3"
second="rank 1 (launch slot 2, pid $(cat "$WORK/pid.2") on $host) exited with status 4"
third="rank 1 (launch slot 3, pid $(cat "$WORK/pid.3") on $host) was killed by signal 9 (Killed)"
expect_line "$WORK/err" "commrun: $first; replacement 1 of 2 starts as launch slot 2 (--replace)"
expect_line "$WORK/err" "commrun: $second; replacement 2 of 2 starts as launch slot 3 (--replace)"
expect_line "$WORK/err" "commrun: $third; not replaced: --replace 2 is used up; the others go on (--keep-going)"
expect_line "$WORK/out" "[0] commrun/rank_failed/2 = $second"
expect_line "$WORK/out" "[0] commrun/rank_failed/3 = $third"
[ -f "$WORK/pid.4" ] && fail "a third replacement started"
last=$(tail -n 1 "$WORK/err")
[ "$last" = "commrun: $first; then $second; then $third; 2 replaced (--replace 2)" ] \
  || fail "the last line does not name every failure in order: $last"
