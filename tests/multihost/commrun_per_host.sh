#!/usr/bin/env bash
# commrun_per_host.sh HOSTS RANKS COMMRUN PROGRAM [ARG...]: runs PROGRAM as
# HOSTS x RANKS ranks on hosts simulated by hosts.sh, one commrun per host
# (--nnodes HOSTS --node-rank I), the store on host 0 (10.77.0.1). Prints
# each host's output and exits 0 only when every host's commrun did; 77 when
# the hosts cannot be made here (hosts.sh says why).
#
# The environment reaches the ranks (COMM_PROVIDER, COMM_TIMEOUT...).
# MULTIHOST_TIMEOUT (seconds, default 240) bounds each commrun, so that a
# hang ends inside CTest's deadline with every host's output; HOSTS_RATE,
# when set, shapes the links (hosts.sh up --rate); HOSTS_DOCKER_BRIDGE=1
# gives each host a docker0 bridge (hosts.sh up --docker-bridge). EXPECT_REMOTE_PROVIDER,
# when set, must be what every rank of host 0 logs (at info level, which it
# turns on) for each rank on another host: "rank 2 (host1, pid 3) over tcp",
# the proof that the ranks did meet across hosts and over that transport.
# A job whose every commrun succeeded fails here if any rank logged a
# warning.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)

if [ "${1:-}" != --inside ]; then
  [ $# -ge 4 ] || { sed -n '2,/^set /p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2; }
  up=()
  [ -n "${HOSTS_RATE:-}" ] && up+=(--rate "$HOSTS_RATE")
  [ -n "${HOSTS_DOCKER_BRIDGE:-}" ] && up+=(--docker-bridge)
  exec "$here/hosts.sh" run "$1" "${up[@]}" -- "$0" --inside "$@"
fi
shift
hosts=$1 ranks=$2 commrun=$3
[ -z "${EXPECT_REMOTE_PROVIDER:-}" ] || export COMM_LOG_LEVEL=info
shift 3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The nodes of a job prove one secret (docs/security.md); one commrun per
# host is handed it as a user would hand it.
COMM_JOB_SECRET=$(od -An -tx1 -N32 /dev/urandom | tr -d ' \n')
export COMM_JOB_SECRET
pids=()
for ((i = 0; i < hosts; i++)); do
  "$here/hosts.sh" exec "$i" "$commrun" -n "$ranks" --nnodes "$hosts" --node-rank "$i" \
    --master-addr 10.77.0.1 --master-port 29500 --timeout "${MULTIHOST_TIMEOUT:-240}" "$@" \
    >"$work/out.$i" 2>&1 &
  pids+=($!)
done
failed=0
for ((i = 0; i < hosts; i++)); do
  rc=0
  wait "${pids[$i]}" || rc=$?
  echo "--- host$i: commrun exited $rc"
  cat "$work/out.$i"
  [ "$rc" -eq 0 ] || failed=1
done

# A job that ends well has nothing to warn about: no rank may log a warning
# (a peer's clean exit is not one).
if [ "$failed" -eq 0 ] && grep -hE '^\[[0-9]+\] comm\[[0-9]+\] warn ' "$work"/out.*; then
  echo "FAIL: the job succeeded, but ranks logged the warnings above"
  failed=1
fi

if [ -n "${EXPECT_REMOTE_PROVIDER:-}" ]; then
  # Lines of host 0's ranks about ranks on other hosts, and how many there must be.
  remote=$(grep -E ' rank [0-9]+ \(host[1-9][0-9]*, pid [0-9]+\) over ' "$work/out.0" || true)
  want=$((ranks * (hosts - 1) * ranks))
  got=$(printf '%s' "$remote" | grep -c . || true)
  other=$(printf '%s\n' "$remote" | grep -v -- " over ${EXPECT_REMOTE_PROVIDER}\$" | grep . || true)
  if [ "$got" -ne "$want" ] || [ -n "$other" ]; then
    echo "FAIL: host 0's ranks logged $got peers on other hosts (expected $want), each over $EXPECT_REMOTE_PROVIDER;" \
      "these were not: ${other:-none}"
    failed=1
  fi
fi
exit "$failed"
