#!/usr/bin/env bash
# commrun_hosts.sh COMMRUN PROBE COMM_INFO: commrun --hosts / --hostfile with
# --launcher-agent (agent.sh) on two hosts of hosts.sh: one command starts
# one commrun per host; ranks are numbered by host blocks and meet through
# the store on the first host; every host's output comes back; a rank
# killed on host1 ends the job, and commrun's last line names it (rank,
# host, pid, signal) although ranks on host0 failed after it; an agent that
# cannot reach its host ends the job too, naming the host; the store is
# reachable when the first host's name maps to loopback there, and a host
# where it maps to loopback says why its ranks cannot reach the store;
# comm-info --topology, started the same way, names both hosts and which
# ranks each holds.
# Exits 77 where
# hosts.sh cannot make hosts.
set -u
here=$(cd "$(dirname "$0")" && pwd)
if [ "${1:-}" != --inside ]; then exec "$here/hosts.sh" run 2 -- "$0" --inside "$@"; fi
commrun=$2 probe=$3 comm_info=$4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
agent=(--launcher-agent "$here/agent.sh")

fail() {
  echo "FAIL: $*"
  for f in "$work"/out "$work"/err; do [ -f "$f" ] && { echo "--- $(basename "$f")"; cat "$f"; }; done
  exit 1
}
run() {
  "$commrun" "$@" >"$work/out" 2>"$work/err"
  rc=$?
}
expect_line() { grep -qxF -- "$2" "$work/$1" || fail "$1 lacks the line '$2'"; }

# 1. --hosts: ranks 0,1 on host0, 2,3 on host1, all meeting at host0's store.
run -n 2 --hosts host0,host1 "${agent[@]}" --master-addr 10.77.0.1 --timeout 120 "$probe" rendezvous
[ "$rc" -eq 0 ] || fail "commrun --hosts exited $rc"
for rank in 0 1 2 3; do
  expect_line out "[$rank] rank=$rank size=4 local=$((rank % 2))/2 master=10.77.0.1:29500 met every rank"
done

# 1a. The user's secret reaches every host, but on the agent's stdin: a
#     command line (ssh's, the remote shell's) is readable by every user.
secret=commrun-hosts-test-secret-0123456789
COMM_JOB_SECRET=$secret AGENT_LOG=$work/agent.log run -n 2 --hosts host0,host1 "${agent[@]}" \
  --master-addr 10.77.0.1 --timeout 120 "$probe" rendezvous
[ "$rc" -eq 0 ] || fail "commrun --hosts with COMM_JOB_SECRET exited $rc"
[ "$(grep -c . "$work/agent.log")" -eq 2 ] || fail "the agent did not start two commruns"
! grep -qF "$secret" "$work/agent.log" || fail "the job secret was on a launcher agent's command line"

# 1b. Without --master-addr the store is on the first host by its name,
#     which host0's /etc/hosts maps to 127.0.1.1 (as Debian does): its store
#     must still be reachable from host1.
run -n 2 --hosts host0,host1 "${agent[@]}" --timeout 120 "$probe" rendezvous
[ "$rc" -eq 0 ] || fail "commrun --hosts without --master-addr exited $rc"
for rank in 0 1 2 3; do
  expect_line out "[$rank] rank=$rank size=4 local=$((rank % 2))/2 master=host0:29500 met every rank"
done

# 1c. A master address that is loopback on every host: host1's commrun says
#     at once why its ranks will not reach the store (they then fail).
run -n 1 --hosts host0,host1 "${agent[@]}" --master-addr localhost --timeout 120 --grace 1 "$probe" rendezvous
[ "$rc" -ne 0 ] || fail "commrun --master-addr localhost across hosts succeeded"
expect_line err "commrun: node 1: --master-addr localhost resolves to 127.0.0.1 here, a loopback address: unless node \
0 runs on this machine, this node's ranks cannot reach its store; give node 0's address or a name that resolves to \
it from every node"

# 2. --hostfile (comments, blank lines), hosts in another order, a port of
#    our choosing: the store follows the first host.
printf '# two hosts\nhost1   # the first: store and rank 0\n\nhost0\n' >"$work/hostfile"
run -n 1 --hostfile "$work/hostfile" "${agent[@]}" --master-addr 10.77.0.2 --master-port 4242 --timeout 120 \
  sh -c 'echo "rank $COMM_RANK on $(hostname) of $COMM_WORLD_SIZE, store $COMM_MASTER_ADDR:$COMM_MASTER_PORT"'
[ "$rc" -eq 0 ] || fail "commrun --hostfile exited $rc"
expect_line out "[0] rank 0 on host1 of 2, store 10.77.0.2:4242"
expect_line out "[1] rank 1 on host0 of 2, store 10.77.0.2:4242"

# 2a. The job's topology, gathered from both hosts by rank 0.
run -n 2 --hosts host0,host1 "${agent[@]}" --master-addr 10.77.0.1 --timeout 120 "$comm_info" --topology
[ "$rc" -eq 0 ] || fail "comm-info --topology across hosts exited $rc"
expect_line out "[0] Topology of this job: 4 ranks on 2 nodes"
expect_line out "[0] node 0 on host0:"
expect_line out "[0] node 1 on host1:"
for rank in 0 1 2 3; do
  grep -qE "^\[0\]   rank $rank \(pid [0-9]+\): NUMA domain [0-9]+, socket [0-9]+$" "$work/out" ||
    fail "comm-info --topology lacks rank $rank's line"
done
[ "$(grep -A6 'node 0 on host0' "$work/out" | grep -c '  rank [01] ')" -eq 2 ] || fail "host0 does not hold ranks 0 and 1"

# 3. Rank 3 (host1) is killed; the others learn it from the store and then
#    exit 3 themselves. Whichever host's commrun ends first, the job's last
#    line names rank 3.
run -n 2 --hosts host0,host1 "${agent[@]}" --master-addr 10.77.0.1 --timeout 120 --grace 5 sh -c '
  if [ "$COMM_RANK" = 3 ]; then echo $$ >"'"$work"'/pid.3"; sleep 1; kill -KILL $$; fi
  "'"$probe"'" await-failure 99
  exit 3'
[ "$rc" -eq 137 ] || [ "$rc" -eq 3 ] || fail "commrun exited $rc, expected 137 or 3"
first="rank 3 (pid $(cat "$work/pid.3") on host1) was killed by signal 9 (Killed)"
last=$(tail -n 1 "$work/err")
[ "$last" = "commrun: $first" ] ||
  [[ $last == "commrun: $first, the job's first failure; here rank "[01]" (pid "*" on host0) exited with status 3" ]] ||
  fail "the last line does not name rank 3 first"
for rank in 0 1 2; do expect_line out "[$rank] commrun/failed = $first"; done
# host0's own commrun, relayed, said so too.
grep -F "commrun: $first, the job's first failure; here rank " "$work/err" | grep -q " on host0) exited with status 3$" ||
  fail "host0's commrun did not name rank 3 as the first failure"

# 4. An agent that cannot reach its host: the job ends, naming the host.
run -n 1 --hosts host0,host9 "${agent[@]}" --master-addr 10.77.0.1 --timeout 120 --grace 1 "$probe" rendezvous
[ "$rc" -eq 255 ] || fail "commrun exited $rc, expected the agent's 255"
[[ $(tail -n 1 "$work/err") == "commrun: host9 (node 1): launcher agent (pid "*") exited with status 255: agent.sh: host9 is not up" ]] ||
  fail "the last line does not name host9 and the agent's complaint"
echo "commrun --hosts: passed"
