# Every rank gets its own COMM_* variables, read back through detectLaunch,
# and commrun exits 0 when every rank does.
. "$(dirname "$0")/lib.sh"

run_commrun -n 4 "$PROBE" env
expect_rc 0
[ -s "$WORK/err" ] && fail "unexpected stderr"
port=$(sed -n 's/^\[0\] .*master=127\.0\.0\.1:\([0-9]*\) .*/\1/p' "$WORK/out")
[ -n "$port" ] && [ "$port" -gt 0 ] || fail "rank 0 reports no store port"
for rank in 0 1 2 3; do
  expect_line "$WORK/out" "[$rank] rank=$rank size=4 local=$rank/4 master=127.0.0.1:$port launcher=commrun hosted=1"
done
