# comm_init a second time: while this process's world lives it fails at
# once saying why; after comm_destroy of the world it joins a new world,
# through commrun's store (which still holds the first world's keys) and
# through a store rank 0 hosts (once every rank has destroyed its world:
# rank 0's first store goes with its first world). COMM_TIMEOUT is long: a
# call that waited for it would show as a failure of the job's --timeout.
. "$(dirname "$0")/lib.sh"
export COMM_TIMEOUT=300
check() {
  local out=$1 r
  for r in 0 1 2; do
    expect_match "$out" "^${2}rank $r: first world: sum 6\$"
    expect_match "$out" "^${2}rank $r: comm_init while it lives: invalid usage: comm_init: this process's world is still alive"
    expect_match "$out" "^${2}rank $r: second world: sum 6\$"
  done
}

"$COMMRUN" -n 3 --timeout 120 "$PROBE" init-again >"$WORK/commrun.out" 2>&1 || fail "commrun: $(tail -3 "$WORK/commrun.out")"
check "$WORK/commrun.out" '\[[0-2]\] '

port=$("$HELPER" free-port)
COMM_JOB_SECRET=0123456789abcdef0123456789abcdef start_ranks 3 "$port" init-again "$WORK/go"
for _ in $(seq 1200); do
  [ "$(cat "$WORK"/[012].out | grep -c ': destroyed$')" -eq 3 ] && break
  sleep 0.1
done
touch "$WORK/go"
wait_ranks
[ "$RCS" = "0 0 0" ] || fail "ranks exited $RCS"
cat "$WORK"/[012].out >"$WORK/all.out"
check "$WORK/all.out" ''
echo "passed"
