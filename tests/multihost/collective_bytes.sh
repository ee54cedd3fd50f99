#!/usr/bin/env bash
# collective_bytes.sh HOSTS RANKS PROGRAM COLLECTIVE MIB: the bytes host 0
# sends on its link for one float32 all_reduce, all_gather or reduce_scatter
# of MIB MiB (PROGRAM: collective_bytes.c) on HOSTS hosts of RANKS ranks,
# with ranks placed by block (rank r on host r / RANKS) and round-robin
# (host r % HOSTS, Slurm's cyclic distribution), each with the algorithm
# comm chooses and with the flat ring forced (COMM_ALGO), for comparison.
# Ranks are started by hand, as a launcher would, with COMM_RANK and
# friends. Passes when every job computes the right result and comm's
# choice sends within 5% of the bandwidth-optimal figure in both
# placements: 2 (HOSTS-1)/HOSTS x MIB for all_reduce, (HOSTS-1)/HOSTS x MIB
# for the others; and, for the collectives whose flat ring runs in node
# order (all_reduce, all_gather), when the ring sends within 5% of its
# block-placement figure when placed round-robin. Exits 77 where hosts.sh
# cannot make hosts.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
if [ "${1:-}" != --inside ]; then
  [ $# -eq 5 ] || { sed -n '2,/^set /p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2; }
  exec "$here/hosts.sh" run "$1" -- "$0" --inside "$@"
fi
hosts=$2 ranks=$3 program=$4 collective=$5 mib=$6
size=$((ranks * hosts))
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
COMM_JOB_SECRET=$(od -An -tx1 -N32 /dev/urandom | tr -d ' \n')
export COMM_JOB_SECRET COMM_TIMEOUT=${COMM_TIMEOUT:-120}

# run PLACEMENT ALGO PORT: host 0's bytes on stdout.
run() {
  local placement=$1 algo=$2 port=$3 pids=() r host local failed=0
  for ((r = 0; r < size; r++)); do
    if [ "$placement" = block ]; then
      host=$((r / ranks)) local=$((r % ranks))
    else
      host=$((r % hosts)) local=$((r / hosts))
    fi
    "$here/hosts.sh" exec "$host" env COMM_ALGO="$algo" COMM_RANK=$r COMM_WORLD_SIZE=$size COMM_LOCAL_RANK=$local \
      COMM_LOCAL_WORLD_SIZE=$ranks COMM_MASTER_ADDR=10.77.0.1 COMM_MASTER_PORT="$port" \
      timeout 240 "$program" "$collective" "$mib" >"$work/out.$r" 2>&1 &
    pids+=($!)
  done
  for ((r = 0; r < size; r++)); do
    wait "${pids[$r]}" || { echo "rank $r (${placement}, COMM_ALGO=${algo:-none}) failed:" >&2; cat "$work/out.$r" >&2; failed=1; }
  done
  [ "$failed" -eq 0 ] || return 1
  sed -n 's/^host_tx_bytes node 0 bytes \([0-9]*\)$/\1/p' "$work"/out.*
}

factor=1
[ "$collective" = all_reduce ] && factor=2
ideal=$((factor * (hosts - 1) * mib * 1024 * 1024 / hosts))
echo "$collective of $mib MiB at ${hosts}x${ranks}: host 0's link, bandwidth-optimal $ideal bytes (${factor}(H-1)/H x size)"
failed=0 port=29600
for placement in block round_robin; do
  for algo in "" "$collective:ring"; do
    port=$((port + 1))
    bytes=$(run "$placement" "$algo" "$port") || { failed=1; continue; }
    ratio=$(awk -v b="$bytes" -v s=$((mib * 1024 * 1024)) 'BEGIN { printf "%.3f", b / s }')
    label=${algo:-"comm's choice"}
    echo "$placement, $label: $bytes bytes = ${ratio} x size"
    if [ -z "$algo" ] && ! awk -v b="$bytes" -v i="$ideal" 'BEGIN { exit !(b >= i * 0.95 && b <= i * 1.05) }'; then
      echo "FAIL: $placement: host 0 sent $bytes bytes, not within 5% of $ideal"
      failed=1
    fi
    if [ -n "$algo" ] && [ "$collective" != reduce_scatter ]; then
      if [ "$placement" = block ]; then
        ring_block=$bytes
      elif ! awk -v b="$bytes" -v r="$ring_block" 'BEGIN { exit !(b >= r * 0.95 && b <= r * 1.05) }'; then
        echo "FAIL: the flat ring sent $bytes bytes placed round-robin, not within 5% of its $ring_block placed by block"
        failed=1
      fi
    fi
  done
done
exit "$failed"
