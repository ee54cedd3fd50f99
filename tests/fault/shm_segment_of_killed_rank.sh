# A rank killed by SIGKILL the moment its first shared-memory segment
# appears in /dev/shm (before it could unlink it; commrun_probe
# kill-on-segment watches with inotify): once the job is over, nothing that
# rank made is left there. Several rounds, each killing another rank; $3 is
# the rank program, run as `$3 destroy` (destroy_during_call).
. "$(dirname "$0")/lib.sh"
PROGRAM=$3
ROUNDS=${ROUNDS:-4}
namespace=$(readlink /proc/self/ns/pid | tr -dc 0-9)

killed_rounds=0
for round in $(seq 1 "$ROUNDS"); do
  victim=$((round % 4))
  mark="SEGMENT_TEST_JOB=$$.$round"  # this job's ranks, not another test's
  "$PROBE" kill-on-segment "$victim" 30 "$mark" >"$WORK/killed" &
  watcher=$!
  sleep 0.2  # the watch is set up
  run_commrun -n 4 --timeout 60 env "$mark" "$PROGRAM" destroy
  kill "$watcher" 2>/dev/null
  wait "$watcher" 2>/dev/null
  killed=$(cat "$WORK/killed")
  [ -n "$killed" ] || fail "round $round: rank $victim made no segment the watcher saw"
  [ "$RC" -ne 0 ] || fail "round $round: the job succeeded although rank $victim (pid $killed) was killed"
  left=$(ls /dev/shm | grep "^comm\.$namespace\.$killed\." || true)
  [ -z "$left" ] || fail "round $round: rank $victim (pid $killed), killed as its segment appeared, left /dev/shm/$left"
  echo "round $round: rank $victim (pid $killed) killed as its segment appeared; nothing of it left in /dev/shm"
done
