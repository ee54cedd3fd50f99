# Communicator ids come back: two ranks (comm's tcp) keep one communicator
# and make and destroy 700 more while only 300 ids exist
# (COMM_TEST_COMMUNICATOR_IDS; the same code as with all 65,535, which
# would take minutes), and the last one computes the right sum; no new
# communicator gets a live one's id, nor reads a key of the one before it.
. "$(dirname "$0")/lib.sh"
COMM_TEST_COMMUNICATOR_IDS=300 COMM_PROVIDER=tcp COMM_TIMEOUT=120 "$COMMRUN" -n 2 --timeout 240 "$PROBE" splits 700 \
  >"$WORK/job.out" 2>&1
rc=$?
[ "$rc" -eq 0 ] || fail "commrun exited $rc: $(tail -5 "$WORK/job.out")"
expect_line "$WORK/job.out" "[0] rank 0: 700 splits: sum 3"
expect_line "$WORK/job.out" "[1] rank 1: 700 splits: sum 3"
# The limit is what made them come back: with one id, held by the kept
# split, the next split is refused on both ranks (the one that waits for
# the id learns why), at once rather than at the timeout.
COMM_TEST_COMMUNICATOR_IDS=1 COMM_PROVIDER=tcp COMM_TIMEOUT=60 "$COMMRUN" -n 2 --timeout 120 "$PROBE" splits 1 \
  >"$WORK/tight.out" 2>&1
for r in 0 1; do
  grep -q "^\[$r\] split 0: comm_split: out of memory: .*all 1 communicator ids are held" "$WORK/tight.out" ||
    fail "rank $r was not refused the second id: $(tail -3 "$WORK/tight.out")"
done
echo "passed"
