#!/usr/bin/env bash
# link_failure.sh down|outage|shrink COMMRUN PROBE: 2 hosts x 2 ranks run
# link_probe (all_reduces checked against their sum) while host1's link to
# the bridge goes away, as a pulled cable would.
#   down    the link goes down (once every rank has a right result) and
#           stays down: every rank must fail within COMM_TIMEOUT (+ a margin
#           for a loaded machine) naming a peer, and on each host some rank
#           must name a rank of the other host, which it can no longer reach.
#   outage  the link is down for 5 s, then back: TCP retransmits what was
#           lost and every rank finishes with right results.
#   shrink  as down, then every rank calls comm_shrink: a rank that cannot
#           reach the others (nor the store, on host0) must fail within
#           COMM_TIMEOUT (+ the margin) too, never hang.
# The environment reaches the ranks (COMM_PROVIDER, COMM_TIMEOUT...).
# Exits 77 where hosts.sh cannot make hosts.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
if [ "${1:-}" != --inside ]; then
  [ $# -eq 3 ] && [[ $1 =~ ^(down|outage|shrink)$ ]] || { sed -n '2,/^set /p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2; }
  exec "$here/hosts.sh" run 2 -- "$0" --inside "$@"
fi
mode=$2 commrun=$3 probe=$4
timeout=${COMM_TIMEOUT:?link_failure.sh needs COMM_TIMEOUT}
margin=15
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

fail() {
  echo "FAIL: $*"
  cat "$work/out"
  exit 1
}

# The link goes once every rank has a right result (link_probe's files).
export LINK_PROBE_READY=$work/ready
mkdir "$LINK_PROBE_READY"
when_ready() {
  local waited=0
  until [ "$(ls "$LINK_PROBE_READY" | wc -l)" -eq 4 ]; do
    waited=$((waited + 1))
    [ "$waited" -le 1200 ] || return 1
    sleep 0.1
  done
  sleep 1
}
if [ "$mode" = shrink ]; then
  export LINK_PROBE_SHRINK=1
fi
if [ "$mode" != outage ]; then
  (when_ready && "$here/hosts.sh" link 1 down) &
  seconds=$((timeout + 120))
else
  (when_ready && "$here/hosts.sh" link 1 down && sleep 5 && "$here/hosts.sh" link 1 up) &
  seconds=20
fi
flipper=$!
rc=0
"$here/commrun_per_host.sh" --inside 2 2 "$commrun" "$probe" "$seconds" >"$work/out" 2>&1 || rc=$?
wait "$flipper" || fail "the link could not be changed"

if [ "$mode" = outage ]; then
  [ "$rc" -eq 0 ] || fail "the job did not survive a 5 s outage"
  for rank in 0 1 2 3; do
    grep -qE "^\[$rank\] rank $rank: [0-9]+ all_reduces, all right\$" "$work/out" || fail "rank $rank did not finish right"
  done
  echo "link_failure outage: every rank finished with right results"
  exit 0
fi

[ "$rc" -ne 0 ] || fail "the job succeeded with host1's link down"
named=(0 0)
for rank in 0 1 2 3; do
  host=$((rank / 2))
  # The peers a rank can no longer reach: those on the other host.
  if [ "$host" -eq 0 ]; then others='rank [23]\b'; else others='rank [01]\b'; fi
  line=$(grep -E "^\[$rank\] rank $rank: [a-z ]+ after [0-9.]+ s: " "$work/out" || true)
  [ -n "$line" ] || fail "rank $rank reported no error"
  took=$(sed -E 's/^\[[0-9]+\] rank [0-9]+: [a-z ]+ after ([0-9.]+) s: .*/\1/' <<<"$line")
  awk -v took="$took" -v limit=$((timeout + margin)) 'BEGIN { exit !(took <= limit) }' ||
    fail "rank $rank failed after $took s, more than COMM_TIMEOUT=$timeout s + $margin"
  grep -qE 'rank [0-9]+' <<<"${line#*: *: }" || fail "rank $rank's error names no peer: $line"
  if grep -qE "$others" <<<"${line#*: *: }"; then named[$host]=1; fi
  echo "$line"
done
if [ "$mode" = shrink ]; then
  for rank in 0 1 2 3; do
    line=$(grep -E "^\[$rank\] rank $rank: shrink [a-zA-Z_ ]+ after [0-9.]+ s: " "$work/out" || true)
    [ -n "$line" ] || fail "rank $rank did not come back from comm_shrink"
    took=$(sed -E 's/^\[[0-9]+\] rank [0-9]+: shrink [a-zA-Z_ ]+ after ([0-9.]+) s: .*/\1/' <<<"$line")
    awk -v took="$took" -v limit=$((timeout + margin)) 'BEGIN { exit !(took <= limit) }' ||
      fail "rank $rank's shrink returned after $took s, more than COMM_TIMEOUT=$timeout s + $margin"
    echo "$line"
  done
fi
# A rank that waited only for a neighbour of its own host (itself stuck)
# may name that neighbour; on each host, some rank names the other host.
[ "${named[0]}" -eq 1 ] && [ "${named[1]}" -eq 1 ] || fail "a host's ranks named no rank of the other host"
echo "link_failure $mode: every rank failed in time, and each host's ranks named the other host"
