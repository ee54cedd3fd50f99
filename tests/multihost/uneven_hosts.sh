#!/usr/bin/env bash
# uneven_hosts.sh PROGRAM: PROGRAM as 3 ranks on two hosts of hosts.sh, 2 on
# host0 and 1 on host1, each started on its own with the launcher-neutral
# variables (COMM_RANK, COMM_WORLD_SIZE, COMM_LOCAL_RANK,
# COMM_LOCAL_WORLD_SIZE, COMM_MASTER_ADDR/PORT), as a launcher that places
# tasks unevenly (srun with SLURM_TASKS_PER_NODE=2,1) would. The rank alone
# on host1 reaches every peer over the network while the others also reach
# one over shared memory; both must still cut large messages alike.
# Passes when every rank exits 0; exits 77 where hosts.sh cannot make hosts.
set -u
here=$(cd "$(dirname "$0")" && pwd)
if [ "${1:-}" != --inside ]; then exec "$here/hosts.sh" run 2 -- "$0" --inside "$@"; fi
program=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
COMM_JOB_SECRET=$(od -An -tx1 -N32 /dev/urandom | tr -d ' \n')
export COMM_JOB_SECRET
hosts=(0 0 1) local_ranks=(0 1 0) local_sizes=(2 2 1)
pids=()
for rank in 0 1 2; do
  "$here/hosts.sh" exec "${hosts[$rank]}" env -u COMM_HOSTS_DIR COMM_TIMEOUT=60 COMM_RANK=$rank COMM_WORLD_SIZE=3 \
    COMM_LOCAL_RANK="${local_ranks[$rank]}" COMM_LOCAL_WORLD_SIZE="${local_sizes[$rank]}" \
    COMM_MASTER_ADDR=10.77.0.1 COMM_MASTER_PORT=29500 timeout 240 "$program" >"$work/out.$rank" 2>&1 &
  pids+=($!)
done
failed=0
for rank in 0 1 2; do
  rc=0
  wait "${pids[$rank]}" || rc=$?
  echo "--- rank $rank (host${hosts[$rank]}): exited $rc"
  cat "$work/out.$rank"
  [ "$rc" -eq 0 ] || failed=1
done
exit "$failed"
