# A process without the job's secret, of another user (nobody, through
# runuser) and of the same user, reaches the store commrun hosts while a job
# runs: it reads no key, its forged "commrun/failed" does not end the job and
# its forged "probe/release" releases nobody; the store closes it out.
. "$(dirname "$0")/lib.sh"

COMM_JOB_SECRET=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')
export COMM_JOB_SECRET
"$COMMRUN" -n 2 --timeout 300 "$PROBE" guard >"$WORK/out" 2>"$WORK/err" &
job=$!
for _ in $(seq 600); do
  [ "$(grep -c '^\[[01]\] ready port=' "$WORK/out")" -eq 2 ] && break
  kill -0 "$job" 2>/dev/null || fail "the job ended before it was ready"
  sleep 0.1
done
port=$(sed -n 's/^\[0\] ready port=//p' "$WORK/out")
[ -n "$port" ] || fail "the job never said it was ready"

strangers=0
if command -v runuser >/dev/null && [ "$(id -u)" -eq 0 ] && runuser -u nobody -- test -x "$PROBE"; then
  runuser -u nobody -- env -u COMM_JOB_SECRET "$PROBE" stranger "$port" >"$WORK/nobody" 2>&1 ||
    fail "the store answered another user: $(cat "$WORK/nobody")"
  expect_line "$WORK/nobody" "stranger: read nothing, connection closed"
  strangers=$((strangers + 1))
fi
env -u COMM_JOB_SECRET "$PROBE" stranger "$port" >"$WORK/same-user" 2>&1 ||
  fail "the store answered a process without the secret: $(cat "$WORK/same-user")"
expect_line "$WORK/same-user" "stranger: read nothing, connection closed"
strangers=$((strangers + 1))
echo "$strangers stranger(s) turned away"

kill -0 "$job" 2>/dev/null || fail "the job ended after a stranger's visit"
"$PROBE" release "$port" || fail "the job's own client could not release it"
wait "$job"
RC=$?
expect_rc 0
expect_line "$WORK/out" "[0] released; commrun/failed absent"
expect_line "$WORK/out" "[1] released; commrun/failed absent"
