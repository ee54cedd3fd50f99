#!/usr/bin/env bash
# shrink_bench.sh across hosts simulated by tests/multihost/hosts.sh: HOSTS
# x RANKS ranks, one commrun --keep-going per host; the last rank (on the
# last host) dies and the survivors shrink. Prints the medians over REPS
# runs of detect, shrink and their total (as shrink_bench.sh defines them),
# and of a restart: a fresh job of the same shape from launch to comm_init
# and a first all_reduce done. Needs root (exits 77 where hosts.sh cannot
# make hosts). With REGROW=1 each host's commrun runs with --replace 1 and
# the survivors grow back by the replacement (shrink_bench.sh's grow).
# usage: shrink_hosts.sh HOSTS RANKS COMMRUN COMM_SHRINK_BENCH [REPS]
# e.g.:  bench/fault/shrink_hosts.sh 4 2 build/tools/commrun/commrun build/bench/comm-shrink-bench 9
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
multihost=$here/../../tests/multihost
if [ "${1:-}" != --inside ]; then
  [ $# -ge 4 ] || { sed -n '2,/^set /p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2; }
  exec "$multihost/hosts.sh" run "$1" -- "$0" --inside "$@"
fi
shift
hosts=$1 ranks=$2 commrun=$3 bench=$4 reps=${5:-9}
out=$(mktemp) stamp=$(mktemp)
trap 'rm -f "$out" "$stamp"' EXIT
median() { sort -n | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
regrow="${REGROW:-0}"
if [ "$regrow" = 1 ]; then mode=regrow launch=(--replace 1); else mode=shrink launch=(--keep-going); fi
detect=() shrink=() grow=() total=() restart=()
for ((rep = 0; rep < reps; ++rep)); do
  "$multihost/commrun_per_host.sh" --inside "$hosts" "$ranks" "$commrun" "${launch[@]}" "$bench" "$mode" "$stamp" \
    >"$out" 2>&1 || true
  if [ "$(grep -c "ready_ns" "$out")" != $((hosts * ranks - 1)) ]; then
    cat "$out" >&2
    echo "shrink_hosts: a run failed" >&2
    exit 1
  fi
  read -r d k r g < <(sed -n 's/.*died_ns \([0-9]*\) known_ns \([0-9]*\) ready_ns \([0-9]*\)\( grown_ns \)*\([0-9]*\).*/\1 \2 \3 \5/p' "$out" |
    awk '{ d = $1; if ($2 > k) k = $2; if ($3 > r) r = $3; if ($4 > g) g = $4 } END { print d, k, r, g }')
  detect+=("$(((k - d) / 1000))") shrink+=("$(((r - k) / 1000))")
  if [ "$regrow" = 1 ]; then
    grow+=("$(((g - r) / 1000))") total+=("$(((g - d) / 1000))")
  else
    total+=("$(((r - d) / 1000))")
  fi
  start=$(date +%s%N)
  "$multihost/commrun_per_host.sh" --inside "$hosts" "$ranks" "$commrun" "$bench" init >"$out" 2>&1 ||
    { cat "$out" >&2; exit 1; }
  ready=$(sed -n 's/.*ready_ns \([0-9]*\).*/\1/p' "$out")
  restart+=("$(((ready - start) / 1000))")
done
ms() { printf "%s\n" "$@" | median | awk '{ printf "%.2f", $1 / 1000 }'; }
grown=""
[ "$regrow" = 1 ] && grown=$(ms "${grow[@]}")
printf "%-8s %12s %12s %12s %12s %14s\n" hosts detect_ms shrink_ms "$([ "$regrow" = 1 ] && echo grow_ms)" total_ms restart_ms
printf "%-8s %12s %12s %12s %12s %14s\n" "${hosts}x${ranks}" "$(ms "${detect[@]}")" "$(ms "${shrink[@]}")" \
  "$grown" "$(ms "${total[@]}")" "$(ms "${restart[@]}")"
