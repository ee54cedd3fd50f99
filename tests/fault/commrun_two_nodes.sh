# Two commruns, --nnodes 2 with node ranks 0 and 1 on 127.0.0.1, make one
# world of 4 ranks: the right variables on each, one store (hosted by node 0)
# through which all ranks meet. Node 1 starts first: its ranks retry until
# node 0's store is up.
. "$(dirname "$0")/lib.sh"

port=$("$PROBE" free-port)
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
