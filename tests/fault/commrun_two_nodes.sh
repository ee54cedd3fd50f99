# Two commruns, --nnodes 2 with node ranks 0 and 1 on 127.0.0.1, make one
# world of 4 ranks: the right variables on each, one store (hosted by node 0)
# through which all ranks meet. Node 1 starts first: its ranks retry until
# node 0's store is up. The nodes share the job's secret through
# COMM_JOB_SECRET_FILE, which node 0 creates (mode 0600) and node 1 waits
# for; without a shared secret commrun refuses to start a job of two nodes.
. "$(dirname "$0")/lib.sh"

port=$("$PROBE" free-port)
unset COMM_JOB_SECRET
run_commrun -n 1 --nnodes 2 --node-rank 0 --master-addr 127.0.0.1 --master-port "$port" "$PROBE" rendezvous
expect_rc 2
expect_match "$WORK/err" '^commrun: the nodes of a job need one secret: set COMM_JOB_SECRET'
[ -s "$WORK/out" ] && fail "a rank ran without a secret"

export COMM_JOB_SECRET_FILE="$WORK/secret"
node() {
  "$COMMRUN" -n 2 --nnodes 2 --node-rank "$1" --master-addr 127.0.0.1 --master-port "$port" --timeout 300 \
    "$PROBE" rendezvous >"$WORK/out.$1" 2>"$WORK/err.$1"
}
node 1 &
node1=$!
sleep 0.3
node 0
RC=$?
expect_rc 0
wait "$node1"
RC=$?
expect_rc 0
for rank in 0 1 2 3; do
  node=$((rank / 2))
  expect_line "$WORK/out.$node" "[$rank] rank=$rank size=4 local=$((rank % 2))/2 master=127.0.0.1:$port met every rank"
done
[ "$(wc -l <"$WORK/out.0")" -eq 2 ] && [ "$(wc -l <"$WORK/out.1")" -eq 2 ] || fail "stray output"
[ "$(stat -c %a "$WORK/secret")" = 600 ] || fail "the secret file has mode $(stat -c %a "$WORK/secret")"
[ "$(wc -c <"$WORK/secret")" -eq 65 ] || fail "the secret file holds $(wc -c <"$WORK/secret") bytes, not 64 digits and a newline"
