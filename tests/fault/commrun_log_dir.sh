# --log-dir writes each rank's stdout and stderr, unprefixed, to
# DIR/rank.<r>.log, creating DIR; the terminal output stays prefixed.
. "$(dirname "$0")/lib.sh"

logs="$WORK/logs/nested"
run_commrun -n 2 --log-dir "$logs" sh -c 'echo "out $COMM_RANK"; echo "err $COMM_RANK" >&2'
expect_rc 0
for rank in 0 1; do
  [ -f "$logs/rank.$rank.log" ] || fail "no $logs/rank.$rank.log"
  expect_line "$logs/rank.$rank.log" "out $rank"
  expect_line "$logs/rank.$rank.log" "err $rank"
  [ "$(wc -l <"$logs/rank.$rank.log")" -eq 2 ] || fail "rank.$rank.log has other lines"
  expect_line "$WORK/out" "[$rank] out $rank"
done
