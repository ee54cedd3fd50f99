# SIGTERM to commrun reaches every rank; commrun exits 128 + 15.
. "$(dirname "$0")/lib.sh"

"$COMMRUN" -n 2 sh -c 'trap "echo got TERM; exit 0" TERM; echo ready; sleep 1000 & wait' \
  >"$WORK/out" 2>"$WORK/err" &
commrun_pid=$!
for _ in $(seq 1200); do
  [ "$(grep -c ready "$WORK/out")" -eq 2 ] && break
  sleep 0.05
done
[ "$(grep -c ready "$WORK/out")" -eq 2 ] || fail "the ranks never got ready"
kill -TERM "$commrun_pid"
wait "$commrun_pid"
RC=$?
expect_rc 143
expect_line "$WORK/out" "[0] got TERM"
expect_line "$WORK/out" "[1] got TERM"
expect_line "$WORK/err" "commrun: interrupted by SIGTERM; forwarded it to every rank"
