#!/usr/bin/env bash
# Runs the README's test command while busy loops keep every core loaded, to
# show that the suite passes on a busy machine (CI's may be one). The load is
# bounded: COMM_LOAD_FACTOR (default 2) loops per core, at the tests' own
# priority, all stopped when this script exits for any reason.
#
#   ./scripts/test-under-load.sh            # the whole suite, as CI runs it
#   COMM_LOAD_FACTOR=4 ./scripts/test-under-load.sh
#
# Extra arguments go to ctest after the build (for instance -R 'unit\.'), in
# which case the build and ctest run separately instead of through test.sh.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${COMM_BUILD_DIR:-$root/build}"
factor="${COMM_LOAD_FACTOR:-2}"
cores="$(nproc)"
loops=$((factor * cores))

pids=()
stop_load() {
  if [ "${#pids[@]}" -gt 0 ]; then
    kill "${pids[@]}" 2>/dev/null || true
    wait "${pids[@]}" 2>/dev/null || true
  fi
  pids=()
}
trap stop_load EXIT
trap 'exit 130' INT TERM

# A shell loop that never sleeps: each one wants a whole core, as a
# compiler or another job's test would.
for _ in $(seq "$loops"); do
  bash -c 'while :; do :; done' &
  pids+=("$!")
done
echo "test-under-load: $loops busy loops on $cores cores (pids ${pids[*]})"

start=$(date +%s)
status=0
if [ "$#" -eq 0 ]; then
  "$root/scripts/test.sh" || status=$?
else
  "$root/scripts/build.sh"
  ctest --test-dir "$build" --output-on-failure -j "$cores" --timeout 600 "$@" || status=$?
fi
echo "test-under-load: exit status $status after $(( $(date +%s) - start )) s with $loops busy loops;" \
  "load average $(cut -d' ' -f1-3 /proc/loadavg)"
exit "$status"
