#!/bin/bash
# Time from a rank's death to a working communicator of the survivors
# (comm_shrink), beside starting the job again on the survivors' count
# (commrun launch to comm_init and a first all_reduce done). Medians over
# REPS runs of: detect, from the death until the last survivor's call has
# failed; shrink, from then until every survivor has done an all_reduce on
# the shrunken communicator; total, the two together.
# With REGROW=1 the survivors then grow back by the replacement that
# commrun --replace 1 starts: grow, from the shrunken communicator's first
# all_reduce until every rank's first on the grown one is done; total, from
# the death to that; restart, the job at its full size.
# usage: shrink_bench.sh COMMRUN COMM_SHRINK_BENCH [REPS] [RANKS...]
#   environment: PATHS (default "shm tcp"), as comm's tests name them; REGROW.
# e.g.:  bench/fault/shrink_bench.sh build/tools/commrun/commrun build/bench/comm-shrink-bench 15 2 4 8
set -u
commrun="$1" bench="$2" reps="${3:-15}"
shift 3 2>/dev/null || shift $#
ranks=("$@")
[ ${#ranks[@]} -gt 0 ] || ranks=(2 4 8)
out=$(mktemp) stamp=$(mktemp)
trap 'rm -f "$out" "$stamp"' EXIT
median() { sort -n | awk '{ v[NR] = $1 } END { if (NR == 0) print "-"; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
regrow="${REGROW:-0}"
if [ "$regrow" = 1 ]; then
  mode=regrow launch=(--replace 1) grow_header=grow_ms
else
  mode=shrink launch=(--keep-going) grow_header=
fi
printf "%-5s %5s %12s %12s %12s %12s %14s\n" path ranks detect_ms shrink_ms "$grow_header" total_ms restart_ms
for path in ${PATHS:-shm tcp}; do
  case $path in
    shm) environment=(COMM_SHM=1) ;;
    tcp) environment=(COMM_PROVIDER=tcp COMM_SHM=0) ;;
    rxm) environment=(COMM_PROVIDER=tcp,ofi_rxm COMM_SHM=0) ;;
  esac
  for n in "${ranks[@]}"; do
    detect=() shrink=() grow=() total=() restart=()
    for ((rep = 0; rep < reps; ++rep)); do
      env "${environment[@]}" "$commrun" -n "$n" "${launch[@]}" --timeout 60 "$bench" "$mode" "$stamp" >"$out" 2>&1
      if [ "$(grep -c "ready_ns" "$out")" != $((n - 1)) ]; then
        cat "$out" >&2
        echo "shrink_bench: a run at $n ranks over $path failed" >&2
        exit 1
      fi
      # detect: until the last survivor knows; shrink: from then until the
      # last is ready; grow: from then until the last has used the grown one.
      read -r d k r g < <(sed -n 's/.*died_ns \([0-9]*\) known_ns \([0-9]*\) ready_ns \([0-9]*\)\( grown_ns \)*\([0-9]*\).*/\1 \2 \3 \5/p' "$out" |
        awk '{ d = $1; if ($2 > k) k = $2; if ($3 > r) r = $3; if ($4 > g) g = $4 } END { print d, k, r, g }')
      detect+=("$(((k - d) / 1000))")
      shrink+=("$(((r - k) / 1000))")
      if [ "$regrow" = 1 ]; then
        grow+=("$(((g - r) / 1000))")
        total+=("$(((g - d) / 1000))")
      else
        total+=("$(((r - d) / 1000))")
      fi
      start=$(date +%s%N)
      restart_ranks=$((regrow == 1 ? n : n - 1))
      env "${environment[@]}" "$commrun" -n "$restart_ranks" --timeout 60 "$bench" init >"$out" 2>&1 || { cat "$out" >&2; exit 1; }
      ready=$(sed -n 's/.*ready_ns \([0-9]*\).*/\1/p' "$out")
      restart+=("$(((ready - start) / 1000))")
    done
    ms() { printf "%s\n" "$@" | median | awk '{ printf "%.2f", $1 / 1000 }'; }
    grown=""
    [ "$regrow" = 1 ] && grown=$(ms "${grow[@]}")
    printf "%-5s %5d %12s %12s %12s %12s %14s\n" "$path" "$n" "$(ms "${detect[@]}")" "$(ms "${shrink[@]}")" \
      "$grown" "$(ms "${total[@]}")" "$(ms "${restart[@]}")"
  done
done
