# Ranks started by a launcher that cannot hand them a variable of its own
# (rank 0 hosts the store) share the job's secret through
# COMM_JOB_SECRET_FILE: rank 0 creates it (mode 0600, a new random secret)
# and the others read it. A file others could read, one of another user,
# or no secret at all make comm_init fail at once, saying why.
. "$(dirname "$0")/lib.sh"
unset COMM_JOB_SECRET COMM_JOB_SECRET_FILE COMMRUN

port=$("$HELPER" free-port)
export COMM_JOB_SECRET_FILE="$WORK/secret"
start_ranks 3 "$port" all-reduce
wait_ranks
[ "$RCS" = "0 0 0" ] || fail "ranks exited $RCS"
for r in 0 1 2; do expect_line "$WORK/$r.out" "rank $r of 3: sum 6"; done
[ "$(stat -c %a "$WORK/secret")" = 600 ] || fail "rank 0 made the secret file with mode $(stat -c %a "$WORK/secret")"

# The file is reused by the next job until someone removes it.
port=$("$HELPER" free-port)
before=$(cat "$WORK/secret")
start_ranks 2 "$port" all-reduce
wait_ranks
[ "$RCS" = "0 0" ] || fail "ranks of the second job exited $RCS"
[ "$(cat "$WORK/secret")" = "$before" ] || fail "the second job replaced the secret file"

chmod 644 "$WORK/secret"
start_ranks 2 "$port" all-reduce
wait_ranks
[ "$RCS" = "1 1" ] || fail "ranks exited $RCS with a secret file others can read"
expect_line "$WORK/1.out" "comm_init: invalid argument: comm_init: COMM_JOB_SECRET_FILE $WORK/secret has mode 0644: others may read it; it must be 0600"

if [ "$(id -u)" -eq 0 ]; then
  chmod 600 "$WORK/secret"
  chown nobody "$WORK/secret"
  start_ranks 2 "$port" all-reduce
  wait_ranks
  [ "$RCS" = "1 1" ] || fail "ranks exited $RCS with a secret file of another user"
  expect_match "$WORK/0.out" "COMM_JOB_SECRET_FILE $WORK/secret belongs to uid [0-9]+, not to this process's uid 0"
fi

unset COMM_JOB_SECRET_FILE
start_ranks 2 "$port" all-reduce
wait_ranks
[ "$RCS" = "1 1" ] || fail "ranks exited $RCS without a secret"
expect_line "$WORK/1.out" "comm_init: invalid argument: comm_init: rank 1 of 2 (launched by config) has no job secret: set COMM_JOB_SECRET to the same value on every rank, or COMM_JOB_SECRET_FILE to a file every rank can read (rank 0 creates it); see docs/security.md"
echo "passed"
