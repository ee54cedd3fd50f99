# Communicator ids come back: two ranks (comm's tcp) keep one communicator
# and make and destroy 65,600 more, more than the 65,535 ids there are, and
# the last one computes the right sum; no new communicator gets a live
# one's id.
. "$(dirname "$0")/lib.sh"
COMM_PROVIDER=tcp COMM_TIMEOUT=120 "$COMMRUN" -n 2 --timeout 540 "$PROBE" splits 65600 >"$WORK/job.out" 2>&1
rc=$?
[ "$rc" -eq 0 ] || fail "commrun exited $rc: $(tail -5 "$WORK/job.out")"
expect_line "$WORK/job.out" "[0] rank 0: 65600 splits: sum 3"
expect_line "$WORK/job.out" "[1] rank 1: 65600 splits: sum 3"
echo "passed"
