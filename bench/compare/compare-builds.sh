#!/usr/bin/env bash
# compare-builds.sh - two builds of comm side by side: did a change cost speed?
# For each path (shm: direct shared memory; tcp: comm's tcp on loopback) and
# collective, runs comm-bench of both builds back to back at 2 ranks, the
# order alternating, ROUNDS times; prints each build's median time and the
# median of the paired ratios (after/before), which a busy machine disturbs
# less than either median alone.
#
#   bench/compare/compare-builds.sh BEFORE_BUILD_DIR AFTER_BUILD_DIR [ROUNDS]
#
# Each build directory needs tools/commrun/commrun and tools/comm-bench/comm-bench
# (cmake --build DIR --target commrun comm-bench). Raw results: $OUT (default
# a temporary file, printed at the end).
set -euo pipefail
[ $# -ge 2 ] || { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 2; }
before="$1" after="$2" rounds="${3:-5}"
out="${OUT:-$(mktemp /tmp/compare-builds.XXXXXX)}"
: >"$out"
for dir in "$before" "$after"; do
  for tool in tools/commrun/commrun tools/comm-bench/comm-bench; do
    [ -x "$dir/$tool" ] || { echo "compare-builds.sh: $dir/$tool is missing" >&2; exit 1; }
  done
done
pair=0
for round in $(seq 1 "$rounds"); do
  for path in shm tcp; do
    settings=(COMM_SHM=1)
    [ "$path" = tcp ] && settings=(COMM_PROVIDER=tcp COMM_SHM=0)
    for collective in all_reduce all_gather broadcast reduce_scatter all_to_all; do
      pair=$((pair + 1))
      order="before after"
      [ $((pair % 2)) = 0 ] && order="after before"
      for which in $order; do
        dir="$before"
        [ "$which" = after ] && dir="$after"
        # A failed run loses its pair, not the comparison: say so and go on.
        if ! env "${settings[@]}" COMM_TIMEOUT=120 timeout 300 "$dir/tools/commrun/commrun" -n 2 \
          "$dir/tools/comm-bench/comm-bench" "$collective" --sizes 8,64K,1M,16M -n 20 -w 3 -c 0 >"$out.run" 2>&1; then
          echo "compare-builds.sh: $which $path $collective (round $round) failed:" >&2
          grep -v '^\[[0-9]*\] \{2,\}' "$out.run" | tail -3 >&2
        fi
        awk -v r="$round" -v w="$which" -v p="$path" -v c="$collective" \
          '$1 == "[0]" && $2 ~ /^[0-9]+$/ {print r, w, p, c, $2, $7}' "$out.run" >>"$out"
      done
    done
  done
done
/usr/bin/python3 - "$out" <<'PY'
import collections, statistics, sys
runs = collections.defaultdict(dict)
for line in open(sys.argv[1]):
    round_, which, path, collective, size, time = line.split()
    runs[(path, collective, int(size))].setdefault(round_, {})[which] = float(time)
print(f"{'path':4} {'collective':15} {'bytes':>9} {'before us':>10} {'after us':>10} {'after/before':>13}")
for key in sorted(runs):
    pairs = [p for p in runs[key].values() if len(p) == 2]
    if not pairs:
        continue
    before = statistics.median(p["before"] for p in pairs)
    after = statistics.median(p["after"] for p in pairs)
    ratio = statistics.median(p["after"] / p["before"] for p in pairs)
    print(f"{key[0]:4} {key[1]:15} {key[2]:9} {before:10.2f} {after:10.2f} {ratio:13.2f}")
PY
rm -f "$out.run"
echo "raw results: $out"
