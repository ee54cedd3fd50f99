#!/usr/bin/env bash
# comm's point-to-point against libfabric's own fi_pingpong, alternately in
# one sitting: 2 ranks, 8 B latency (one way) and 4 MiB / 64 MiB bandwidth,
# over shared memory (comm's direct path and comm over libfabric shm) and over
# tcp on loopback (comm's own tcp transport, comm over libfabric's
# tcp;ofi_rxm, and fi_pingpong over tcp;ofi_rxm). Prints every round and the
# medians.
#   bench/pingpong_compare.sh [build dir (default build)] [rounds (default 3)]
# Needs libfabric-bin (fi_pingpong) and a build with commrun and comm-pingpong.
set -euo pipefail
build="${1:-build}"
rounds="${2:-3}"
commrun="$build/tools/commrun/commrun"
pingpong="$build/bench/comm-pingpong"
for tool in "$commrun" "$pingpong"; do
  [ -x "$tool" ] || { echo "missing $tool: cmake --build $build --target commrun comm-pingpong" >&2; exit 2; }
done
command -v fi_pingpong >/dev/null || { echo "missing fi_pingpong: apt-get install libfabric-bin" >&2; exit 2; }
results="$(mktemp)"
trap 'rm -f "$results"' EXIT

# Records "system size value" lines: value is us (8 B) or GB/s.
comm() {
  local system="$1"; shift
  env "$@" "$commrun" -n 2 --bind-core "$pingpong" 8 4194304 67108864 |
    awk -v s="$system" '$2 ~ /^[0-9]+$/ && $3 ~ /^[0-9]+$/ {print s, $2, ($2 == 8 ? $4 : $5)}' | tee -a "$results"
}
fabric() {
  local provider="$1" size="$2" iterations=20000
  [ "$size" -gt 8 ] && iterations=50
  [ "$size" -gt 4194304 ] && iterations=10
  taskset -c 0 fi_pingpong -p "$provider" -e rdm -m tagged -S "$size" -I "$iterations" >/dev/null 2>&1 &
  sleep 0.5
  # Columns: bytes #sent #ack total time MB/sec usec/xfer Mxfers/sec; one xfer is one way.
  taskset -c 1 fi_pingpong -p "$provider" -e rdm -m tagged -S "$size" -I "$iterations" 127.0.0.1 |
    awk -v s="fi_pingpong-$provider" -v n="$size" 'NF == 8 && $1 !~ /bytes/ {print s, n, (n == 8 ? $7 : $6 / 1000)}' |
    tee -a "$results"
  wait
}

for round in $(seq "$rounds"); do
  echo "# round $round"
  comm comm-direct-shm COMM_SHM=1
  comm comm-libfabric-shm COMM_SHM=0
  comm comm-tcp COMM_SHM=0 COMM_PROVIDER=tcp
  comm comm-rxm COMM_SHM=0 "COMM_PROVIDER=tcp;ofi_rxm"
  for provider in shm tcp; do
    for size in 8 4194304 67108864; do fabric "$provider" "$size"; done
  done
done

echo "# medians over $rounds rounds (8 B: us one way; larger: GB/s one direction)"
sort -k1,1 -k2,2n -k3,3g "$results" | awk '
  { key = $1 " " $2; v[key, ++n[key]] = $3; if (!(key in seen)) { seen[key] = 1; order[++keys] = key } }
  END { for (i = 1; i <= keys; ++i) { k = order[i]; c = n[k]; m = (c % 2) ? v[k, (c + 1) / 2] : (v[k, c / 2] + v[k, c / 2 + 1]) / 2; split(k, f, " "); printf "%-20s %10s %10.3f\n", f[1], f[2], m } }'
