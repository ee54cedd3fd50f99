#!/usr/bin/env bash
# slurm_environment.sh PROGRAM [TASKS_PER_HOST]: PROGRAM's ranks started on
# two hosts of hosts.sh the way srun starts tasks (block distribution;
# TASKS_PER_HOST, default 2,2, is how many on each host, as Slurm's
# SLURM_NTASKS_PER_NODE lists them: 2,1 leaves a rank alone on host1), with
# only Slurm's variables: no COMM_* variable names the store. Rank 0 hosts it
# on the step's first host (SLURM_STEP_NODELIST host[0-1]: host0, which
# host1 resolves to 10.77.0.1), on the port SLURM_JOB_ID gives; the job's
# secret is a file rank 0 makes in the $HOME the hosts share, and removes
# once every rank has it. Passes when every rank exits 0 and the file is
# gone; exits 77 where hosts.sh cannot make hosts.
set -u
here=$(cd "$(dirname "$0")" && pwd)
if [ "${1:-}" != --inside ]; then exec "$here/hosts.sh" run 2 -- "$0" --inside "$@"; fi
program=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Every COMM_* variable off, as in a plain srun; COMM_TIMEOUT bounds each wait.
hosts_dir=$COMM_HOSTS_DIR
unset $(compgen -v COMM_)
export COMM_HOSTS_DIR=$hosts_dir
export HOME=$work/home
mkdir "$HOME"
tasks_per_host=${3:-2,2}
IFS=, read -r -a tasks <<<"$tasks_per_host"
host_of=() local_of=()
for host in "${!tasks[@]}"; do
  for ((local = 0; local < tasks[host]; local++)); do
    host_of+=("$host")
    local_of+=("$local")
  done
done
ntasks=${#host_of[@]}
pids=()
for ((rank = 0; rank < ntasks; rank++)); do
  "$here/hosts.sh" exec "${host_of[$rank]}" env -u COMM_HOSTS_DIR COMM_TIMEOUT=60 SLURM_PROCID=$rank \
    SLURM_NTASKS="$ntasks" SLURM_LOCALID="${local_of[$rank]}" SLURM_NTASKS_PER_NODE="$tasks_per_host" \
    SLURM_STEP_NODELIST='host[0-1]' SLURM_JOB_NODELIST='host[0-1]' SLURM_JOB_ID=4242 \
    timeout 240 "$program" >"$work/out.$rank" 2>&1 &
  pids+=($!)
done
failed=0
for ((rank = 0; rank < ntasks; rank++)); do
  rc=0
  wait "${pids[$rank]}" || rc=$?
  echo "--- rank $rank (host${host_of[$rank]}): exited $rc"
  cat "$work/out.$rank"
  [ "$rc" -eq 0 ] || failed=1
done
if [ -e "$HOME/.comm/slurm-4242.0.secret" ]; then
  echo "FAIL: rank 0 left the job's secret file behind"
  failed=1
fi
exit "$failed"
