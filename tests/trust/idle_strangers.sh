# A stranger holds 1100 idle connections to the store of a job whose
# processes may open 1024 descriptors (ulimit -n 1024): the store closes the
# oldest connections that have not proven the job's secret, and the job
# starts and computes as if nobody were there.
. "$(dirname "$0")/lib.sh"

port=$("$HELPER" free-port)
(
  ulimit -n 1024
  exec env COMM_TIMEOUT=60 "$COMMRUN" -n 4 --master-port "$port" --timeout 300 "$PROBE" all-reduce-after "$WORK/go"
) >"$WORK/job.out" 2>&1 &
job=$!
"$HELPER" hold "$port" 1100 "$WORK/held" >"$WORK/holder.out" 2>&1 &
holder=$!
trap 'kill "$holder" 2>/dev/null; rm -rf "$WORK"' EXIT
for _ in $(seq 1200); do
  [ -f "$WORK/held" ] && break
  kill -0 "$holder" 2>/dev/null || fail "the stranger gave up: $(cat "$WORK/holder.out")"
  sleep 0.1
done
[ -f "$WORK/held" ] || fail "the stranger never held its connections"
touch "$WORK/go"
wait "$job"
rc=$?
kill "$holder"
[ "$rc" -eq 0 ] || fail "the job exited $rc"
for r in 0 1 2 3; do expect_line "$WORK/job.out" "[$r] rank $r of 4: sum 10"; done
echo "passed"
